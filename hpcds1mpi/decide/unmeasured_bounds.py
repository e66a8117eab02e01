"""A candidate at a level its workload never ran at (:func:`~hpcds1mpi.decide.scores.
unmeasured_rows`) is held no more certain than the measured ones, and ranked after them.

The trees' answer at a level never run is an extrapolation, yet its interval was the trees'
own width there, narrower than the measured candidates': gemm 1 x 1 x 1 fp32, never run (fp64
only), read 76.4 ms [76.4, 77.8] at 1400 where the measured fp64 read [55.1, 75.7]; fft
N4 x R2 read [9.5, 10.5] ms where the measured N1 x R2 read [9.1, 26.8]; and bf16 at 15.3 ms,
never run, was picked over the measured fp32 at 15.5 ms (s31 verifier V4). So:

* :func:`widen_unmeasured`: such a candidate's interval is at least the widest relative
  interval, each side, among its partition's measured candidates in the same table;
* :func:`measured_before_unmeasured`: ``choose`` ranks it after the best measured candidate
  unless its upper end is below that one's lower end (then a note says so) and its device
  has measured candidates (else no run anchors it: s33 tester P1); where the pick it puts
  first is then off the front, :func:`passed_over_note` says why;
* :func:`widen_beyond_nodes`: on more nodes than its workload was measured on, the interval's
  distance from the point grows with the ratio of the nodes to the most measured (4096 nodes
  from runs on one read ±35 %: s34 tester S1).
"""

from __future__ import annotations

import numpy as np

from hpcds1mpi.decide.measured_here import layout_text
from hpcds1mpi.decide.scores import UNMEASURED


def widen_unmeasured(cols: dict) -> None:
    """In place: each unmeasured row's ``runtime_lo`` / ``runtime_hi`` (and energy ends, by
    the same factors) at least as far from its point, relatively, as the farthest of its
    partition's measured rows with finite, positive values. Rows of a partition with no such
    measured row are left as they are."""
    unmeasured = cols.get(UNMEASURED)
    if unmeasured is None or not unmeasured.any() or unmeasured.all():
        return
    point, lo, hi = (np.asarray(cols[c], dtype=float) for c in
                     ("runtime_s", "runtime_lo", "runtime_hi"))
    with np.errstate(invalid="ignore", divide="ignore"):
        down, up = lo / point, hi / point
    usable = np.isfinite(down) & np.isfinite(up) & (point > 0)
    basis = usable & ~unmeasured
    rows = np.flatnonzero(unmeasured & usable)
    least_down, most_up = np.ones(len(rows)), np.ones(len(rows))  # 1: nothing measured
    for part, at in _partition_groups(np.asarray(cols["partition"]), rows):
        mine = basis & part if part is not None else basis
        if mine.any():
            least_down[at] = min(float(down[mine].min()), 1.0)
            most_up[at] = max(float(up[mine].max()), 1.0)
    new_lo = np.minimum(lo[rows], point[rows] * least_down)
    new_hi = np.maximum(hi[rows], point[rows] * most_up)
    for side, old, new in (("lo", lo[rows], new_lo), ("hi", hi[rows], new_hi)):
        runtime = np.array(cols[f"runtime_{side}"], dtype=float)  # a copy: answers share
        runtime[rows] = new
        cols[f"runtime_{side}"] = runtime
        energy = np.array(cols[f"energy_{side}"], dtype=float)
        with np.errstate(invalid="ignore", divide="ignore"):
            energy[rows] = np.where(old > 0, energy[rows] * (new / old), energy[rows])
        cols[f"energy_{side}"] = energy


def widen_beyond_nodes(cols: dict) -> None:
    """In place: each row on ``nodes`` more than its workload's most measured ``M`` (column
    :data:`~hpcds1mpi.decide.measured_nodes.NODES_MEASURED`, 0: unknown, left alone) has its
    interval's distance from the point times ``nodes / M`` each side, its lower end at
    least its old one divided by ``nodes / M`` (above zero), energy ends by the same factors."""
    from hpcds1mpi.decide.measured_nodes import NODES_MEASURED

    most = cols.get(NODES_MEASURED)
    if most is None:
        return
    nodes = np.asarray(cols["nodes"])
    rows = np.flatnonzero((most > 0) & (nodes > most))
    if not len(rows):
        return
    ratio = nodes[rows] / most[rows]
    point = np.asarray(cols["runtime_s"], dtype=float)[rows]
    lo = np.asarray(cols["runtime_lo"], dtype=float)[rows]
    hi = np.asarray(cols["runtime_hi"], dtype=float)[rows]
    with np.errstate(invalid="ignore"):
        new = {"lo": np.minimum(lo, np.maximum(point - (point - lo) * ratio, lo / ratio)),
               "hi": np.maximum(hi, point + (hi - point) * ratio)}
    for side, old in (("lo", lo), ("hi", hi)):
        runtime = np.array(cols[f"runtime_{side}"], dtype=float)  # a copy: answers share
        good = np.isfinite(new[side])
        runtime[rows[good]] = new[side][good]
        cols[f"runtime_{side}"] = runtime
        energy = np.array(cols[f"energy_{side}"], dtype=float)
        with np.errstate(invalid="ignore", divide="ignore"):
            energy[rows[good]] = np.where(old[good] > 0, energy[rows[good]] * (
                new[side][good] / old[good]), energy[rows[good]])
        cols[f"energy_{side}"] = energy


