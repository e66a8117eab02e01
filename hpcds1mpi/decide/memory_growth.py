"""A user's program's memory need beyond its largest measured size, grown as its peak grew.

A kernel declares its working set (:func:`~hpcds1mpi.decide.memory_limits.declared_need_mb`);
a program declares none, and the learned need (``peak_rss_mb``) is flat beyond the measured
sizes: held at the largest run's peak while the runtime grew along the measured slope. memp,
whose peak grows as size^2 (262, 550, 994 MiB per rank at 8000, 12000, 16000), was asked
``--mem=2973M`` at 20000 and used 3050 MiB (s46 tester J7).

So, above the workload's largest measured size, each candidate's need per rank is at least
its own largest run's peak grown to the size along the steepest log-log slope of the peak
with size that its partition's layouts showed between their two largest measured sizes
(:func:`grown_need_mb`); a layout never measured (or hardware never measured) grows the held
need from the largest size along the steepest slope of any layout of the workload. The
steepest, not each layout's own: a rank's fixed memory (MPI, libraries) flattens the slope of
layouts of many ranks, whose data then grows faster than they showed (the analytic program's
4 x 8 ranks: 1.59 between its two largest sizes, 18 % short at twice the size), and a need
short of the real one is a job killed, one above it a larger request. Each slope is clipped
to ``[0, MAX_GROWTH]``. Where no layout ran at two sizes the
need stays held, and the answer's note says so. Inside and below the sizes nothing changes.
"""

from __future__ import annotations

import numpy as np

from hpcds1mpi.surrogates.columns import distinct
from hpcds1mpi.surrogates.neighbour_bounds import MAX_GROWTH, _measured_as
from hpcds1mpi.surrogates.size_neighbours import config_codes

#: Column System 1 adds where the need was grown: the log-log slope used (NaN: held).
MEMORY_GROWTH = "mem_growth"

_CODE = (1 << 44) - 1  # a NeighbourRuntimes key: size index << 44 | configuration code


def grown_need_mb(cols: dict, measured, workload: str, size: float, trained: dict | None,
                  size_range) -> np.ndarray | None:
    """``(n,)`` each candidate's memory need per rank, MiB, grown along its peak's measured
    growth with size (NaN where nothing says how it grows), for a ``size`` above the
    workload's ``size_range`` ``(smallest, largest)``; :data:`MEMORY_GROWTH` is added to
    ``cols`` then. None inside or below the sizes, or with none known.

    Args:
        cols: System 1's candidate columns (configuration, ``partition``, ``peak_rss_mb``).
        measured: the bundle's :class:`~hpcds1mpi.surrogates.neighbour_bounds.NeighbourRuntimes`.
        trained: partition -> the measured partition of its hardware (None: none has it).
    """
    if size_range is None or not size > float(size_range[1]):
        return None
    largest = float(size_range[1])
    ends = {part: _peak_ends(measured.groups[key], measured.memories.get(key))
            for key in measured.groups if key[0] == str(workload) for part in (key[1],)}
    every = [e[3][np.isfinite(e[3])] for e in ends.values()]
    every = np.concatenate(every) if every else np.zeros(0)
    n = len(np.asarray(cols["nodes"]))
    need, slope = np.full(n, np.nan), np.full(n, np.nan)
    if not len(every):  # no layout ran at two sizes: the need stays held
        cols[MEMORY_GROWTH] = slope
        return need
    overall = float(np.max(every))
    # a layout it never ran, or hardware never measured: the held need grown from the edge
    held = np.asarray(cols["peak_rss_mb"], dtype=float)
    need[:] = held * (float(size) / largest) ** overall
    slope[:] = overall
    partitions = np.asarray(cols["partition"])
    for part in distinct(partitions).tolist():
        name = _measured_as(trained, part)
        if name not in ends:
            continue
        codes, top_size, top_log, own = ends[name]
        rows = np.flatnonzero(partitions == part)
        wanted = config_codes({c: np.asarray(cols[c])[rows] for c in
                               ("nodes", "ranks_per_node", "threads", "device", "precision")})
        pos = np.clip(np.searchsorted(codes, wanted), 0, max(len(codes) - 1, 0))
        found = (codes[pos] == wanted) if len(codes) else np.zeros(len(rows), dtype=bool)
        here = own[np.isfinite(own)]
        used = float(np.max(here)) if len(here) else overall
        at, idx = pos[found], rows[found]
        need[idx] = np.exp(top_log[at]) * (float(size) / top_size[at]) ** used
        slope[idx] = used
    cols[MEMORY_GROWTH] = slope
    return need


def memory_growth_note(size: int, size_range, row: dict) -> str:
    """The answer's note on a program's memory need at ``size`` outside its measured
    ``size_range`` for the pick ``row``: grown along which slope, or held at the largest run's
    peak (below the sizes: taken from the runs there, as before)."""
    lo, hi = float(size_range[0]), float(size_range[1])
    runs = f"runs at sizes {lo:g}–{hi:g}"
    slope = float(row.get(MEMORY_GROWTH, np.nan))
    if size < lo:
        return (f"memory need at size {size} is extrapolated from {runs} (a program declares "
                "no memory model)")
    if np.isfinite(slope):
        return (f"memory need at size {size} is extrapolated from {runs} along its peak's "
                f"measured growth with size (as size^{slope:.2f} per rank; a program declares "
                "no memory model)")
    return (f"memory need at size {size} is held at the largest measured run's peak: no layout "
            f"of the {runs} ran at two sizes to show how it grows (a program declares no "
            "memory model; sweep it at a second size to measure that)")


def _peak_ends(group: tuple, memories: np.ndarray | None) -> tuple:
    """``(codes, top size, log peak there, slope)``, each ``(c,)``, of one
    :attr:`~hpcds1mpi.surrogates.neighbour_bounds.NeighbourRuntimes.groups` entry's
    configurations with a measured peak: its largest such size, its mean log peak per rank
    there, and the log-log slope of the peak from its second largest such size (NaN: one
    size), clipped to ``[0, MAX_GROWTH]`` (a noisy fall holds it flat)."""
    levels, keys, _ = group
    if memories is None:
        memories = np.full(len(keys), np.nan)
    ok = np.isfinite(memories)
    codes, at, logs = keys[ok] & _CODE, keys[ok] >> 44, memories[ok]
    order = np.lexsort((at, codes))  # by configuration, then size
    codes, at, logs = codes[order], at[order], logs[order]
    last = np.flatnonzero(np.r_[codes[1:] != codes[:-1], True]) if len(codes) else \
        np.zeros(0, dtype=np.int64)
    prev = last - 1
    two = (prev >= 0) & (codes[np.clip(prev, 0, None)] == codes[last]) if len(last) else \
        np.zeros(0, dtype=bool)
    log_size = np.log(np.asarray(levels, dtype=float))
    slope = np.full(len(last), np.nan)
    a, b = prev[two], last[two]
    with np.errstate(invalid="ignore", divide="ignore"):
        slope[two] = (logs[b] - logs[a]) / (log_size[at[b]] - log_size[at[a]])
    return (codes[last], np.asarray(levels, dtype=float)[at[last]], logs[last],
            np.clip(slope, 0.0, MAX_GROWTH))


__all__ = ["MEMORY_GROWTH", "grown_need_mb", "memory_growth_note"]
