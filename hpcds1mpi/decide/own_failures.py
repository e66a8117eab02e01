"""A program's failure prediction rests on its own runs, not on other programs' sizes.

The bundle's failure classifier is one model over all of its workloads with the size as a
feature, so it compares one program's size (KB) with another's (MB): crashy's crashes at 400
and beyond made comm, which never failed, "predicted to fail" everywhere past its 256, and
silently dropped memhog's 2 ranks x 1 thread at 640, a layout that never failed and was the
fastest there (s39 tester B3, B7). Where the bundle holds runs of the workload, System 1 takes
the failure probability from them instead (:func:`own_failures`):

* a workload none of whose runs failed: 0 for every candidate on hardware it ran on (a size
  beyond its measured ones is an extrapolation, which the guard says, not a predicted
  failure; hardware it never ran on is left to the classifier);
* a configuration it ran on the candidate's hardware: from its runs at the sizes nearest the
  question, on either side: 1 where the nearest failed and no run on the other side was ok,
  0 where the nearest was ok and no run on the other side failed, and between an ok run and a
  failure the fraction of the way, in log size, from the ok run to the failure (the size
  where it starts to fail taken anywhere between them alike): crashy 2 x 1, ok at 200 and
  failed at 400, is 0.58 at 300 (s39 tester B2, where the classifier gave it 0.0095, the
  safest of all). A size's outcome is the share of its rounds that failed (one transient
  failure in 5 rounds is 0.2, and the shares are weighed the same way between sizes);
* anything else (a configuration it never ran there, a workload the bundle never ran): the
  classifier, the only evidence there is.

A run the sweep's own ``--timeout`` cut short is no failure here: it ran longer than the
limit (:mod:`~hpcds1mpi.decide.timed_out`, s40 tester B12).

What the runs say is kept with the candidates (:data:`OK_SIZES`, :data:`FAILED_SIZES`), so a
pick near a failure says so (:func:`failed_near_note`) and a candidate dropped as predicted to
fail is named with why (:func:`dropped_note`).
"""

from __future__ import annotations

import numpy as np

from hpcds1mpi.decide.measured_here import (
    CONFIG_COLUMNS, candidate_codes, layout_text, workload_runs)
from hpcds1mpi.decide.timed_out import timed_out_said
from hpcds1mpi.surrogates.columns import distinct

#: Columns added where the workload's runs include a failure on a candidate's hardware: the
#: sizes its configuration ran ok at and failed at, as text ("" where none).
OK_SIZES, FAILED_SIZES = "ok_sizes", "failed_sizes"
#: Column added to every scored question: True where the failure probability came from the
#: workload's own runs, False where from the classifier.
FROM_RUNS = "fail_from_runs"
#: How many dropped candidates :func:`dropped_note` names.
NAMED = 3


def own_failures(bundle, workload: str, size: float, cols: dict,
                 trained: dict | None = None, codes=None) -> None:
    """Replace, in place, ``cols``' ``fail_prob`` and ``fail_prob_max`` by what the
    workload's own runs say (module docstring) wherever they say it, and add
    :data:`FROM_RUNS` (and :data:`OK_SIZES`, :data:`FAILED_SIZES` where a run failed).

    Args:
        cols: System 1's candidate columns (configuration, ``partition`` and the bundle's
            ``fail_prob`` / ``fail_prob_max`` arrays, not changed: new arrays replace them).
        trained: partition -> the measured partition of its hardware, None where none has
            it (None: each partition is itself), as ``system1.score`` finds it.
        codes: ``cols``' :func:`~.measured_here.candidate_codes` (None: made here).
    """
    n = len(np.asarray(cols["nodes"]))
    known, prob = np.zeros(n, dtype=bool), np.zeros(n)
    runs = workload_runs(bundle, str(workload)) or {}
    if any(len(codes) for codes, *_ in runs.values()):
        if not any(bad.any() for *_, bad in runs.values()):
            # it never failed: no other program's sizes make it fail, on the hardware it ran
            # on (hardware it never ran on is the classifier's: the review of s39)
            known[:] = _ran_on(runs, cols, trained)
        else:
            from hpcds1mpi.decide import bundle_cache

            def per_configuration(name: str) -> dict:  # not the question's size: once
                return bundle_cache.memo(bundle, ("own_failures", str(workload), name),
                                         lambda: _per_configuration(runs[name]))

            _from_runs(runs, float(size), cols, trained, known, prob, per_configuration,
                       codes or candidate_codes(cols))
    cols[FROM_RUNS] = known
    if known.any():
        for col in ("fail_prob", "fail_prob_max"):
            cols[col] = np.where(known, prob, np.asarray(cols[col], dtype=float))


