"""An SWF log's header, and whether a file is SWF at all: the ``;`` lines before the first job
read into a :class:`SwfHeader` (to a bound: :data:`MAX_HEADER_LINES` lines, lines cut at
:data:`LONGEST_LINE` characters, :data:`MOST_COMMENT_CHARS` characters of comment; the job lines'
reader in :mod:`.swf` keeps to the same line bounds), a numeric value refused with why, the
span from the log's start to its ``EndTime`` (:func:`header_span_s`), and what the processor
fields count (:func:`procs_count_nodes`: ``procs_are``).
"""

from __future__ import annotations

import math
import re
import warnings
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path

from hpcds1mpi.errors import IngestError

from .compressed import text_lines

#: What fields 5 and 8 may be read as (``--procs-are``; ``auto``: from the header).
PROCS_ARE = ("auto", "processors", "nodes")

_HEADER_LINE = re.compile(r"^;\s*([A-Za-z]+)\s*:\s*(.*?)\s*$")
#: Header keys read as a number / as text, and the SwfHeader field each fills.
_NUMBER_KEYS = {"MaxNodes": "max_nodes", "MaxProcs": "max_procs", "UnixStartTime": "unix_start",
                "MaxRecords": "max_records"}
_TEXT_KEYS = {"TimeZoneString": "time_zone", "Version": "version", "StartTime": "start_text",
              "EndTime": "end_text"}
#: How far past the header's EndTime a submit time may be (its time zone, a rounded EndTime).
END_SLACK_S = 86400.0
#: Longest line read, characters: a job line is about 100; a longer comment is read cut (a
#: header value is at its start), a longer job line is dropped (no SWF job is that long).
LONGEST_LINE = 65536
#: Most header notes kept (they are only searched for what the processor fields count).
MAX_NOTES = 1000
#: Most header lines read (an archive log's header has under 100).
MAX_HEADER_LINES = 10000
#: Most characters of comment and blank lines read (a log's are a few KB; a compressed file
#: can hold gigabytes, and skipping costs time).
MOST_COMMENT_CHARS = 100e6


@dataclass
class SwfHeader:
    """What an SWF header says (None: not given)."""

    max_nodes: int | None = None
    max_procs: int | None = None
    unix_start: int | None = None
    max_records: int | None = None
    time_zone: str | None = None
    version: str | None = None
    start_text: str | None = None
    end_text: str | None = None
    notes: list[str] = field(default_factory=list)
    #: Header values not used, each with why (reported as facts).
    ignored: list[str] = field(default_factory=list)


def looks_like_swf(text: str) -> bool:
    """Whether a file's first characters are SWF: ``;`` header lines with SWF keys, or the
    first non-comment line is 18 whitespace-separated numbers."""
    lines = [ln for ln in text.lstrip("\ufeff").splitlines() if ln.strip()]
    header = [ln for ln in lines if ln.lstrip().startswith(";")]
    if any(_HEADER_LINE.match(ln) and _HEADER_LINE.match(ln).group(1) in
           ("MaxProcs", "MaxNodes", "UnixStartTime", "MaxJobs", "MaxRecords") for ln in header):
        return True
    body = [ln for ln in lines if not ln.lstrip().startswith(";")]
    return bool(body) and re.fullmatch(r"\s*(-?\d+(\.\d+)?\s+){17}-?\d+(\.\d+)?\s*",
                                       body[0]) is not None


def read_header(path: str | Path) -> SwfHeader:
    """The header comments of an SWF file (the ``;`` lines before the first job, at most
    :data:`MAX_HEADER_LINES` of them)."""
    head = SwfHeader()
    with closing(text_lines(path, LONGEST_LINE, MOST_COMMENT_CHARS)) as lines:
        for seen, (line, _) in enumerate(lines):
            if seen == MAX_HEADER_LINES:
                head.ignored.append(f"header lines past the first {MAX_HEADER_LINES} not read")
                break
            if not line.strip():
                continue
            if not line.lstrip().startswith(";"):
                break
            m = _HEADER_LINE.match(line.strip())
            if not m:
                continue
            key, value = m.group(1), m.group(2)
            if key in _NUMBER_KEYS:
                number = _header_number(key, value)
                if isinstance(number, str):
                    head.ignored.append(f"header {key}: {value[:40]!r} ignored ({number})")
                elif number is not None:
                    setattr(head, _NUMBER_KEYS[key], number)
            elif key in _TEXT_KEYS:
                setattr(head, _TEXT_KEYS[key], value)
            elif key == "Note" and len(head.notes) < MAX_NOTES:
                head.notes.append(value)
    return head


def _header_number(key: str, value: str) -> int | str | None:
    """A numeric header value as an int; None for SWF's "not known" (-1); or why it cannot be
    used: not a whole number, or out of range (a start time must give a date the job table
    can hold, a count must be positive)."""
    try:
        number = float(value.split()[0])
    except (ValueError, IndexError):
        return "not a number"
    if number == -1:
        return None
    if not math.isfinite(number):
        return "not finite"
    if number != int(number):
        return "not a whole number"
    # A start after 2096 plus a line's submit time (<= MAX_SWF_SECONDS) would pass 2262, the
    # end of nanosecond timestamps.
    low, high = (0, 4e9) if key == "UnixStartTime" else (1, 2**53)
    if not low <= number <= high:
        return f"outside {low}..{high:.0e}"
    return int(number)


