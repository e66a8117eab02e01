"""Keeping a prediction between two measured sizes within what those measurements allow.

A question at a size strictly between two measured sizes of its workload and partition has,
for every configuration measured ``ok`` below and above it (each at its own nearest sizes),
two runtimes that bracket it: runtime does not fall and then rise (or rise and then fall)
between two sizes a few tens of per cent apart. The
trees cannot know that: they are piecewise constant in every size-like feature and split on
several (the size, its log, the work model's features, the TabNet embedding, whose values at
an unmeasured size can lie outside those at both neighbours). At such a size some trees take
the larger neighbour's leaf and others, fitted to correct the first, the smaller's, and the
sum can exceed both (s27 tester R: pw.x at size 30 predicted 3.66 s where 24 measured 1.12 s
and 40 measured 2.85 s; 1.30 s measured afterwards); and where they do not, their value is one
neighbour's. :func:`bound_runtimes` replaces the prediction of each configuration measured at
both sizes by the pair interpolated in log size (runtime, energy and their intervals by the
same factor; its peak memory per rank too, which a program's memory need is judged by); :func:`~.neighbour_beyond.bound_beyond` keeps one beyond a configuration's own
measured sizes no faster than its largest size's run.

:func:`disagreement` says, for a pick, when the measurements still contradict it (System 1
then lowers its confidence): another configuration measured faster than the pick at both
neighbouring sizes, by more than :data:`TOLERANCE`; or another's interpolated runtime beats
the pick's by more than that while the model's prediction of one of the two lay outside its
measurements.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from hpcds1mpi.config import OK

from .size_neighbours import config_codes

#: Relative runtime difference taken as a real one (a pick within 5 % of the best is good).
TOLERANCE = 0.05
#: Columns that :func:`bound_runtimes` adds: the runtimes measured at the sizes below and
#: above (NaN where the configuration was not measured ok at both) and the prediction before
#: the bound.
BELOW, ABOVE, MODEL = "measured_below_s", "measured_above_s", "runtime_model_s"
#: Added too: the measured pair interpolated in log size (NaN where either is missing), and
#: the sizes the pair ran at (each configuration's own nearest either side).
INTERPOLATED = "measured_interpolated_s"
BELOW_SIZE, ABOVE_SIZE = "measured_below_size", "measured_above_size"
_SCALED = ("runtime_s", "runtime_lo", "runtime_hi", "energy_j", "energy_lo", "energy_hi")
_CONFIG = ("nodes", "ranks_per_node", "threads", "device", "precision")


#: The steepest growth of runtime with size (log-log slope) an extrapolated interval assumes:
#: two close sizes' noise can show any slope (CP2K's 2-rank runs: 4.4 between 150 and 250).
MAX_GROWTH = 4.0
#: The growth assumed where no configuration was measured at two sizes: runtime in proportion
#: to the size (nothing measured says more).
DEFAULT_GROWTH = 1.0


class NeighbourRuntimes:
    """Measured log runtimes per (workload, partition), measured size and configuration.

    Attributes:
        groups: (workload, partition) -> (sorted sizes ``(m,)``, sorted keys ``(k,)``, mean
            log runtime of the ok rows of each key ``(k,)``); a key is ``size index * 2**44 +
            configuration code`` (:func:`~.size_neighbours.config_codes`).
        energies: (workload, partition) -> mean log energy of the ok rows of each key ``(k,)``
            (NaN where the rows have none).
        memories: (workload, partition) -> mean log peak memory per rank (``peak_rss_mb``)
            of the ok rows of each key ``(k,)`` (NaN where the rows have none).
        growth: (workload, partition) -> (steepest, steepest) log-log slope of runtime with
            size over its configurations, between each one's two smallest and between its
            two largest measured sizes, clipped to ``[0, MAX_GROWTH]`` (NaN: none measured at
            two sizes).
        growths: (workload, partition) -> (small end, large end), each ``(3,)``: the least,
            median and steepest of those slopes (NaN: none measured at two sizes), which
            carry a prediction beyond a configuration's own sizes (``neighbour_beyond``).
        spreads: (workload, partition) -> ``(k, 3)`` per key: the median, least and largest
            log runtime of its ok rows, and ``(k,)`` their count: a configuration measured
            at the size asked is predicted by its runs (``neighbour_here``; s31 tester Q1).
    """

    def __init__(self, groups: dict, energies: dict | None = None, growth: dict | None = None,
                 memories: dict | None = None, growths: dict | None = None,
                 spreads: dict | None = None):
        self.groups = groups
        self.energies = energies or {}
        self.growth = growth or {}
        self.memories = memories or {}
        self.growths = growths or {}
        self.spreads = spreads or {}
        self.workloads = {w for w, _ in groups}

    @classmethod
    def fit(cls, table) -> "NeighbourRuntimes":
        """From training rows (DataFrame or Columns with the problem, configuration,
        ``status`` and ``runtime_s`` columns); rows not ok, or without a positive runtime or a
        size, are left out."""
        status = np.asarray(table["status"]).astype(str)
        runtime = np.asarray(table["runtime_s"], dtype=float)
        sizes = np.asarray(table["size"], dtype=float)
        ok = (status == OK) & np.isfinite(runtime) & (runtime > 0) & np.isfinite(sizes)
        if not ok.any():
            return cls({})
        idx = np.flatnonzero(ok)
        codes = config_codes({c: np.asarray(table[c])[idx] for c in _CONFIG})
        workloads = np.asarray(table["workload"]).astype(str)[idx]
        partitions = np.asarray(table["partition"]).astype(str)[idx]
        sizes, logs = sizes[idx], np.log(runtime[idx])
        energy = np.asarray(table["energy_j"], dtype=float)[idx] if "energy_j" in table \
            else np.full(len(idx), np.nan)
        memory = np.asarray(table["peak_rss_mb"], dtype=float)[idx] if "peak_rss_mb" in table \
            else np.full(len(idx), np.nan)
        with np.errstate(invalid="ignore", divide="ignore"):
            log_energy = np.where(energy > 0, np.log(energy), np.nan)
            log_memory = np.where(memory > 0, np.log(memory), np.nan)
        groups, energies, growth, memories, growths, spreads = {}, {}, {}, {}, {}, {}
        for key in set(zip(workloads.tolist(), partitions.tolist())):
            mine = (workloads == key[0]) & (partitions == key[1])
            levels = np.unique(sizes[mine])
            k = np.searchsorted(levels, sizes[mine]).astype(np.int64) << 44 | codes[mine]
            order = np.argsort(k, kind="stable")
            # a configuration measured several times at one size: the mean of its log runtimes
            k, first = np.unique(k[order], return_index=True)
            counts = np.diff(np.append(first, len(order)))
            groups[key] = (levels, k, np.add.reduceat(logs[mine][order], first) / counts)
            energies[key] = np.add.reduceat(log_energy[mine][order], first) / counts
            memories[key] = np.add.reduceat(log_memory[mine][order], first) / counts
            growths[key] = _end_growths(levels, k, groups[key][2])
            growth[key] = tuple(float(end[2]) for end in growths[key])
            spreads[key] = _spread(logs[mine][order], first, counts)
        return cls(groups, energies, growth, memories, growths, spreads)

    def around(self, workload: str, partition: str, size: float, table) -> "Bracket | None":
        """The :class:`Bracket` of ``table``'s rows (configuration columns) at ``size``: each
        row whose configuration ran ok at a measured size of ``(workload, partition)`` below
        ``size`` and at one above, but not at ``size`` itself, with its own nearest such
        sizes. None where no row is bracketed (outside the range, never measured).

        Each configuration by its own runs: a size other configurations were measured at
        does not stop one measured at the sizes either side from being interpolated (s28
        tester Y: tune measured three layouts at 768, and 1 x 1 x 2, measured 0.196 s at 512
        and 0.287 s at 1024, kept the model's 173 ms there and won on energy). At a size it
        was measured at, its runs stand (:mod:`~.neighbour_here`)."""
        key = (str(workload), str(partition))
        group = self.groups.get(key)
        if group is None:
            return None
        levels, keys, values = group
        below = int(np.searchsorted(levels, size * (1 - 1e-9), side="left"))
        above = int(np.searchsorted(levels, size * (1 + 1e-9), side="right"))
        if below == 0 or above >= len(levels):
            return None
        codes = config_codes(table)  # only once the size is known to be within the range
        wanted = np.arange(len(levels), dtype=np.int64)[:, None] << 44 | codes[None, :]
        pos = np.clip(np.searchsorted(keys, wanted), 0, len(keys) - 1)
        ran = keys[pos] == wanted  # (measured sizes, rows): the row's configuration ran ok there
        under, over = ran[:below], ran[above:]
        here = ran[below:above].any(axis=0)
        rows = np.flatnonzero(under.any(axis=0) & over.any(axis=0) & ~here)
        if not len(rows):
            return None
        lo = below - 1 - np.argmax(under[::-1, rows], axis=0)  # its nearest size below
        hi = above + np.argmax(over[:, rows], axis=0)  # and above
        energies = self.energies.get(key)
        if energies is None:
            energies = np.full(len(keys), np.nan)
        memories = self.memories.get(key)
        if memories is None:
            memories = np.full(len(keys), np.nan)
        at_lo, at_hi = pos[lo, rows], pos[hi, rows]
        return Bracket(rows, levels[lo].astype(float), levels[hi].astype(float),
                       values[at_lo], values[at_hi], energies[at_lo], energies[at_hi],
                       memories[at_lo], memories[at_hi])


class Bracket(NamedTuple):
    """The rows of a question's table measured on both sides of its size, each with its own
    nearest measured sizes (:meth:`NeighbourRuntimes.around`)."""

    rows: np.ndarray  # the asking table's rows bracketed
    size_below: np.ndarray  # each one's nearest size below the question it ran ok at
    size_above: np.ndarray  # and above
    log_runtime_below: np.ndarray  # its mean log runtime there
    log_runtime_above: np.ndarray
    log_energy_below: np.ndarray  # its mean log energy there (NaN where not known)
    log_energy_above: np.ndarray
    log_memory_below: np.ndarray  # its mean log peak memory per rank there (NaN: not known)
    log_memory_above: np.ndarray


def _end_growths(levels: np.ndarray, keys: np.ndarray, values: np.ndarray) -> tuple:
    """(small end, large end) ``(3,)`` arrays of log-log slopes of runtime with size among one
    group's configurations measured at two sizes or more, clipped to ``[0, MAX_GROWTH]`` (NaN
    where none was): the least between any two neighbouring sizes of one (both ends alike:
    close sizes' noise often shows none, and the gemm user bundle's 512 ran as fast as its 640,
    outside an interval from its two end slopes, s31 tester Q7), and the median and steepest
    between each one's two smallest and between its two largest sizes."""
    codes, at = keys & ((1 << 44) - 1), keys >> 44  # keys sort by size index, then code
    log_size = np.log(levels)
    low, high, every = [], [], []  # a fall counts as flat, each slope clipped before the median
    for code in np.unique(codes):
        mine = np.flatnonzero(codes == code)
        if len(mine) < 2:
            continue
        order = mine[np.argsort(at[mine])]
        slopes = np.diff(values[order]) / np.diff(log_size[at[order]])
        low.append(slopes[0])
        high.append(slopes[-1])
        every.append(min(max(slopes.min(), 0.0), MAX_GROWTH))
    if not every:
        return np.full(3, math.nan), np.full(3, math.nan)
    return tuple(np.array([min(every), float(np.median(g)), max(g)]) for g in
                 (np.clip(low, 0.0, MAX_GROWTH), np.clip(high, 0.0, MAX_GROWTH)))


