"""A text job log cut short inside its last line: the one check every reader of a delimited text
table (``sacct -P``, a CSV of any kind, a job table CSV ``ingest`` wrote, SWF) makes.

A copy cut short inside its last value still has every field ("...,60" cut to "...,6"): read,
it would keep the cut value with no note (s31 tester R3, s43 tester H3, s44 tester N3). Such a
last line is counted under :data:`CUT_AT_END` and never read, whatever its field count; a file
that is whole but was saved without a final newline is told apart by its owner, whom the
reason tells how to mend it (a compressed file otherwise than a plain one).
"""

from __future__ import annotations

from pathlib import Path

#: The reason a last line without its newline is counted under.
CUT_AT_END = ("the file's last line has no newline (the file was cut short: its last value may "
              "be cut too); export it again, or, where the file is whole (saved without a "
              "final newline), add one: echo >> FILE")


def cut_at_end_reason(packed: str | None = None) -> str:
    """The reason a last line without its newline is counted under in a file compressed by
    ``packed`` (gzip, bzip2 or xz: :data:`.compressed.READ`; None: plain, :data:`CUT_AT_END`).
    ``echo >> FILE`` adds an uncompressed byte after the stream, which makes a gzip or xz file
    unreadable and a bzip2 file's reader ignores (s45 FY4): the newline goes in compressed,
    as a stream of its own, which each of them reads as the rest of the text."""
    if packed is None:
        return CUT_AT_END
    return ("the file's last line has no newline (the log was cut short: its last value may be "
            "cut too); download or export it again, or, where the log is whole (compressed "
            f"without a final newline), add one compressed: echo | {packed} >> FILE (not echo "
            ">> FILE: an uncompressed newline after the stream is no part of its text)")


#: Bytes of a file's end read to tell (a last line longer than this is read as not blank).
_TAIL_BYTES = 4096


def ends_inside_line(text: str, quoted: bool = False) -> bool:
    """Whether ``text`` (a whole file, or its end) stops inside a line: no newline after its
    last line, and that line not blank.

    Args:
        quoted: the format quotes values (CSV): a last value ending in a closing quote is whole
            (one cut inside its quotes is a parse error or a short row already).
    """
    last = text.rsplit("\n", 1)[-1].rsplit("\r", 1)[-1]
    if not last.strip():
        return False
    return not (quoted and last.endswith('"'))


def file_ends_inside_line(path: str | Path, quoted: bool = False) -> bool:
    """:func:`ends_inside_line` of a plain file, from its last bytes (for readers that give the
    file to a parser unread)."""
    with open(path, "rb") as fh:
        fh.seek(0, 2)
        size = fh.tell()
        fh.seek(max(0, size - _TAIL_BYTES))
        tail = fh.read().decode("utf-8", errors="replace")
    return ends_inside_line(tail, quoted)
