"""Keeping a prediction beyond a configuration's own measured sizes within what its runs allow.

:func:`~.neighbour_bounds.bound_runtimes` interpolates a configuration measured on both sides
of a question; this module takes each one measured on one side only: above all the sizes it
ran ok at, its prediction is that size's run grown along its workload's measured slopes,
never faster than that run and never falling as the size grows; below them, shrunk likewise
and never slower than its smallest's (:func:`bound_beyond`). Each configuration by its own runs, not by
the sizes its workload was measured at: after ``learn`` of a tune that measured 1 rank x 2
threads at 112 only, the workload's sizes 64-128 left it unbounded at 120, predicted 16.9 ms
against its 32.5 ms run at 112, and picked with confidence 0.95 (s29 tester C1; it ran
34-156 ms). A pick resting on one measured size of its own is said so
(:func:`one_size_note`), and System 1 caps its confidence.

Above its own largest size a configuration's floor grows as its workload's other
configurations were measured to grow on the same hardware, the least of them
(:func:`least_growth`): a flat floor let 1 x 2 threads, run at 112 only, keep its 32.5 ms at
128 and 160 where 1 x 1 ran 38.8 ms at 112 and 83.8 ms at 128 (s29 tester V2-3).
"""

from __future__ import annotations

import math
import warnings
from typing import NamedTuple

import numpy as np

from .columns import distinct
from .neighbour_bounds import _CONFIG, _SCALED, DEFAULT_GROWTH, MAX_GROWTH, MODEL, \
    NeighbourRuntimes, _config, _measured_as, _s
from .size_neighbours import config_codes

#: Columns :func:`bound_beyond` adds where any candidate lies beyond its own measured sizes
#: (NaN elsewhere): the size of its nearest run, that run's runtime, and how many sizes it
#: ran ok at.
EDGE_SIZE, EDGE_RUNTIME, OWN_SIZES = "measured_edge_size", "measured_edge_s", "measured_sizes"
#: Added too: the floor above the edge (the edge run grown by :func:`least_growth`; the run
#: itself where nothing measured its growth, and below the smallest size).
EDGE_FLOOR = "measured_edge_floor_s"


class Edge(NamedTuple):
    """The rows of a question's table measured ok on one side of its size only, each with its
    own measured size nearest the question (:func:`own_edges`)."""

    rows: np.ndarray  # the asking table's rows
    above: np.ndarray  # (bool) the question lies above all its sizes (else below them all)
    size: np.ndarray  # its measured size nearest the question
    log_runtime: np.ndarray  # its mean log runtime there
    log_energy: np.ndarray  # and log energy (NaN where not known)
    growth: np.ndarray  # (rows, 3) least, median, steepest log-log slope from there
    sizes: np.ndarray  # how many sizes it ran ok at
    floor: np.ndarray  # (log) above: no faster than this (least_growth); below: the run
    spread: np.ndarray  # (rows, 2) the least and largest log runtime of its runs there
    power: np.ndarray  # (rows, 2) the least and largest log average power of its sizes (NaN)