def _partition_groups(partitions: np.ndarray, rows: np.ndarray):
    """``(mask of the partition's rows or None: all, positions in rows)`` per partition; one
    partition (the usual question) without sorting its names (~0.7 ms on 11,595 rows)."""
    same = partitions == partitions[0]
    if same.all():
        yield None, slice(None)
        return
    for name in np.unique(partitions).tolist():
        mask = partitions == name
        yield mask, mask[rows]


def measured_before_unmeasured(cols: dict, ranking: np.ndarray, objective: str
                               ) -> tuple[np.ndarray, str]:
    """``(ranking, note)``: where the first of ``ranking`` (feasible rows, best first by
    ``objective``) is unmeasured, it stays first only if its upper end (runtime; energy, or
    their product, for those objectives) is below the lower end of the first measured row,
    and ``note`` says so; else that measured row is moved first and ``note`` is ``""``, or
    says why where the first is on a device no measured row of its partition has (nothing
    anchors such an interval).
    ``ranking`` unchanged where it has no measured row or its first is measured."""
    unmeasured = cols.get(UNMEASURED)
    if unmeasured is None or len(ranking) < 2 or not unmeasured[ranking[0]]:
        return ranking, ""
    flags = unmeasured[ranking]
    if flags.all():
        return ranking, ""
    at = int(np.argmin(flags))  # the first measured row
    pick, rival = int(ranking[0]), int(ranking[at])
    moved = np.concatenate([ranking[at:at + 1], ranking[:at], ranking[at + 1:]])
    device = cols["device"][pick]
    if not (~unmeasured & (cols["device"] == device)
            & (cols["partition"] == cols["partition"][pick])).any():
        # No run on that device anchors its interval: gemm on an H200 bundle's never-run CPU
        # read 0.78 ms, 176 TFLOP/s fp64 on 16 cores, "below" the measured GPU (s33 tester P1).
        return moved, (f"the best-predicted candidate is on {device}, where this workload "
                       "never ran: no run anchors its prediction, so a measured one is "
                       "picked; measure it on that device to compare")
    low, high = _ends(cols, objective)
    if high(pick) < low(rival):
        return ranking, (f"picked a level never measured: its whole interval (up to "
                         f"{high(pick):.3g}) lies below the best measured candidate's "
                         f"(from {low(rival):.3g}); measure it to confirm")
    return moved, ""


def passed_over_note(cols: dict, first: int, pick: int, objective: str) -> str:
    """Why ``first``, the model's best but at a level never measured, was ranked after the
    measured ``pick`` (:func:`measured_before_unmeasured`): said where the pick is off the
    front, which showed only such layouts and nothing said why (s40 tester D14)."""
    low, high = _ends(cols, objective)
    unit = {"energy": " J", "edp": " J s"}.get(objective, " s")
    return (f"the model ranks first {layout_text(*(cols[c][first] for c in LAYOUT))}, at a "
            f"level never measured, but its interval (up to {high(first):.3g}{unit}) does not "
            f"lie wholly below the measured pick's (from {low(pick):.3g}{unit}), so it is not "
            "picked: measure it to compare")


#: The columns a layout is named by (:func:`~hpcds1mpi.decide.measured_here.layout_text`).
LAYOUT = ("nodes", "ranks_per_node", "threads", "device", "precision")


def _ends(cols: dict, objective: str):
    """(lower end, upper end) of a row's objective, as functions of the row."""
    if objective == "energy":
        return (lambda i: float(cols["energy_lo"][i])), (lambda i: float(cols["energy_hi"][i]))
    if objective == "edp":
        return ((lambda i: float(cols["energy_lo"][i] * cols["runtime_lo"][i])),
                (lambda i: float(cols["energy_hi"][i] * cols["runtime_hi"][i])))
    return (lambda i: float(cols["runtime_lo"][i])), (lambda i: float(cols["runtime_hi"][i]))


__all__ = ["measured_before_unmeasured", "passed_over_note", "widen_beyond_nodes",
           "widen_unmeasured"]
