"""What a launch killed at ``--timeout`` had said before: its program's error, not a slow run.

ESyS-Particle's master died on a typo in its script (a Python traceback ending "AttributeError:
'LsmMpi' object has no attribute 'runn'") and left its worker rank waiting for it: the launch
ran to ``--timeout``, was stored ``timeout`` (no failure: a runtime past the limit) and the
sweep said to raise --timeout, which only waits longer; its output had not been read at all
(s47 tester L2).

:func:`timed_out` reads it. The launch is ``failed``, the program's line first and then the
timeout, where its output proves the program stopped: it ends with an uncaught Python
traceback (:func:`ending_traceback`: the interpreter was exiting 1, held by MPI's finalize or
by ranks waiting for it), or holds a line ``--fail-regex`` matched. An error line last is no
such proof — a killed run had not ended, and a slow one may have gone on from it ("Error:
failed to open restart file, starting from scratch" had failed a slow run, s47 review RX5) —
so it stays ``timeout``, and the last error line the program
wrote before the hang (:data:`~hpcds1mpi.measure.ending_error.ERROR_LINE`,
:data:`~hpcds1mpi.measure.program_lines.SPECIFIC_LINE`, a traceback's exception line) is quoted
in its reason: a slow run and a hang look alike from outside.
"""

from __future__ import annotations

import re

#: The head of a Python traceback, and a traceback's last line: the exception, unindented
#: ("AttributeError: ...", "mpi4py.MPI.Exception: ...", "KeyboardInterrupt").
TRACEBACK = "Traceback (most recent call last):"
_EXCEPTION = re.compile(r"^[A-Za-z_][\w.]*(?::\s.*)?$")


def _exception_at(raw: list[str]) -> int | None:
    """The index in ``raw`` (a stream's lines) of the exception line of the last Python
    traceback, unless the interpreter printed it and went on ("Exception ignored in: ...");
    None where there is none."""
    head = next((i for i in range(len(raw) - 1, -1, -1) if raw[i].strip() == TRACEBACK), None)
    if head is None or (head > 0 and raw[head - 1].startswith("Exception ignored")):
        return None
    at = next((i for i in range(head + 1, len(raw)) if raw[i].strip()
               and not raw[i][0].isspace()), None)  # frames are indented; the exception not
    return at if at is not None and _EXCEPTION.match(raw[at].strip()) else None


def ending_traceback(text: str) -> str:
    """The exception line of an uncaught Python traceback that ``text`` (a stream) ends with:
    nothing the program wrote after it
    (:func:`~hpcds1mpi.measure.program_lines.kept_lines`); "" where there is none."""
    from hpcds1mpi.measure.program_lines import kept_lines

    raw = text[-20000:].splitlines()  # indexed as kept_lines reads them
    if (at := _exception_at(raw)) is None or any(kept_lines(text)[at + 1:]):
        return ""
    return raw[at].strip()


def said_before(stdout: str, stderr: str) -> str:
    """The last error line the program wrote, as a program states its own (see the module),
    stderr's first; "" where there is none."""
    from hpcds1mpi.measure.ending_error import ERROR_LINE, LOG_RECORD
    from hpcds1mpi.measure.program_lines import NO_ERROR, SPECIFIC_LINE, kept_lines, \
        with_message

    for text in (stderr, stdout):
        kept, raw = kept_lines(text), text[-20000:].splitlines()
        errors = [i for i, ln in enumerate(kept) if ln and not NO_ERROR.search(ln) and not
                  LOG_RECORD.match(ln) and (ERROR_LINE.search(ln) or SPECIFIC_LINE.search(ln))]
        exception = _exception_at(raw)
        last = max([*errors[-1:], *([] if exception is None else [exception])], default=None)
        if last is not None:
            return raw[last].strip() if last not in errors else with_message(kept, last)[0]
    return ""


def timed_out(result: dict, timeout: float) -> tuple[str, str]:
    """(status, reason) of a launch ``result`` killed at ``timeout`` seconds (see the
    module)."""
    from hpcds1mpi.measure.printable import clipped, printable

    # what it wrote before the kill: a SIGTERM handler's own traceback is no cause
    stdout, stderr = result.get("before_kill") or (result["stdout"], result["stderr"])
    killed = f"no exit within the {timeout:g} s timeout, killed"
    fail_line = (result.get("found") or {}).get("fail_line")
    if said := ending_traceback(stderr) or ending_traceback(stdout):
        said = f"the program stopped on an uncaught Python exception: {said}"
    elif fail_line is not None:
        said = f"its output matched --fail-regex: {' '.join(fail_line.split())}"
    if said:  # the error is the cause: ranks had waited for the one that stopped
        return "failed", f"{clipped(printable(said, keep=chr(9)), 300)}; then {killed}"
    if said := said_before(stdout, stderr):
        return "timeout", (f"{killed}; before, the program said: "
                           f"{clipped(printable(said, keep=chr(9)), 200)} (if it stopped "
                           "there and hung, fix that rather than raising --timeout)")
    return "timeout", f"no exit within the {timeout:g} s timeout; killed"