def own_edges(measured: NeighbourRuntimes, workload: str, partition: str, size: float,
              table) -> Edge | None:
    """The :class:`Edge` of ``table``'s rows (configuration columns) at ``size``: each row
    whose configuration ran ok at sizes of ``(workload, partition)`` on one side of ``size``
    only, never at ``size`` itself. None where no row is."""
    key = (str(workload), str(partition))
    group = measured.groups.get(key)
    if group is None:
        return None
    levels, keys, values = group
    codes = config_codes(table)
    wanted = np.arange(len(levels), dtype=np.int64)[:, None] << 44 | codes[None, :]
    pos = np.clip(np.searchsorted(keys, wanted), 0, len(keys) - 1)
    ran = keys[pos] == wanted  # (measured sizes, rows): the row's configuration ran ok there
    lower, higher = levels < size * (1 - 1e-9), levels > size * (1 + 1e-9)
    under, over = ran[lower].any(axis=0), ran[higher].any(axis=0)
    here = ran[~lower & ~higher].any(axis=0)
    rows = np.flatnonzero((under ^ over) & ~here)
    if not len(rows):
        return None
    above = under[rows]
    largest = len(levels) - 1 - np.argmax(ran[::-1, rows], axis=0)
    at = np.where(above, largest, np.argmax(ran[:, rows], axis=0))
    found = pos[at, rows]
    energies = measured.energies.get(key)
    log_energy = energies[found] if energies is not None else np.full(len(rows), np.nan)
    power = _power_range(energies, values, pos[:, rows], ran[:, rows])
    small_end, large_end = measured.growths.get(key, (np.full(3, math.nan),) * 2)
    growth = np.where(above[:, None], large_end[None, :], small_end[None, :])
    # nothing measured at two sizes: in proportion to the size, anywhere from flat to steepest
    growth = np.where(np.isnan(growth), [0.0, DEFAULT_GROWTH, MAX_GROWTH], growth)
    edge_size = levels[at].astype(float)
    floor = values[found].copy()
    for e in np.unique(edge_size[above]).tolist():  # one factor per edge size
        floor[above & (edge_size == e)] += least_growth(group, e, size)
    spreads = measured.spreads.get(key)
    spread = spreads[0][found, 1:] if spreads is not None else \
        np.stack([values[found]] * 2, axis=1)
    return Edge(rows, above, edge_size, values[found], log_energy, growth,
                ran[:, rows].sum(axis=0), floor, spread, power)


def _power_range(energies: np.ndarray | None, values: np.ndarray, pos: np.ndarray,
                 ran: np.ndarray) -> np.ndarray:
    """``(rows, 2)``: the least and largest mean log average power (log energy - log
    runtime) of each row's runs over the sizes it ran ok at (``pos``/``ran``: ``(sizes,
    rows)``, :func:`own_edges`'s), NaN where none had an energy."""
    if energies is None:
        return np.full((ran.shape[1], 2), np.nan)
    power = np.where(ran, energies[pos] - values[pos], np.nan)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a row without any energy
        return np.stack([np.nanmin(power, axis=0), np.nanmax(power, axis=0)], axis=1)


def least_growth(group: tuple, edge: float, size: float) -> float:
    """The log of the least factor by which any configuration of ``group`` (one
    :attr:`~.neighbour_bounds.NeighbourRuntimes.groups` entry) measured ok at ``edge`` and
    beyond grew from ``edge`` to ``size`` (each at its own sizes, log-log interpolated where
    it ran either side of one), 0 where none was; ``size > edge``.

    Those configurations show how this workload grows on this hardware; the least of them
    is the conservative guess at how one measured at ``edge`` only grows, measured, no model
    (s29 tester V2-3). Each of them is held flat beyond its own largest run, so the least is
    taken over all of them at every ``size`` and moves continuously with it: dropping those
    that stopped short left the ones that reached furthest, perhaps the steepest, to set the
    floor (8x instead of 1.1x, with a step just past the shorter's top: s29 R2). Each one's
    factor is at least 1 (runtime does not fall with size: a noisy fall leaves the flat floor)
    and at most the slope :data:`~.neighbour_bounds.MAX_GROWTH` up to where it counts (two
    close sizes' noise can show any slope; the interval's upper end, the run grown along the
    steepest measured slope, so stays above the floor)."""
    levels, keys, values = group
    codes, col = np.unique(keys & ((1 << 44) - 1), return_inverse=True)
    runs = np.full((len(levels), len(codes)), np.nan)
    runs[keys >> 44, col] = values  # (sizes, configurations): mean log runtime
    ok = np.isfinite(runs)
    index = np.arange(len(levels))[:, None]
    last_at = np.maximum.accumulate(np.where(ok, index, -1), axis=0)  # last run at or before
    next_at = np.minimum.accumulate(np.where(ok, index, len(levels))[::-1], axis=0)[::-1]
    top = np.where(ok.any(axis=0), levels[last_at[-1].clip(0)], -np.inf)  # largest run
    e = int(np.searchsorted(levels, edge * (1 - 1e-9)))
    spans = (last_at[min(e, len(levels) - 1)] >= 0) & (top > edge * (1 + 1e-9))
    if e >= len(levels) or not spans.any() or size <= edge * (1 + 1e-9):
        return 0.0
    cols = np.flatnonzero(spans)
    # each held flat past its own largest run, not dropped there (s29 R2)
    to = np.minimum(float(size), top[cols])
    log_size = np.log(levels)

    def at(x: np.ndarray) -> np.ndarray:
        """Each spanning configuration's log runtime at its own ``x`` (within its runs)."""
        i = np.searchsorted(levels, x * (1 + 1e-9), side="right") - 1
        j = np.searchsorted(levels, x * (1 - 1e-9), side="left")
        a, b = last_at[i, cols], next_at[j, cols]  # ran at or before edge and at its top
        with np.errstate(invalid="ignore", divide="ignore"):
            t = np.where(b > a, (np.log(x) - log_size[a]) / (log_size[b] - log_size[a]), 0.0)
        return (1 - t) * runs[a, cols] + t * runs[b, cols]

    # each held at its slowest run since the edge: a noisy fall past the edge must not let
    # the floor fall as the size grows (s31 tester Q7: the point beyond never decreases)
    since = (levels[:, None] > edge * (1 + 1e-9)) & (levels[:, None] <= to[None, :]) & ok[:, cols]
    peak = np.fmax(at(to), np.where(since, runs[:, cols], -np.inf).max(axis=0))
    grew = peak - at(np.full(len(cols), float(edge)))
    return float(np.min(np.clip(grew, 0.0, MAX_GROWTH * np.log(to / edge))))


