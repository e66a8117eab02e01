"""A run the sweep's own ``--timeout`` cut short ran longer than that limit: a lower bound on
its runtime there, not a failure of the configuration.

A sweep of ``grow`` with ``--timeout 2`` recorded 1 rank at 16000 and both layouts at 32000
as ``timeout`` ("no exit within the 2 s timeout; killed"); System 1 read those as failures,
refused size 24000 as "predicted to fail" (0.58 from "failed at 32000") and never said the
word timeout, though 2 ranks run 24000 in 2.3-2.7 s (s40 tester B12). The limit is the
measurement's, not the program's: the failure evidence
(:func:`~hpcds1mpi.decide.measured_here.workload_runs`) leaves such runs out, and here

* :func:`bound_by_timeouts`: a candidate whose configuration timed out on its hardware at a
  size no larger than the question's, with no ok run of it from that size up to the question,
  is predicted at least the limit: its runtime and the lower end of its interval raised to it
  (work that grows with the size does not get faster; an ok run above the timed-out size says
  it did, and then nothing is bounded), and the upper end unknown (``inf``, shown ``?``): the
  run went on past the limit for as long as it did, so a deadline is not met by it and no
  script's time limit is sized from it (s41 tester D6: "3 s (3 s–3 s)" for a run of 120 s,
  whose job a 1 min limit killed). Its energy is raised with its runtime (its draw lasts as
  long), the upper end the model's (s47 tester L6). The bound comes before the rules that
  hold a never-measured layout to the measured ones: perfect scaling from a layout that ran
  past 11 s is no 857 ms (s47 tester L1). :data:`TIMED_OUT_SIZES` keeps every size it
  timed out at, :data:`TIMED_OUT_AFTER` the bounding limit (NaN: none bounds it).
* What bounds one run is what the limit timed: a program's ``--timeout`` is per launch, one
  run ("no exit within the 2 s timeout"); a kernel configuration's covers its set-up, warm-up
  and every repeat ("no result within the 1.5 s timeout"), so only the time the measured
  repeat it cut short had run bounds one run, and where it cut set-up or warm-up, or the
  error does not say (a file written before it did), nothing does (s41 tester D16: fp64 at
  160 was bounded at 1.5 s where a run takes 0.08 s, and a never-measured level was picked).
* A program's limit is its launch's wall time; where its ``runtime_s`` is its own reported
  time (``--time-regex``), that clock is shorter by what the launch spends outside the
  program's timer (start-up, input, output), so the limit less the most its ``ok`` runs of
  the same configuration on that hardware spent so (``elapsed_s - runtime_s``) bounds it
  (s44: a program with 0.6 s of start-up outside its timer, timed out at 1.3 s at size 8, was
  predicted 1.3 s there, in its own clock, where it takes 0.8 s; now at least 0.59 s, its
  launches' 0.71 s outside the timer taken off). Where that configuration never ran ok, the
  most the workload's other ok runs there spent so (at that size where any ran ok, else at any
  size) is taken off, and where none did the limit stands (s44 review R4: such a layout had
  no bound, and one that timed out at 2 s was predicted 0.92 s at that very size).
  :data:`TIMED_OUT_CLOCK` says how much was taken off, :data:`TIMED_OUT_FROM` whose runs said.
* :func:`timed_out_said` / :func:`timed_out_note`: what those runs were, in words that name
  the limit ("timed out at 2 s (the sweep's --timeout) at size 16000, 32000: ...").
"""

from __future__ import annotations

import re

import numpy as np

from hpcds1mpi.config import TIMEOUT
from hpcds1mpi.decide.energy_ends import follow_runtime
from hpcds1mpi.decide.measured_here import CONFIG_COLUMNS, candidate_codes, layout_text
from hpcds1mpi.measure.resumed_runs import TIMEOUT_LIMIT

