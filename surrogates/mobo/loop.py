"""The Bayesian-optimisation loop of MOBO and SOBO over a finite candidate set.

One SingleTaskGP per objective (a ModelListGP) on the encoded inputs and log outcomes; MOBO
scores qLogExpectedHypervolumeImprovement, SOBO qLogExpectedImprovement on one objective, both
with a SobolQMCNormalSampler, q = 1, on every remaining candidate that can improve
(:mod:`.pruning`). Failed evaluations are left out of the objective GPs; once one is seen, a
feasibility GP weights the acquisition by the probability of success. GP hyperparameters are
(re)fitted under a :class:`~.settings.FitPolicy`.
"""

from __future__ import annotations

import time

import numpy as np

from ..pareto import pareto_mask
from .acquisition import log_ehvi_from_marginals, q_one_log_ehvi
from .marginals import Marginals
from .problem import Problem, RunResult, hv_trace
from .pruning import discrete_argmax, improvement_outlook, samplewise_dominated
from .settings import FitPolicy, Profile


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


class GPFitter:
    """Builds one SingleTaskGP per objective each iteration under a :class:`FitPolicy`.

    Straightforward: fresh GPs, each fitted with ``fit_gpytorch_mll`` to convergence. Optimised:
    each GP starts from the previous iteration's hyperparameters; every ``refit_every``-th
    iteration (and, with ``refit_growth``, not before the training set grew by that fraction
    since the last refit) they are refined by ``refit_steps`` L-BFGS steps, in between the GPs
    are only conditioned on the new data. (A single batched multi-output GP was tried and was slower to
    fit here than two separate ones.)
    """

    def __init__(self, policy: FitPolicy) -> None:
        self.policy = policy
        self.states: dict[int, dict] = {}
        self.iteration = 0
        self.last_refit, self.last_refit_n = 0, 0  # iteration and training-set size

    def model(self, outputs: list):
        """A model of each ``(X (n_j, d), y (n_j, 1))`` in ``outputs``, in eval mode: one GP, or
        a ModelListGP (outputs may have different training points)."""
        from hpcds1mpi.runtime.quiet_imports import import_warnings_ignored

        with import_warnings_ignored():  # torch.jit.script's DeprecationWarning: s32 tester T3
            from botorch.fit import fit_gpytorch_mll
            from botorch.models import ModelListGP, SingleTaskGP
            from botorch.models.transforms.outcome import Standardize
            from botorch.optim.fit import fit_gpytorch_mll_scipy
            from gpytorch.mlls import ExactMarginalLogLikelihood

        # Due every refit_every iterations, and once the training set is large, only after it
        # grew by refit_growth of its size at the last refit (the hyperparameters of a
        # 200-point GP barely move with ten more points; each refit is ~25 L-BFGS evaluations
        # per GP, the largest part of a late iteration).
        n = len(outputs[0][0])
        since = self.iteration - self.last_refit
        refit_now = since % self.policy.refit_every == 0 and \
            since >= self.policy.refit_growth * self.last_refit_n
        if refit_now:
            self.last_refit, self.last_refit_n = self.iteration, n
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


def run_bo(problem: Problem, budget: int, n_init: int, seed: int, target: int | None,
            policy: FitPolicy, profile: Profile, ref: np.ndarray) -> RunResult:
    import torch

    from hpcds1mpi.runtime.quiet_imports import import_warnings_ignored

    with import_warnings_ignored():  # torch.jit.script's DeprecationWarning: s32 tester T3
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
    fitter = GPFitter(policy)
    X_all = torch.as_tensor(X_np, dtype=dtype)
    # The pre-filter's posteriors, followed from iteration to iteration (marginals.py).
    kept_marginals = Marginals(X_all) if policy.reuse and policy.prune else None
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
                # q = 1 without BoTorch's no-op batch bookkeeping: the same values (acquisition.py)
                make = q_one_log_ehvi if policy.reuse else qLogExpectedHypervolumeImprovement
                acq = make(
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
                    at = np.arange(len(remaining))  # positions of the scored in remaining
                    known = base = None
                    if policy.prune:
                        n_out = m if target is None else 1
                        known = kept_marginals.of(model, n_out, remaining)
                        outlook = improvement_outlook(model, X_all[remaining], sampler, n_out,
                                                      Yraw, ref if target is None else None,
                                                      marginals=known)
                        if outlook is not None and outlook[0].any():
                            at = at[outlook[0]]
                        elif outlook is not None and len(remaining) > profile.raw_samples:
                            # No candidate improves under any base sample: the Monte Carlo
                            # improvement is exactly zero everywhere and only the log
                            # smoothing's tail orders them (scoring all of them cost seconds
                            # per iteration on a 50-point front), so the raw_samples closest
                            # to improving are scored.
                            at = np.sort(np.argsort(outlook[1], kind="stable")[:profile.raw_samples])
                        base = getattr(sampler, "base_samples", None)
                        if (policy.dominance and known is not None and constraints is None
                                and base is not None and base.shape[-1] == model.num_outputs
                                and len(at) > 1):
                            # Candidates another one beats in every sample cannot be the
                            # maximum (pruning.samplewise_dominated): not scored.
                            z = base.reshape(-1, base.shape[-1])[:, :n_out].cpu().numpy()
                            at = at[~samplewise_dominated(known[0][at], known[1][at], z)]
                        scored = remaining[at]
                    pruned.append(len(remaining) - len(scored))
                    if (policy.direct_samples and target is None and base is not None
                            and base.shape[-1] == m and known is not None and constraints is None):
                        # samples from the followed marginals, no GPyTorch posterior
                        # (acquisition.log_ehvi_from_marginals); same values to ~1e-12
                        z = base.reshape(-1, m).cpu().numpy()
                        values = log_ehvi_from_marginals(acq, known[0][at], known[1][at], z,
                                                         profile.batch_size)
                        pick = int(scored[int(torch.argmax(values))])
                    else:
                        pick = int(scored[discrete_argmax(acq, X_all[scored], profile.batch_size)])
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
