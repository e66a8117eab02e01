"""A calibration job's time limit: from the model's upper runtime of each step's runs, at least
a stated default where the guard distrusts the model and the default alone where it refused a
prediction, and how it was set, said in the script (s31 tester Q9: every calibration script
got 1 h whatever the size, and said nothing why)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hpcds1mpi.launch.scripts import CalibrationStep

#: A calibration job's time limit where no prediction can size it, and the least one, s.
CALIBRATION_DEFAULT_S, CALIBRATION_FLOOR_S = 3600, 600
#: What one step's sweep spends besides its runs (srun, Python, imports), s.
STEP_START_S = 30


@dataclass
class PredictedStep(CalibrationStep):
    """A calibration step with the model's upper runtime of one run (s; NaN: none), which
    sizes the job's time limit (:func:`calibration_time_limit`)."""

    runtime_hi: float = float("nan")


def calibration_time_limit(steps: list, checks: dict) -> tuple[int, str]:
    """(the calibration job's time limit in s, how it was set, one line for the script).

    Each step's sweep runs at most ``warmup + max_repeats`` times (the sweep's defaults) and
    starts a launcher and Python: summed over the steps with the model's upper runtime per
    run, with :data:`~hpcds1mpi.launch.directives.TIME_MARGIN`, at least
    :data:`CALIBRATION_FLOOR_S`. Where the guard escalated on the model's own checks
    (``learned``, ``size_range``: the model is distrusted there, and a job far beyond the
    measured sizes may run far longer), at least the stated default
    :data:`CALIBRATION_DEFAULT_S` too (s31 reviewer). Where the guard refused the prediction
    outright (a workload or hardware never measured: ``checks``) or a step has none, the
    default alone (s31 tester Q9: every script got 1 h whatever the size).
    """
    from hpcds1mpi.launch.directives import TIME_MARGIN, time_limit_s
    from hpcds1mpi.schemas.plan import SweepSettings

    runs = SweepSettings().warmup + SweepSettings().max_repeats
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
    need = sum(runs * hi + STEP_START_S for hi in his)
    computed = time_limit_s(need, floor_s=CALIBRATION_FLOOR_S)
    how = (f"{len(his)} steps x ({runs} runs x the model's upper runtime per run, up to "
           f"{max(his):.3g} s, + {STEP_START_S} s start-up) = {need:.0f} s, x {TIME_MARGIN:g}, "
           f"at least {CALIBRATION_FLOOR_S // 60} min")
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


__all__ = ["CALIBRATION_DEFAULT_S", "CALIBRATION_FLOOR_S", "PredictedStep", "STEP_START_S",
           "calibration_time_limit"]
