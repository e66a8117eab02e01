"""Multi-objective Bayesian optimisation over a finite configuration space, with baselines.

Methods (all minimise; all share one evaluation budget and one fixed reference point):

- ``mobo``: one SingleTaskGP per objective (a ModelListGP) on min-max normalised inputs and
  standardised log outcomes; qLogExpectedHypervolumeImprovement with a SobolQMCNormalSampler
  of 128 samples, q = 1 (the paper's settings). BoTorch maximises, so the MC objective maps a
  sample of log-runtime / log-energy to ``-exp(sample)``: the acquisition works on negated raw
  values and the hypervolume improvement it scores is the raw-space hypervolume we report.
- ``sobo-runtime`` / ``sobo-energy`` (alias ``sobo-power``): qLogExpectedImprovement on one
  objective, same model class, sampler and candidate-set optimisation.
- ``random``: the paper's random search, "5 seeds, budget split evenly": five independent
  uniform streams (seeds derived from the run's seed), each drawing budget/5 distinct
  candidates (the remainder goes to the first streams); their union, duplicates across streams
  included, spends exactly the budget.
- ``exact``: every candidate evaluated; its front is the yardstick.

Integers and categoricals are handled by never leaving the candidate set: the acquisition is
evaluated on every not-yet-evaluated enumerated candidate and the best is taken (exact discrete
maximisation; no continuous optimum is rounded). The paper's optimize_acqf settings (5
restarts, 32 raw samples) are kept in :class:`Profile` and recorded in outputs; only
``raw_samples`` is used: when no candidate can improve (see below), only that many, the closest
to improving, are scored.

Inputs are encoded as log2(nodes), log2(ranks per node), log2(threads) (integers on their
natural multiplicative scale), device as a 0/1 flag and precision one-hot, each column
min-max scaled over the candidate set so the GP sees [0, 1]^d.

A failed evaluation (``feasible`` False) is recorded with NaN objectives, is never on a front,
never enters a hypervolume, is not offered again, and is left out of the GP training data.

Two model-fitting policies are measured side by side (:data:`STRAIGHTFORWARD`,
:data:`OPTIMISED`): refit both GPs from scratch with ``fit_gpytorch_mll`` every iteration, or
warm-start the hyperparameters from the previous iteration, refit with a few L-BFGS steps every
k iterations (conditioning on the new data in between), reuse the box decomposition while the
observed front is unchanged, keep the candidate tensors and the sampler across iterations, and
score the acquisition only on candidates that can still improve under one of the sampler's
fixed base samples (:func:`improvement_outlook`; when none can, every Monte Carlo improvement
is exactly zero and only the ``raw_samples`` closest to improving are scored: scoring thousands
of them cost seconds per iteration once a 50-point front was found).
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from hpcds1mpi.analysis.metrics import exact_front, hypervolume, pareto_mask, reference_point
from hpcds1mpi.errors import ConfigError

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from hpcds1mpi.cluster import Partition

METHODS = ("mobo", "sobo-runtime", "sobo-energy", "sobo-power", "random", "exact")
SPACES = ("nodes", "full")
NODE_COUNTS = ("pow2", "all")
RANDOM_STREAMS = 5


@dataclass(frozen=True)
class Profile:
    """Acquisition settings. Defaults are the paper's.

    Attributes:
        mc_samples: Sobol QMC samples of the posterior.
        q: points per iteration (only 1 is supported).
        num_restarts / raw_samples: the paper's optimize_acqf settings; the discrete optimiser
            evaluates every remaining candidate that can improve, and the ``raw_samples``
            closest to improving when none can (``num_restarts`` is recorded only).
        iterations: the paper's iteration count (the default budget).
        batch_size: candidates scored per acquisition call (memory bound).
    """

    mc_samples: int = 128
    q: int = 1
    num_restarts: int = 5
    raw_samples: int = 32
    iterations: int = 300
    batch_size: int = 2048


PAPER_PROFILE = Profile()


@dataclass(frozen=True)
class FitPolicy:
    """How GP hyperparameters are (re)fitted during the loop.

    Attributes:
        name: label used in outputs.
        warm_start: start each iteration's GPs from the previous hyperparameters.
        refit_every: fit hyperparameters every k-th iteration (1 = every iteration); in between
            the GPs are conditioned on the new data with the previous hyperparameters.
        refit_steps: L-BFGS iterations per refit (None: ``fit_gpytorch_mll`` to convergence).
        reuse: reuse the box decomposition while the observed front is unchanged, and keep
            the candidate tensors and the QMC sampler (its base samples) across iterations.
        prune: score the acquisition only on candidates that can still improve (see
            :func:`improvement_outlook`); the others have zero improvement under every one of the
            sampler's fixed base samples, so leaving them out does not change the choice.
    """

    name: str
    warm_start: bool
    refit_every: int
    refit_steps: int | None
    reuse: bool
    prune: bool = False


STRAIGHTFORWARD = FitPolicy("straightforward", warm_start=False, refit_every=1, refit_steps=None, reuse=False)
OPTIMISED = FitPolicy("optimised", warm_start=True, refit_every=10, refit_steps=20, reuse=True, prune=True)


# ------------------------------------------------------------------------------------------
# Design space


def build_candidates(partition: "Partition", workload: str, size: int, space: str = "full", *,
                     nodes: Sequence[int] | None = None, ranks_per_node: Sequence[int] | None = None,
                     threads: Sequence[int] | None = None, devices: Sequence[str] | None = None,
                     precisions: Sequence[str] | None = None, fixed: dict | None = None) -> "pd.DataFrame":
    """Enumerate the candidate configurations of one problem.

    Args:
        partition: where the job runs.
        workload, size: the problem (copied into every row).
        space: ``"nodes"`` (the paper's: node count alone, 1..max_nodes, the rest fixed by
            ``fixed``: default one rank per core, one thread, CPU, fp64) or ``"full"`` (nodes,
            ranks per node, threads, device, precision; ranges default to powers of two).
        nodes, ranks_per_node, threads, devices, precisions: ranges for the full space.
        fixed: the configuration held fixed in the nodes-only space.

    Returns:
        DataFrame with columns nodes, ranks_per_node, threads, device, precision, workload, size.

    Raises:
        ConfigError: unknown space, or no valid configuration.
    """
    import pandas as pd

    from hpcds1mpi.config import Configuration, check_fits, enumerate_configs, powers_up_to

    if space not in SPACES:
        raise ConfigError(f"unknown space {space!r}; choose from {', '.join(SPACES)}")
    if space == "nodes":
        base = {"ranks_per_node": partition.cores_per_node, "threads": 1, "device": "cpu",
                "precision": "fp64", **(fixed or {})}
        configs = []
        for n in (nodes or range(1, partition.max_nodes + 1)):
            config = Configuration(int(n), int(base["ranks_per_node"]), int(base["threads"]),
                                   str(base["device"]), str(base["precision"]))
            check_fits(config, partition)
            configs.append(config)
    else:
        from hpcds1mpi.kernels import support

        # Only what the workload can run: a kernel's declared precisions, devices and threads.
        uses_threads, declared_precisions, declared_devices = support(workload)
        if devices is None and declared_devices is not None:
            devices = [d for d in declared_devices if d == "cpu" or partition.gpus_per_node]
        pow2 = powers_up_to(partition.cores_per_node)
        configs = list(enumerate_configs(
            partition, nodes=nodes, ranks_per_node=ranks_per_node or pow2, threads=threads or pow2,
            devices=devices, precisions=precisions or declared_precisions,
            uses_threads=uses_threads,
        ))
    if not configs:
        raise ConfigError(f"no valid configuration on partition {partition.name!r}")
    frame = pd.DataFrame([c.as_dict() for c in configs])
    frame["workload"] = workload
    frame["size"] = int(size)
    return frame


def node_counts(partition: "Partition", which: str = "pow2") -> list[int] | None:
    """Node counts of the full space: ``"pow2"`` (powers of two and the maximum; None, the
    :func:`build_candidates` default) or ``"all"`` (every count 1..max_nodes, as a scheduler
    accepts; the space grows ~max_nodes / log2(max_nodes) times)."""
    if which == "pow2":
        return None
    if which == "all":
        return list(range(1, partition.max_nodes + 1))
    raise ConfigError(f"unknown node counts {which!r}; choose from {', '.join(NODE_COUNTS)}")


def encode(candidates: "pd.DataFrame") -> np.ndarray:
    """Numeric GP inputs in [0, 1]^d for a candidate set.

    Columns that do not vary over the set are dropped (they carry no information).

    Returns:
        ``(n, d)`` float64 array.
    """
    cols = [
        np.log2(candidates["nodes"].to_numpy(float)),
        np.log2(candidates["ranks_per_node"].to_numpy(float)),
        np.log2(candidates["threads"].to_numpy(float)),
        (candidates["device"] == "gpu").to_numpy(float),
    ]
    cols += [(candidates["precision"] == p).to_numpy(float) for p in ("fp64", "fp32", "bf16")]
    X = np.stack(cols, axis=1)
    lo, hi = X.min(axis=0), X.max(axis=0)
    varies = hi > lo
    X = (X[:, varies] - lo[varies]) / (hi[varies] - lo[varies])
    if X.shape[1] == 0:
        X = np.zeros((len(candidates), 1))
    return X


# ------------------------------------------------------------------------------------------
# Problem and results


@dataclass
class Problem:
    """One optimisation problem: a finite candidate set, an objective, a fixed reference point.

    Attributes:
        candidates: ``(n, ...)`` candidate rows (configuration + problem columns).
        objective: the objective (see ``hpcds1mpi.surrogates.objectives``).
        columns: the objective columns minimised, e.g. ``["runtime_s", "energy_j"]``.
        ref_point: ``(m,)`` fixed reference point; :meth:`fix_reference_point` sets it.
        X: ``(n, d)`` encoded inputs (filled in on creation).
        table: the objective's output for every candidate, once :meth:`evaluate_all` ran.
    """

    candidates: "pd.DataFrame"
    objective: Any
    columns: list[str]
    ref_point: np.ndarray | None = None
    X: np.ndarray = field(default=None, repr=False)  # type: ignore[assignment]
    table: "pd.DataFrame | None" = field(default=None, repr=False)
    ref_basis: str = "given"

    def __post_init__(self) -> None:
        self.candidates = self.candidates.reset_index(drop=True)
        if len(self.columns) < 2:
            raise ConfigError("multi-objective optimisation needs two objectives")
        if self.X is None:
            self.X = encode(self.candidates)

    def evaluate(self, indices: Sequence[int]) -> tuple[np.ndarray, np.ndarray, list[str]]:
        """Evaluate candidates by index.

        Returns:
            ``(Y, feasible, status)``: ``(k, m)`` values (NaN rows where infeasible), ``(k,)``
            booleans, ``k`` status strings.
        """
        out = self.objective(self.candidates.iloc[list(indices)])
        feasible = out["feasible"].to_numpy(bool, copy=True)
        Y = out[self.columns].to_numpy(float, copy=True)
        Y[~feasible] = np.nan
        feasible &= np.all(np.isfinite(Y), axis=1)
        return Y, feasible, [str(s) for s in out["status"]]

    def evaluate_all(self) -> tuple[np.ndarray, np.ndarray]:
        """Evaluate every candidate (kept in :attr:`table`); ``(n, m)`` values and ``(n,)`` mask."""
        if self.table is None:
            self.table = self.objective(self.candidates)
        feasible = self.table["feasible"].to_numpy(bool)
        Y = self.table[self.columns].to_numpy(float, copy=True)
        Y[~feasible] = np.nan
        return Y, feasible & np.all(np.isfinite(Y), axis=1)

    def fix_reference_point(self, margin: float = 0.1, basis: str = "front") -> np.ndarray:
        """Fix the reference point once for this problem, from the whole candidate set.

        ``basis="front"`` (default): nadir of the exact Pareto front plus ``margin`` times the
        front's range (BoTorch's ``infer_reference_point`` rule, applied once to the exact front
        instead of to each method's own data). ``basis="all"``: nadir of every feasible
        candidate plus ``margin`` times their range; that box is so large that the region near
        the front barely moves the hypervolume, so every method's ratio to the exact front
        sits close to 1 and the metric stops telling methods apart.
        """
        Y, feasible = self.evaluate_all()
        if not feasible.any():
            raise ConfigError("no feasible configuration in the candidate set")
        if basis == "front":
            _, front = exact_front(Y, feasible)
            self.ref_point = reference_point(front, margin)
        elif basis == "all":
            self.ref_point = reference_point(Y[feasible], margin)
        else:
            raise ConfigError(f"unknown reference-point basis {basis!r}; use front or all")
        self.ref_basis = basis
        return self.ref_point

    def exact(self) -> tuple[np.ndarray, np.ndarray]:
        """Indices ``(k,)`` and values ``(k, m)`` of the exact Pareto front of the candidate set."""
        Y, feasible = self.evaluate_all()
        return exact_front(Y, feasible)


@dataclass
class RunResult:
    """One method's run on one problem.

    Attributes:
        indices: candidate indices in evaluation order (``budget`` of them).
        Y: ``(budget, m)`` objective values in that order, NaN rows for failed evaluations.
        feasible, status: per evaluation.
        hv_trace: hypervolume after each evaluation (fixed reference point).
        iteration_s: wall time of each model-based iteration (fit + acquisition + evaluation).
        fit_s, acq_s: time spent fitting GPs and scoring the acquisition, per iteration.
    """

    method: str
    seed: int
    budget: int
    n_init: int
    ref_point: np.ndarray
    indices: list[int]
    Y: np.ndarray
    feasible: np.ndarray
    status: list[str]
    hv_trace: np.ndarray
    iteration_s: list[float]
    fit_s: list[float]
    acq_s: list[float]
    wall_s: float
    policy: str = ""
    pruned: list[int] = field(default_factory=list)

    def front(self) -> np.ndarray:
        """``(k, m)`` Pareto front of the feasible evaluations."""
        Yf = self.Y[self.feasible]
        return np.unique(Yf[pareto_mask(Yf)], axis=0) if len(Yf) else Yf

    def front_indices(self) -> list[int]:
        """Candidate indices on the front (every distinct candidate; ties all kept)."""
        Y = np.where(self.feasible[:, None], self.Y, np.nan)
        mask = pareto_mask(Y)
        return list(dict.fromkeys(self.indices[i] for i in np.flatnonzero(mask)))

    def hv_at(self, evaluations: int) -> float:
        """Hypervolume after the first ``evaluations`` evaluations."""
        k = min(evaluations, len(self.hv_trace))
        return float(self.hv_trace[k - 1]) if k > 0 else 0.0

    def summary(self) -> dict:
        return {
            "method": self.method, "seed": self.seed, "budget": self.budget, "n_init": self.n_init,
            "policy": self.policy, "ref_point": self.ref_point.tolist(),
            "evaluations": len(self.indices), "failed_evaluations": int((~self.feasible).sum()),
            "hv": float(self.hv_trace[-1]) if len(self.hv_trace) else 0.0,
            "wall_s": self.wall_s,
            "mean_iteration_s": float(np.mean(self.iteration_s)) if self.iteration_s else 0.0,
        }


def default_n_init(problem: Problem) -> int:
    """Initial design size: d + 1 points, at least 4."""
    return max(4, problem.X.shape[1] + 1)


def hv_trace(Y: np.ndarray, feasible: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """Hypervolume of the first k evaluations for every k (``(n,)``)."""
    trace = np.zeros(len(Y))
    front = np.empty((0, Y.shape[1]))
    for k in range(len(Y)):
        if feasible[k]:
            front = np.vstack([front, Y[k]])
            front = front[pareto_mask(front)]
        trace[k] = hypervolume(front, ref) if len(front) else 0.0
    return trace


# ------------------------------------------------------------------------------------------
# Methods


def run(problem: Problem, method: str, budget: int, *, seed: int = 0, n_init: int | None = None,
        policy: FitPolicy = OPTIMISED, profile: Profile = PAPER_PROFILE) -> RunResult:
    """Run one method on ``problem`` for ``budget`` evaluations.

    Args:
        problem: the problem; its reference point must be fixed (:meth:`Problem.fix_reference_point`
            or given).
        method: one of :data:`METHODS`.
        budget: evaluations allowed (capped at the number of candidates; ignored by ``exact``).
        seed: seed of the initial design, the sampler and random search.
        n_init: initial-design size for the model-based methods (default :func:`default_n_init`).
        policy: model-fitting policy of the model-based methods.
        profile: acquisition settings.

    Raises:
        ConfigError: unknown method, no reference point, budget smaller than the initial design.
    """
    if method not in METHODS:
        raise ConfigError(f"unknown method {method!r}; choose from {', '.join(METHODS)}")
    if problem.ref_point is None:
        raise ConfigError("no reference point fixed for this problem; fix one before comparing methods")
    if profile.q != 1:
        raise ConfigError("only q = 1 is supported")
    ref = np.asarray(problem.ref_point, dtype=float)
    n = len(problem.candidates)
    if method == "exact":
        budget = n
    if budget < 1:
        raise ConfigError(f"budget must be at least 1, got {budget}")
    budget = min(budget, n)
    n_init = default_n_init(problem) if n_init is None else n_init
    if method in ("mobo", "sobo-runtime", "sobo-energy", "sobo-power"):
        if budget < n_init:
            raise ConfigError(
                f"budget {budget} is smaller than the initial design of {n_init} points; "
                f"raise --budget to at least {n_init}"
            )
    start = time.perf_counter()
    if method == "exact":
        result = _run_fixed(problem, list(range(n)), method, seed, ref)
    elif method == "random":
        result = _run_fixed(problem, random_design(n, budget, seed), method, seed, ref)
    else:
        target = None
        if method != "mobo":
            target = 0 if method == "sobo-runtime" else 1
        result = _run_bo(problem, budget, n_init, seed, target, policy, profile, ref)
        result.method = method
    result.wall_s = time.perf_counter() - start
    return result


def random_design(n: int, budget: int, seed: int) -> list[int]:
    """The paper's random search: 5 seeded streams split the budget evenly (see module doc).

    Returns:
        ``budget`` candidate indices (distinct within a stream; streams may repeat each other).
    """
    picks: list[int] = []
    for stream in range(RANDOM_STREAMS):
        share = budget // RANDOM_STREAMS + (1 if stream < budget % RANDOM_STREAMS else 0)
        rng = np.random.default_rng([seed, stream])
        picks += rng.choice(n, size=min(share, n), replace=False).tolist()
    return picks


def _run_fixed(problem: Problem, indices: list[int], method: str, seed: int, ref: np.ndarray) -> RunResult:
    Y, feasible, status = problem.evaluate(indices)
    return RunResult(method=method, seed=seed, budget=len(indices), n_init=0, ref_point=ref,
                     indices=list(indices), Y=Y, feasible=feasible, status=status,
                     hv_trace=hv_trace(Y, feasible, ref), iteration_s=[], fit_s=[], acq_s=[], wall_s=0.0)


def initial_design(X: np.ndarray, n_init: int, seed: int) -> list[int]:
    """``n_init`` distinct candidates nearest to a scrambled Sobol sequence in [0, 1]^d."""
    from scipy.stats import qmc

    import warnings

    sobol = qmc.Sobol(d=X.shape[1], scramble=True, seed=seed)
    with warnings.catch_warnings():
        # n_init need not be a power of two; the points only seed a nearest-candidate search.
        warnings.simplefilter("ignore", UserWarning)
        points = sobol.random(n_init)
    taken: list[int] = []
    free = np.ones(len(X), dtype=bool)
    for p in points:
        dist = np.linalg.norm(X - p, axis=1)
        dist[~free] = np.inf
        i = int(np.argmin(dist))
        taken.append(i)
        free[i] = False
    return taken


class _Fitter:
    """Builds one SingleTaskGP per objective each iteration under a :class:`FitPolicy`.

    Straightforward: fresh GPs, each fitted with ``fit_gpytorch_mll`` to convergence. Optimised:
    each GP starts from the previous iteration's hyperparameters; every ``refit_every``-th
    iteration they are refined by ``refit_steps`` L-BFGS steps, in between the GPs are only
    conditioned on the new data. (A single batched multi-output GP was tried and was slower to
    fit here than two separate ones.)
    """

    def __init__(self, policy: FitPolicy) -> None:
        self.policy = policy
        self.states: dict[int, dict] = {}
        self.iteration = 0

    def model(self, outputs: list):
        """A model of each ``(X (n_j, d), y (n_j, 1))`` in ``outputs``, in eval mode: one GP, or
        a ModelListGP (outputs may have different training points)."""
        from botorch.fit import fit_gpytorch_mll
        from botorch.models import ModelListGP, SingleTaskGP
        from botorch.models.transforms.outcome import Standardize
        from botorch.optim.fit import fit_gpytorch_mll_scipy
        from gpytorch.mlls import ExactMarginalLogLikelihood

        refit_now = self.iteration % self.policy.refit_every == 0
        self.iteration += 1
        models = []
        for j, (X, y) in enumerate(outputs):
            gp = SingleTaskGP(X, y, outcome_transform=Standardize(m=1))
            state = self.states.get(j) if self.policy.warm_start else None
            if state is not None:
                gp.load_state_dict(state, strict=False)
            mll = ExactMarginalLogLikelihood(gp.likelihood, gp)
            if state is None or self.policy.refit_steps is None:
                fit_gpytorch_mll(mll)
            elif refit_now:
                mll.train()
                fit_gpytorch_mll_scipy(mll, options={"maxiter": self.policy.refit_steps})
            gp.eval()
            if self.policy.warm_start:
                # Hyperparameters only: the outcome transform is recomputed on each new data set.
                self.states[j] = {k: v.detach().clone() for k, v in gp.state_dict().items()
                                  if not k.startswith("outcome_transform")}
            models.append(gp)
        return models[0] if len(models) == 1 else ModelListGP(*models)


def _run_bo(problem: Problem, budget: int, n_init: int, seed: int, target: int | None,
            policy: FitPolicy, profile: Profile, ref: np.ndarray) -> RunResult:
    import torch
    from botorch.acquisition.logei import qLogExpectedImprovement
    from botorch.acquisition.multi_objective.logei import qLogExpectedHypervolumeImprovement
    from botorch.acquisition.multi_objective.objective import GenericMCMultiOutputObjective
    from botorch.acquisition.objective import GenericMCObjective
    from botorch.optim import optimize_acqf_discrete
    from botorch.sampling.normal import SobolQMCNormalSampler
    from botorch.utils.multi_objective.box_decompositions.non_dominated import (
        FastNondominatedPartitioning,
    )

    dtype = torch.double
    X_np = problem.X
    n, m = len(X_np), len(problem.columns)
    indices = initial_design(X_np, n_init, seed)
    Y, feasible, status = problem.evaluate(indices)
    evaluated = np.zeros(n, dtype=bool)
    evaluated[indices] = True
    fitter = _Fitter(policy)
    X_all = torch.as_tensor(X_np, dtype=dtype)
    neg_ref = torch.as_tensor(-ref, dtype=dtype)
    shared_sampler = SobolQMCNormalSampler(torch.Size([profile.mc_samples]), seed=seed)
    cached_front_key: bytes | None = None
    cached_partitioning = None
    rng = np.random.default_rng([seed, 99])
    iteration_s, fit_s, acq_s = [], [], []
    pruned: list[int] = []
    mc_objective = (
        GenericMCMultiOutputObjective(lambda samples, X=None: -samples[..., :m].exp())
        if target is None else GenericMCObjective(lambda samples, X=None: -samples[..., 0].exp())
    )

    while len(indices) < budget:
        t0 = time.perf_counter()
        remaining = np.flatnonzero(~evaluated)
        ok = feasible.copy()
        if ok.sum() < 2:
            # Too little feasible data for a GP: explore at random (recorded as an iteration).
            pick = int(rng.choice(remaining))
            fit_time = acq_time = 0.0
        else:
            idx_arr = np.asarray(indices)
            X_seen = X_all[idx_arr] if policy.reuse else torch.tensor(X_np[idx_arr], dtype=dtype)
            Xtr = X_seen[torch.as_tensor(ok)]
            Yraw = Y[ok] if target is None else Y[ok][:, [target]]
            Ylog = torch.as_tensor(np.log(Yraw), dtype=dtype)
            outputs = [(Xtr, Ylog[:, j:j + 1]) for j in range(Ylog.shape[1])]
            constraints = None
            if not ok.all():
                # Failures seen: a feasibility GP on every evaluated point (+1 failed, -1 ok)
                # weights the acquisition by the probability of success (BoTorch constraint:
                # feasible where the sampled value is <= 0). The objective GPs see only
                # successful runs.
                label = torch.as_tensor(np.where(ok, -1.0, 1.0)[:, None], dtype=dtype)
                outputs.append((X_seen, label))
                n_obj = Ylog.shape[1]
                constraints = [lambda Z, i=n_obj: Z[..., i]]
            tf = time.perf_counter()
            model = fitter.model(outputs)
            fit_time = time.perf_counter() - tf
            ta = time.perf_counter()
            sampler = shared_sampler if policy.reuse else SobolQMCNormalSampler(
                torch.Size([profile.mc_samples]), seed=seed + len(indices))
            if target is None:
                neg_y = torch.as_tensor(-Yraw, dtype=dtype)
                key = np.ascontiguousarray(np.unique(Yraw[pareto_mask(Yraw)], axis=0)).tobytes()
                if policy.reuse and key == cached_front_key:
                    partitioning = cached_partitioning
                else:
                    partitioning = FastNondominatedPartitioning(ref_point=neg_ref, Y=neg_y)
                    cached_front_key, cached_partitioning = key, partitioning
                acq = qLogExpectedHypervolumeImprovement(
                    model=model, ref_point=neg_ref.tolist(), partitioning=partitioning,
                    sampler=sampler, objective=mc_objective, constraints=constraints,
                )
            else:
                acq = qLogExpectedImprovement(
                    model=model, best_f=float(np.max(-Yraw[:, 0])), sampler=sampler,
                    objective=mc_objective, constraints=constraints,
                )
            with torch.no_grad():
                if policy.reuse:
                    scored = remaining
                    if policy.prune:
                        outlook = improvement_outlook(model, X_all[remaining], sampler,
                                                      m if target is None else 1, Yraw,
                                                      ref if target is None else None)
                        if outlook is not None and outlook[0].any():
                            scored = remaining[outlook[0]]
                        elif outlook is not None and len(remaining) > profile.raw_samples:
                            # No candidate improves under any base sample: the Monte Carlo
                            # improvement is exactly zero everywhere and only the log
                            # smoothing's tail orders them (scoring all of them cost seconds
                            # per iteration on a 50-point front), so the raw_samples closest
                            # to improving are scored.
                            closest = np.argsort(outlook[1], kind="stable")[:profile.raw_samples]
                            scored = remaining[np.sort(closest)]
                    pruned.append(len(remaining) - len(scored))
                    pick = int(scored[_discrete_argmax(acq, X_all[scored], profile.batch_size)])
                else:
                    choices = torch.tensor(X_np[remaining], dtype=dtype)
                    best, _ = optimize_acqf_discrete(acq, q=1, choices=choices,
                                                     max_batch_size=profile.batch_size)
                    hit = torch.all(choices == best, dim=1).nonzero()
                    pick = int(remaining[int(hit[0, 0])])
            acq_time = time.perf_counter() - ta
        y, f, s = problem.evaluate([pick])
        indices.append(pick)
        evaluated[pick] = True
        Y = np.vstack([Y, y])
        feasible = np.append(feasible, f)
        status += s
        iteration_s.append(time.perf_counter() - t0)
        fit_s.append(fit_time)
        acq_s.append(acq_time)
    return RunResult(method="", seed=seed, budget=budget, n_init=n_init, ref_point=ref,
                     indices=indices, Y=Y, feasible=feasible, status=status,
                     hv_trace=hv_trace(Y, feasible, ref), iteration_s=iteration_s, fit_s=fit_s,
                     acq_s=acq_s, wall_s=0.0, policy=policy.name, pruned=pruned)


def improvement_outlook(model, X, sampler, n_objectives: int, Y_seen: np.ndarray,
                        ref: np.ndarray | None) -> tuple[np.ndarray, np.ndarray] | None:
    """Which candidates can improve under at least one of the sampler's fixed base samples,
    and how far each is from improving.

    The GPs model log outcomes and, for q = 1, output j's sample at a candidate is
    ``mu_j + sigma_j * z_j`` with ``z`` one of the sampler's fixed base samples, so each of the
    sampler's samples is a known point ``exp(mu + sigma * z)`` in raw space. When every one of
    those points is weakly dominated by an observed point (or lies beyond the reference point),
    every sample's improvement is exactly zero, and the log acquisition keeps only its
    smoothing tail (softplus / soft-max temperatures), which sits below any candidate with a
    positive improvement larger than that smoothing scale. Such candidates are left out. This
    is exact for the non-smoothed Monte Carlo acquisition; for the smoothed one the choice could
    differ when the best possible improvement is within the smoothing scale, and it does differ
    when no candidate can improve (the loop then scores only the ``raw_samples`` with the
    smallest gap instead of all); ``benchmarks/mobo.py`` compares picks with and without
    pruning. A relative slack of 1e-6 keeps rounding from pruning a candidate that touches the
    front. (Checking each
    sample, not one optimistic corner ``exp(mu + sigma * min z)`` per candidate, left ~4x fewer
    candidates to score on a 4,000-candidate space with a 59-point front.)

    Args:
        model: the fitted model (outputs 0..n_objectives-1 are the log objectives).
        X: ``(k, d)`` candidates.
        sampler: the acquisition's QMC sampler, after at least one use (base samples fixed).
        n_objectives: objectives modelled (2 for MOBO, 1 for SOBO).
        Y_seen: ``(n, n_objectives)`` raw objective values observed (feasible ones).
        ref: ``(n_objectives,)`` reference point (MOBO), or None (SOBO: improvement over the
            best observed value).

    Returns:
        ``(mask (k,), gap (k,))``, or None when the sampler has no base samples for this model
        yet. ``gap`` is the factor by which a candidate's optimistic corner (every objective at
        its best sample) must still shrink to improve: below 1 can improve at the corner, and
        it orders the candidates that cannot.
    """
    import torch

    base = getattr(sampler, "base_samples", None)
    if base is None or base.shape[-1] != model.num_outputs:
        return None
    z = base.reshape(-1, base.shape[-1])[:, :n_objectives].cpu().numpy()  # (S, n_objectives)
    slack = 1e-6
    front = Y_seen[pareto_mask(Y_seen)] if ref is not None else None
    best = np.min(Y_seen[:, 0])  # SOBO's incumbent
    keep, gaps = [], []
    with torch.no_grad():
        # Only each candidate's marginal is needed: blocks of 256 candidates keep the joint
        # covariance a k-point posterior builds at 256 x 256 instead of k x k (its marginals
        # equal the acquisition's one-point posteriors to rounding; the slack covers that).
        for block in torch.split(X, 256):
            post = model.posterior(block)
            mean = post.mean[..., :n_objectives].cpu().numpy()
            sd = post.variance[..., :n_objectives].clamp_min(0).sqrt().cpu().numpy()
            points = np.exp(mean[:, None, :] + sd[:, None, :] * z[None, :, :])  # (b, S, m) raw
            corner = points.min(axis=1)  # (b, m)
            if ref is None:
                keep.append(np.any(points[..., 0] < best * (1 + slack), axis=1))
                gaps.append(corner[:, 0] / best)
                continue
            dominated = weakly_dominated(points * (1 - slack), front)
            beyond = np.any(points >= ref * (1 + slack), axis=2)
            keep.append(np.any(~(dominated | beyond), axis=1))
            # Shrinking the corner by t escapes front point f once t > min_j corner_j / f_j,
            # and enters the reference box once t > max_j corner_j / ref_j.
            escape = np.max(np.min(corner[:, None, :] / front[None, :, :], axis=2), axis=1)
            gaps.append(np.maximum(escape, np.max(corner / ref, axis=1)))
    return np.concatenate(keep), np.concatenate(gaps)


def weakly_dominated(points: np.ndarray, front: np.ndarray) -> np.ndarray:
    """Whether each of ``points`` (``(..., m)``) is weakly dominated by a row of ``front``
    (``(k, m)``, minimisation). Two objectives: one sorted search per point (the front's
    smallest second objective among rows whose first is at most the point's); more: pairwise."""
    if len(front) == 0:
        return np.zeros(points.shape[:-1], dtype=bool)
    if front.shape[1] != 2:
        out = np.zeros(points.shape[:-1], dtype=bool)
        for f in front:
            out |= np.all(f <= points, axis=-1)
        return out
    order = np.argsort(front[:, 0], kind="stable")
    first = front[order, 0]
    best_second = np.minimum.accumulate(front[order, 1])
    at = np.searchsorted(first, points[..., 0], side="right")  # rows with first <= the point's
    return (at > 0) & (best_second[np.maximum(at - 1, 0)] <= points[..., 1])


def _discrete_argmax(acq, choices, batch_size: int) -> int:
    """Index of the best of ``choices`` (``(k, d)``) under a q = 1 acquisition."""
    import torch

    values = torch.cat([acq(chunk.unsqueeze(1)) for chunk in torch.split(choices, batch_size)])
    return int(torch.argmax(values))


def profile_dict(profile: Profile = PAPER_PROFILE, policy: FitPolicy = OPTIMISED) -> dict:
    """Settings to record next to results."""
    return {"profile": asdict(profile), "policy": asdict(policy),
            "acquisition_optimiser": "exhaustive over the remaining enumerated candidates that can "
            "improve (the raw_samples closest to improving when none can)"}
