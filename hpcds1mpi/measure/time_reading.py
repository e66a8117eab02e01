"""How the text ``--time-regex`` captured becomes seconds, and what that reading says once.

* **A decimal comma**: ``Time: 1,122`` captured whole (``'Time: ([0-9.,]+)'``) is 1.122 s: a
  number with one comma and no dot is read as a decimal comma, said once per sweep
  (:func:`seconds_text`). Before, it was "not a number" with no fix (s33 tester D8).
* **A cut number**: ``'Time: ([0-9.]+)'`` captured "1" of ``Time: 1,122``, recorded 1.0 s ok
  (s33 tester D1); a group that stops inside a number (a decimal comma, a decimal point, an
  exponent: "1.5" of "1.5e-3") fails the launch with the fix (:func:`cut_number`). A comma list
  ("1,2,3") is no decimal comma and is not refused.
* **Several times**: a program printing its setup, solve and total times matched by one regex
  gave the last silently (s33 tester D7); :func:`several_times_note` says, once per sweep, how
  many different times matched and that the last match is recorded; the same for the numbers
  ``--fom-regex`` matched (s47 tester K5: MPB's gap line per band pair).
* **Once per rank**: ``nrniv tiny.hoc`` without ``-mpi`` at 2 ranks ran two 1-rank copies, each
  printing its time line, and the several-times note advised editing the regex (s46 tester
  G5); a regex matched once per rank in lines alike, with no ``--ranks-regex`` to show the
  ranks one job, is said instead as ranks that may be copies (:func:`copies_note`). Only said:
  a program may print each rank's time. Where the lines prove the ranks one job, each
  printing its own time, the slowest rank's is recorded instead (:mod:`.rank_times`, s48
  tester O6, Q8).
"""

from __future__ import annotations

import math
import re

#: One decimal comma and no dot: "1,122", "-0,5".
DECIMAL_COMMA = re.compile(r"^\s*([+-]?\d+),(\d+)\s*$")
#: What continues a number right after where a group stopped: a decimal comma or point with
#: digits, an exponent, or more digits.
_CONTINUES = re.compile(r"[.,]\d+|[eE][+-]?\d+|\d+")
#: A comma list's next item after the comma's digits ("1,2,3"): that comma was no decimal one.
_LIST_GOES_ON = re.compile(r"[.,]\d")
#: Different values shown in the several-times note.
SHOWN = 4


def seconds_text(text: str) -> tuple[str, bool]:
    """``text`` as Python reads a number, and whether it was written with a decimal comma."""
    comma = DECIMAL_COMMA.match(text or "")
    if comma:
        return f"{comma.group(1)}.{comma.group(2)}", True
    return text, False


def seconds_of(text: str) -> float:
    """The seconds ``text`` says: a number (decimal comma read, :func:`seconds_text`) or a time
    in several units (:func:`~hpcds1mpi.measure.compound_time.duration`).

    Raises:
        ValueError: neither.
    """
    from hpcds1mpi.measure.compound_time import duration

    try:
        return float(seconds_text(text)[0])
    except ValueError:
        if (value := duration(text)) is None:
            raise
        return value


def time_value(text: str | None) -> float:
    """The seconds ``text`` says (:func:`seconds_of`); NaN: none, or not a number."""
    try:
        return seconds_of(text)
    except (TypeError, ValueError):
        return math.nan


def time_found(match, distinct: list[str]) -> dict:
    """``--time-regex``'s readings of its last ``match``: ``time``, the text it captured,
    ``time_unit``, a unit other than seconds after it (:mod:`.time_units`), ``time_cut``, the
    number it stopped inside of (:func:`cut_number`), ``time_values``, the ``distinct`` times
    it matched (s33 tester D1, D7); where it captured a part of a time in several units
    ("54.91" of "2m54.91s"), ``time`` is that whole time and ``time_part`` the part
    (:mod:`.compound_time`, s45 tester A1)."""
    from hpcds1mpi.measure.compound_time import compound_text
    from hpcds1mpi.measure.time_units import unit_after

    if whole := compound_text(match):
        return {"time": whole, "time_part": match.group(1), "time_values": distinct}
    return {"time": match.group(1) or "", "time_unit": unit_after(match),
            "time_cut": cut_number(match), "time_values": distinct}


