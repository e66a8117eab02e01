"""Splitting ``sacct -P`` / ``-p`` text into records of the header's field count.

sacct escapes neither its delimiter nor newlines: a ``|`` inside a job name gives a record
more fields than the header, and a newline inside one (Slurm accepts it in a name, and
``--format=ALL``'s ``SubmitLine`` repeats it) splits a record over physical lines. Every
record begins with a job id (digits, an array or het suffix, a ``.step``): a line that does
not is the rest of the record before it, and so is everything after a record still short of
the header's fields. Both are mended where the mending is certain, and dropped, their job ids
named, where it is not: never is a piece read as a record of its own (a name holding
"\\n<id>|<user>|..." would forge job <id>'s record). Lines holding no '|' after a whole record
whose last column is no free text are not its own (no newline can be in that value): another
log joined to the file, a trailer, sacct's own error message; each is counted, never glued
into the record (s48 tester P2).

A newline inside the LAST column cannot be told from a record's end under ``-P``; ``-p`` ends
every record with '|', so a line without it goes on, but a value holding "|\\n" still ends one
early (verified on Slurm 22.05): such files are read with a note (:func:`last_column_risk`).
"""

from __future__ import annotations

import re

from .cut_at_end import CUT_AT_END
from .schema import FileReport
from .wrong_exports import (REDO_WITHOUT_MESSAGES, REPEATED_HEADER, SACCT_P, header_again,
                            sacct_message, shown_line)

#: Columns whose values are free text a user typed (a name, a comment, a path, a constraint
#: expression, whose OR is itself a '|'): the only places a '|' inside a value can come from.
FREE_TEXT_COLUMNS = ("JobName", "Comment", "AdminComment", "SystemComment", "SubmitLine",
                     "WorkDir", "Constraints", "Container", "WCKey", "Reservation")

TOO_MANY_FIELDS = "more fields than the header ('|' inside a value; sacct does not escape it)"
NEWLINE_AND_PIPE = ("a newline and a '|' inside a value (sacct escapes neither): which fields "
                    "are whose cannot be told")
NOT_A_RECORD = "a line that begins no record (its JobID field is not a job id)"
SACCT_MESSAGE = "sacct's own message ('sacct: error: ...'), not its output"
TRUNCATED = "fewer fields than the header (truncated record)"
#: A JobID as sacct prints it: 123, 123_4, 123_[1-9%2], 123+1, 123.batch, 123+1.0 (lenient
#: past the digits: a real id read as "no record start" would be glued to the one before).
_JOB_ID = re.compile(r"\d+[_+\[\]\d,\-%:]*(\.\w+(\+\d+)?)?")


