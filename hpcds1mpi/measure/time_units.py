"""The unit a program printed right after the time ``--time-regex`` captured.

``--time-regex`` reads seconds. A program printing ``Elapsed: 0.040 ms`` matched by
``'Elapsed: ([0-9.]+)'`` gives 0.040 s, 1000x too long; a long run is caught by the wall-time
check (:meth:`~hpcds1mpi.measure.readings.Readings.time_problem`), a short one slipped through
as a plausible runtime (s28 tester Y3). A unit other than seconds right after the number makes
the launch ``failed``: one rule, the user fixes the regex (no guessing at conversions).
"""

from __future__ import annotations

import re

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
    return (f"exit 0, but the program's time is followed by {unit!r}: {regex} reads seconds; "
            "capture the number and convert, or use a regex for a value in seconds")
