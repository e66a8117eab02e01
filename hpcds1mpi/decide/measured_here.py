"""What was measured at the question's own size: runs outrank the failure classifier there.

System 1 vetoes a configuration any ensemble member expects to fail. At a size the bundle
measured, that classifier, pooled over sizes and layouts, can outvote the runs themselves:
psmall at size 1 ran ok on 1 rank (6.97 ms) and failed on 2 and 4 (PETSc's DMDA refuses a
grid finer than the ranks), yet every layout, the measured one too, was predicted to fail,
and recommend escalated with "every configuration is predicted to fail here" (s29 tester
C5). A configuration measured ok at the size, on the question's hardware, and never measured
failing there is not vetoed (:func:`measured_at`); one measured failing there is vetoed and
named (:func:`failed_here_note`). Between two sizes the configuration ran ok at, with no
failure of it measured from the one to the other, it is not vetoed either: a layout that ran
ok at 96 and 128 is no likelier to fail at 112 than at those, yet the classifier had vetoed
it there (s29 verifier V2-4). Past its measured sizes the classifier still decides.
"""

from __future__ import annotations

import numpy as np

from hpcds1mpi.config import FAILED_TO_RUN, OK

CONFIG_COLUMNS = ("nodes", "ranks_per_node", "threads", "device", "precision")


def candidate_codes(cols: dict):
    """A function returning ``cols``' ``(n,)`` configuration codes, computed at its first call
    only: :func:`measured_at` and ``own_failures`` both need them, often neither (no run)."""
    found = []

    def codes() -> np.ndarray:
        if not found:
            from hpcds1mpi.surrogates.size_neighbours import config_codes

            found.append(config_codes({c: cols[c] for c in CONFIG_COLUMNS}))
        return found[0]
    return codes


def measured_at(bundle, workload: str, size: float, cols: dict, trained: dict | None = None,
                codes=None) -> tuple[np.ndarray, np.ndarray]:
    """``(ok, failed)``: ``(n,)`` masks of ``cols``' candidates whose configuration the
    bundle's training rows ran on the candidate's hardware: ok at ``size`` and never failing
    there, or ok at a smaller and at a larger size with no failure from the one to the other
    (:func:`_bracketed`); and failing at ``size`` (a failure in any round counts, as
    ``rounds.collapse_rounds`` keeps it).

    Args:
        trained: partition -> the measured partition of its hardware, None where none has
            it, for every partition of ``cols`` (None: each is itself), as
            :func:`~hpcds1mpi.decide.system1.score` finds it.
        codes: ``cols``' :func:`candidate_codes` (None: made here).
    """
    n = len(np.asarray(cols["nodes"]))
    ok, failed = np.zeros(n, dtype=bool), np.zeros(n, dtype=bool)
    runs = _runs_at(bundle, str(workload), float(size))
    if not runs or (trained is not None and not any(name in runs for name in trained.values())):
        return ok, failed  # no scored partition's hardware ran about it: ~0.6 ms of codes saved
    codes = (codes or candidate_codes(cols))()
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
    """partition -> (configuration codes ran ok at ``size`` or around it (:func:`_bracketed`),
    codes that failed at ``size``) in the bundle's training rows; ``{}`` where it keeps none
    at the size nor on both sides of it."""
    kept = workload_runs(bundle, workload)
    if kept is None:
        return {}
    runs = {}
    for p, (codes, sizes, good, bad) in kept.items():
        here = np.isclose(sizes, size, rtol=1e-9, atol=0.0)
        if not here.any() and not ((sizes < size).any() and (sizes > size).any()):
            continue
        around = _bracketed(codes, sizes, good, bad, size)
        runs[p] = (np.union1d(codes[here & good], around), codes[here & bad])
    return runs


def layout_text(nodes, ranks_per_node, threads, device, precision) -> str:
    """A layout as the notes name it: "1 node x 2 ranks x 1 thread (cpu, fp64)"."""
    n, r, t = int(nodes), int(ranks_per_node), int(threads)
    return (f"{n} node{'s' if n > 1 else ''} x {r} rank{'s' if r > 1 else ''} x {t} "
            f"thread{'s' if t > 1 else ''} ({device}, {precision})")


def workload_runs(bundle, workload: str) -> dict | None:
    """partition -> (configuration codes, sizes, ok mask, failure mask) of ``workload``'s
    training rows, read once per bundle and workload (only the question's size changes: s30
    review); None without rows. A ``timeout`` is in neither mask."""
    from hpcds1mpi.decide import bundle_cache

    return bundle_cache.memo(bundle, ("measured_here", workload),
                             lambda: _read_runs(bundle, workload))


def _read_runs(bundle, workload: str) -> dict | None:
    """:func:`workload_runs`, from the workload's training rows (:mod:`.workload_rows`)."""
    from hpcds1mpi.decide.workload_rows import workload_rows
    from hpcds1mpi.surrogates.size_neighbours import config_codes

    rows = workload_rows(bundle, workload)
    if rows is None:
        return None
    try:
        status = rows["status"].astype(str)
        sizes = np.asarray(rows["size"], dtype=float)
        partitions = rows["partition"].astype(str)
        codes = config_codes({c: rows[c] for c in CONFIG_COLUMNS}) if len(status) \
            else np.asarray([])
    except KeyError:  # training rows without outcomes
        return None
    good, bad = status == OK, np.isin(status, sorted(FAILED_TO_RUN))
    return {p: (codes[on], sizes[on], good[on], bad[on])
            for p in np.unique(partitions).tolist() for on in [partitions == p]}


def _bracketed(codes: np.ndarray, sizes: np.ndarray, good: np.ndarray, bad: np.ndarray,
               size: float) -> np.ndarray:
    """The codes that ran ok at a size below ``size`` and at one above it, and never failed
    from the largest such size below to the smallest above (both included)."""
    unique, which = np.unique(codes, return_inverse=True)
    low, high = np.full(len(unique), -np.inf), np.full(len(unique), np.inf)
    below, above = good & (sizes < size), good & (sizes > size)
    np.maximum.at(low, which[below], sizes[below])
    np.minimum.at(high, which[above], sizes[above])
    spoiled = np.zeros(len(unique), dtype=bool)
    spoiled[which[bad & (sizes >= low[which]) & (sizes <= high[which])]] = True
    return unique[np.isfinite(low) & np.isfinite(high) & ~spoiled]


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
        label = layout_text(*(cols[c][i] for c in CONFIG_COLUMNS))
        if label not in seen:
            seen.append(label)
    if not seen:
        return ""
    return f"measured failing at size {size:g}: " + "; ".join(seen)