def split_records(lines: list[str], header: list[str], ncols: int, report: FileReport,
                  ends_with_delimiter: bool = False, cut_at_end: bool = False,
                  cut_ids: list[str] | None = None, delimiter: str = "|") -> list[list[str]]:
    """Join physical lines into records of exactly ``ncols`` fields.

    A record goes on over the next physical lines, joined with "\\n", while it has fewer
    fields than the header or the next non-blank line begins no record (:func:`_begins_record`);
    those of the latter that hold no '|' after a whole record whose last column is no free
    text are counted apart (:class:`_Stray`), the record kept.
    A record of one line with more fields than the header whose header has one free-text
    column (:data:`FREE_TEXT_COLUMNS`) gets the extra fields joined back into that column with
    '|' (the '|'s were in it: no other column can hold one), noted. With several such columns,
    or a record over several lines with too many fields, which field is whose cannot be told:
    the record is counted and dropped, and its job id(s) named in a fact. ``sacct -p``
    (``ends_with_delimiter``) ends every record with '|': one goes on until a line does.
    ``delimiter``: the file's own, which a ``--delimiter=';'`` export's extra fields are
    joined back with (its text comes here with ';' made '|', :func:`.wrong_exports.as_pipes`).
    """
    risk = last_column_risk(header, ends_with_delimiter)
    if risk:
        report.facts.append(risk)
    free = [i for i, name in enumerate(header) if name in FREE_TEXT_COLUMNS]
    id_at = header.index("JobID" if "JobID" in header else "JobIDRaw")
    ids_before = any(i < id_at for i in free)  # a '|' there shifts the JobID field
    begins = lambda line: _begins_record(line, id_at, ncols, ids_before)  # noqa: E731
    next_text = _NextText(lines, begins)
    unread_ids: list[str] = []  # one line, a '|' in one of several free-text columns
    split_ids: list[str] = []  # several lines (a newline in a value) and a '|' too
    records: list[list[str]] = []
    cut_ids = [] if cut_ids is None else cut_ids
    last_free = header[-1] in FREE_TEXT_COLUMNS  # its value may go on over lines
    stray = _Stray(report)
    i = 0
    while i < len(lines):
        buf = lines[i]
        i += 1
        if not buf.strip():
            continue
        if _is_header(buf, header, ends_with_delimiter):  # s31 tester R4: files joined
            report.notes[REPEATED_HEADER] += 1
            continue
        if not begins(buf):
            stray.count(buf)
            continue
        # The record's lines and '|'s counted as they come, not recounted over the whole
        # record after each line (s32 tester S4: a value of 40,000 lines took 7 s).
        parts, pipes = [buf], buf.count("|")
        whole = 0  # how many of the parts made the record's fields whole (0: not yet)
        while i < len(lines) and not _is_header(lines[i], header, ends_with_delimiter):
            short = pipes + 1 < ncols or (ends_with_delimiter and not parts[-1].endswith("|"))
            if not whole and not short:
                whole = len(parts)
            elif whole and not last_free:
                short = False  # -p: a line after it without the '|' is not its value's
            if not short and not next_text.continues(i):
                break
            parts.append(lines[i])
            pipes += lines[i].count("|")
            i += 1
        at_end = i == len(lines)
        if whole and not last_free and not any("|" in part for part in parts[whole:]):
            # s48 tester P2: lines after a whole record whose last value cannot hold a newline
            # are not its own (another log joined, a trailer, sacct's error): had been glued
            # into that value, unseen, or spoilt it (a real job dropped as "bad memory").
            for part in parts[whole:]:
                stray.count(part)
            parts, at_end = parts[:whole], False
        buf = "\n".join(parts)
        fields = buf.split("|")
        report.records += 1
        if len(fields) > ncols and len(parts) > 1:
            # The newline may hide a forged record ("x\n<id>|<user>|..."): drop it, naming
            # every id its lines begin with, so the owner can look.
            report.dropped[NEWLINE_AND_PIPE] += 1
            split_ids.append(" with ".join(_job_id_of(line.split("|"), id_at)
                                           for line in parts if begins(line)))
            continue
        if len(fields) > ncols and len(free) == 1:
            at, extra = free[0], len(fields) - ncols
            joined = delimiter.join(fields[at:at + extra + 1])  # s46 tester I7: ';' not '|'
            fields = fields[:at] + [joined] + fields[at + extra + 1:]
            report.notes[f"{delimiter!r} inside {header[at]} (sacct does not escape it): "
                         "joined back, the only free-text column"] += 1
        if len(fields) > ncols:
            report.dropped[TOO_MANY_FIELDS] += 1
            unread_ids.append(_job_id_of(fields, id_at))
        elif len(fields) < ncols:
            report.dropped[TRUNCATED] += 1
            cut_ids.append(_job_id_of(fields, id_at))
        elif cut_at_end and at_end and not ends_with_delimiter:
            report.dropped[CUT_AT_END] += 1
            cut_ids.append(_job_id_of(fields, id_at))
        else:
            records.append(fields)
    if unread_ids:
        report.facts.append(f"{len(unread_ids)} record(s) with a '|' inside a value dropped "
                            f"(jobs {_shown(unread_ids)}): the header has several free-text "
                            "columns, so which holds it cannot be told; sacct --json keeps "
                            "such jobs")
    if split_ids:
        report.facts.append(f"{len(split_ids)} record(s) with a newline and a '|' inside a "
                            f"value dropped (jobs {_shown(split_ids)}; the lines after the "
                            "first may be a forged record, so none is read); check them with "
                            "sacct -j, or export with sacct --json")
    stray.say()
    return records


