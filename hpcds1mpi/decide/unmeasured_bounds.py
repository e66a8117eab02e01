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
from hpcds1mpi.surrogates.columns import one_value


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
    asked = unmeasured & usable
    # Whole arrays, the rows not asked kept by np.where: gathering and scattering most of a
    # grid's rows (nearly all unmeasured) had cost three times as much (issue 20, s46).
    least_down, most_up = 1.0, 1.0  # 1: nothing measured
    for part in _partitions(np.asarray(cols["partition"])):
        mine = basis & part if part is not None else basis
        if not mine.any():
            continue
        down_at, up_at = min(float(down[mine].min()), 1.0), max(float(up[mine].max()), 1.0)
        if part is None:
            least_down, most_up = down_at, up_at
            continue
        if np.ndim(least_down) == 0:
            least_down, most_up = np.ones(len(point)), np.ones(len(point))
        least_down[part], most_up[part] = down_at, up_at
    with np.errstate(invalid="ignore"):  # rows not asked: not read
        new = {"lo": np.minimum(lo, point * least_down), "hi": np.maximum(hi, point * most_up)}
    for side, old in (("lo", lo), ("hi", hi)):
        cols[f"runtime_{side}"] = np.where(asked, new[side], old)  # new arrays: answers share
        energy = np.asarray(cols[f"energy_{side}"], dtype=float)
        with np.errstate(invalid="ignore", divide="ignore"):
            cols[f"energy_{side}"] = np.where(asked & (old > 0), energy * (new[side] / old),
                                              energy)


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
    beyond = (most > 0) & (nodes > most)
    if not beyond.any():
        return
    point, lo, hi = (np.asarray(cols[c], dtype=float) for c in
                     ("runtime_s", "runtime_lo", "runtime_hi"))
    with np.errstate(invalid="ignore", divide="ignore"):  # rows not beyond: not read
        ratio = nodes / most
        new = {"lo": np.minimum(lo, np.maximum(point - (point - lo) * ratio, lo / ratio)),
               "hi": np.maximum(hi, point + (hi - point) * ratio)}
    # whole arrays, as widen_unmeasured (issue 20, s46)
    for side, old in (("lo", lo), ("hi", hi)):
        good = beyond & np.isfinite(new[side])
        cols[f"runtime_{side}"] = np.where(good, new[side], old)  # new arrays: answers share
        energy = np.asarray(cols[f"energy_{side}"], dtype=float)
        with np.errstate(invalid="ignore", divide="ignore"):
            cols[f"energy_{side}"] = np.where(good & (old > 0), energy * (new[side] / old),
                                              energy)


def _partitions(partitions: np.ndarray):
    """Each partition's mask of rows, or one None (all) where there is one partition (the
    usual question), without sorting its names."""
    if one_value(partitions):
        yield None
        return
    for name in np.unique(partitions).tolist():
        yield partitions == name


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