def cut_number(match) -> str:
    """The whole number ``match``'s first group stopped inside of ("1,122" where it took "1";
    "1.5e-3" where it took "1.5"), "" when the group took a whole number or none."""
    if match.end(1) < 0:
        return ""
    taken, after = match.group(1), match.string[match.end(1):match.end(1) + 64]
    if not taken or not taken[-1].isdigit():
        return ""
    more = _CONTINUES.match(after)
    if more is None:
        return ""
    tail = more.group(0)
    if tail[0] == "," and ("," in taken or "." in taken
                           or _LIST_GOES_ON.match(after, more.end())):
        return ""  # a comma list, or a number already with its decimal part
    if tail[0] == "." and "." in taken or tail[0] in "eE" and re.search("[eE]", taken):
        return ""
    return taken + tail


def cut_problem(taken: str, whole: str, regex: str) -> str:
    """Why a time whose group stopped inside the number ``whole`` is not a runtime."""
    widen = "[0-9.,]+" if "," in whole else "[0-9.eE+-]+"
    return (f"exit 0, but {regex} captured {taken.strip()!r} of the program's time {whole!r}: "
            f"make its group take the whole number, e.g. ({widen})")


def not_a_number_problem(shown: str, regex: str) -> str:
    """Why a captured text that is no number is not a runtime, with the fix."""
    return (f"exit 0, but {regex} matched {shown!r}, which is not a number; make its group "
            "take the number alone, e.g. 'Time: ([0-9.,]+)'")


def decimal_comma_note(text: str, regex: str) -> str:
    """The note, said once per sweep, that a time was read with a decimal comma."""
    return (f"note: {regex} read the program's time {text.strip()!r} as "
            f"{time_value(text):g} s: a comma between digits is read as a decimal comma, "
            "never a thousands separator")


def several_times_note(first: list[str], last: str, count: int, regex: str,
                       what: str = "time") -> str:
    """The note, said once per sweep, that ``count`` different times (``what``: "number" for
    ``--fom-regex``'s, s47 tester K5) matched in one launch's output (``first``: some of them,
    in output order) and that ``last``, the last match, is recorded."""
    shown = ", ".join(repr(v.strip()) for v in first[:SHOWN]) + (", ..." if count > SHOWN
                                                                else "")
    return (f"note: {regex} matched {count} different {what}s in one launch's output "
            f"({shown}); the last match, {last.strip()!r}, is recorded: if it is not the "
            f"{what} you mean, add the words around that one to the regex")


def times_notes(readings, values: list[str], last: str, regex: str, launch: tuple) -> dict:
    """The notes on the times ``regex`` (``readings.time``) matched in one launch, each said
    once per sweep: once per rank of ``launch`` (its ranks, stdout and stderr) where no
    ``--ranks-regex`` shows its ranks one job (:func:`copies_note`), else several different
    ``values`` (:func:`several_times_note`); ``last``: the match recorded."""
    copies = "" if readings.ranks is not None else \
        copies_note(readings.time, *launch, last, regex)
    return {"copies": copies, "several": "" if copies or len(values) < 2 else
            several_times_note(values, last, len(values), regex)}


def copies_note(pattern, ranks: int, outputs: tuple[str, str], last: str, regex: str) -> str:
    """The note, said once per sweep, that ``pattern`` matched once per rank in a launch of
    ``ranks`` ranks (``outputs``: its stdout and stderr), in lines alike but for their numbers
    (:func:`~hpcds1mpi.measure.rank_count.line_shape`), as copies of a 1-rank program each
    print theirs; "" otherwise, or where an output may be cut (its count is no evidence,
    :func:`~hpcds1mpi.measure.rank_count.cut_outputs`)."""
    from hpcds1mpi.measure.printable import clipped, printable
    from hpcds1mpi.measure.rank_count import cut_outputs, line_shape, matched_lines

    if ranks <= 1 or cut_outputs(outputs):
        return ""
    lines = matched_lines(pattern, outputs, most=ranks + 1)
    if len(lines) != ranks or len(set(map(line_shape, lines))) != 1:
        return ""
    shown = repr(clipped(printable(" ".join(lines[0].split())), 120))
    return (f"note: {regex} matched once per rank, in {ranks} lines alike ({shown}, ...): the "
            f"{ranks} ranks may be independent copies of the program, each a 1-rank job "
            f"printing its own time; check that the program joins MPI (NEURON's nrniv needs "
            f"-mpi) and give --ranks-regex with the rank count it prints to have that checked; "
            f"the last match, {last.strip()!r}, is recorded")