class _Stray:
    """The lines that begin no record and are no record's, each counted under its reason
    (:data:`NOT_A_RECORD`, or :data:`SACCT_MESSAGE` for sacct's own), the first of each kind
    quoted in a fact (:meth:`say`)."""

    def __init__(self, report: FileReport) -> None:
        self.report = report
        self.first: dict[str, str] = {}  # reason -> its first line

    def count(self, line: str) -> None:
        if not line.strip():
            return
        reason = SACCT_MESSAGE if sacct_message(line) else NOT_A_RECORD
        self.report.dropped[reason] += 1
        self.first.setdefault(reason, line)

    def say(self) -> None:
        if SACCT_MESSAGE in self.first:
            self.report.facts.append(
                f"sacct's own message in the file ({shown_line(self.first[SACCT_MESSAGE])}): "
                f"sacct may not have finished cleanly, so jobs may be missing; "
                f"{REDO_WITHOUT_MESSAGES}")
        if NOT_A_RECORD in self.first:
            self.report.facts.append(
                f"{self.report.dropped[NOT_A_RECORD]} line(s) not sacct output, counted and not read "
                f"(the first: {shown_line(self.first[NOT_A_RECORD])}); another file joined "
                "to this one? give each log as its own file")


def last_column_risk(header: list[str], ends_with_delimiter: bool) -> str | None:
    """The note on a free-text column last in the header (``--format=ALL`` ends with WorkDir,
    which ``sbatch -D`` sets), whose newlines cannot all be told from a record's end: a value
    "x\\n<id>|<user>|..." reads as job <id>'s record, and nothing in the file shows it.
    None when the last column is not free text."""
    column = header[-1] if header else ""
    if column not in FREE_TEXT_COLUMNS:
        return None
    how, forging = (("a '|' then a newline inside it reads as the end of a record", "x|")
                    if ends_with_delimiter else
                    ("sacct -P ends a record with a bare newline, so a newline inside it reads "
                     "as one", "x"))
    return (f"{column} is the last column: {how}; a job whose {column} holds "
            f"'{forging}\\n<id>|<user>|...' forges job <id>'s record unseen, so trust these "
            f"jobs only as far as their users; export with {column} not last and -p "
            f"({SACCT_P}), or with sacct --json")


def _is_header(line: str, header: list[str], ends_with_delimiter: bool) -> bool:
    """Whether ``line`` is a header line (a field named JobID / JobIDRaw, no field a job id or
    a number): the first one's columns again, or else a refusal.

    Raises:
        IngestError: a header naming other columns (two exports of other ``--format``s)."""
    fields = [f.strip() for f in line.split("|")]
    if ends_with_delimiter and fields[-1] == "":
        fields.pop()
    # any case: the first header's was read through column_names.sacct_case (s46 review RW4)
    if not {"jobid", "jobidraw"} & {f.lower() for f in fields} or \
            any(_JOB_ID.fullmatch(f) for f in fields):
        return False
    return header_again(fields, header, certain=True, also=", or -p after -P")


class _NextText:
    """Whether ``lines[i]`` (a record of the header's fields before it) is more of that
    record: the next non-blank line begins no record (a newline inside the last value). The
    next non-blank line is remembered, so a run of blank lines inside a value is scanned once,
    not once per line of it."""

    def __init__(self, lines: list[str], begins):
        self.lines, self.begins = lines, begins
        self.at = -1  # the index of the next non-blank line at or after the last one asked
        self.answer = False

    def continues(self, i: int) -> bool:
        """Asked with ``i`` never decreasing, as :func:`split_records` reads."""
        lines = self.lines
        if i > self.at:
            self.at = i
            while self.at < len(lines) and not lines[self.at].strip():
                self.at += 1
            self.answer = self.at < len(lines) and not self.begins(lines[self.at])
        return self.answer


def _begins_record(line: str, id_at: int, ncols: int, ids_before: bool) -> bool:
    """Whether a physical line begins a record: its JobID field is a job id. With free-text
    columns before JobID (``--format=ALL``) a '|' in them shifts it right: that place too."""
    fields = line.split("|")
    places = {id_at} | ({id_at + len(fields) - ncols} if ids_before and len(fields) > ncols
                        else set())
    return any(at < len(fields) and _JOB_ID.fullmatch(fields[at].strip()) for at in places)


def _job_id_of(fields: list[str], id_at: int) -> str:
    """The record's JobID as read ("?" when its field is not a job id): right unless a '|'
    sits in a column before it."""
    value = fields[id_at].strip() if id_at < len(fields) else ""
    return value if _JOB_ID.fullmatch(value) else "?"


def _shown(ids: list[str]) -> str:
    return ", ".join(ids[:5]) + (" ..." if len(ids) > 5 else "")
