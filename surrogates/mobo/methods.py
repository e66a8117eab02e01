"""The methods one budget is compared on, and the baselines without a model.

``mobo`` and ``sobo-*`` run the BO loop (:mod:`.loop`); ``random`` is the paper's random search,
"5 seeds, budget split evenly" (:func:`random_design`); ``exact`` evaluates every candidate, its
front is the yardstick.
"""

from __future__ import annotations

import time

import numpy as np

from hpcds1mpi.errors import ConfigError

from .loop import run_bo
from .problem import Problem, RunResult, default_n_init, hv_trace
from .settings import OPTIMISED, PAPER_PROFILE, FitPolicy, Profile

METHODS = ("mobo", "sobo-runtime", "sobo-energy", "sobo-power", "random", "exact")
RANDOM_STREAMS = 5


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
        if n < n_init:  # the cause is the candidate set, not the budget
            raise ConfigError(f"only {n} candidate configuration(s), fewer than the initial "
                              f"design of {n_init}; give a partition with more nodes or "
                              "--space full, or --method exact")
        if budget < n_init:
            raise ConfigError(
                f"budget {budget} is smaller than the initial design of {n_init} points; "
                f"raise --budget to at least {n_init}"
            )
    start = time.perf_counter()
    if method == "exact":
        result = run_fixed(problem, list(range(n)), method, seed, ref)
    elif method == "random":
        result = run_fixed(problem, random_design(n, budget, seed), method, seed, ref)
    else:
        target = None
        if method != "mobo":
            target = 0 if method == "sobo-runtime" else 1
        result = run_bo(problem, budget, n_init, seed, target, policy, profile, ref)
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


def run_fixed(problem: Problem, indices: list[int], method: str, seed: int, ref: np.ndarray) -> RunResult:
    Y, feasible, status = problem.evaluate(indices)
    return RunResult(method=method, seed=seed, budget=len(indices), n_init=0, ref_point=ref,
                     indices=list(indices), Y=Y, feasible=feasible, status=status,
                     hv_trace=hv_trace(Y, feasible, ref), iteration_s=[], fit_s=[], acq_s=[], wall_s=0.0)
