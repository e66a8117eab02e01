"""The program's own error line that came before its crash, as a failed launch's reason.

PT-Scotch's ``dgord`` given a missing graph file says "dgord: ERROR: fileBlockOpen: cannot open
file (0)" on stderr, then crashes; the launch's reason was Open MPI's "mpirun.openmpi noticed
that process rank 0 ... exited on signal 11 (Segmentation fault).", the crash
:func:`~hpcds1mpi.measure.program_launch.reason_line` prefers to an error line (s38 tester A4),
and the user looked for a bug in dgord rather than for the missing input.

:func:`crash_cause` keeps the crash, after the program's line: where a ``failed`` launch's reason
is a crash the launcher reports and the program stated an error of its own on stderr just before
the crash's first sign (within :data:`~hpcds1mpi.measure.error_cause.REPORT_LINES` lines: a
line as a program states its own error, :data:`~hpcds1mpi.measure.ending_error.ERROR_LINE` or
:data:`~hpcds1mpi.measure.program_lines.SPECIFIC_LINE`, not a warning or a mid-run value), the
reason is that line, the first of them (the ones after it follow from it), then the crash:
"exit code 139: dgord: ERROR: fileBlockOpen: cannot open file (0) (then: ... exited on signal
11 (Segmentation fault).)". A crash with no such line before it keeps the launcher's report.
"""

from __future__ import annotations

import re

#: A failed launch's reason as :func:`~hpcds1mpi.measure.program_launch.classify` writes it.
_REASON = re.compile(r"(exit code -?\d+: )(.*)", re.DOTALL)


def crash_cause(result: dict, status: str, error: str) -> tuple[str, str]:
    """(``status``, the reason) of a launch ``result`` that :func:`classify` gave ``status``
    and ``error``: the program's own error line before a crash first (see the module)."""
    from hpcds1mpi.measure.ending_error import ERROR_LINE
    from hpcds1mpi.measure.error_cause import REPORT_LINES, WARNING
    from hpcds1mpi.measure.printable import clipped, printable
    from hpcds1mpi.measure.program_launch import CRASH_WORDS
    from hpcds1mpi.measure.program_lines import NO_ERROR, SPECIFIC_LINE, kept_lines, with_message

    reason = _REASON.fullmatch(error) if status == "failed" else None
    if reason is None or not CRASH_WORDS.search(reason.group(2)):
        return status, error
    text = result["stderr"][-20000:]
    raw = [ln.strip() for ln in text.splitlines()]
    crash = next((i for i, ln in enumerate(raw) if CRASH_WORDS.search(ln)), None)
    if crash is None:
        return status, error
    kept = kept_lines(text)
    for i in range(max(0, crash - REPORT_LINES), crash):
        ln = kept[i]
        if ln and (ERROR_LINE.search(ln) or SPECIFIC_LINE.search(ln)) \
                and not NO_ERROR.search(ln) and not WARNING.search(ln):
            said = clipped(printable(with_message(kept, i)[0], keep="\t"), 200)
            return status, f"{reason.group(1)}{said} (then: {clipped(reason.group(2), 160)})"
    return status, error
