"""What was measured at the question's own size: runs outrank the failure classifier there.

System 1 vetoes a configuration any ensemble member expects to fail. At a size the bundle
measured, that classifier, pooled over sizes and layouts, can outvote the runs themselves:
psmall at size 1 ran ok on 1 rank (6.97 ms) and failed on 2 and 4 (PETSc's DMDA refuses a
grid finer than the ranks), yet every layout, the measured one too, was predicted to fail,
and recommend escalated with "every configuration is predicted to fail here" (s29 tester
C5). A configuration measured ok at the size, on the question's hardware, and never measured
failing there is not vetoed (:func:`measured_at`); one measured failing there is vetoed and
named (:func:`failed_here_note`).
"""

from __future__ import annotations

import numpy as np

from hpcds1mpi.config import FAILURE_STATUSES, OK

_CONFIG = ("nodes", "ranks_per_node", "threads", "device", "precision")


def measured_at(bundle, workload: str, size: float, cols: dict, trained: dict | None = None
                ) -> tuple[np.ndarray, np.ndarray]:
    """``(ok, failed)``: ``(n,)`` masks of ``cols``' candidates whose configuration the
    bundle's training rows ran at ``size`` on the candidate's hardware: ok and never failing
    there, and failing there (a failure in any round counts, as ``rounds.collapse_rounds``
    keeps it).

    Args:
        trained: partition -> the measured partition of its hardware, None where none has
            it, for every partition of ``cols`` (None: each is itself), as
            :func:`~hpcds1mpi.decide.system1.score` finds it.
    """
    n = len(np.asarray(cols["nodes"]))
    ok, failed = np.zeros(n, dtype=bool), np.zeros(n, dtype=bool)
    runs = _runs_at(bundle, str(workload), float(size))
    if not runs or (trained is not None and not any(name in runs for name in trained.values())):
        return ok, failed  # no scored partition's hardware ran this size: ~0.6 ms of codes saved
    from hpcds1mpi.surrogates.size_neighbours import config_codes

    codes = config_codes({c: cols[c] for c in _CONFIG})
    partitions = np.asarray(cols["partition"]).astype(str)
    for part in np.unique(partitions).tolist():
        name = (trained or {}).get(part, part)
        if name is None or name not in runs:
            continue
        good, bad = runs[name]
        on = partitions == part
        failed[on] = np.isin(codes[on], bad)
        ok[on] = np.isin(codes[on], good) & ~failed[on]
    return ok, failed


def _runs_at(bundle, workload: str, size: float) -> dict:
    """partition -> (configuration codes ran ok, codes that failed) at ``size`` in the
    bundle's training rows; ``{}`` where it keeps none."""
    from hpcds1mpi.decide import bundle_cache
    from hpcds1mpi.surrogates.size_neighbours import config_codes

    try:
        rows = bundle_cache.training_columns(bundle)
        status = np.asarray(rows["status"]).astype(str)
        here = (np.asarray(rows["workload"]).astype(str) == workload) & \
            np.isclose(np.asarray(rows["size"], dtype=float), size, rtol=1e-9, atol=0.0)
    except (AttributeError, KeyError):  # no training rows, or none with outcomes
        return {}
    if not here.any():
        return {}
    idx = np.flatnonzero(here)
    codes = config_codes({c: np.asarray(rows[c])[idx] for c in _CONFIG})
    status, partitions = status[idx], np.asarray(rows["partition"]).astype(str)[idx]
    bad = np.isin(status, sorted(FAILURE_STATUSES))
    return {p: (codes[(partitions == p) & (status == OK)], codes[(partitions == p) & bad])
            for p in np.unique(partitions).tolist()}


def failed_here_note(cols: dict, size: float, partition: str | None = None) -> str:
    """One line naming the configurations measured failing at ``size`` (on ``partition``
    only, when given), from the ``measured_failed`` column System 1 adds; ``""`` when none."""
    if "measured_failed" not in cols:
        return ""
    mask = np.asarray(cols["measured_failed"], dtype=bool)
    if partition is not None:
        mask = mask & (np.asarray(cols["partition"]) == partition)
    seen = []
    for i in np.flatnonzero(mask).tolist():
        n, r, t = (int(cols[c][i]) for c in ("nodes", "ranks_per_node", "threads"))
        label = (f"{n} node{'s' if n > 1 else ''} x {r} rank{'s' if r > 1 else ''} x {t} "
                 f"thread{'s' if t > 1 else ''} ({cols['device'][i]}, {cols['precision'][i]})")
        if label not in seen:
            seen.append(label)
    if not seen:
        return ""
    return f"measured failing at size {size:g}: " + "; ".join(seen)
