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

An abort on stderr (a failed assert, C++'s ``what():``) whose program explained itself on
stdout is read the same way (s39 tester A3): FreeFem++'s "what(): Compile error : lex: Error
input opening file" follows its stdout's "Error opening file nothere.edp in:", the line that
names the file; and an assert that says nothing (``Assertion `FALSE' failed``: PhyML's, after
"The number of CPUs used in the MPI bootstrap analysis should be strictly greater than 1") is
led by the program's last words on stdout. The two streams are not interleaved, so only the
stdout's last :data:`~hpcds1mpi.measure.error_cause.REPORT_LINES` lines are read.
"""

from __future__ import annotations

import re

#: A failed launch's reason as :func:`~hpcds1mpi.measure.program_launch.classify` writes it.
_REASON = re.compile(r"(exit code -?\d+: )(.*)", re.DOTALL)
#: A reason that is an abort: a failed assert, a C++ exception's ``what():``, ``terminate``.
_ABORT = re.compile(r": Assertion .+ failed\.?$|^what\(\):|^terminate called after throwing")
#: An assert that names no condition: ``assert(FALSE)``, ``assert(0)``.
_SAYS_NOTHING = re.compile(r"Assertion [`'\"]?\s*(?:FALSE|false|0|NULL)\s*['`\"]? failed")
#: An error as a measured value ("relative error: 1.2e-5", "max error = 3"), not a failure.
_ERROR_VALUE = re.compile(r"\berror\b[^:=]*?[:=]?\s*[-+]?\d*\.?\d+(?:[eE][-+]?\d+)?\s*$",
                          re.IGNORECASE)  # "L2 error norm 3.2e-05" too (the review of s39)
#: Lines of stdout joined where its last words lead (a message wrapped over two lines).
_LAST_WORDS = 2


def crash_cause(result: dict, status: str, error: str) -> tuple[str, str]:
    """(``status``, the reason) of a launch ``result`` that :func:`classify` gave ``status``
    and ``error``: the program's own error line before a crash first (see the module)."""
    from hpcds1mpi.measure.ending_error import ERROR_LINE
    from hpcds1mpi.measure.error_cause import REPORT_LINES, WARNING
    from hpcds1mpi.measure.printable import clipped, printable
    from hpcds1mpi.measure.program_launch import CRASH_WORDS
    from hpcds1mpi.measure.program_lines import NO_ERROR, SPECIFIC_LINE, kept_lines, with_message

    reason = _REASON.fullmatch(error) if status == "failed" else None
    if reason is not None and _ABORT.search(reason.group(2)):
        if said := _stdout_explanation(result["stdout"], _SAYS_NOTHING.search(reason.group(2))):
            return status, f"{reason.group(1)}{said} (then: {clipped(reason.group(2), 160)})"
        return status, error
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


def _stdout_explanation(stdout: str, says_nothing) -> str:
    """The program's own account on stdout of an abort on stderr: the first error line among
    its last :data:`~hpcds1mpi.measure.error_cause.REPORT_LINES` lines (the ones after it
    follow from it; not a warning, a count of zero errors or an error's value); where the
    abort ``says_nothing``, else its last :data:`_LAST_WORDS` lines; "" where there is none."""
    from hpcds1mpi.measure.error_cause import REPORT_LINES, WARNING
    from hpcds1mpi.measure.printable import clipped, printable
    from hpcds1mpi.measure.program_launch import ERROR_WORDS
    from hpcds1mpi.measure.program_lines import NO_ERROR, kept_lines

    last = [ln for ln in kept_lines(stdout) if ln][-REPORT_LINES:]
    errors = [ln for ln in last if ERROR_WORDS.search(ln) and not NO_ERROR.search(ln)
              and not WARNING.search(ln) and not _ERROR_VALUE.search(ln)]
    said = errors[0] if errors else (" ".join(ln.lstrip(". ") for ln in last[-_LAST_WORDS:])
                                      if says_nothing else "")
    return clipped(printable(said, keep="\t"), 200) if said else ""
