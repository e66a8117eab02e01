"""Splitting ``sacct -P`` / ``-p`` text into records of the header's field count.

sacct does not escape its delimiter: a ``|`` inside a job name gives a record more fields than
the header, and ``--format=ALL``'s ``SubmitLine`` can hold newlines. Both are mended where the
mending is certain, and counted where it is not.
"""

from __future__ import annotations

import re

from .schema import FileReport

#: Columns whose values are free text a user typed (a name, a comment, a path, a constraint
#: expression, whose OR is itself a '|'): the only places a '|' inside a value can come from.
FREE_TEXT_COLUMNS = ("JobName", "Comment", "AdminComment", "SystemComment", "SubmitLine",
                     "WorkDir", "Constraints", "Container", "WCKey", "Reservation")

TOO_MANY_FIELDS = "more fields than the header ('|' inside a value; sacct does not escape it)"
_JOB_ID = re.compile(r"\d+([_+]\[?[\d\-,%]+\]?)?(\.\w+)?")


def split_records(lines: list[str], header: list[str], ncols: int,
                  report: FileReport) -> list[list[str]]:
    """Join physical lines into records of exactly ``ncols`` fields (``--format=ALL`` values
    can hold newlines).

    A record with more fields than the header whose header has one free-text column
    (:data:`FREE_TEXT_COLUMNS`) gets the extra fields joined back into that column with '|'
    (the '|'s were in it: no other column can hold one), noted. With several such columns
    which one holds the '|' cannot be told: the record is counted and dropped, and its job
    id named in a fact. A record with too few fields is counted and dropped.
    """
    free = [i for i, name in enumerate(header) if name in FREE_TEXT_COLUMNS]
    unread_ids: list[str] = []
    records: list[list[str]] = []
    i = 0
    while i < len(lines):
        buf = lines[i]
        i += 1
        if not buf.strip():
            continue
        while buf.count("|") + 1 < ncols and i < len(lines):
            candidate = buf + "\n" + lines[i]
            if candidate.count("|") + 1 > ncols:
                break
            buf = candidate
            i += 1
        fields = buf.split("|")
        report.records += 1
        if len(fields) > ncols and len(free) == 1:
            at, extra = free[0], len(fields) - ncols
            fields = fields[:at] + ["|".join(fields[at:at + extra + 1])] + fields[at + extra + 1:]
            report.notes[f"'|' inside {header[at]} (sacct does not escape it): joined back, "
                         "the only free-text column"] += 1
        if len(fields) > ncols:
            report.dropped[TOO_MANY_FIELDS] += 1
            unread_ids.append(_job_id_of(fields, header))
        elif len(fields) < ncols:
            report.dropped["fewer fields than the header (truncated record)"] += 1
        else:
            records.append(fields)
    named = [jid for jid in unread_ids if jid]
    if unread_ids:
        shown = ", ".join(named[:5]) + (" ..." if len(named) > 5 else "") if named else \
            "ids not readable"
        report.facts.append(f"{len(unread_ids)} record(s) with a '|' inside a value dropped "
                            f"(jobs {shown}): the header has several free-text columns, so "
                            "which holds it cannot be told; sacct --json keeps such jobs")
    return records


def _job_id_of(fields: list[str], header: list[str]) -> str:
    """The record's JobID as read ("" when its field is not a job id): right unless a '|'
    sits in a column before it, then most likely not a job id at all."""
    for name in ("JobID", "JobIDRaw"):
        if name in header:
            value = fields[header.index(name)].strip()
            if _JOB_ID.fullmatch(value):
                return value
    return ""