#: Column: the sizes a candidate's configuration timed out at on its hardware, as text.
TIMED_OUT_SIZES = "timed_out_sizes"
#: Column: the limit (s) a timed-out run bounds the candidate's runtime by; NaN where none.
TIMED_OUT_AFTER = "timed_out_after_s"
#: Column: the time outside the program's own timer (s) taken off the limit to bound it in
#: the program's clock (0: the limit is in the runtime's clock); NaN where not bounded.
TIMED_OUT_CLOCK = "timed_out_outside_s"
#: Column: whose ok runs gave :data:`TIMED_OUT_CLOCK`: :data:`LAYOUT`, :data:`WORKLOAD`, or
#: :data:`NO_RUN` (the program's own clock, but no ok run said it: the limit stands); "" where
#: the limit is in the runtime's clock.
TIMED_OUT_FROM = "timed_out_outside_from"
LAYOUT, WORKLOAD, NO_RUN = "layout", "workload", "none"
#: The limit as the sweep words a timeout ("no exit within the 2 s timeout; killed", "no result
#: within the 30 s timeout; ..."), read as a resume reads it: the run's own time is the fallback.
_LIMIT = TIMEOUT_LIMIT
#: A kernel configuration's timeout (it covers set-up, warm-up and every repeat).
_WHOLE_CONFIGURATION = re.compile(r"no result within the [0-9.e+-]+ s timeout")
#: What its error says of one run: the time the measured repeat it cut short had run
#: (``measure/watchdog.py::covered``).
_CUT_SHORT = re.compile(r"repeat it cut short had run ([0-9.]+(?:e[+-]?[0-9]+)?) s")


def timed_out_runs(bundle, workload: str) -> dict:
    """partition -> (configuration codes, sizes, limits in s (NaN: unknown), the lower bounds
    they give one run in s (NaN: none), ok codes' sizes as ``(codes, sizes)``, the time each
    bound leaves out of its limit, the launch's outside the program's own timer, in s, and
    whose runs said it (:data:`TIMED_OUT_FROM`)) of
    ``workload``'s timed-out training rows, read once per bundle and workload; ``{}`` where
    none timed out."""
    from hpcds1mpi.decide import bundle_cache

    return bundle_cache.memo(bundle, ("timed_out", str(workload)),
                             lambda: _read(bundle, str(workload)))


def _read(bundle, workload: str) -> dict:
    from hpcds1mpi.decide import bundle_cache
    from hpcds1mpi.surrogates.size_neighbours import config_codes

    try:
        rows = bundle_cache.training_columns(bundle)
        status = np.asarray(rows["status"]).astype(str)
        ours = np.flatnonzero(np.asarray(rows["workload"]).astype(str) == workload)
        if not (status[ours] == TIMEOUT).any():
            return {}
        codes = config_codes({c: np.asarray(rows[c])[ours] for c in CONFIG_COLUMNS})
        sizes = np.asarray(rows["size"], dtype=float)[ours]
        partitions = np.asarray(rows["partition"]).astype(str)[ours]
        limits, bounds = _limits(rows, ours)
    except (AttributeError, KeyError):  # no training rows, or none with outcomes
        return {}
    status = status[ours]
    clock = _own_clock(bundle, ours, len(rows["status"]))
    out = {}
    for part in np.unique(partitions[status == TIMEOUT]).tolist():
        on, ok = partitions == part, status == "ok"
        late = np.flatnonzero(on & (status == TIMEOUT))
        taken, whence = np.zeros(len(late)), np.full(len(late), "", dtype=object)
        for i, row in enumerate(late.tolist()):
            if clock is not None and clock[0][row]:  # its runtime is the program's own time
                taken[i], whence[i] = _outside(clock[1], on & ok, codes == codes[row],
                                               sizes == sizes[row])
        out[part] = (codes[late], sizes[late], limits[late], bounds[late] - taken,
                     (codes[on & ok], sizes[on & ok]), taken, whence)
    return out


def _outside(spent: np.ndarray, ok: np.ndarray, layout: np.ndarray, size: np.ndarray
             ) -> tuple[float, str]:
    """The most time outside the program's timer (``spent``) of the ``ok`` runs of the
    ``layout``, else of the workload's other layouts at that ``size``, else at any size, and
    whose they were; ``(0, NO_RUN)`` where no ok run says it: the limit stands (module)."""
    for rows, whence in ((ok & layout, LAYOUT), (ok & size, WORKLOAD), (ok, WORKLOAD)):
        known = spent[rows]
        known = known[np.isfinite(known)]
        if len(known):
            return max(float(known.max()), 0.0), whence
    return 0.0, NO_RUN


def _own_clock(bundle, ours: np.ndarray, total: int) -> tuple | None:
    """For the rows ``ours`` of the bundle's ``total`` training rows: whether each one's
    runtime is the program's own time (``--time-regex``), and what each ok one's launch spent
    outside that timer (``elapsed_s - runtime_s``; NaN for the rest). None where the rows do
    not say (a stand-in bundle, rows without ``runtime_source``): the limit stands."""
    from hpcds1mpi.measure.readings import WALL

    try:
        data = bundle.training_data()
    except (AttributeError, OSError, ValueError):
        return None
    if len(data) != total or not {"runtime_source", "elapsed_s", "kind"} <= set(data.columns):
        return None
    rows = data.iloc[ours]
    source = rows["runtime_source"].astype(str)
    own = ((rows["kind"].astype(str) == "external") & source.str.len().gt(0)
           & ~source.isin([WALL, "nan", "None"])).to_numpy()
    spent = (np.asarray(rows["elapsed_s"], dtype=float)
             - np.asarray(rows["runtime_s"], dtype=float))
    ok = np.asarray(rows["status"]).astype(str) == "ok"
    return own, np.where(ok, spent, np.nan)


