"""A launch whose ``--fom-regex`` matched nothing and whose program said why: ``failed``.

The figure of merit is optional (:mod:`~hpcds1mpi.measure.fom_note`: a launch that printed
none is kept, said once), while a ``--time-regex`` or ``--ranks-regex`` miss fails the run with
the program's own line. A sweep given only ``--fom-regex`` had so kept ScaLAPACK's ``xdhrd``
runs that refused their input ("Unable to perform Hessenberg reduction: need TOTMEM of at
least 4863400", exit 0) as ``ok`` at the wall time of a program that did nothing, and
``recommend`` then answered ``auto`` for a size nothing can run (s44 tester M3).
:func:`fom_miss_problem` fails such a launch where its output holds an error line as the
sweep reads a failed launch's reason (``found["said"]``:
:func:`~hpcds1mpi.measure.program_launch.reason_line`) that names the cause
(:func:`~hpcds1mpi.measure.error_cause.names_cause`: a refused input or layout, a missing file
it names; not a warning, not a line the program went on from, in its own words or in the
line it wrote next: "input.cfg not found" then "Using built-in defaults", s44 review F1); any
other miss stays ``ok`` with its note (a line with an error word alone is no cause: s44
tester O8).
"""

from __future__ import annotations

import math


def fom_miss_problem(readings, found: dict, outputs: tuple[str, str] = ("", "")) -> str:
    """Why one launch (exit 0) is ``failed`` for its figure of merit: ``readings``' (the
    sweep's :class:`~hpcds1mpi.measure.readings.Readings`) ``--fom-regex`` matched nothing in
    its output (``found``: its readings) and the program printed a line naming the cause, its
    reason, and did not say next that it went on (:func:`went_on_next`, in ``outputs``: its
    stdout and stderr); "" otherwise (no ``--fom-regex``, a number read, a text matched that is
    no number: the regex's group to fix, or no such line)."""
    from hpcds1mpi.measure.error_cause import names_cause
    from hpcds1mpi.measure.printable import clipped, printable

    if readings.fom is None or math.isfinite(found.get("fom", math.nan)) or \
            found.get("fom_text") is not None:
        return ""
    said = printable(" ".join((found.get("said") or "").split()))  # Fortran's padding
    # Only a line that names why the work was not done (a refused input or layout, a missing
    # file it names), never any line with an error word: good runs print "Residual error
    # check: PASSED", "Number of failed tests: 0", "Failed to set CPU affinity, continuing"
    # (s44 tester O8), and a wrong --fom-regex on them is the regex's note, not a failed run.
    if not names_cause(said) or went_on_next(said, outputs):
        return ""
    return (f"exit 0, but --fom-regex '{readings.fom.pattern}' matched no number in its "
            f"output; the program said: {clipped(said, 200)}")


def went_on_next(said: str, outputs: tuple[str, str]) -> bool:
    """Whether the line after ``said`` (the reason, its whitespace joined) in one of
    ``outputs`` says the program went on
    (:data:`~hpcds1mpi.measure.error_cause.WENT_ON`: "Using built-in defaults.") with no error
    word (not "cannot continue"): a good run that wrote its recovery on a line of its own."""
    from hpcds1mpi.measure.error_cause import WARNING, WENT_ON
    from hpcds1mpi.measure.printable import printable
    from hpcds1mpi.measure.program_launch import ERROR_WORDS

    for text in outputs:
        lines = [printable(" ".join(ln.split())) for ln in text.splitlines() if ln.strip()]
        for line, after in zip(lines, lines[1:]):
            # the reason is the line itself or it with a rank tag, or a title with its message
            if said and (said in line or line in said and len(line) * 2 > len(said)) and \
                    WENT_ON.search(after) and not (ERROR_WORDS.search(after) or
                                                   WARNING.search(after)):
                return True
    return False
