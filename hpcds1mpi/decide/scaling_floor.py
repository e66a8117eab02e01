"""A candidate at a level never measured is predicted no faster than perfect scaling from the
measured ones allows.

The trees' answer at a level its workload never ran at is an extrapolation with nothing
physical in it: a bundle of one H200's gemm runs (1 node x 1 GPU, the only layout measured)
read 4 nodes x 1 GPU bf16 at 0.104 ms, 60x faster than the one GPU measured at 6.2 ms, on four
times the GPUs (s33 tester P1). Resource-seconds do not fall as resources are added, so:

* :func:`floor_to_perfect_scaling`: an unmeasured candidate's runtime is at least
  ``min(runtime x resources)`` over the measured-level candidates of its table with the same
  partition, device and precision, divided by its own resources (CPU: nodes x ranks per node
  x threads, the cores it uses; GPU: nodes x ranks per node, one GPU per rank). A point below
  it is raised to it and its interval then runs up to the reference's own upper end (no
  speed-up at all: the trees' answer there is known wrong); its lower end is at least the
  reference's scaled the same way; energy follows its runtime end by end. Where no such
  reference exists, nothing is bounded.
* :func:`no_unproven_speedup`: an unmeasured candidate's upper end is at least the least
  upper end of the measured candidates of its group that use no more resources than it. The
  trees read stencil at 2 threads, never run, at exactly half the 1-thread run (50.9 ms:
  25.5 ms, 19.6-32.5 ms) and it was picked on that interval, "wholly below" the measured
  one's, where the real runs took 37-40 ms (s40 tester B9): the point may sit at perfect
  scaling, but nothing measured says the added threads (ranks, nodes) give any speed-up,
  so the interval reaches the measured layout's own, and such a level is no longer picked
  over a measured one on an optimistic bound alone
  (:func:`~hpcds1mpi.decide.unmeasured_bounds.measured_before_unmeasured`).
* :func:`scaling_note`: the one line that says a pick was so raised, and from what.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from hpcds1mpi.config import PRECISIONS
from hpcds1mpi.decide.energy_ends import follow_runtime
from hpcds1mpi.decide.scores import UNMEASURED

#: The column :func:`floor_to_perfect_scaling` adds: the floor a candidate's predicted runtime
#: was raised to (NaN where it was not raised).
SCALING_FLOOR = "perfect_scaling_floor_s"


def resources(cols: dict) -> np.ndarray:
    """``(n,)`` what each candidate runs on: cores on CPU (nodes x ranks per node x threads),
    GPUs on GPU (nodes x ranks per node: one GPU per rank, its threads are the host's)."""
    return _resources(cols, np.asarray(cols["device"]) == "gpu")


class LayoutGroups(NamedTuple):
    """What the rules here read of a table's layout columns alone, computed once per scoring
    and handed to each rule (:func:`layout_groups`): three computations of it had been a
    tenth of System 1's own work on 11,595 candidates (issue 20, s46)."""

    sources: tuple  # the columns it was computed from (a rule given others computes anew)
    res: np.ndarray  # (n,) :func:`resources`
    group: np.ndarray  # (n,) :func:`_group_codes`


#: The columns :class:`LayoutGroups` is computed from.
_LAYOUT = ("nodes", "ranks_per_node", "threads", "device", "precision", "partition")


def layout_groups(cols: dict) -> LayoutGroups:
    """The :class:`LayoutGroups` of ``cols`` (valid while those columns are not replaced or
    changed in place: System 1's rules change only predictions)."""
    on_gpu = np.asarray(cols["device"]) == "gpu"
    return LayoutGroups(tuple(cols[c] for c in _LAYOUT), _resources(cols, on_gpu),
                        _group_codes(cols, on_gpu))


def _layout_of(cols: dict, groups: LayoutGroups | None) -> LayoutGroups:
    """``groups`` where it was computed from ``cols``' own columns, else computed now."""
    if groups is not None and all(a is cols[c] for a, c in zip(groups.sources, _LAYOUT)):
        return groups
    return layout_groups(cols)


def _resources(cols: dict, on_gpu: np.ndarray) -> np.ndarray:
    ranks = np.asarray(cols["nodes"], dtype=float) * np.asarray(cols["ranks_per_node"],
                                                                dtype=float)
    return np.where(on_gpu, ranks, ranks * np.asarray(cols["threads"], dtype=float))


def floor_to_perfect_scaling(cols: dict, groups: LayoutGroups | None = None) -> None:
    """In place: each unmeasured row's ``runtime_s`` / ``runtime_lo`` / ``runtime_hi`` at least
    its reference's scaled by ``resources(reference) / resources(row)`` (the reference: the
    measured-level row of the same partition, device and precision with the least runtime x
    resources), a raised point's upper end at least the reference's own, energy ends following
    their runtime ends (:func:`~hpcds1mpi.decide.energy_ends.follow_runtime`); sets
    :data:`SCALING_FLOOR`. Whole-array numpy, no loop
    per row or group: each group's reference tabled from the measured rows, read per row.
    ``groups``: :func:`layout_groups` of ``cols``, where the caller has it."""
    n = len(cols["nodes"])
    floor_at = np.full(n, np.nan)
    cols[SCALING_FLOOR] = floor_at
    unmeasured = cols.get(UNMEASURED)
    if unmeasured is None or not unmeasured.any() or unmeasured.all():
        return
    point, lo, hi = (np.asarray(cols[c], dtype=float) for c in
                     ("runtime_s", "runtime_lo", "runtime_hi"))
    layout = _layout_of(cols, groups)
    res, group = layout.res, layout.group
    cost = point * res
    # An upper end unknown (``inf``: a timed-out layout's) is usable: it bounds what scales
    # from it, its lower bound a floor as any runtime (s47 tester L1).
    usable = np.isfinite(cost) & (cost > 0) & np.isfinite(lo) & ~np.isnan(hi)
    refs = np.flatnonzero(usable & ~unmeasured)
    if not len(refs):
        return
    refs = refs[np.lexsort((cost[refs], group[refs]))]  # per group, the least cost first
    refs = refs[np.r_[True, group[refs][1:] != group[refs][:-1]]]
    reference = np.zeros(int(group.max()) + 1, dtype=np.int64)
    reference[group[refs]] = refs
    # Per group, its reference's resource-seconds at each end (NaN: none), read per row.
    tables = {c: np.full(len(reference), np.nan) for c in ("point", "lo", "hi")}
    for c, v in (("point", point), ("lo", lo), ("hi", hi)):
        tables[c][group[refs]] = v[refs] * res[refs]
    # An unknown upper end floors no other row's: only a row raised from it loses its own
    # (below); scaled to all, every layout of the group had lost its end (s47 review RX4).
    tables["hi"][~np.isfinite(tables["hi"])] = np.nan
    with np.errstate(invalid="ignore"):  # NaN: no reference, never below
        floors = {c: tables[c][group] / res for c in tables}
        below = unmeasured & usable & ((point < floors["point"]) | (lo < floors["lo"])
                                       | (hi < floors["hi"]))
    rows = np.flatnonzero(below)  # the few rows that change: no write to the others
    if not len(rows):
        return
    floor = floors["point"][rows]
    raised = point[rows] < floor
    factor = np.where(raised, floor / point[rows], 1.0)
    top = np.fmax(hi[rows] * factor, floors["hi"][rows])  # NaN: no floor of the upper end
    new = {"runtime_s": np.maximum(point[rows], floor),
           "runtime_lo": np.maximum(lo[rows] * factor, floors["lo"][rows]),
           "runtime_hi": np.where(raised, np.maximum(top, hi[reference[group[rows]]]), top)}
    floor_at[rows[raised]] = floor[raised]
    for runtime, old in (("runtime_s", point), ("runtime_lo", lo), ("runtime_hi", hi)):
        runtimes = old.copy()  # a copy: a kept table's arrays are shared
        runtimes[rows] = new[runtime]
        cols[runtime] = runtimes
    # an end now unknown (inf) by the median's factor, not the model's: s47 review RX3
    follow_runtime(cols, rows, {"runtime_s": point[rows], "runtime_lo": lo[rows],
                                "runtime_hi": hi[rows]})


def no_unproven_speedup(cols: dict, groups: LayoutGroups | None = None) -> None:
    """In place: each unmeasured row's ``runtime_hi`` at least the least ``runtime_hi`` of the
    measured rows of its partition, device and precision that use no more resources
    (:func:`resources`) than it, ``energy_hi`` by the same factor (module docstring). Rows
    with no such measured row are left as they are. One pass per group with measured rows,
    none per row; ``groups``: :func:`layout_groups` of ``cols``, where the caller has it."""
    unmeasured = cols.get(UNMEASURED)
    if unmeasured is None or not unmeasured.any() or unmeasured.all():
        return
    hi = np.asarray(cols["runtime_hi"], dtype=float)
    layout = _layout_of(cols, groups)
    res, group = layout.res, layout.group
    usable = np.isfinite(hi) & (hi > 0) & np.isfinite(res)
    asked = unmeasured & usable
    measured = np.flatnonzero(usable & ~unmeasured)  # few: a grid's measured layouts
    top = np.full(len(hi), np.nan)
    # the groups with measured rows (few), not each group of the grid (issue 20, s46)
    for code in np.unique(group[measured]).tolist():
        refs = measured[group[measured] == code]
        rows = np.flatnonzero(asked & (group == code))
        if not len(rows):
            continue
        refs = refs[np.argsort(res[refs], kind="stable")]
        least = np.minimum.accumulate(hi[refs])  # the least top among the first k by cores
        within = np.searchsorted(res[refs], res[rows], side="right")  # refs with <= cores
        top[rows[within > 0]] = least[within[within > 0] - 1]
    with np.errstate(invalid="ignore"):
        rows = np.flatnonzero(top > hi)  # NaN: no bound
    if not len(rows):
        return
    runtimes = hi.copy()  # a copy: a kept table's arrays are shared
    runtimes[rows] = top[rows]
    energies = np.array(cols["energy_hi"], dtype=float)
    energies[rows] *= top[rows] / hi[rows]
    cols["runtime_hi"], cols["energy_hi"] = runtimes, energies


def _group_codes(cols: dict, on_gpu: np.ndarray) -> np.ndarray:
    """``(n,)`` one small integer per partition x device x precision (the string columns
    compared once per level; partitions sorted only where there are several)."""
    partitions, precisions = np.asarray(cols["partition"]), np.asarray(cols["precision"])
    code = on_gpu * len(PRECISIONS)  # bool x int: an integer array, no masked writes
    for i, precision in enumerate(PRECISIONS[1:], 1):
        code = code + (precisions == precision) * i
    if not (partitions == partitions[0]).all():
        code += 2 * len(PRECISIONS) * np.unique(partitions, return_inverse=True)[1]
    return code


def scaling_note(cols: dict, index: int) -> str:
    """One line where row ``index`` was raised to its perfect-scaling floor, naming its layout
    and the measured reference's (the same rule as :func:`floor_to_perfect_scaling`, found
    again in ``cols``, which may be one partition's subset); else ``""``."""
    floors = cols.get(SCALING_FLOOR)
    if floors is None or not np.isfinite(floors[index]):
        return ""
    same = ~cols[UNMEASURED] & (cols["partition"] == cols["partition"][index]) \
        & (cols["device"] == cols["device"][index]) \
        & (cols["precision"] == cols["precision"][index])
    refs = np.flatnonzero(same)
    if not len(refs):
        return ""
    ref = refs[np.argmin(cols["runtime_s"][refs] * resources(cols)[refs])]
    return (f"{_layout(cols, index)} on {cols['device'][index]} never measured: predicted no "
            f"faster than perfect scaling from the measured {_layout(cols, ref)} "
            f"({_duration(cols['runtime_s'][ref])}): at least {_duration(floors[index])}")


def _layout(cols: dict, i: int) -> str:
    return " x ".join(_count(int(cols[c][i]), word) for c, word in (
        ("nodes", "node"), ("ranks_per_node", "rank"), ("threads", "thread")))


def _duration(seconds: float) -> str:
    """As the answer's table writes a runtime below 2 min (``recommendation.format_time``,
    which imports System 1: not imported here)."""
    return f"{seconds * 1e3:.3g} ms" if float(f"{seconds:.3g}") < 1 else f"{seconds:.3g} s"


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'s' if n != 1 else ''}"


__all__ = ["LayoutGroups", "SCALING_FLOOR", "floor_to_perfect_scaling", "layout_groups",
           "no_unproven_speedup", "resources", "scaling_note"]
