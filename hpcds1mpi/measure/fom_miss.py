"""A launch whose ``--fom-regex`` matched nothing and whose program said why: ``failed``.

The figure of merit is optional (:mod:`~hpcds1mpi.measure.fom_note`: a launch that printed
none is kept, said once), while a ``--time-regex`` or ``--ranks-regex`` miss fails the run with
the program's own line. A sweep given only ``--fom-regex`` had so kept ScaLAPACK's ``xdhrd``
runs that refused their input ("Unable to perform Hessenberg reduction: need TOTMEM of at
least 4863400", exit 0) as ``ok`` at the wall time of a program that did nothing, and
``recommend`` then answered ``auto`` for a size nothing can run (s44 tester M3).
:func:`fom_miss_problem` fails such a launch where its output holds an error line as the
sweep reads a failed launch's reason (``found["said"]``:
:func:`~hpcds1mpi.measure.program_launch.reason_line`) that says an error
(:data:`~hpcds1mpi.measure.program_launch.ERROR_WORDS`); a miss on a clean run stays ``ok``
with its note.
"""

from __future__ import annotations

import math
import re

#: A line that reports an error *quantity*, "Max abs error vs reference: 1.2e-15", "L2 error
#: = 0.003": its only error word is "error", not the line's first word (an "Error: ..."
#: message), followed on the line by a decimal number. Good runs print such lines (a check
#: against a reference), so a wrong --fom-regex on one stays a note, not a failed run.
_MEASURED_ERROR = re.compile(r"\berrors?\b[^0-9]*?[-+]?(\d*\.\d+|\d+\.\d*|\d+(?=[eE][-+]?\d))"
                             r"([eE][-+]?\d+)?", re.IGNORECASE)


def fom_miss_problem(readings, found: dict) -> str:
    """Why one launch (exit 0) is ``failed`` for its figure of merit: ``readings``' (the
    sweep's :class:`~hpcds1mpi.measure.readings.Readings`) ``--fom-regex`` matched nothing in
    its output (``found``: its readings) and the program printed an error line, its reason;
    "" otherwise (no ``--fom-regex``, a number read, a text matched that is no number: the
    regex's group to fix, or no error line: the program did not print it this time)."""
    from hpcds1mpi.measure.printable import clipped, printable
    from hpcds1mpi.measure.program_launch import ERROR_WORDS

    if readings.fom is None or math.isfinite(found.get("fom", math.nan)) or \
            found.get("fom_text") is not None:
        return ""
    said = printable(" ".join((found.get("said") or "").split()))  # Fortran's padding
    words = {m.group(0).lower() for m in ERROR_WORDS.finditer(said)}
    if not words or (words == {"error"} and not re.match(r"\W*error\b", said, re.IGNORECASE)
                     and _MEASURED_ERROR.search(said)):
        return ""
    return (f"exit 0, but --fom-regex '{readings.fom.pattern}' matched no number in its "
            f"output; the program said: {clipped(said, 200)}")
