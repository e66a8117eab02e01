"""The notes one launch's readings give, each for the sweep to say once.

:meth:`~hpcds1mpi.measure.readings.Readings.note_once` says them; this module gathers them: the
time's (:mod:`.time_reading`, :mod:`.coarse_timer`, :mod:`.compound_time`), the figure of
merit's (:mod:`.fom_note`, and several different numbers matched, s47 tester K5) and the
input's (:mod:`.stdin_note`). Split from :mod:`.readings` as it grew (s47).
"""

from __future__ import annotations

import math


def launch_notes(readings, found: dict, status: str, error: str, wall_s: float = math.nan,
                 seen: list[str] | None = None, run: tuple[str, bool] = ("", True),
                 launch: tuple = (1, ("", ""))) -> dict:
    """``{kind: note}`` of one launch of ``readings`` (its ``found`` readings, ``status``
    and ``error``; "" where a kind has none), each said once per sweep: a time read with a
    decimal comma, several different times matched (:mod:`.time_reading`), a time printed
    coarsely from a launch of ``wall_s``, judged with the configuration's earlier times
    ``seen`` (:mod:`.coarse_timer`, s35 tester A4, s37 tester G1; a zero once per
    configuration, s47 tester K1), an input that ended on stdin (:mod:`.stdin_note`), a
    ``--fom-regex`` that read no number in the launch of ``run`` (its label, and whether it
    is no warm-up), counted for the sweep's closing note, or several different numbers (s47
    tester K5), a time matched once per rank of ``launch`` (ranks, stdout, stderr) as
    copies' (s46 G5), or of one job, its slowest rank's recorded (s48 O6, Q8)."""
    from hpcds1mpi.measure.coarse_timer import coarse_note, zero_note
    from hpcds1mpi.measure.compound_time import whole_note
    from hpcds1mpi.measure.fom_note import FomLaunches, fom_note
    from hpcds1mpi.measure.rank_times import per_rank_note
    from hpcds1mpi.measure.stdin_note import stdin_note
    from hpcds1mpi.measure import time_reading as tr

    notes = {"stdin": stdin_note(error) if status != "ok" else ""}
    readings.fom_launches = readings.fom_launches or FomLaunches()
    notes["fom"] = fom_note(readings.fom, found, run[0], readings.fom_launches) \
        if status == "ok" else ""
    if status == "ok" and readings.fom is not None:
        readings.fom_launches.add(*run, math.isfinite(found.get("fom", math.nan)), found)
        if len(fom_values := found.get("fom_values") or []) > 1:
            notes["fom several"] = tr.several_times_note(
                fom_values, found["fom_text"], len(fom_values),
                f"--fom-regex '{readings.fom.pattern}'", "number")
    text, values, regex = found.get("time_text"), found.get("time_values") or [], \
        f"--time-regex '{readings.time.pattern}'" if readings.time else ""
    if status == "ok" and readings.time is not None and text is not None:
        notes["comma"] = tr.decimal_comma_note(text, regex) if tr.seconds_text(text)[1] else ""
        notes.update({"per rank": per_rank_note(found["per_rank"], regex)} if found.get(
            "per_rank") else tr.times_notes(readings, values, text, regex, launch))
        notes["coarse"] = "" if found.get("below_tick") else \
            coarse_note(text, wall_s, regex, seen)
        notes[f"zero {run[0]}"] = zero_note(run[0], found, wall_s, regex)  # s47 K1
        notes["whole"] = whole_note(found.get("time_part") or "", text, regex)
    return notes
