"""Text from a program's output or a file, made safe to print: every unprintable character
escaped.

A failed program's ``ERROR: bad \\x1b[2J\\x1b]0;PWN\\x07 input`` had been the sweep's reason as
written: printed, it cleared the screen and set the window title (OSC 52 could write the
clipboard), and it was stored so in the telemetry's ``error`` column (s29 tester H5).
:func:`printable` is the one escaper: of the reasons and notes a sweep makes from a program's
output (:mod:`~hpcds1mpi.measure.program_launch`, :mod:`~hpcds1mpi.measure.convergence`,
:mod:`~hpcds1mpi.measure.unused_options`) and of what ``hpcds1mpi telemetry show`` prints
from a file (moved here from ``commands/telemetry.py``, the lowest stage that needs it).
"""

from __future__ import annotations


def printable(value, keep: str = "") -> str:
    """``value`` as text with every unprintable character escaped (``\\n``, ``\\x1b``,
    ``\\x9b``, ``\\u202e``) but those in ``keep`` (a reason keeps its tabs): a name or line
    read from a file or a program must not move the cursor, recolour the terminal or turn the
    text after it right to left. An escape sequence is left as visible text (``\\x1b[2J``),
    which no terminal obeys. A file name's byte that is not UTF-8 (Python's surrogate escape)
    is shown as that byte, ``\\xff``."""
    text = str(value)
    if text.isprintable() and not keep:  # the common case, in C
        return text
    return "".join(ch if ch.isprintable() or ch in keep else f"\\x{ord(ch) - 0xDC00:02x}"
                   if "\udc80" <= ch <= "\udcff" else ascii(ch)[1:-1] for ch in text)


#: What marks a text cut short by :func:`clipped`.
CUT_MARK = " [...]"


def clipped(text: str, limit: int) -> str:
    """``text`` whole where it has at most ``limit`` characters, else cut at the last space
    before the limit (mid-word only where it has none) and marked :data:`CUT_MARK`, the mark
    within ``limit``: a reason cut at 120 had read "File '../../md.tpr' does not ex" (s37
    tester G4/G5)."""
    if len(text) <= limit:
        return text
    room = max(0, limit - len(CUT_MARK))
    space = text.rfind(" ", 0, room + 1)
    return (text[:space] if space > room // 2 else text[:room]).rstrip() + CUT_MARK
