"""System 1's view of a tuning session's space: predictions, their error, the starting pick.

:func:`model_predictions` scores the space with a model bundle (None when the bundle never
measured the workload), :func:`system1_start` is its best feasible pick, and
:func:`expected_improvement` ranks candidates for the search (:mod:`hpcds1mpi.decide.system2`);
:func:`other_machine_note` says when a bundle of another machine is set aside.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from hpcds1mpi.config import Configuration
from hpcds1mpi.decide.tune_space import Space


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


def other_machine_note(bundle, partition) -> str | None:
    """Why ``bundle`` is no start for a tune on ``partition`` (None: it is): the guard's
    hardware check (:func:`~hpcds1mpi.decide.trained_hardware.matching_partition`). Its
    predictions are of another machine: its pick would be one recommend escalates."""
    from hpcds1mpi.decide.trained_hardware import matching_partition

    if matching_partition(bundle, partition) is not None:
        return None
    return (f"the model was trained on other hardware than {partition.name} "
            f"({partition.cores_per_node} cores, {partition.gpus_per_node} GPUs, "
            f"{partition.memory_gb:g} GB); searching without it (a model of this machine is "
            "trained from runs here: `hpcds1mpi train`; `learn` adds runs only to a model of "
            "the machine they ran on)")
