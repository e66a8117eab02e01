"""The guard's rule for a size between two measured sizes of one configuration (s38 tester A8).

System 1 predicts such a size by interpolating those two runs, so it is no stranger than the
sizes around it. A model trained on few sizes need not embed it between them, though: MPB
trained on 16, 24, 32 and 48 put sizes 37-40 at 1.3x the escalate threshold ("far from
everything measured") while 34 and 42-46 passed. So inside a bracket the learned distance is
compared with how far the embedding wanders between the same two measured sizes
(:func:`bracket_wander`: the largest distance of a few sizes spread over the bracket, the job's
own size left out): a size is unfamiliar there only where it stands out from its neighbours
(a model that embeds that one size unlike its neighbours), never for the wandering alone.

A bracket counts when its two sizes are at most :data:`MAX_BRACKET_RATIO` apart: across a
wider gap the learned check judges alone, as before.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

#: Widest measured gap interpolated over: the 2x that extrapolation is tolerated, on each side.
MAX_BRACKET_RATIO = 4.0
#: Sizes spread over a bracket (log-spaced, ends left out) to see how the embedding wanders.
WANDER_SAMPLES = 8


def measured_sizes(bundle) -> dict:
    """(workload, partition) -> one sorted array of ok-measured sizes per configuration, from
    every training row (kept with the bundle)."""
    from hpcds1mpi.decide import bundle_cache

    return bundle_cache.memo(bundle, ("guard_measured_sizes",), lambda: _measured_sizes(bundle))


def _measured_sizes(bundle) -> dict:
    from hpcds1mpi.config import OK
    from hpcds1mpi.decide import bundle_cache
    from hpcds1mpi.decide.guard_reference import CONFIG_COLUMNS

    frame = bundle_cache.training_columns(bundle)
    n = len(frame)
    ok = np.asarray(frame["status"]).astype(str) == OK if "status" in frame \
        else np.ones(n, dtype=bool)
    parts = np.asarray(frame["partition"]).astype(str) if "partition" in frame \
        else np.full(n, "")
    configs = list(zip(*[np.asarray(frame[c]).astype(str).tolist()
                         for c in CONFIG_COLUMNS if c in frame and c != "partition"])) \
        or [()] * n
    sizes: dict = {}
    for i in np.flatnonzero(ok):
        key = (str(frame["workload"][i]), str(parts[i]))
        sizes.setdefault(key, {}).setdefault(configs[i], set()).add(float(frame["size"][i]))
    return {key: [np.sort(np.fromiter(s, float)) for s in per_config.values()]
            for key, per_config in sizes.items()}


def bracket(bundle, workload: str, size: float,
            partition_name: str | None) -> tuple[float, float] | None:
    """The two measured sizes of one configuration of ``workload`` on ``partition_name`` that
    ``size`` lies strictly between, the narrowest such pair, where at most
    :data:`MAX_BRACKET_RATIO` apart; None otherwise (no partition: nothing is measured)."""
    if partition_name is None:
        return None
    try:
        size = float(size)
    except (TypeError, ValueError):
        return None
    best = None
    for sizes in measured_sizes(bundle).get((str(workload), str(partition_name)), []):
        at = int(np.searchsorted(sizes, size))
        if 0 < at < len(sizes) and sizes[at - 1] < size < sizes[at]:
            lo, hi = float(sizes[at - 1]), float(sizes[at])
            if lo > 0 and hi / lo <= MAX_BRACKET_RATIO and (best is None or
                                                             hi / lo < best[1] / best[0]):
                best = (lo, hi)
    return best


def bracket_wander(distance_of: Callable[[float], float], size, lo: float, hi: float) -> float:
    """The largest learned distance (``distance_of(size)``) of :data:`WANDER_SAMPLES` sizes
    spread (log-spaced) inside ``lo``-``hi``, ``size`` itself left out; a whole-number size's
    samples are whole numbers."""
    spread = np.exp(np.linspace(math.log(lo), math.log(hi), WANDER_SAMPLES + 2)[1:-1])
    whole = isinstance(size, (int, np.integer))
    samples = sorted({int(round(s)) if whole else float(s) for s in spread} - {size, lo, hi})
    found = [distance_of(s) for s in samples]
    finite = [d for d in found if math.isfinite(d)]
    return max(finite) if finite else 0.0


def bracket_thresholds(bundle, workload: str, size, partition_name: str | None,
                       calibration, escalate_ratio: float,
                       distance_of: Callable[[float], float]) -> tuple[float, float, tuple | None]:
    """The learned check's (auto, escalate) thresholds for ``size``, and its bracket: the
    calibration's; for a bracketed size raised to ``escalate_ratio`` times the bracket's
    wandering (auto: a smooth bump's top stands a little above the sizes sampled around it)
    and ``escalate_ratio`` times that (escalate), as the calibration keeps them apart."""
    auto, esc = calibration.auto_threshold, calibration.escalate_threshold
    found = bracket(bundle, workload, size, partition_name)
    if found is None:
        return auto, esc, None
    wander = bracket_wander(distance_of, size, *found)
    auto = max(auto, escalate_ratio * wander)
    return auto, max(esc, escalate_ratio * auto), found


__all__ = ["MAX_BRACKET_RATIO", "bracket", "bracket_thresholds", "bracket_wander",
           "measured_sizes"]
