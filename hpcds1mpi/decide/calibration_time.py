"""A calibration job's time limit: from the model's upper runtime of each step's runs where the
guard allows a prediction, else a stated default, and how it was set, said in the script
(s31 tester Q9: every calibration script got 1 h whatever the size, and said nothing why)."""

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
    :data:`CALIBRATION_FLOOR_S`. Where the guard refused the prediction outright (a workload
    or hardware never measured: ``checks``) or a step has none, the stated default
    :data:`CALIBRATION_DEFAULT_S` (s31 tester Q9: every script got 1 h whatever the size).
    """
    from hpcds1mpi.launch.directives import TIME_MARGIN, time_limit_s
    from hpcds1mpi.schemas.plan import SweepSettings

    runs = SweepSettings().warmup + SweepSettings().max_repeats
    his = [getattr(step, "runtime_hi", float("nan")) for step in steps]
    refused = [k for k in ("name", "hardware") if checks.get(k) == "escalate"]
    if refused or not his or not all(np.isfinite(his)) or min(his) <= 0:
        # the real reason, not "predicts nothing it measured" for a known workload (s31 V7)
        why = {"name": "the model never measured this workload",
               "hardware": "this partition is unlike the hardware the model measured"}.get(
            refused[0], "") if refused else "a step has no predicted runtime"
        return CALIBRATION_DEFAULT_S, (f"time limit {CALIBRATION_DEFAULT_S // 60} min, the "
                                       f"default: {why}; edit --time above if steps are cut off")
    need = sum(runs * hi + STEP_START_S for hi in his)
    limit = time_limit_s(need, floor_s=CALIBRATION_FLOOR_S)
    beyond = ", modelled beyond the measured sizes (edge runs grown along the steepest " \
        "measured slope)" if checks.get("size_range") not in (None, "pass") else ""
    return limit, (f"time limit {limit // 60} min: {len(his)} steps x ({runs} runs x the "
                   f"model's upper runtime per run{beyond}, up to {max(his):.3g} s, + "
                   f"{STEP_START_S} s start-up) = {need:.0f} s, x {TIME_MARGIN:g}, at least "
                   f"{CALIBRATION_FLOOR_S // 60} min")


__all__ = ["CALIBRATION_DEFAULT_S", "CALIBRATION_FLOOR_S", "PredictedStep", "STEP_START_S",
           "calibration_time_limit"]
