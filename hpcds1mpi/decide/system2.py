"""System 2: tune a job for real inside its allocation, starting from System 1's pick.

System 1 (:mod:`hpcds1mpi.decide.system1`) predicts; System 2 measures. Starting from a configuration
(System 1's pick, the user's current settings, or the rules-of-thumb default), it runs
configurations for real through the sweep machinery and

* keeps a configuration that beats the best so far by more than the measured noise,
* reverts to the best and excludes a configuration that is slower (a regression), fails, runs
  out of memory or times out,
* stops when the expected improvement of every remaining candidate is below the measured noise
  (with a model), when no untried neighbour of the best is left (without a model), or when
  the budget (runs or seconds) is spent.

With a model, candidates are ranked by expected improvement: the bundle's prediction is
rescaled by what the runs so far measured (the median ratio measured / predicted, in log space)
and its spread over ensemble members is taken as a log-normal error; the expected relative
improvement over the best measured value is ``E[max(0, best - Y)] / best``. Without a model the
search walks neighbours (one knob changed: nodes, ranks per node or threads x2 / /2, another
precision, another device).

``--objective front`` hands the search to MOBO (:mod:`hpcds1mpi.surrogates.mobo`) with real
runs as the objective (:class:`~hpcds1mpi.surrogates.objectives.RealRunObjective`).

The algorithm (:func:`tune`) is independent of how a run is made: it calls ``evaluate(config)``
and reads a runs-table row. :class:`InProcessRunner` runs one-configuration sweeps on
sub-communicators of the launched world (``mpiexec -n P hpcds1mpi tune ...``);
:class:`LaunchRunner` launches each configuration with srun / mpiexec (a kernel as a
one-configuration ``hpcds1mpi sweep``, a user's program through the external-program mode).
Both write every run to the telemetry file. ``benchmarks/tuning.py`` replays the same
algorithm on measured telemetry.
"""

from __future__ import annotations

import math
import os
import sys
import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from hpcds1mpi.config import DEVICES, PRECISIONS, Configuration
from hpcds1mpi.errors import ConfigError, LaunchError

#: Relative noise assumed at least (a run measured once has no spread of its own).
NOISE_FLOOR = 0.03
#: Default most runs a tuning session makes (the start included).
DEFAULT_BUDGET = 8
#: Prior log-error of the model's runtime prediction for a new problem: the shipped bundle's
#: held-out-size runtime MAPE is 22-24 % (analysis/results/h1_reference.md). The ensemble's
#: own spread underestimates it (members agree while being wrong together), so the expected
#: improvement uses both; measured/predicted ratios replace the prior as runs come in.
MODEL_ERROR_PRIOR = 0.25
#: Weight of the prior, in pseudo-runs, against the spread of measured/predicted ratios.
MODEL_ERROR_PRIOR_RUNS = 2
#: Runs made before the expected-improvement stop may end the search: the start plus two
#: runs of the best alternatives (one run cannot tell a pick from its runner-up). On the
#: reference telemetry (benchmarks/results/tuning.md, 72 problems) 2 left 6 problems more than
#: 5 % off the best, 3 left 1, at one more run per session (3.0 vs 2.0 made on average).
DEFAULT_MIN_RUNS = 3
OBJECTIVES = ("time", "energy", "front")
#: Launch environment variables that say this process is one rank of an MPI launch.
_LAUNCHED_VARS = ("PMI_RANK", "PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_FD")


# --------------------------------------------------------------------------------------------
# The search space


def config_key(config: Configuration) -> tuple:
    return (config.nodes, config.ranks_per_node, config.threads, config.device, config.precision)