def _limits(rows, ours: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each row's limit (the one its error names, else the time it ran before it was killed)
    and the lower bound it gives one run: the limit, but for a kernel configuration the time
    its cut-short repeat had run, or NaN (module docstring)."""
    try:
        ran = np.asarray(rows["runtime_s"], dtype=float)[ours]
    except KeyError:
        ran = np.full(len(ours), np.nan)
    try:
        errors = np.asarray(rows["error"]).astype(str)[ours]
    except KeyError:
        return ran, ran
    named = np.array([float(m.group(1)) if (m := _LIMIT.search(e)) else np.nan for e in errors])
    limits = np.where(np.isfinite(named), named, ran)
    one_run = np.array([float(m.group(1)) if (m := _CUT_SHORT.search(e)) else np.nan
                        for e in errors])
    whole = np.array([bool(_WHOLE_CONFIGURATION.search(e)) for e in errors], dtype=bool)
    return limits, np.where(whole, one_run, limits)


def bound_by_timeouts(bundle, workload: str, size: float, cols: dict,
                      trained: dict | None = None, codes=None) -> None:
    """In place: add :data:`TIMED_OUT_SIZES`, :data:`TIMED_OUT_AFTER` and
    :data:`TIMED_OUT_CLOCK` to ``cols``, raise
    each bounded candidate's ``runtime_s`` / ``runtime_lo`` to its limit, its energy with them,
    and make its ``runtime_hi`` unknown (``inf``; module docstring, :func:`raise_to_timeouts`).

    Args:
        cols: System 1's candidate columns (configuration, ``partition``, runtime columns).
        trained: partition -> the measured partition of its hardware, None where none has it
            (None: each partition is itself), as ``system1.score`` finds it.
        codes: ``cols``' :func:`~.measured_here.candidate_codes` (None: made here).
    """
    n = len(np.asarray(cols["nodes"]))
    text, after, outside = np.full(n, "", dtype=object), np.full(n, np.nan), np.full(n, np.nan)
    cols[TIMED_OUT_SIZES], cols[TIMED_OUT_AFTER], cols[TIMED_OUT_CLOCK] = text, after, outside
    cols[TIMED_OUT_FROM] = whose = np.full(n, "", dtype=object)
    runs = timed_out_runs(bundle, workload)
    if not runs:
        return
    find = codes or candidate_codes(cols)
    partitions = np.asarray(cols["partition"]).astype(str)
    for part in np.unique(partitions).tolist():
        name = (trained or {}).get(part, part)
        if name is None or name not in runs:
            continue
        late_codes, late_sizes, limits, bounds, (ok_codes, ok_sizes), taken, whence = runs[name]
        on = np.flatnonzero((partitions == part) & np.isin(find(), late_codes))
        for code in np.unique(find()[on]).tolist():
            rows, mine = on[find()[on] == code], late_codes == code
            text[rows] = _sizes_limits(late_sizes[mine], limits[mine])
            after[rows], outside[rows], whose[rows] = _bound(
                late_sizes[mine], bounds[mine], taken[mine], whence[mine],
                ok_sizes[ok_codes == code], float(size))
    raise_to_timeouts(cols)


def raise_to_timeouts(cols: dict) -> None:
    """In place: each candidate :data:`TIMED_OUT_AFTER` bounds gets ``runtime_s`` /
    ``runtime_lo`` at least that bound, ``energy_j`` / ``energy_lo`` by the same factors and
    ``energy_hi`` by the median's (it draws for as long as it runs: its 3.82 J at the trees'
    0.64 s had been kept beside 11 s and picked as the least energy, s47 tester L6; the
    interval no narrower than the runtime's: :func:`~.energy_ends.follow_runtime`), and
    ``runtime_hi`` unknown (``inf``).
    ``system1.score`` calls it where the bound is found, before the rules that read measured
    layouts (s47 tester L1), and again once the intervals are final; a no-op where none."""
    after = cols.get(TIMED_OUT_AFTER)
    bounded = np.flatnonzero(np.isfinite(after)) if after is not None else ()
    if not len(bounded):
        return
    before = {c: np.asarray(cols[c], dtype=float)[bounded]
              for c in ("runtime_s", "runtime_lo", "runtime_hi")}
    for runtime in ("runtime_s", "runtime_lo"):
        values = np.array(cols[runtime], dtype=float)  # a copy: the bundle's answer unchanged
        values[bounded] = np.fmax(values[bounded], after[bounded])
        cols[runtime] = values
    hi = np.array(cols["runtime_hi"], dtype=float)
    hi[bounded] = np.inf  # it ran on past the limit: no known end
    cols["runtime_hi"] = hi
    # the energy's upper end by its median's factor: the model's, as far above its median
    follow_runtime(cols, bounded, before)


def _bound(sizes: np.ndarray, limits: np.ndarray, taken: np.ndarray, whence: np.ndarray,
           ok_sizes: np.ndarray, size: float) -> tuple[float, float, str]:
    """The largest bound (``limits``: what each gives one run, ``taken`` off its limit, as
    ``whence`` says) of the runs timed out at a size up to ``size`` with no ok run from that
    size to ``size``, what it took off and whose runs said so; NaN, NaN, "" where none (a
    bound of 0 s or less is none)."""
    at_or_below = (sizes <= size * (1 + 1e-9)) & np.isfinite(limits) & (limits > 0)
    held = [(lim, off, said) for s, lim, off, said in zip(
                sizes[at_or_below].tolist(), limits[at_or_below].tolist(),
                taken[at_or_below].tolist(), whence[at_or_below].tolist())
            if not ((ok_sizes >= s * (1 - 1e-9)) & (ok_sizes <= size * (1 + 1e-9))).any()]
    return max(held) if held else (float("nan"), float("nan"), "")


def _sizes_limits(sizes: np.ndarray, limits: np.ndarray) -> str:
    """"2 s (the sweep's --timeout) at size 16000, 32000": each limit said once, its sizes
    after it ("the sweep's --timeout at size 800" where the limit is not known)."""
    parts = []
    finite = np.isfinite(limits)
    for limit in np.unique(limits[finite]).tolist():
        parts.append(f"{limit:.3g} s (the sweep's --timeout) at size "
                     f"{_sizes_text(np.unique(sizes[limits == limit]))}")
    if (~finite).any():
        parts.append(f"the sweep's --timeout at size {_sizes_text(np.unique(sizes[~finite]))}")
    return " and at ".join(parts)


def _sizes_text(sizes: np.ndarray) -> str:
    return ", ".join(f"{s:g}" for s in sizes.tolist())


def timed_out_said(cols: dict, row: int) -> str:
    """What candidate ``row``'s timed-out runs were ("timed out at 2 s (the sweep's --timeout)
    at size 16000: it ran longer than that there, which is no failure"), else ``""``."""
    if TIMED_OUT_SIZES not in cols or not cols[TIMED_OUT_SIZES][row]:
        return ""
    return (f"timed out at {cols[TIMED_OUT_SIZES][row]}: it ran longer than that there, "
            f"which is no failure")


