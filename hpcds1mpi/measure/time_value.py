"""Whether the number ``--time-regex`` read from one launch (exit 0) can be its runtime.

Not a time: a number cut short, not a number, another unit than seconds, not positive and
finite, over a year (:data:`~hpcds1mpi.schemas.limits.MAX_SECONDS`): the launch is ``failed``
with the reason. A whole-unit zero is a reading under one tick of the program's timer, not a failure
(MPB's whole-second "0 seconds": s47 tester K1; a "0.00" is still failed, review RX1): the launch is ``ok``, its time
:func:`~hpcds1mpi.measure.coarse_timer.below_tick`. Over :data:`WALL_FACTOR` x the launch's wall time + :data:`SLACK_S`, or past
it by more than its last digit (:func:`~hpcds1mpi.measure.time_units.past_the_wall`), it is the
regex's reading (a CPU time summed over threads or ranks, a unit mistake), not the program's
failure: the sweep stops (:func:`~hpcds1mpi.measure.time_units.over_wall_stop`, s46 tester H2)
once the launch is not one to run again
(:meth:`~hpcds1mpi.measure.readings.Readings.stop_over_wall`).
"""

from __future__ import annotations

import math

from hpcds1mpi.measure.time_units import over_wall_problem, over_wall_stop, past_the_wall, \
    unit_problem
from hpcds1mpi.schemas.limits import MAX_SECONDS

#: A program's own time over WALL_FACTOR x the launch's wall time + SLACK_S is not its runtime.
WALL_FACTOR, SLACK_S = 1.5, 0.1


def value_problem(text: str, found: dict, wall_s: float, regex: str, run: tuple,
                  kept: list) -> str:
    """Why the time ``text`` a launch of ``wall_s`` s printed (``found``: its readings;
    ``regex``: ``--time-regex`` as said) is not its runtime; "" when it is. ``run``: the
    configuration's ``(ranks, threads, label)``; ``kept``: the sweep's ``(label, ranks,
    threads)`` whose time was kept, which a kept launch of several ranks or threads joins. A
    time over the wall time also leaves the sweep's stop in ``found["over_wall"]``
    (:func:`.time_units.over_wall_stop`)."""
    from hpcds1mpi.measure import time_reading as tr
    from hpcds1mpi.measure.coarse_timer import below_tick

    ranks, threads, label = run
    shown = text.strip()[:40]
    if found.get("time_cut"):  # "1" of "1,122" had been an ok 1 s (s33 tester D1)
        return tr.cut_problem(text, found["time_cut"], regex)
    raw, text = text, tr.seconds_text(text)[0]  # a decimal comma (s33 tester D8)
    try:
        value = tr.seconds_of(text)  # "2m54.91s" too (s45 tester A1)
    except ValueError:
        return tr.not_a_number_problem(shown, regex)
    if unit := found.get("time_unit"):  # 0.040 ms read as 0.040 s passes the wall check
        return unit_problem(unit, regex)
    # A whole-unit timer's zero ("0 seconds") is under one tick (s47 K1); a "0.00" claims a
    # 0.01-s timer, under which an exit-0 zero is rather a run that did nothing (review RX1).
    if value == 0 and not any(c in raw for c in ".,") and (kept_time := below_tick(raw, wall_s)):
        found["time"], found["below_tick"] = kept_time, True  # said: coarse_timer.zero_note
        return ""
    if not (math.isfinite(value) and value > 0):
        return (f"exit 0, but the program's own time {shown!r} ({regex}) is not a positive "
                "finite number of seconds; fix the program's timer or the regex")
    if value > MAX_SECONDS:
        return (f"exit 0, but the program's own time {value:g} s ({regex}) is over a year "
                f"({MAX_SECONDS:g} s), not a runtime; fix the program's timer or the regex")
    if value > WALL_FACTOR * wall_s + SLACK_S or past_the_wall(value, text, wall_s):
        problem = over_wall_problem(value, wall_s, regex, ranks, threads)
        # the sweep stops on it (Readings.stop_over_wall) unless the launch collided with the
        # first's outputs and is run again (a time reprinted from them: repeat_folders)
        found["over_wall"] = over_wall_stop(problem, label, kept, ranks, threads)
        return problem
    if label and ranks * threads > 1:  # named if a later launch proves a sum (s46 H2)
        kept.append((label, ranks, threads))
    return ""
