"""Ctrl-C says what SIGTERM says: what a stop keeps and how to continue.

SIGTERM while an output is written ends the command with the writer's one line
(:func:`hpcds1mpi.writers.catch_sigterm`); Ctrl-C had ended the same command with a bare
"hpcds1mpi: aborted" (s33 tester C9). By the time the interrupt reaches the CLI the writers'
``finally`` blocks have let go of that line, so the SIGINT handler installed here takes it at the
moment of the signal: the :class:`Interrupted` it raises carries the line for the CLI to print.
"""

from __future__ import annotations

import signal
import sys
import threading

#: How a writer's SIGTERM line names the signal (``writers.catch_sigterm``).
SIGTERM_WORDS = "stopped by SIGTERM"
#: What Ctrl-C's line says in its place.
SIGINT_WORDS = "stopped by Ctrl-C (SIGINT)"


class Interrupted(KeyboardInterrupt):
    """Ctrl-C, with ``line``: what SIGTERM would have printed at that moment (None: none)."""

    def __init__(self, line: str | None = None):
        super().__init__()
        self.line = line


def stop_line() -> str | None:
    """The line SIGTERM would print now, said of Ctrl-C; None where no output is being
    written. Read from the writers module only when a command imported it."""
    writers = sys.modules.get("hpcds1mpi.writers")
    lines = getattr(writers, "_WRITING", None)  # outermost first, as SIGTERM prints it
    if not lines:
        return None
    return lines[0].replace(SIGTERM_WORDS, SIGINT_WORDS)


def _raise_interrupted(signum, frame):
    raise Interrupted(stop_line())


def install() -> None:
    """Make Ctrl-C raise :class:`Interrupted` (a ``KeyboardInterrupt``, as before) where
    Python's own handler is in place, in the main thread."""
    if threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _raise_interrupted)


def line_of(exc: BaseException | None) -> str | None:
    """The line an interrupt carries (itself or as the cause of click's ``Abort``)."""
    for candidate in (exc, getattr(exc, "__cause__", None), getattr(exc, "__context__", None)):
        if isinstance(candidate, Interrupted) and candidate.line:
            return candidate.line
    return None
