"""A calibration job's time limit: from the model's upper runtime of each step's runs, at least
a stated default where the guard distrusts the model and the default alone where it refused a
prediction, and how it was set, said in the script (s31 tester Q9: every calibration script
got 1 h whatever the size, and said nothing why)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from hpcds1mpi.launch.calibration_script import CalibrationStep
from hpcds1mpi.schemas.sweep_defaults import KERNEL, PROGRAM, Measuring

#: A calibration job's time limit where no prediction can size it, and the least one, s.
CALIBRATION_DEFAULT_S, CALIBRATION_FLOOR_S = 3600, 600
#: What one step's sweep spends besides its runs (srun, Python, imports), s.
STEP_START_S = 30


@dataclass
class PredictedStep(CalibrationStep):
    """A calibration step with the model's upper runtime of one run (s; NaN: none), which
    sizes the job's time limit (:func:`calibration_time_limit`), and how its sweep repeats
    runs: a kernel's defaults, or a ``--command`` program's (every repeat a launch)."""

    runtime_hi: float = float("nan")
    measuring: Measuring = KERNEL

    @property
    def timeout_s(self) -> int | None:
        """The step's sweep ``--timeout``: its share of the job's time (its runs at the
        model's upper runtime, start-up, the margin) where that is longer than the sweep's
        own default, else None (the default). Without it a step predicted to run for hours
        was killed at the default 600 s in a job budgeted for all of them (s40 tester B1)."""
        from hpcds1mpi.launch.directives import TIME_MARGIN

        need = _need_s([self])
        if not np.isfinite(need):
            return None
        share = int(np.ceil(need * TIME_MARGIN))
        return share if share > self.measuring.timeout else None


class CalibrationSteps(list):
    """A calibration's steps, in the order its script runs them, with ``left_out``: the one
    line naming the steps left out to keep the job within its time budget ("" for none),
    which the script's time-limit line says (s34 tester S5)."""

    left_out: str = ""


def measuring_for(workload: str) -> Measuring:
    """How a calibration step of ``workload`` repeats its runs: a built-in kernel's sweep, or
    a user's program's (``sweep --command``), as the script runs it."""
    from hpcds1mpi.kernels import declaring

    try:  # a kernel's option deck is swept as its kernel (s41 tester D1)
        return KERNEL if declaring(workload) else PROGRAM
    except Exception:  # noqa: BLE001 - a broken plugin: counted as the longer kernel default
        return KERNEL


def _runs(step) -> int:
    """The runs ``step``'s sweep makes where each takes the model's upper runtime: the
    warm-up, then repeats until both ``min_repeats`` and ``min_time`` measured, never past
    ``max_repeats`` (the sweep's defaults for the step's kind; s40 tester D9: a program's
    step was counted as a kernel's 6 runs, where it launches 3 to 10 times)."""
    m = getattr(step, "measuring", KERNEL)
    hi = float(getattr(step, "runtime_hi", float("nan")))
    repeats = math.ceil(round(m.min_time / hi, 9)) if np.isfinite(hi) and hi > 0 else \
        m.max_repeats
    return m.warmup + min(m.max_repeats, max(m.min_repeats, repeats))


def _need_s(steps: list) -> float:
    """The model's upper time of ``steps`` (s; NaN where a step has no predicted runtime)."""
    his = [getattr(step, "runtime_hi", float("nan")) for step in steps]
    if not all(np.isfinite(his)) or (his and min(his) <= 0):
        return float("nan")
    return sum(_runs(step) * hi + STEP_START_S for step, hi in zip(steps, his))


def within_budget(steps: list, ranks: list[int], least: int,
                  budget_s: int = CALIBRATION_DEFAULT_S) -> CalibrationSteps:
    """``steps`` less those a calibration job of ``budget_s`` has no time for.

    While more than ``least`` remain (the runs a model needs are measured whatever they take)
    and the steps' upper time with :data:`~hpcds1mpi.launch.directives.TIME_MARGIN` exceeds
    ``budget_s`` — or cannot be told: a step without a predicted runtime —, the last of the
    highest ``ranks`` goes (rank 0: kept longest, one per step).

    Returns:
        the kept steps in their order, ``left_out`` naming the others.
    """
    from hpcds1mpi.launch.directives import TIME_MARGIN

    kept, ranked = list(steps), list(ranks)
    gone = []
    while len(kept) > least and not _need_s(kept) * TIME_MARGIN <= budget_s:
        last = max(range(len(kept)), key=lambda k: (ranked[k], k))
        gone.append(kept.pop(last))
        ranked.pop(last)
    out = CalibrationSteps(kept)
    if gone:
        why = ("a step has no predicted runtime" if np.isnan(_need_s(steps)) else
               f"all {len(steps)} need ~{_need_s(steps) * TIME_MARGIN / 60:.0f} min by the "
               "model's upper runtimes")
        labels = ", ".join(step.config.label() for step in reversed(gone))
        out.left_out = (f"left out for time ({why}; the budget is {budget_s // 60} min): "
                        f"{labels}; sweep them in a job of their own")
    return out


def calibration_time_limit(steps: list, checks: dict) -> tuple[int, str]:
    """(the calibration job's time limit in s, how it was set, one line for the script).

    Each step's sweep runs its warm-up and its repeats (:func:`_runs`: the sweep's defaults
    for a kernel or a program, each run taking the model's upper runtime) and starts a
    launcher and Python: summed over the steps, with :data:`~hpcds1mpi.launch.directives.TIME_MARGIN`, at least
    :data:`CALIBRATION_FLOOR_S`. Where the guard escalated on the model's own checks
    (``learned``, ``size_range``: the model is distrusted there, and a job far beyond the
    measured sizes may run far longer), at least the stated default
    :data:`CALIBRATION_DEFAULT_S` too (s31 reviewer). Where the guard refused the prediction
    outright (a workload or hardware never measured: ``checks``) or a step has none, the
    default alone (s31 tester Q9: every script got 1 h whatever the size).
    """
    limit, how = _limit(steps, checks)
    left_out = getattr(steps, "left_out", "")  # what the budget had no time for (s34 S5)
    return limit, how + (f"; {left_out}" if left_out else "")


def _limit(steps: list, checks: dict) -> tuple[int, str]:
    """:func:`calibration_time_limit` of the steps as they are."""
    from hpcds1mpi.launch.directives import TIME_MARGIN, time_limit_s

    his = [getattr(step, "runtime_hi", float("nan")) for step in steps]
    refused = [k for k in ("name", "hardware") if checks.get(k) == "escalate"]
    default = CALIBRATION_DEFAULT_S // 60
    if refused or not his or not all(np.isfinite(his)) or min(his) <= 0:
        # the real reason, not "predicts nothing it measured" for a known workload (s31 V7)
        why = {"name": "the model never measured this workload",
               "hardware": "this partition is unlike the hardware the model measured"}.get(
            refused[0], "") if refused else "a step has no predicted runtime"
        return CALIBRATION_DEFAULT_S, (f"time limit {default} min, the default: {why}; edit "
                                       "--time above if steps are cut off")
    need = _need_s(steps)
    computed = time_limit_s(need, floor_s=CALIBRATION_FLOOR_S)
    how = (f"{len(his)} steps x ({_runs_words(steps)} x the model's upper runtime per run, up "
           f"to {max(his):.3g} s, + {STEP_START_S} s start-up) = {need:.0f} s, x "
           f"{TIME_MARGIN:g}, at least {CALIBRATION_FLOOR_S // 60} min")
    if checks.get("size_range") not in (None, "pass"):  # each side has its rule: bound_beyond
        how += ("; outside the measured sizes a measured configuration's upper runtime is its "
                "run at the nearest size grown along the steepest measured slope above them, "
                "shrunk along the least below, and one never measured the model's alone")
    distrusted = [k for k, level in checks.items() if level == "escalate"]
    if not distrusted:
        return computed, f"time limit {computed // 60} min: {how}"
    limit = max(CALIBRATION_DEFAULT_S, computed)
    on = " and the ".join(distrusted).replace("_", " ")
    return limit, (f"time limit {limit // 60} min, the larger of the default {default} min "
                   f"(the guard escalated on the {on} check: the model's runtimes are not "
                   f"trusted here) and the model's {computed // 60} min: {how}; edit --time "
                   "above if steps are cut off")


def _runs_words(steps: list) -> str:
    """``3 runs`` or ``3-10 runs``, and the rule that counts them: "6 runs" alone read as
    a fixed count, where a sweep repeats a run until it has measured enough."""
    runs = [_runs(step) for step in steps]
    kinds = {getattr(step, "measuring", KERNEL) for step in steps}
    count = f"{min(runs)}" if min(runs) == max(runs) else f"{min(runs)}-{max(runs)}"
    rules = []
    for m in sorted(kinds, key=lambda m: m == PROGRAM):  # the kernel's first
        what, unit = ("a program's sweep", "launches") if m == PROGRAM else \
            ("a kernel's sweep", "repeats")
        warmup = f"{m.warmup} warm-up + " if m.warmup else ""
        rules.append(f"{what}: {warmup}{m.min_repeats} to {m.max_repeats} {unit}, until "
                     f"{m.min_time:g} s is measured")
    rules = "; ".join(rules)
    return f"{count} runs ({rules})"


__all__ = ["CALIBRATION_DEFAULT_S", "CALIBRATION_FLOOR_S", "CalibrationSteps", "PredictedStep",
           "STEP_START_S", "calibration_time_limit", "measuring_for", "within_budget"]
