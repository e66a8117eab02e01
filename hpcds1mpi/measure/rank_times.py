"""A ``--time-regex`` that matched one line per rank of one job: the job's time is its slowest's.

Each regex takes its last match (:mod:`.readings`), right for a program printing its setup,
solve and total times. A program whose every rank prints its own time ("rank 1 of 2: loop
time 0.35 s") then had whichever rank printed last recorded — its fastest as often as its
slowest (s48 tester Q8: 0.22 s stored for a job whose slowest rank ran 0.81 s) — and, without
``--ranks-regex``, was told its ranks "may be independent copies" though the launch probe had
joined them and each line counted 2 (s48 tester O6). Where the lines prove it, the largest of
the matches is recorded instead, as a kernel's time is its slowest rank's, and said once
(:func:`per_rank_note`). The proof (:func:`per_rank_lines`), from one launch's whole output:
exactly one match per rank, in lines alike but for their numbers, one number of which takes
each rank's index 0 .. N-1 once (copies of a 1-rank program each say rank 0); and the ranks
one job: ``--ranks-regex`` checked their count, or the 2-rank launch probe joined the
launcher's ranks and every line also holds the count N ("of 2").
"""

from __future__ import annotations

import re

#: A whole number standing alone in a line: not a part of a decimal number or a word.
_WHOLE = re.compile(r"(?<![\w.])\d+(?![\w]|\.\d)")


def per_rank_lines(pattern, ranks: int, outputs: tuple[str, str], counted: bool,
                   probed: bool) -> list[tuple[str, str]]:
    """``[(line, time text)]``, one per rank, where ``pattern`` matched once per rank of a
    launch of ``ranks`` ranks proven one job (``counted``: ``--ranks-regex`` checked its
    count; ``probed``: the launch probe joined the launcher's ranks, with each line holding
    the count); [] otherwise, or where an output may be cut
    (:func:`~hpcds1mpi.measure.rank_count.cut_outputs`)."""
    from hpcds1mpi.measure.rank_count import cut_outputs, line_shape

    if ranks <= 1 or not (counted or probed) or cut_outputs(outputs):
        return []
    found = _matches(pattern, "\n".join(outputs), ranks + 1)
    if len(found) != ranks or len({line_shape(line) for line, _, _ in found}) != 1:
        return []
    numbers = [[int(m.group()) for m in _WHOLE.finditer(line) if not (
        m.start() < end and start < m.end())] for line, start, end in found]
    if len({len(each) for each in numbers}) != 1:
        return []
    columns = list(zip(*numbers))
    index = [c for c in columns if sorted(c) == list(range(ranks))]
    count = any(set(c) == {ranks} for c in columns)
    if not index or not (counted or count):
        return []
    return [(line, line[start:end]) for line, start, end in found]


def _matches(pattern, text: str, most: int) -> list[tuple[str, int, int]]:
    """``(line, start, end)`` of each of ``pattern``'s first ``most`` matches in ``text``:
    its line, stripped, and its first group's span in it; [] where the search runs out of
    time (no evidence)."""
    from hpcds1mpi.measure.regex_cost import MATCH_TIMEOUT_S

    found = []
    try:
        for match in pattern.finditer(text, timeout=MATCH_TIMEOUT_S):
            if match.start(1) < 0:
                return []
            begin = text.rfind("\n", 0, match.start()) + 1
            end = text.find("\n", match.end())
            line = text[begin:end if end >= 0 else None]
            lead = len(line) - len(line.lstrip())
            found.append((line.strip(), match.start(1) - begin - lead,
                          match.end(1) - begin - lead))
            if len(found) >= most:
                break
    except TimeoutError:
        return []
    return found


def take_slowest(readings, found: dict, ranks: int, outputs: tuple[str, str],
                 probed: bool) -> None:
    """Where ``readings.time`` matched once per rank of one job (:func:`per_rank_lines`),
    make the largest of those times the launch's (``found``: its readings, changed in place)
    and keep in ``found["per_rank"]`` what :func:`per_rank_note` says. A time read whole from
    several units, or a match other than the output's last (from ``--output-file``), is left
    as read, its lines still said per rank."""
    from hpcds1mpi.measure.time_reading import time_value

    if readings.time is None or found.get("time_text") is None:
        return
    lines = per_rank_lines(readings.time, ranks, outputs, readings.ranks is not None, probed)
    if not lines:
        return
    values = [time_value(text) for _, text in lines]
    last = found["time_text"]
    found["per_rank"] = {"shown": lines[0][0], "ranks": ranks, "last": last,
                         "counted": readings.ranks is not None, "slowest": ""}
    if found.get("time_part") or last != lines[-1][1] or any(v != v for v in values):
        return  # NaN: no number; another reading than these lines' last: left as read
    slowest = lines[values.index(max(values))][1]
    found.update(time=max(values), time_text=slowest)
    found["per_rank"]["slowest"] = slowest


def per_rank_note(per_rank: dict, regex: str) -> str:
    """The note, said once per sweep, that ``regex`` matched once per rank of one job and
    which of its matches is recorded (``per_rank``: :func:`take_slowest`'s)."""
    from hpcds1mpi.measure.printable import clipped, printable

    ranks = per_rank["ranks"]
    shown = repr(clipped(printable(" ".join(per_rank["shown"].split())), 120))
    proof = f"--ranks-regex counted {ranks}" if per_rank["counted"] else \
        f"the launch probe joined its ranks and each line counts {ranks}"
    said = (f"note: {regex} matched once per rank, in {ranks} lines alike ({shown}, ...), of "
            f"one job ({proof}): a job's time is its slowest rank's")
    if per_rank["slowest"]:
        return (said + f", so the largest of them, {per_rank['slowest'].strip()!r}, is "
                "recorded, not the last match (the rule for a program printing several times)")
    return (said + f", but the last match, {per_rank['last'].strip()!r}, is recorded, which "
            "may be one rank's: make the regex match the slowest rank's time alone")