def bound_beyond(cols: dict, measured: NeighbourRuntimes, workload: str, size: float,
                 trained: dict | None = None) -> bool:
    """Hold each candidate measured on one side of ``size`` only to the run at its own
    nearest measured size (its edge), in place: a bigger problem does not run faster, a
    smaller one not slower. True when a prediction moved; :data:`EDGE_SIZE`,
    :data:`EDGE_RUNTIME`, :data:`OWN_SIZES` and :data:`EDGE_FLOOR` are added to ``cols``
    wherever any candidate has an edge, moved or not.

    Above its largest size:

    * the runtime is the edge run grown to ``size`` along the median log-log slope its
      workload's configurations showed between their two largest measured sizes (each
      clipped to ``[0, MAX_GROWTH]``; :data:`~.neighbour_bounds.DEFAULT_GROWTH` where none
      ran at two), and at least that run grown as the least grown of the configurations
      measured from that size on (:func:`least_growth`, :data:`EDGE_FLOOR`; a flat floor
      kept 1 x 2 threads at its 32.5 ms from 112 at 128 and 160 where 1 x 1 ran 83.8 ms at
      128: s29 tester V2-3). A fixed slope from a measured run, not the model: the trees'
      excursions beyond the sizes are the same artefact as between them (s27 tester Q,
      NWChem at 7 waters predicted 0.76 s at 1 rank where 6 measured 9.2 s), and the model's
      point turned back as the size grew (stencil 2 x 1: 103.7 ms at 300, 96.0 ms at 400;
      s31 tester Q7), which a slope of at least 0 never does. The median, not each one's own
      slope: holding out the shipped bundle's largest sizes, its picks reached 99 % of the
      best (geomean; two sizes out) and 90 % (one) against 79 % and 86 % (one or two noisy
      sizes do not settle a growth law);
    * the interval runs from the edge run grown along the least slope any configuration
      showed between two neighbouring sizes (at least the floor) to it grown along the
      steepest of the end slopes, each widened by the model's own relative width (the runs'
      noise): wider the further from the edge. The testers' runs fall inside it (CP2K 1 x 1
      at 350: 12.6 s; ABINIT 2 x 1 at 24: 3.9 s);
    * energy is the edge run's average power times the runtime, for the point and the low
      end, so never below the edge run's energy (the model's power at an unmeasured size had
      fallen: CP2K's 37.8 J at 350 against 50.8 J measured at 250; and risen: Elk at 12 read
      23.4 J at its size-8 run's 1.99 s, which measured 17.0 J, s30 tester L-energy); the
      upper end the upper runtime at the most average power the configuration's runs drew
      at any of its sizes (the model's own upper energy, scaled, read 65.8 W on a node
      drawing at most 20 W, and fell as the size grew: s40 tester D2). Where the edge run
      has no energy, energy follows the runtime (scaled by its factor).

    Below its smallest size the same, mirrored: the edge run shrunk along the median slope
    between the configurations' two smallest sizes, the interval from it shrunk along the
    steepest to it shrunk along the least (none: the run itself, a small size's fixed costs;
    stencil 40 -> 20 ran 2.8x faster, not the model's 8x: s31 tester Q7), widened by the
    model's width; energy the edge run's power times the runtime (the low end at the least
    power its runs drew).
    The ceiling is not shrunk as other configurations shrank: that would make a layout
    measured elsewhere look faster on other layouts' say, the unsafe side for a pick (small
    sizes' fixed costs shrink differently per layout; s29 tester V2-3).
    """
    if not measured.groups or str(workload) not in measured.workloads:
        return False
    partitions = np.asarray(cols["partition"])
    n = len(np.asarray(cols["runtime_s"]))
    old = {c: np.asarray(cols[c], dtype=float) for c in _SCALED}
    # Copied, compared and added only where a candidate has an edge: on a grid with none (its
    # hardware never measured) this had cost a tenth of System 1's own work (issue 20, s46).
    new, found, held = None, None, []
    names = distinct(partitions).tolist()
    for part in names:
        # one partition (text equal throughout): every row, its columns as they are
        whole = len(names) == 1 and partitions.dtype.kind in "US"
        rows = np.arange(n) if whole else np.flatnonzero(partitions == part)
        table = {c: np.asarray(cols[c]) if whole else np.asarray(cols[c])[rows]
                 for c in _CONFIG}
        name = _measured_as(trained, part)
        got = None if name is None else own_edges(measured, workload, name, size, table)
        if got is None:
            continue
        if new is None:
            new = {c: v.copy() for c, v in old.items()}  # copies: answers may share the arrays
            found = {c: np.full(n, np.nan)
                     for c in (EDGE_SIZE, EDGE_RUNTIME, OWN_SIZES, EDGE_FLOOR)}
        idx = rows[got.rows]
        held.append(idx)
        noise = np.asarray(cols.get("runtime_noise", np.full(n, np.nan)), dtype=float)[idx]
        _hold_to_edge(new, idx, got, size, noise)
        for col, values in ((EDGE_SIZE, got.size), (EDGE_RUNTIME, np.exp(got.log_runtime)),
                            (OWN_SIZES, got.sizes), (EDGE_FLOOR, np.exp(got.floor))):
            found[col][idx] = values
    if new is None:
        return False
    if np.isfinite(found[EDGE_SIZE]).any():
        cols.update(found)
    idx = np.concatenate(held)  # only these rows were written
    moved = False
    for c in _SCALED:
        with np.errstate(invalid="ignore"):
            moved = moved or not np.isclose(new[c][idx], old[c][idx], rtol=1e-12, atol=0.0,
                                            equal_nan=True).all()
    if not moved:
        return False
    cols.setdefault(MODEL, old["runtime_s"])
    cols.update(new)
    return True