def _spread(logs: np.ndarray, first: np.ndarray, counts: np.ndarray) -> tuple:
    """``((k, 3), (k,))``: the median, least and largest of each key's log runtimes (``logs``
    sorted by key, each key's from ``first`` on, ``counts`` of them), and the counts."""
    out = np.empty((len(first), 3))
    for j, (a, n) in enumerate(zip(first.tolist(), counts.tolist())):
        mine = logs[a:a + n]
        out[j] = (np.median(mine), mine.min(), mine.max())
    return out, counts.astype(np.int64)


def bound_runtimes(cols: dict, measured: NeighbourRuntimes, workload: str, size: float,
                   trained: dict | None = None) -> dict | None:
    """Replace each candidate's predicted runtime by the runtimes its configuration measured at
    its own nearest sizes either side of ``size``, interpolated in log size, in place (energy
    likewise where both runs had one, else scaled by the runtime's factor; the intervals
    widened to hold the measured pair, the energy's then the runtime's at the pair's least
    and most average power).

    Between two measured sizes the trees are piecewise constant in every size-like feature:
    their prediction is one neighbour's leaf (s27, HPCC at N=400 predicted as N=300's 3.37 ms,
    measured 7.8 ms; its 1-rank pick followed whichever rank count the load favoured at 300),
    or a sum of leaves above both (s27 tester R: 3.66 s against 1.12 and 2.85 s). A first
    version replaced only predictions outside the pair and clipped near ones; interpolating
    every one measured at both sizes picks as the measured-neighbour oracle does, from both
    neighbours: on the pooled race reference (leave-size-out, 56 problems) 99.6 % geomean of
    the best, 98 % within 5 %, against 98.7 % / 88 % and the oracle's 99.4 % / 96 %.
    Configurations measured at ``size`` itself are their runs there
    (:mod:`~.neighbour_here`), on one side only their edge run grown
    (:mod:`~.neighbour_beyond`). The energy is the measured pair's too: scaled by the runtime, the model's
    power at 768 had halved after ``learn`` (s28 tester Y: 1.66 J where 3.92 and 5.72 J ran).
    The peak memory per rank is the measured pair's too, where both runs had one
    (:func:`_interpolate_memory`).

    Args:
        cols: System 1's candidate columns (configuration and prediction arrays).
        measured: the bundle's :class:`NeighbourRuntimes`.
        trained: partition -> the measured partition of its hardware, None where none has
            it (then nothing bounds it; absent: itself).

    Returns:
        partition -> its nearest (below, above) measured sizes that bracket any of its rows,
        for the partitions that have them, or None when none has; :data:`BELOW`,
        :data:`ABOVE`, :data:`BELOW_SIZE`, :data:`ABOVE_SIZE`, :data:`INTERPOLATED` and
        :data:`MODEL` are added to ``cols`` then (NaN where not bracketed).
    """
    if not measured.groups or str(workload) not in measured.workloads:
        return None
    partitions = np.asarray(cols["partition"])
    first = partitions[0] if len(partitions) else None
    names = [first] if first is not None and (partitions == first).all() else \
        np.unique(partitions).tolist()
    sizes, hits = {}, []
    for part in names:
        rows = None if len(names) == 1 else np.flatnonzero(partitions == part)
        table = cols if rows is None else {c: np.asarray(cols[c])[rows] for c in _CONFIG}
        name = _measured_as(trained, part)
        got = None if name is None else measured.around(workload, name, size, table)
        if got is None:
            continue
        sizes[str(part)] = (float(got.size_below.max()), float(got.size_above.min()))
        hits.append(got._replace(rows=got.rows if rows is None else rows[got.rows]))
    if not sizes:
        return None
    got = Bracket(*(np.concatenate(field) for field in zip(*hits)))
    idx = got.rows
    t = np.log(size / got.size_below) / np.log(got.size_above / got.size_below)
    below, above = got.log_runtime_below, got.log_runtime_above
    interp = (1 - t) * below + t * above
    runtime = np.asarray(cols["runtime_s"], dtype=float)
    lo, hi = np.minimum(below, above), np.maximum(below, above)
    energy_measured = (1 - t) * got.log_energy_below + t * got.log_energy_above
    with np.errstate(invalid="ignore", divide="ignore"):
        log_r = np.log(runtime[idx])
        far = np.isfinite(log_r)  # every prediction measured on both sides is replaced
        factor = np.where(far, np.exp(interp - log_r), 1.0)
        log_e = np.log(np.asarray(cols["energy_j"], dtype=float)[idx])
        by_energy = far & np.isfinite(log_e) & np.isfinite(energy_measured)
        energy_factor = np.where(by_energy, np.exp(energy_measured - log_e), factor)
    n = len(runtime)
    cols[MODEL] = runtime
    for col in _SCALED:
        cols[col] = np.array(cols[col], dtype=float)  # a copy: the answer may be shared
        cols[col][idx] *= energy_factor if col.startswith("energy") else factor
    # A replaced prediction's interval is at least the measured pair: what is known between
    # them. Its energy interval, where the pair's energy is known, is that runtime interval
    # at the least and the most average power the pair drew (so it holds the pair): the
    # model's own energy end, scaled, had read 34 W on a node that draws at most 20 W (s40
    # tester D2); else the model's, scaled alike.
    power_below = got.log_energy_below - below
    power_above = got.log_energy_above - above
    p_lo, p_hi = np.fmin(power_below, power_above), np.fmax(power_below, power_above)
    for end, p_end, widest, side in ((lo, p_lo, np.fmin, "lo"), (hi, p_hi, np.fmax, "hi")):
        old = cols[f"runtime_{side}"][idx]
        new = np.where(far, widest(old, np.exp(end)), old)
        energy = cols[f"energy_{side}"][idx]
        with np.errstate(invalid="ignore", divide="ignore"):
            cols[f"energy_{side}"][idx] = np.where(
                by_energy, new * np.exp(p_end), energy * np.where(far, new / old, 1.0))
        cols[f"runtime_{side}"][idx] = new
    _interpolate_memory(cols, idx, t, got)
    for name, values in ((BELOW, np.exp(below)), (ABOVE, np.exp(above)),
                         (INTERPOLATED, np.exp(interp)), (BELOW_SIZE, got.size_below),
                         (ABOVE_SIZE, got.size_above)):
        cols[name] = np.full(n, np.nan)
        cols[name][idx] = values
    return sizes


