"""The unit a program printed right after the time ``--time-regex`` captured.

``--time-regex`` reads seconds. A program printing ``Elapsed: 0.040 ms`` matched by
``'Elapsed: ([0-9.]+)'`` gives 0.040 s, 1000x too long; a long run is caught by the wall-time
check (:meth:`~hpcds1mpi.measure.readings.Readings.time_problem`), a short one slipped through
as a plausible runtime (s28 tester Y3). A unit other than seconds right after the number makes
the launch ``failed``: one rule, the user fixes the regex (no guessing at conversions; no
option converts, so the message names what exists: s33 tester D8).
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

#: Units of time other than seconds, word-bounded, after optional blanks on the same line.
#: µ is both the micro sign (U+00B5) and the Greek mu (U+03BC).
_OTHER_UNIT = re.compile(
    r"[ \t]*(ms|msecs?|milliseconds?|us|[\u00b5\u03bc]s|usecs?|microseconds?|ns|nsecs?|"
    r"nanoseconds?|min|mins|minutes?|h|hrs?|hours?)\b", re.IGNORECASE)


def unit_after(match) -> str:
    """The unit other than seconds written right after ``match``'s first group ("" when none:
    seconds, no unit, or a group that took no part)."""
    end = match.end(1)
    if end < 0:
        return ""
    unit = _OTHER_UNIT.match(match.string, end)
    return unit.group(1) if unit else ""


def unit_problem(unit: str, regex: str) -> str:
    """Why a time followed by ``unit`` is not a runtime in seconds ("" for no unit)."""
    if not unit:
        return ""
    # no option converts (s33 tester D8): name what exists
    return (f"exit 0, but the program's time is followed by {unit!r}: {regex} reads seconds "
            "and nothing converts; match a time the program prints in seconds, make it print "
            "seconds (a wrapper script may convert), or leave out --time-regex to record the "
            "launch's wall time")


def over_wall_problem(value: float, wall_s: float, regex: str, ranks: int = 1,
                      threads: int = 1) -> str:
    """Why a program's own time ``value`` s over its launch's wall time ``wall_s`` s is not
    its runtime. With several ranks, or several threads per rank, a CPU time summed over them
    is named first (ABINIT's "cpu=" over its ranks: s28 tester U; Elk's "Timings (CPU
    seconds)" over its OpenMP threads: 8.03 s at 2 threads in 5.17 s was said "milliseconds
    read as seconds?", s30 tester L3); else a unit mistake."""
    if threads > 1:
        cause = (f"a CPU time summed over the {threads * ranks} threads ({ranks} rank(s) x "
                 f"{threads} threads)")
    elif ranks > 1:
        cause = f"a time summed over the {ranks} ranks"
    else:
        cause = ""
    cause = (f"{cause} (or milliseconds read as seconds?); make the regex match the wall-clock "
             "time in seconds (e.g. wall=, not cpu=)" if cause else "a unit mistake "
             "(milliseconds read as seconds?); make the regex match the time in seconds")
    return (f"exit 0, but the program's own time {value:g} s ({regex}) is "
            f"{value / wall_s:.3g}x the launch's own wall time {wall_s:.3g} s: "
            f"{cause}, or the program print seconds")


def over_wall_stop(problem: str, label: str, kept: list, ranks: int = 1, threads: int = 1) -> str:
    """The sweep's stop (a :class:`~hpcds1mpi.errors.ConfigError`) for a launch of ``label``
    whose own time is over its wall time, ``problem``
    (:func:`over_wall_problem`): a reading of ``--time-regex``, not a failure of the program,
    which ran and exited 0. ``kept``: ``(label, ranks, threads)`` of the sweep's launches whose
    time the regex read under the wall, named where of several threads (of ranks) like this one:
    likely the same sum. s46 tester H2: Elk's CPU time summed over 2 threads was ``failed`` at one
    size (and the failure learned) and kept as the runtime at another, by its start-up alone."""
    alike = [name for name, r, t in kept if (t > 1 if threads > 1 else r > 1 if ranks > 1
                                             else True)]
    alike = list(dict.fromkeys(alike))  # a configuration's repeats once
    shown = ", ".join(alike[:4]) + (f" and {len(alike) - 4} more" if len(alike) > 4 else "")
    several = "several threads" if threads > 1 else "several ranks" if ranks > 1 else ""
    earlier = (f"; the runs{' of ' + several if several else ''} it read before ({shown}) read "
               "the same regex under their wall time, likely the same sum: sweep them again "
               "into a new --out" if alike else "")
    return (f"{label + ': ' if label else ''}{problem}, or leave out --time-regex to record the "
            "launch's wall time; a reading of the regex, not a failure of the program (it ran, "
            f"exit 0): nothing was recorded for this configuration and the sweep stops{earlier}")


#: Seconds a program's own clock may read past the launch's wall time (two clocks, read apart).
CLOCK_SLACK_S = 0.05


def past_the_wall(value: float, text: str, wall_s: float) -> bool:
    """Whether a program's own time ``value`` s, printed as ``text``, cannot fit in its launch's
    wall time ``wall_s`` s: over it by more than the last digit printed and
    :data:`CLOCK_SLACK_S` (a time rounded up to whole seconds fits). Elk's CPU seconds over 2
    threads, 1.39 s in a 1.29 s launch, had been kept as its runtime: under the 1.5x the
    readings allow a careless unit (s30 verifier V, N2)."""
    try:
        exponent = Decimal(text.strip()).as_tuple().exponent
    except (InvalidOperation, ValueError):
        return False
    step = 10.0 ** exponent if isinstance(exponent, int) else 0.0
    return value - step > wall_s + CLOCK_SLACK_S