def _hold_to_edge(new: dict, idx: np.ndarray, edge: Edge, size: float,
                  noise: np.ndarray) -> None:
    """:func:`bound_beyond` for the rows ``idx`` of the columns ``new``, measured at
    ``edge``; ``noise``: the workload's measured repeat noise per row (NaN: unknown)."""
    run, floor = np.exp(edge.log_runtime), np.exp(edge.floor)
    up = edge.above
    least, median, steepest = (run * (size / edge.size) ** edge.growth[:, j] for j in range(3))
    point, lo, hi = (new[f"runtime_{k}"][idx] for k in ("s", "lo", "hi"))
    usable = np.isfinite(point) & (point > 0) & np.isfinite(lo) & (lo > 0) & np.isfinite(hi)
    with np.errstate(invalid="ignore", divide="ignore"):  # the model's width, kept around it
        wide_lo, wide_hi = np.fmin(lo / point, 1.0), np.fmax(hi / point, 1.0)
    # The edge's own measured interval, as :mod:`~.neighbour_here` gives it there (its runs,
    # the workload's repeat noise) bounds the bounded end (above: the lower): stencil 2 x 1
    # read [70.6, 89.3] ms at 257 inside 256's [50.6, 104.6], and 68.5 ms at 2560 below its
    # 77.6 ms run at 256, the model's width there the trees' extrapolation (s31 tester V5).
    half = np.where(np.isfinite(noise), np.clip(noise, 0.0, 1.0) / 2, 0.0)
    own_lo = np.minimum(np.exp(edge.spread[:, 0]) / run, 1 - half)
    own_hi = np.maximum(np.exp(edge.spread[:, 1]) / run, 1 + half)
    wide_lo, wide_hi = np.fmin(wide_lo, own_lo), np.fmax(wide_hi, own_hi)
    # The point grows from the run along the median measured slope, never below the floor:
    # a fixed slope, so it never falls as the size moves away (the model's 103.7 ms at 300
    # read 96.0 ms at 400: s31 tester Q7); the ends along the least and steepest slopes, so
    # the interval widens with the distance, and by the wider of the model's and the edge's
    # own width; the bounded end never past the edge's own (V5).
    new_point = np.where(up, np.maximum(median, floor), median)
    new_lo = np.where(up, np.maximum(np.maximum(np.minimum(least, new_point), floor) * wide_lo,
                                     run * own_lo),
                      np.minimum(steepest, new_point) * wide_lo)
    new_hi = np.where(up, np.maximum(steepest, new_point) * wide_hi,
                      np.minimum(np.maximum(least, new_point) * wide_hi, run * own_hi))
    power = np.exp(edge.log_energy - edge.log_runtime)  # NaN where the energy is unknown
    least_power, most_power = np.exp(edge.power[:, 0]), np.exp(edge.power[:, 1])
    for side, before, after in (("j", point, new_point), ("lo", lo, new_lo),
                                ("hi", hi, new_hi)):
        after = np.where(usable, after, before)
        with np.errstate(invalid="ignore", divide="ignore"):
            energy = new[f"energy_{side}"][idx] * (after / before)
        # The edge run's power over the runtime (s30 tester L-energy: 1.99 s, the edge run's,
        # read 23.4 J where that run measured 17.0 J): the point and the bounded end; the
        # open end (above: the upper, below: the lower) the most (least) power its runs drew
        # at any of its sizes. The model's own end, scaled, had read 65.8 W on a node that
        # draws at most 20 W, and more energy at 200 than at 210 or 256 (s40 tester D2).
        if side == "j":
            measured = power * after
        else:
            bounded = up if side == "lo" else ~up
            open_power = np.where(up, most_power, least_power)
            measured = np.where(bounded, power, np.fmax(open_power, power)
                                if side == "hi" else np.fmin(open_power, power)) * after
        energy = np.where(np.isfinite(measured), measured, energy)
        new[f"runtime_{'s' if side == 'j' else side}"][idx] = after
        new[f"energy_{side}"][idx] = np.where(usable, energy, new[f"energy_{side}"][idx])
    # the point's energy may have been floored above an end's: keep lo <= point <= hi
    e = new["energy_j"][idx]
    new["energy_lo"][idx] = np.fmin(new["energy_lo"][idx], e)
    new["energy_hi"][idx] = np.fmax(new["energy_hi"][idx], e)


def one_size_note(cols: dict, index: int, size: float, failed: str = "") -> str:
    """One line when the pick ``index`` ran ok at one size only, another than ``size``: its
    prediction rests on that one run (System 1 then caps its confidence), else ``""``.
    ``failed``: the sizes its configuration failed at, as text ("400, 800"), said with it:
    "measured at one size only" hid them (s39 tester B2)."""
    if OWN_SIZES not in cols or cols[OWN_SIZES][index] != 1:
        return ""
    edge, run = cols[EDGE_SIZE][index], cols[EDGE_RUNTIME][index]
    floor = cols[EDGE_FLOOR][index] if EDGE_FLOOR in cols else math.nan
    grows = (f"held to at least {_s(floor)}, that run grown as the least of this workload's "
             "other measured configurations grew" if floor > run * (1 + 1e-9)
             else "how it grows with size unmeasured")
    measured = (f"ran ok at one size only ({edge:g}: {_s(run)}) and failed at {failed}"
                if failed else f"was measured at one size only ({edge:g}: {_s(run)})")
    return (f"{_config(cols, index)} {measured}; its prediction at size {size:g} rests on "
            f"that one run, {grows}")