def timed_out_note(cols: dict, index: int, size: float) -> str:
    """One line when the pick's runtime at ``size`` is bounded by a run timed out at a size up
    to it: the runs, the bound and the way to measure it, else ``""``."""
    limit = float(cols[TIMED_OUT_AFTER][index]) if TIMED_OUT_AFTER in cols else float("nan")
    if not np.isfinite(limit):
        return ""
    config = layout_text(*(cols[c][index] for c in CONFIG_COLUMNS))
    off = float(cols[TIMED_OUT_CLOCK][index]) if TIMED_OUT_CLOCK in cols else 0.0
    whose = cols[TIMED_OUT_FROM][index] if TIMED_OUT_FROM in cols else ""
    lasted = f"{limit:.3g} s a run of it lasted there before the timeout"
    if whose == NO_RUN:  # s44 review R4
        lasted += (" (its launch's clock: no ok launch of the workload says how long the "
                   "program spends outside its --time-regex timer, so nothing is taken off)")
    elif off > 0:
        lasted = (f"{limit:.3g} s of the program's own time (--time-regex's clock): its launch "
                  f"lasted {limit + off:.3g} s there before the timeout, less the {off:.3g} s "
                  + ("its ok launches of this layout" if whose != WORKLOAD else "the most the "
                     "workload's ok launches of other layouts (none of this one ran ok)")
                  + " spent outside the program's timer")
    return (f"{config} {timed_out_said(cols, index)}; at size {size:g} it is predicted at "
            f"least the {lasted} (measure it with a longer --timeout to know its runtime)")