def header_span_s(head: SwfHeader) -> float | str | None:
    """Seconds from the log's start to its header ``EndTime`` (None: none), or why it cannot be
    used. Both are local times (a zone word, CEST, ignored); without ``StartTime``, counted
    from ``UnixStartTime``: off by the time zone, within :data:`END_SLACK_S`."""
    import pandas as pd
    from dateutil import parser

    when = _local_date

    if head.end_text is None:
        return None
    end, start = when(head.end_text), when(head.start_text)
    if end is None:
        return "not a date"
    if start is None and head.unix_start is None:
        return "no StartTime or UnixStartTime to count from"
    span = (end - (pd.Timestamp(head.unix_start, unit="s") if start is None else start)
            ).total_seconds()
    return span if span >= 0 else "before the log's start"


def _local_date(text: str | None):
    """A header's local date and time (a Timestamp, naive), None where it has no year or is
    no date (a zone word, CEST, ignored)."""
    import pandas as pd
    from dateutil import parser

    if not text or not re.search(r"\b\d{4}\b", text):  # no year: dateutil would guess
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # an unknown time-zone word
        try:
            return pd.Timestamp(parser.parse(text, ignoretz=True))
        except (ValueError, OverflowError, pd.errors.OutOfBoundsDatetime):
            return None


def log_origin(head: SwfHeader) -> tuple[int, list[str]]:
    """Epoch seconds (UTC) the submit times count from, and the facts that say how they were
    dated: ``UnixStartTime``; else ``StartTime``, a local time in ``TimeZoneString``'s zone
    (s35 tester T9: it was given and unused, the epoch taken while the report said the zone
    was applied); else 0, the epoch, said, and the zone said not applied."""
    import pandas as pd

    zone = head.time_zone
    if head.unix_start is not None:
        return head.unix_start, [f"times in UTC (the log's TimeZoneString: {zone})"] if zone \
            else []
    start = _local_date(head.start_text)
    if start is None:
        said = ["no usable UnixStartTime in the header: submit times counted from the epoch "
                "(1970-01-01), not real dates"]
        if head.start_text:
            said.append(f"header StartTime: {head.start_text[:40]!r} ignored (not a date)")
        if zone:
            said.append(f"the log's TimeZoneString ({zone}) not applied: no start time to "
                        "date its times by")
        return 0, said
    known = _zone(zone)
    if known is None:
        how = (f"read as UTC: its TimeZoneString {zone!r} is no zone known here" if zone else
               "read as UTC: the header has no TimeZoneString")
        utc = start
    else:
        how = f"a local time in its TimeZoneString ({zone})"
        utc = start.tz_localize(known, ambiguous=True, nonexistent="shift_forward"
                                ).tz_convert("UTC").tz_localize(None)
    seconds = int((utc - pd.Timestamp(0)).total_seconds())
    return seconds, [f"no UnixStartTime in the header: submit times counted from its StartTime "
                     f"{head.start_text!r}, {how} ({utc.isoformat(sep=' ')} UTC); times in UTC"]


def _zone(name: str | None):
    """The zone database's zone of a name, None where it holds none."""
    if not name:
        return None
    from zoneinfo import ZoneInfo

    try:
        return ZoneInfo(name.strip())
    except (ValueError, OSError, LookupError):  # ZoneInfoNotFoundError is a KeyError
        return None


def procs_count_nodes(head: SwfHeader, procs_are: str) -> tuple[bool, str | None]:
    """Whether the processor fields count nodes, and the note saying why (None: no note)."""
    if procs_are not in PROCS_ARE:
        raise IngestError(f"procs_are {procs_are!r}: use one of {', '.join(PROCS_ARE)}")
    if procs_are == "nodes":
        return True, "processor fields read as nodes (--procs-are nodes)"
    if procs_are == "processors":
        return False, None
    if head.max_nodes is not None and head.max_nodes == head.max_procs:
        return True, (f"header MaxProcs = MaxNodes = {head.max_nodes}: processor fields read "
                      "as nodes (--procs-are processors to override)")
    if any(_NODES_NOTE.search(n) for n in head.notes):
        return True, "a header note says the processor fields hold nodes: read as nodes"
    return False, None


#: A note that *states* the processor fields count nodes ("the processor fields count nodes",
#: "fields 5 and 8 give the number of nodes", "a processor is a node"): subject, verb and
#: nodes in a row. A note that only mentions both ("processors are allocated in whole nodes
#: of 12") says nothing of what the fields count (s38 tester C2: that one was read as nodes
#: and a whole log refused), nor does a negation ("are not nodes").
_NODES_NOTE = re.compile(
    r"(?:\bprocessors?(?:[ -](?:fields?|counts?|numbers?|columns?))?"
    r"|\bfields?\s+5(?:\s*(?:and|,|&|/)\s*8)?|\bcolumns?\s+5(?:\s*(?:and|,|&|/)\s*8)?)"
    r"\s+(?:actually\s+|really\s+|in\s+fact\s+)?"
    r"(?:count|hold|give|are|is|represent|contain|record|mean|denote|report|store)s?\s+"
    r"(?:(?:the\s+)?(?:number|count)\s+of\s+|an?\s+|whole\s+|the\s+)?(?:compute\s+)?"
    r"nodes?\b",
    re.I)