def _ran_on(runs: dict, cols: dict, trained: dict | None) -> np.ndarray:
    """Whether each candidate's partition is (the hardware of) one the workload ran on."""
    partitions = np.asarray(cols["partition"]).astype(str)
    ran = {part for part in distinct(partitions).tolist()
           if (trained or {}).get(part, part) in runs}
    return np.isin(partitions, sorted(ran))


def _from_runs(runs: dict, size: float, cols: dict, trained: dict | None,
               known: np.ndarray, prob: np.ndarray, per_configuration, find_codes
               ) -> None:
    """Fill ``known`` and ``prob`` for the candidates whose configuration ran on their
    hardware, and add the sizes columns; ``per_configuration(partition)``: its runs'
    :func:`_per_configuration`; ``find_codes()``: the candidates' configuration codes."""
    n = len(known)
    ok_text, failed_text = np.full(n, "", dtype=object), np.full(n, "", dtype=object)
    partitions = np.asarray(cols["partition"]).astype(str)
    for part in distinct(partitions).tolist():
        name = (trained or {}).get(part, part)
        if name is None or name not in runs:
            continue
        codes = find_codes()
        ran = per_configuration(name)
        ran_codes = np.fromiter(ran, dtype=np.int64, count=len(ran))
        on = np.flatnonzero((partitions == part) & np.isin(codes, ran_codes))
        for code in np.unique(codes[on]).tolist():
            sizes, failing = ran[code]
            rows = on[codes[on] == code]
            known[rows] = True
            prob[rows] = failure_probability(sizes, failing, size)
            ok_text[rows] = _sizes_text(sizes[failing < 0.5])
            failed_text[rows] = _sizes_text(sizes[failing >= 0.5])
    cols[OK_SIZES], cols[FAILED_SIZES] = ok_text, failed_text


def _per_configuration(partition_runs: tuple) -> dict:
    """configuration code -> (its distinct run sizes ascending, the share of its rounds that
    failed at each) of one partition's runs: one transient failure in 5 rounds is 0.2, not a
    size that fails (the review of s39: it had dropped a layout ok in 4 of 5)."""
    codes, sizes, good, bad = partition_runs
    out = {}
    for code in np.unique(codes[good | bad]).tolist():
        mine = (codes == code) & (good | bad)
        at = np.unique(sizes[mine])
        failed = np.array([np.count_nonzero(mine & bad & (sizes == s)) for s in at.tolist()])
        rounds = np.array([np.count_nonzero(mine & (sizes == s)) for s in at.tolist()])
        out[code] = (at, failed / rounds)
    return out


def failure_probability(sizes: np.ndarray, failing: np.ndarray, size: float) -> float:
    """The chance a configuration fails at ``size`` from its runs at ``sizes`` (ascending,
    distinct) with ``failing`` each size's share of failed rounds (or True/False): the nearest
    run's share on each side, and between two sizes their shares weighed by the way from one
    to the other in log size (ok at 200 and failed at 400: 0.58 at 300)."""
    failing = np.asarray(failing, dtype=float)
    here = np.isclose(sizes, size, rtol=1e-9, atol=0.0)
    if here.any():
        return float(failing[here].max())
    below, above = np.flatnonzero(sizes < size), np.flatnonzero(sizes > size)
    if not len(below) or not len(above):  # one side only: its nearest run says
        return float(failing[below[-1] if len(below) else above[0]])
    lo, hi = below[-1], above[0]
    way = float(np.log(size / sizes[lo]) / np.log(sizes[hi] / sizes[lo]))
    return float(failing[lo] + way * (failing[hi] - failing[lo]))


def undecided(cols: dict) -> np.ndarray:
    """Candidates predicted to fail only from their own runs on both sides of the question's
    size — ok at a size and failed at another —, with a failure probability below 1: where
    the size it starts to fail lies is not known, so measuring them at this size tells.
    Before, a job all of whose layouts were such got "no allowed partition can run this job;
    relax the constraints" and no calibration (s40 tester B6, B12)."""
    n = len(np.asarray(cols["nodes"]))
    if FROM_RUNS not in cols or OK_SIZES not in cols or "reason" not in cols:
        return np.zeros(n, dtype=bool)
    ok_somewhere = np.asarray([bool(text) for text in cols[OK_SIZES]], dtype=bool)
    return (np.asarray(cols["reason"]) == "fail") & np.asarray(cols[FROM_RUNS], dtype=bool) \
        & ok_somewhere & (np.asarray(cols["fail_prob_max"], dtype=float) < 1.0)