def _interpolate_memory(cols: dict, idx: np.ndarray, t: np.ndarray, got: Bracket) -> None:
    """Replace the predicted peak memory per rank (``peak_rss_mb``) of the bracketed rows
    ``idx`` by their measured pair interpolated log-log at the fraction ``t`` of the way, in
    place, never below the smaller size's (a noisy larger run does not make a bigger problem
    need less); rows without both measurements keep the model's. The trees' need was a step:
    poisson at 320 and 350 took 256's 148.8 MiB where 384 measured 216 MiB and 320 ran 179 MiB
    (s30 tester K3)."""
    if "peak_rss_mb" not in cols:
        return
    below, above = got.log_memory_below, got.log_memory_above
    known = np.isfinite(below) & np.isfinite(above)
    need = np.array(cols["peak_rss_mb"], dtype=float)  # a copy: the answer may be shared
    need[idx[known]] = np.exp(np.maximum((1 - t) * below + t * above, below)[known])
    cols["peak_rss_mb"] = need


def disagreement(cols: dict, index: int, feasible: np.ndarray, size: float,
                 sizes: dict | None, objective: str = "time") -> str:
    """One line when the measurements at the sizes around ``size`` contradict the pick
    ``index`` among the ``feasible`` rows (see the module docstring), else ``""``.

    Runtimes only, so only for a pick by ``objective`` time: a faster layout says nothing
    against a pick by energy, which was printed as a reason against the lowest-energy pick
    and capped its confidence (s40 tester D7)."""
    if objective != "time" or not sizes or BELOW not in cols \
            or not math.isfinite(cols[INTERPOLATED][index]):
        return ""
    below, above, interp, model = cols[BELOW], cols[ABOVE], cols[INTERPOLATED], cols[MODEL]
    rows = feasible[np.isfinite(interp[feasible])]
    at_lo, at_hi = cols[BELOW_SIZE], cols[ABOVE_SIZE]
    s_lo, s_hi = at_lo[index], at_hi[index]
    cut = 1.0 - TOLERANCE
    # runs compared only at the same sizes on the same hardware
    same = (cols["partition"][rows] == cols["partition"][index]) & (at_lo[rows] == s_lo) \
        & (at_hi[rows] == s_hi)
    both = rows[same & (below[rows] < below[index] * cut) & (above[rows] < above[index] * cut)]
    if len(both):
        q = int(both[np.argmin(interp[both])])
        return (f"the measurements around size {size:g} contradict the pick: {_config(cols, q)} "
                f"ran faster at both size {s_lo:g} ({_s(below[q])} vs the pick's "
                f"{_s(below[index])}) and size {s_hi:g} ({_s(above[q])} vs {_s(above[index])})")
    q = int(rows[np.argmin(interp[rows])])
    moved = [r for r in (index, q) if abs(cols["runtime_s"][r] / model[r] - 1.0) > TOLERANCE]
    if q == index or interp[q] >= interp[index] * cut or not moved:
        return ""
    r = moved[-1]
    lo, hi = at_lo[r], at_hi[r]
    runs = (below[r], above[r])
    # "both its runs" only where it is: 0.064 s lay between runs of 0.0625 and 0.159 s,
    # below their interpolation only (s40 tester D7)
    if model[r] > max(runs) or model[r] < min(runs):
        side = (f"{'above' if model[r] > max(runs) else 'below'} both its runs at sizes "
                f"{lo:g} and {hi:g} ({_s(below[r])}, {_s(above[r])}; interpolated: "
                f"{_s(cols['runtime_s'][r])})")
    else:
        side = (f"{'above' if model[r] > cols['runtime_s'][r] else 'below'} the "
                f"{_s(cols['runtime_s'][r])} interpolated between its runs at sizes {lo:g} "
                f"and {hi:g} ({_s(below[r])}, {_s(above[r])})")
    return (f"the model's prediction disagrees with the measurements around size {size:g}: it "
            f"put {_config(cols, r)} at {_s(model[r])}, {side}; interpolated between their "
            f"measurements, {_config(cols, q)} takes {_s(interp[q])} against the pick's "
            f"{_s(interp[index])}")


def _measured_as(trained: dict | None, partition) -> str | None:
    """The partition whose measurements bound ``partition``'s predictions: ``trained``'s
    entry (None there: hardware no measured partition has, so nothing bounds it), else the
    partition's own name."""
    if trained is not None and str(partition) in trained:
        return trained[str(partition)]
    return str(partition)


def _s(seconds: float) -> str:
    return f"{float(seconds):.3g} s"


def _config(cols: dict, row: int) -> str:
    n, r, t = (int(cols[c][row]) for c in ("nodes", "ranks_per_node", "threads"))
    return (f"{n} node{'s' if n > 1 else ''} x {r} rank{'s' if r > 1 else ''} x {t} "
            f"thread{'s' if t > 1 else ''} ({cols['device'][row]}, {cols['precision'][row]})")
