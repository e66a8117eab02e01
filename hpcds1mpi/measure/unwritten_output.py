"""Whether a launch wrote its ``--output-file``, for the reason of a reading it did not find.

A launch whose ``--time-regex`` (or ``--ranks-regex``) found nothing was said as "the regex
matched no number in its output" while the file named by ``--output-file`` held a match from
before the launch, which it never wrote (LIGGGHTS run with ``-log none``): the message sent the
user to a right regex (s43 tester G6). Where that file does not exist, or is unchanged since
just before the launch (:class:`~hpcds1mpi.measure.file_mark.FileMark`), the reason says so,
naming the file and the folder the launch ran in.
"""

from __future__ import annotations

import math
import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from hpcds1mpi.measure.file_mark import FileMark
    from hpcds1mpi.measure.readings import Readings


def unwritten_problem(readings: "Readings", found: dict, out_path: str | None,
                      mark: "FileMark", where: str | None) -> str:
    """Why one launch (exit 0) is not a measurement when a reading it misses (``found``:
    :meth:`~hpcds1mpi.measure.readings.Readings.scan`'s) was to come from its output file
    ``out_path``, which it did not write since ``mark`` (taken before it); "" otherwise (no
    output file, nothing missing, the file written or not readable)."""
    if not out_path:
        return ""
    missing = [flag for flag, pattern, absent in (
        ("--time-regex", readings.time, found.get("time_text") is None),
        ("--ranks-regex", readings.ranks, math.isnan(found.get("ranks", math.nan))))
        if pattern is not None and absent]
    if not missing or not (how := _unwritten(out_path, mark)):
        return ""
    return (f"exit 0, but its --output-file {readings.output_file!r} was not written by this "
            f"launch ({how}; the launch ran in {os.path.abspath(where or '.')}), so "
            f"{' and '.join(missing)} had nothing of it to read: make the command write that "
            "file in its working folder (its own options may turn the file off), or drop "
            "--output-file if it prints the line itself")


def _unwritten(path: str, mark: "FileMark") -> str:
    """How the launch left ``path`` unwritten: "no such file", "unchanged since before it";
    "" where it wrote it, or where that cannot be told."""
    try:
        with open(path, "rb") as fh:
            return "unchanged since before it" if mark.written_from(fh) is None else ""
    except FileNotFoundError:
        return "no such file"
    except OSError:
        return ""