def sides_said(cols: dict, rows: np.ndarray, size: float) -> str:
    """How the runs of the candidates ``rows`` (:func:`undecided`) lie around ``size``, as
    their sizes are: "ok at a smaller one, failed at a larger" only where that is so. Before,
    that fixed text was said where every layout had also run ok at a larger size than its
    failure (Rheolef's run at 150 failed for its missing input, ok at 100 and 200: s43
    tester I3); a failure between sizes run ok is said as that, with what to check."""
    def sizes(text: str) -> list[float]:
        return [float(word) for word in str(text).replace(",", " ").split()]

    ok = [sizes(cols[OK_SIZES][row]) for row in rows]
    failed = [sizes(cols[FAILED_SIZES][row]) for row in rows]
    inside = [any(lo < f < hi for f in fs for lo in oks for hi in oks)
              for oks, fs in zip(ok, failed)]
    if any(inside):
        return ("a failure at a size between sizes it ran ok at: such a failure is more often "
                "the run's own (its input, the machine) than the size's, so read its reason "
                "(hpcds1mpi telemetry show) and measure it again")
    if all(min(oks) < size < max(fs) for oks, fs in zip(ok, failed) if oks and fs):
        return "ok at a smaller one, failed at a larger"
    return "ok at some sizes, failed at others"


def _sizes_text(sizes: np.ndarray) -> str:
    return ", ".join(f"{s:g}" for s in sizes.tolist())


def _config(cols: dict, row: int) -> str:
    return layout_text(*(cols[c][row] for c in CONFIG_COLUMNS))


def runs_said(cols: dict, row: int) -> str:
    """What the candidate's own runs were, where one of them failed ("ran ok at 200; failed
    at 400, 800"; and where it timed out, :func:`~.timed_out.timed_out_said`), else ``""``."""
    if FAILED_SIZES not in cols or not cols[FAILED_SIZES][row]:
        return ""
    ok = cols[OK_SIZES][row]
    count = ok.count(",") + 1 if ok else 0
    said = (f"ran ok at {'one size' if count == 1 else f'{count} sizes'} ({ok}); "
            if ok else "never ran ok; ")
    timed = timed_out_said(cols, row)
    return said + f"failed at {cols[FAILED_SIZES][row]}" + (f"; {timed}" if timed else "")


def failed_near_note(cols: dict, index: int, size: float) -> str:
    """One line when the pick's configuration failed at another size than ``size``: what its
    runs were and its failure probability here, else ``""``."""
    said = runs_said(cols, index)
    if not said:
        return ""
    return (f"{_config(cols, index)} {said}; at size {size:g} its failure probability from "
            f"those runs is {float(cols['fail_prob'][index]):.2f}")


def why_fails(cols: dict, row: int, size: float) -> str:
    """Why candidate ``row`` is predicted to fail at ``size``, in a few words."""
    p = float(cols["fail_prob_max"][row])
    if FROM_RUNS in cols and cols[FROM_RUNS][row]:
        return f"{runs_said(cols, row)} (failure probability {p:.2f} at size {size:g})"
    return (f"the failure model, fitted on every program's runs in the bundle, gives up to "
            f"{p:.2f} (no run of this configuration on this hardware)")


def dropped_note(cols: dict, size: float, partition: str, pick: int | None = None) -> str:
    """One line naming the candidates on ``partition`` left out as predicted to fail (not
    those measured failing at ``size``, :func:`~.measured_here.failed_here_note` names them)
    that were predicted faster than the pick ``pick`` (None: any), fastest first, with why;
    ``""`` when none."""
    if "reason" not in cols:
        return ""
    runtime = np.asarray(cols["runtime_s"], dtype=float)
    mask = (np.asarray(cols["reason"]) == "fail") & (np.asarray(cols["partition"]) == partition)
    if "measured_failed" in cols:
        mask &= ~np.asarray(cols["measured_failed"], dtype=bool)
    if pick is not None:
        mask &= runtime < runtime[pick]
    rows = np.flatnonzero(mask & np.isfinite(runtime))
    if not len(rows):
        return ""
    rows = rows[np.argsort(runtime[rows], kind="stable")]
    named = [f"{_config(cols, r)}, predicted {runtime[r]:.3g} s: {why_fails(cols, r, size)}"
             for r in rows[:NAMED].tolist()]
    more = f"; and {len(rows) - NAMED} more" if len(rows) > NAMED else ""
    faster = " though predicted faster than the pick" if pick is not None else ""
    return f"left out as predicted to fail at size {size:g}{faster}: " + "; ".join(named) + more