@dataclass
class Space:
    """The configurations a tuning session may run (those the allocation can hold).

    Attributes:
        configs: every allowed configuration, in a fixed order.
    """

    configs: list[Configuration]

    def __post_init__(self) -> None:
        self._keys = {config_key(c): i for i, c in enumerate(self.configs)}
        if not self.configs:
            raise ConfigError("no configuration fits the allocation; ask for more cores or nodes")

    def __contains__(self, config: Configuration) -> bool:
        return config_key(config) in self._keys

    def index(self, config: Configuration) -> int:
        return self._keys[config_key(config)]

    def neighbours(self, config: Configuration) -> list[Configuration]:
        """Configurations one knob away, in a fixed heuristic order: more parallelism, ranks
        traded for threads, less parallelism, then other precisions and devices."""
        c = config
        same = (c.device, c.precision)
        moves = [
            Configuration(c.nodes, c.ranks_per_node * 2, c.threads, *same),
            Configuration(c.nodes, c.ranks_per_node, c.threads * 2, *same),
            Configuration(c.nodes * 2, c.ranks_per_node, c.threads, *same),
        ]
        # Trading ranks for threads at the same core count.
        if c.threads > 1:
            moves.append(Configuration(c.nodes, c.ranks_per_node * 2, c.threads // 2, *same))
        if c.ranks_per_node > 1:
            moves.append(Configuration(c.nodes, c.ranks_per_node // 2, c.threads * 2, *same))
        if c.ranks_per_node > 1:
            moves.append(Configuration(c.nodes, c.ranks_per_node // 2, c.threads, *same))
        if c.threads > 1:
            moves.append(Configuration(c.nodes, c.ranks_per_node, c.threads // 2, *same))
        if c.nodes > 1:
            moves.append(Configuration(c.nodes // 2, c.ranks_per_node, c.threads, *same))
        moves += [Configuration(c.nodes, c.ranks_per_node, c.threads, c.device, p)
                  for p in PRECISIONS if p != c.precision]
        moves += [Configuration(c.nodes, c.ranks_per_node, c.threads, d, c.precision)
                  for d in DEVICES if d != c.device]
        return [m for m in moves if m in self]


def build_space(partition, *, max_nodes: int, cores_per_node: int | None = None,
                devices: Sequence[str] | None = None, precisions: Sequence[str] | None = None,
                uses_threads: bool = True) -> Space:
    """Every configuration of System 1's grid that fits ``max_nodes`` nodes of ``partition``
    with ``cores_per_node`` usable cores each (the allocation)."""
    from dataclasses import replace

    from hpcds1mpi.config import configuration_grid

    cores = int(cores_per_node or partition.cores_per_node)
    part = replace(partition, max_nodes=max(1, int(max_nodes)), cores_per_node=cores)
    grid = configuration_grid(part, max_nodes=max_nodes, devices=devices, precisions=precisions,
                              uses_threads=uses_threads)
    configs = [Configuration(int(n), int(r), int(t), DEVICES[int(d)], PRECISIONS[int(p)])
               for n, r, t, d, p in zip(grid["nodes"], grid["ranks_per_node"], grid["threads"],
                                        grid["device_code"], grid["precision_code"])]
    return Space(configs)


def workload_space(partition, kernel: str | None, *, max_nodes: int,
                   cores_per_node: int | None = None) -> Space:
    """:func:`build_space` for a kernel (only the devices, precisions and threads it declares)
    or, with ``kernel`` None, for a user's program (everything the partition offers)."""
    devices = ["cpu", "gpu"] if partition.gpus_per_node else ["cpu"]
    precisions, uses_threads = None, True
    if kernel is not None:
        from hpcds1mpi import kernels as registry

        k = registry.get(kernel)
        devices = [d for d in k.devices if d in devices]
        precisions, uses_threads = list(k.precisions), bool(k.uses_threads)
    return build_space(partition, max_nodes=max_nodes, cores_per_node=cores_per_node,
                       devices=devices, precisions=precisions, uses_threads=uses_threads)


def allocation(partition, launcher: str, layout=None) -> tuple[int, int]:
    """(nodes, cores per node) a tune may use: the launched layout in-process, the Slurm
    allocation under srun, this node under mpiexec."""
    if layout is not None:
        return layout.nodes, partition.cores_per_node
    if launcher == "srun":
        nodes = int(os.environ.get("SLURM_JOB_NUM_NODES") or os.environ.get("SLURM_NNODES") or 1)
        cpus = os.environ.get("SLURM_CPUS_ON_NODE", "")
        cores = int(cpus) if cpus.isdigit() else partition.cores_per_node
        return nodes, min(cores, partition.cores_per_node) or cores
    return 1, partition.cores_per_node  # mpiexec without a host file: this node only


def default_config(space: Space, cores_per_node: int) -> Configuration:
    """The rules-of-thumb start: one node, every core a rank, one thread, CPU, fp64 (or the
    closest configuration the space has)."""
    want = Configuration(1, cores_per_node, 1, "cpu", "fp64")
    if want in space:
        return want
    cpu64 = [c for c in space.configs if c.device == "cpu" and c.precision == "fp64"
             and c.nodes == 1] or space.configs
    return max(cpu64, key=lambda c: (c.ranks_per_node * c.threads, c.ranks_per_node))


# --------------------------------------------------------------------------------------------
# Predictions


@dataclass
class Predictions:
    """A model's view of every configuration of the space (aligned with ``space.configs``).

    Attributes:
        value: ``(n,)`` predicted objective (runtime s or energy J), NaN where unknown.
        spread: ``(n,)`` standard deviation of the log prediction over ensemble members.
        fail_prob: ``(n,)`` predicted probability of failure.
        feasible: ``(n,)`` False where System 1 rules the configuration out (fail, memory).
    """

    value: np.ndarray
    spread: np.ndarray
    fail_prob: np.ndarray
    feasible: np.ndarray


def predictions_from_scores(space: Space, scores, objective: str = "time") -> Predictions:
    """Align System 1's :class:`~hpcds1mpi.decide.system1.Scores` with ``space``."""
    cols = scores.cols
    n = len(space.configs)
    value = np.full(n, np.nan)
    spread = np.full(n, 0.5)
    fail = np.zeros(n)
    feasible = np.zeros(n, dtype=bool)
    col = "runtime" if objective != "energy" else "energy"
    for i in range(len(cols["nodes"])):
        key = (int(cols["nodes"][i]), int(cols["ranks_per_node"][i]), int(cols["threads"][i]),
               str(cols["device"][i]), str(cols["precision"][i]))
        j = space._keys.get(key)
        if j is None:
            continue
        mid = float(cols[f"{col}_s" if col == "runtime" else "energy_j"][i])
        lo, hi = float(cols[f"{col}_lo"][i]), float(cols[f"{col}_hi"][i])
        value[j] = mid
        if lo > 0 and hi > 0 and math.isfinite(lo) and math.isfinite(hi):
            # lo/hi are the 10th/90th percentiles over members: +-1.2816 sigma in log space.
            spread[j] = max((math.log(hi) - math.log(lo)) / 2.5631, 0.02)
        fail[j] = float(cols["fail_prob"][i])
        feasible[j] = bool(cols["reason"][i] in ("", "deadline", "energy"))
    return Predictions(value, spread, fail, feasible)


def expected_improvement(best: float, mu_log: np.ndarray, sigma: np.ndarray) -> np.ndarray:
    """Expected relative improvement ``E[max(0, best - Y)] / best`` for log-normal ``Y``.

    Args:
        best: the best measured value (> 0).
        mu_log: ``(n,)`` mean of log Y.
        sigma: ``(n,)`` standard deviation of log Y (> 0).
    """
    from scipy.stats import norm

    sigma = np.maximum(sigma, 1e-6)
    z = (math.log(best) - mu_log) / sigma
    # E[max(0, b - Y)] = b * Phi(z) - exp(mu + s^2/2) * Phi(z - s)
    gain = best * norm.cdf(z) - np.exp(mu_log + sigma ** 2 / 2) * norm.cdf(z - sigma)
    return np.maximum(gain, 0.0) / best


# --------------------------------------------------------------------------------------------
# The search


@dataclass
class Trial:
    """One real run the tuner made and what it decided."""

    config: Configuration
    status: str
    value: float
    runtime_s: float
    energy_j: float
    noise: float
    decision: str  # start / kept / reverted / excluded
    reason: str = ""
    expected_gain: float = float("nan")
    run_id: str = ""
    measured_s: float = 0.0

    def as_dict(self) -> dict:
        out = {**self.config.as_dict(), "label": self.config.label(), "status": self.status,
               "value": self.value, "runtime_s": self.runtime_s, "energy_j": self.energy_j,
               "noise": self.noise, "decision": self.decision, "reason": self.reason,
               "expected_gain": self.expected_gain, "run_id": self.run_id}
        return {k: (None if isinstance(v, float) and not math.isfinite(v) else v)
                for k, v in out.items()}


@dataclass
class TuneResult:
    objective: str
    start: Configuration
    best: Configuration | None
    best_value: float
    trials: list[Trial]
    stop_reason: str
    noise: float
    front: list[dict] = field(default_factory=list)

    @property
    def runs(self) -> int:
        return len(self.trials)

    def as_dict(self) -> dict:
        return {"objective": self.objective, "start": self.start.as_dict(),
                "best": self.best.as_dict() if self.best else None,
                "best_value": self.best_value if math.isfinite(self.best_value) else None,
                "runs": self.runs, "noise": self.noise, "stop_reason": self.stop_reason,
                "trials": [t.as_dict() for t in self.trials], "front": self.front}


def run_noise(row: dict) -> float:
    """A run's relative noise: (median - fastest repeat) / median.

    The sweep's ``noise`` column is (max - min) / median, which one slow repeat (a page fault,
    a neighbour's burst) inflates without bound; the fastest repeat against the median measures
    how much the typical repeat can move, and is what a real difference must exceed.
    """
    try:
        median, fastest = float(row.get("runtime_s")), float(row.get("runtime_min_s"))
        if median > 0 and math.isfinite(fastest) and int(row.get("repeats") or 0) > 1:
            return min(max((median - fastest) / median, 0.0), 0.5)
    except (TypeError, ValueError):
        pass
    return 0.0


def _objective_value(row: dict, objective: str) -> float:
    key = "energy_j" if objective == "energy" else "runtime_s"
    try:
        value = float(row.get(key, float("nan")))
    except (TypeError, ValueError):
        return float("nan")
    return value if value > 0 else float("nan")


def tune(space: Space, start: Configuration, evaluate: Callable[[Configuration], dict], *,
         objective: str = "time", predictions: Predictions | None = None,
         budget: int = DEFAULT_BUDGET, time_budget_s: float | None = None,
         noise_floor: float = NOISE_FLOOR, log: Callable[[str], None] | None = None,
         min_runs: int = DEFAULT_MIN_RUNS) -> TuneResult:
    """Improve ``start`` by real runs (greedy, noise-aware; see the module docstring).

    Args:
        space: the configurations allowed.
        start: the first configuration run (System 1's pick or the user's settings).
        evaluate: runs one configuration, returns its runs-table row (``status``,
            ``runtime_s``, ``energy_j``, ``noise``, ``run_id``).
        objective: ``time`` or ``energy``.
        predictions: a model's predictions aligned with ``space`` (None: neighbour walk).
        budget: the most runs, the start included.
        time_budget_s: stop starting new runs after this many seconds.
        noise_floor: relative noise assumed at least.
        log: called with one line per decision.
        min_runs: runs made before the expected-improvement stop applies (budget permitting).

    Returns:
        The trials, the best configuration and why the search stopped.
    """
    if objective not in ("time", "energy"):
        raise ConfigError(f"objective must be time or energy here, got {objective!r}")
    if budget < 1:
        raise ConfigError(f"--budget must be at least 1, got {budget}")
    if start not in space:
        raise ConfigError(f"the start configuration {start.label()} does not fit the allocation")
    say = log or (lambda line: None)
    began = time.monotonic()
    trials: list[Trial] = []
    tried: set[int] = set()
    best: Trial | None = None
    noises: list[float] = []
    ratios: list[float] = []  # log(measured / predicted) of ok runs
    ratio_nodes: list[int] = []  # the node count of each ratio's run

    def noise() -> float:
        return max(noise_floor, float(np.median(noises)) if noises else 0.0)

    def model_error() -> float:
        """Log-error of the rescaled model: the ratios' spread, shrunk towards the prior."""
        dev = np.asarray(ratios) - (np.median(ratios) if ratios else 0.0)
        return math.sqrt((MODEL_ERROR_PRIOR ** 2 * MODEL_ERROR_PRIOR_RUNS + float(np.sum(dev ** 2)))
                         / (MODEL_ERROR_PRIOR_RUNS + len(ratios)))

    def run(config: Configuration, gain: float) -> Trial:
        nonlocal best
        tried.add(space.index(config))
        row = evaluate(config)
        status = str(row.get("status", "failed"))
        value = _objective_value(row, objective) if status == "ok" else float("nan")
        trial = Trial(config, status, value, float(row.get("runtime_s") or float("nan")),
                      float(row.get("energy_j") or float("nan")),
                      run_noise(row), "", expected_gain=gain,
                      run_id=str(row.get("run_id", "")),
                      measured_s=float(row.get("measured_s") or 0.0))
        if status == "ok" and math.isfinite(value):
            if math.isfinite(trial.noise) and trial.noise > 0:
                noises.append(trial.noise)
            if predictions is not None:
                p = predictions.value[space.index(config)]
                if math.isfinite(p) and p > 0:
                    ratios.append(math.log(value / p))
                    ratio_nodes.append(config.nodes)
        if best is None:
            if status == "ok" and math.isfinite(value):
                trial.decision, trial.reason = ("start" if not trials else "kept",
                                                "first successful run")
                best = trial
            else:
                trial.decision = "excluded"
                trial.reason = f"{status}: {str(row.get('error', ''))[:120]}"
        elif status != "ok" or not math.isfinite(value):
            trial.decision = "excluded"
            trial.reason = f"{status}: {str(row.get('error', ''))[:120]}"
        elif value < best.value * (1.0 - noise()):
            trial.decision = "kept"
            trial.reason = f"{100 * (1 - value / best.value):.1f} % better than {best.config.label()}"
            best = trial
        else:
            trial.decision = "reverted"
            trial.reason = (f"{100 * (value / best.value - 1):+.1f} % vs {best.config.label()} "
                            f"(noise {100 * noise():.1f} %)")
        trials.append(trial)
        say(f"run {len(trials)}: {config.label()} {status} "
            f"{_fmt(value, objective)} -> {trial.decision} ({trial.reason})")
        return trial

    run(start, float("nan"))
    stop = ""
    while True:
        if len(trials) >= budget:
            stop = f"budget of {budget} runs spent"
            break
        if time_budget_s is not None and time.monotonic() - began >= time_budget_s:
            stop = f"time budget of {time_budget_s:g} s spent"
            break
        untried = np.array([i not in tried for i in range(len(space.configs))])
        if predictions is not None:
            ok = untried & predictions.feasible & np.isfinite(predictions.value) & \
                (predictions.value > 0)
            if not ok.any():
                stop = "every configuration the model considers feasible was measured"
                break
            shift, transfer = _model_shift(space, ratios, ratio_nodes)
            mu = np.log(np.where(ok, predictions.value, 1.0)) + shift
            if best is None:
                # Nothing has worked yet: the predicted best untried configuration.
                gains = np.where(ok, -mu, -np.inf)
                pick = int(np.argmax(gains))
                run(space.configs[pick], float("nan"))
                continue
            sigma = np.sqrt(np.asarray(predictions.spread, float) ** 2 + model_error() ** 2
                            + transfer ** 2)
            gains = expected_improvement(best.value, mu, sigma)
            gains = np.where(ok, gains * (1.0 - np.clip(predictions.fail_prob, 0, 1)), -1.0)
            pick = int(np.argmax(gains))
            if gains[pick] < noise() and len(trials) >= min_runs:
                stop = (f"expected improvement {100 * gains[pick]:.1f} % of the best "
                        f"candidate ({space.configs[pick].label()}) is below the measured "
                        f"noise {100 * noise():.1f} %")
                break
            run(space.configs[pick], float(gains[pick]))
        else:
            centre = best.config if best is not None else start
            options = [c for c in space.neighbours(centre) if space.index(c) not in tried]
            if best is None and not options:
                options = [c for c in space.configs if space.index(c) not in tried][:1]
            if not options:
                stop = f"local optimum: every neighbour of {centre.label()} was measured"
                break
            run(options[0], float("nan"))
    say(f"stopped: {stop}")
    return TuneResult(objective, start, best.config if best else None,
                      best.value if best else float("nan"), trials, stop, noise())


def _model_shift(space: Space, ratios: list[float], ratio_nodes: list[int]
                 ) -> tuple[np.ndarray | float, np.ndarray | float]:
    """Per configuration: the log correction of the model's prediction and its uncertainty.

    A model is most wrong where it extrapolates, typically in node count (a bundle measured on
    one node predicts two). So the correction is the median log(measured / predicted) of the
    runs on the same node count; a node count with no run yet gets the median over all runs,
    with that median's size as extra uncertainty (whether the error carries over is unknown).
    Without this, two-node runs measured slower than predicted shifted the (right) one-node
    predictions up too, and the search stopped before trying one node (measured live).
    """
    if not ratios:
        return 0.0, 0.0
    overall = float(np.median(ratios))
    by_nodes: dict[int, float] = {}
    for n in set(ratio_nodes):
        by_nodes[n] = float(np.median([r for r, k in zip(ratios, ratio_nodes) if k == n]))
    nodes = np.array([c.nodes for c in space.configs])
    shift = np.array([by_nodes.get(int(n), overall) for n in nodes])
    transfer = np.array([0.0 if int(n) in by_nodes else abs(overall) for n in nodes])
    return shift, transfer


def _fmt(value: float, objective: str) -> str:
    if not math.isfinite(value):
        return "-"
    return f"{value:.4g} {'J' if objective == 'energy' else 's'}"


# --------------------------------------------------------------------------------------------
# The runtime-energy front with MOBO on real runs


def tune_front(space: Space, start: Configuration, evaluate: Callable[[Configuration], dict], *,
               budget: int = DEFAULT_BUDGET, seed: int = 0,
               log: Callable[[str], None] | None = None) -> TuneResult:
    """Find the runtime-energy front by MOBO with real runs as the objective.

    The start configuration is measured first; the hypervolume reference point is twice its
    (runtime, energy), so anything at least twice as bad in both does not count. Every
    configuration is run at most once (the objective caches), and every run is in telemetry.
    """
    import pandas as pd

    from hpcds1mpi.surrogates import mobo
    from hpcds1mpi.surrogates.objectives import RealRunObjective

    say = log or (lambda line: None)
    cache: dict[tuple, dict] = {}
    order: list[tuple] = []

    def run_one(row: dict) -> dict:
        config = Configuration(int(row["nodes"]), int(row["ranks_per_node"]),
                               int(row["threads"]), str(row["device"]), str(row["precision"]))
        key = config_key(config)
        if key not in cache:
            cache[key] = dict(evaluate(config))
            order.append(key)
            r = cache[key]
            say(f"run {len(order)}: {config.label()} {r.get('status')} "
                f"{_fmt(_objective_value(r, 'time'), 'time')} "
                f"{_fmt(_objective_value(r, 'energy'), 'energy')}")
        return cache[key]

    first = run_one(start.as_dict())
    if first.get("status") != "ok":
        raise ConfigError(f"the start configuration {start.label()} failed "
                          f"({first.get('status')}); start from another one (--ranks-per-node "
                          "etc.)")
    candidates = pd.DataFrame([c.as_dict() for c in space.configs])
    candidates["workload"] = "tuned"
    candidates["size"] = 1
    objective = RealRunObjective(run_one)
    problem = mobo.Problem(candidates, objective, ["runtime_s", "energy_j"])
    problem.ref_point = 2.0 * np.array([_objective_value(first, "time"),
                                        _objective_value(first, "energy")])
    budget = min(budget, len(space.configs))
    # The start is already one real run: MOBO gets the rest (a re-pick of the start is cached).
    rest = budget - 1
    if rest >= 1:
        n_init = min(mobo.default_n_init(problem), rest)
        mobo.run(problem, "mobo", rest, seed=seed, n_init=n_init)
    trials = []
    for key in order:
        r = cache[key]
        cfg = Configuration(*key)
        trials.append(Trial(cfg, str(r.get("status")), _objective_value(r, "time"),
                            _objective_value(r, "time"), _objective_value(r, "energy"),
                            float(r.get("noise") or 0.0), "measured",
                            run_id=str(r.get("run_id", ""))))
    ok = [t for t in trials if t.status == "ok" and math.isfinite(t.energy_j)]
    from hpcds1mpi.analysis.metrics import pareto_mask

    front = []
    if ok:
        Y = np.array([[t.runtime_s, t.energy_j] for t in ok])
        mask = pareto_mask(Y)
        front = [{**t.config.as_dict(), "label": t.config.label(), "runtime_s": t.runtime_s,
                  "energy_j": t.energy_j} for t, m in zip(ok, mask) if m]
        for t, m in zip(ok, mask):
            t.decision = "front" if m else "dominated"
    fastest = min(ok, key=lambda t: t.runtime_s) if ok else None
    stop = f"budget of {budget} runs spent" if len(order) >= budget else \
        "MOBO ended (candidates exhausted)"
    say(f"stopped: {stop}; front of {len(front)} measured configurations")
    return TuneResult("front", start, fastest.config if fastest else None,
                      fastest.runtime_s if fastest else float("nan"), trials, stop,
                      NOISE_FLOOR, front)


# --------------------------------------------------------------------------------------------
# Running configurations for real


def launched_under_mpi(env: dict | None = None) -> bool:
    """True when this process is one rank of an mpiexec / srun --mpi launch."""
    env = os.environ if env is None else env
    return any(v in env for v in _LAUNCHED_VARS)


def _row_of(out: str, run_id: str) -> dict:
    from hpcds1mpi.records import telemetry
    from hpcds1mpi.errors import TelemetryError

    try:
        store = telemetry.load(out)
    except TelemetryError as exc:
        return {"status": "crashed", "error": f"no telemetry record ({exc})", "run_id": run_id}
    rows = [row for (_, rid), row in store.runs.items() if rid == run_id]
    if not rows:
        return {"status": "crashed", "error": "the run left no record in the telemetry file",
                "run_id": run_id}
    return dict(rows[-1])


@dataclass
class RunSettings:
    """How each configuration is measured (the sweep's options)."""

    workload: str
    size: int
    min_time: float = 0.2
    max_repeats: int = 5
    warmup: int = 1
    timeout: float = 600.0
    program: str | None = None  # a user's program instead of a kernel


class InProcessRunner:
    """Runs one-configuration sweeps on the launched world (collective; see :meth:`serve`).

    Rank 0 calls :meth:`__call__` (from :func:`tune`); every other rank calls :meth:`serve`,
    which mirrors each run until rank 0 calls :meth:`close`.
    """

    def __init__(self, settings: RunSettings, out: str, partition, world):
        self.settings = settings
        self.out = out
        self.partition = partition
        self.world = world

    def _plan(self, config: Configuration):
        from hpcds1mpi.measure import sweep

        s = self.settings
        doc = {"sweep": {"min_time": s.min_time, "max_repeats": s.max_repeats,
                         "warmup": s.warmup, "timeout": s.timeout, "snapshot_every": 0},
               "kernel": [{"name": s.workload, "sizes": [s.size], "nodes": [config.nodes],
                           "ranks_per_node": [config.ranks_per_node],
                           "threads": [config.threads], "devices": [config.device],
                           "precisions": [config.precision]}]}
        return sweep.build_plan(doc, self.partition)

    def _run(self, config: Configuration) -> None:
        from hpcds1mpi.measure import sweep

        sweep.run_inprocess(self._plan(config), self.out, self.partition, resume=True,
                            progress=False)

    def __call__(self, config: Configuration) -> dict:
        self.world.bcast(config.as_dict(), root=0)
        self._run(config)
        return _row_of(self.out, self._plan(config).runs[0].run_id)

    def serve(self) -> None:
        while True:
            item = self.world.bcast(None, root=0)
            if item is None:
                return
            self._run(Configuration(**item))

    def close(self) -> None:
        self.world.bcast(None, root=0)


class LaunchRunner:
    """Launches each configuration with srun / mpiexec and reads its row from telemetry.

    A kernel runs as ``<launcher> hpcds1mpi sweep --kernel K ... --resume`` (one configuration,
    in-process under that launch); a user's program through the sweep's external-program mode.
    """

    def __init__(self, settings: RunSettings, out: str, partition, launcher: str,
                 cluster_file: str | None = None, partition_name: str | None = None,
                 relaunches: int = 1):
        self.relaunches = relaunches
        #: (configuration, exit code, last stderr line) of every launch made again
        self.relaunched: list[tuple[str, int, str]] = []
        self.settings = settings
        self.out = out
        self.partition = partition
        self.launcher = launcher
        self.cluster_file = cluster_file
        self.partition_name = partition_name

    def __call__(self, config: Configuration) -> dict:
        import subprocess
        from pathlib import Path

        from hpcds1mpi.launch import launchers
        from hpcds1mpi.measure.sweep import RunSpec

        s = self.settings
        if s.program is not None:
            from hpcds1mpi.measure import external

            plan = external.build_external_plan(
                s.program, s.workload, sizes=[s.size], nodes=[config.nodes],
                ranks_per_node=[config.ranks_per_node], threads=[config.threads],
                devices=config.device, precisions=config.precision, timeout=s.timeout)
            external.run_external(plan, self.out, self.partition, resume=True,
                                  launcher=self.launcher, progress=False)
            return _row_of(self.out, plan.runs[0].run_id)
        exe = Path(sys.executable).parent / "hpcds1mpi"
        argv = [str(exe) if exe.exists() else "hpcds1mpi", "sweep", "--kernel", s.workload,
                "--sizes", str(s.size), "--nodes", str(config.nodes),
                "--ranks-per-node", str(config.ranks_per_node), "--threads", str(config.threads),
                "--devices", config.device, "--precisions", config.precision,
                "--min-time", str(s.min_time), "--max-repeats", str(s.max_repeats),
                "--warmup", str(s.warmup), "--timeout", str(s.timeout),
                "--snapshot-every", "0", "--out", self.out, "--resume", "--no-progress"]
        if self.cluster_file:
            argv += ["--cluster", self.cluster_file]
        if self.partition_name:
            argv += ["--partition", self.partition_name]
        tokens = launchers.launch_tokens(config, launcher=self.launcher) + argv
        env = dict(os.environ)
        env.update(launchers.thread_env(config))
        run_id = RunSpec(s.workload, s.size, config).run_id
        for attempt in range(1 + self.relaunches):
            try:
                proc = subprocess.run(tokens, env=env, capture_output=True, text=True,
                                      timeout=s.timeout + 60)
            except FileNotFoundError:
                raise LaunchError(f"{tokens[0]} not found; run tune inside an allocation with "
                                  "srun on PATH, or pass --launcher mpiexec") from None
            except subprocess.TimeoutExpired:
                return {"status": "timeout",
                        "error": f"launch did not end within {s.timeout + 60:g} s"}
            row = _row_of(self.out, run_id)
            # A launch that failed before the sweep recorded anything never ran the kernel
            # (e.g. Slurm's pmi2 plugin rejecting a wire-up message, seen on the two-node test
            # Slurm): launch it again rather than exclude a configuration never measured.
            never_ran = row.get("status") == "crashed" and str(row.get("error", "")).startswith(
                ("the run left no record", "no telemetry record"))
            if proc.returncode == 0 or not never_ran or attempt == self.relaunches:
                break
            self.relaunched.append((config.label(), proc.returncode,
                                    (proc.stderr.strip().splitlines() or [""])[-1][:200]))
        if row.get("status") == "crashed" and proc.returncode != 0:
            last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
            row["error"] = f"launch exited {proc.returncode}: {last[:200]}"
        return row


def system1_start(space: Space, predictions: Predictions) -> Configuration | None:
    """System 1's pick within the space: the best predicted feasible configuration."""
    ok = predictions.feasible & np.isfinite(predictions.value) & (predictions.value > 0)
    if not ok.any():
        return None
    return space.configs[int(np.argmin(np.where(ok, predictions.value, np.inf)))]


def model_predictions(bundle, space: Space, partition, workload: str, size: int,
                      objective: str = "time") -> Predictions | None:
    """System 1's predictions over ``space``; None when the bundle never measured the workload
    (its guesses would only mislead the search)."""
    from dataclasses import replace

    from hpcds1mpi.decide import system1 as s1
    from hpcds1mpi.kernels import support as kernel_support

    if workload not in {str(w) for w in getattr(bundle, "workloads", [])}:
        return None
    uses_threads, precisions, devices = kernel_support(workload)
    max_nodes = max(c.nodes for c in space.configs)
    part = replace(partition, max_nodes=max(max_nodes, 1))
    scores = s1.score(bundle, workload, size, [part],
                      s1.Constraints(max_nodes=max_nodes, devices=devices,
                                     precisions=precisions), uses_threads=uses_threads)
    return predictions_from_scores(space, scores, objective)
