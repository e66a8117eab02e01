"""The common wrong exports of a job log, told apart from "not a job log": an empty file,
sacct's fixed-width output (sacct without ``-P``), a sacct export split by another character
than the reader's, and a job table ``ingest`` wrote itself. Each gets one line that says what
to do, wherever the file is refused (``--kind auto`` or a forced kind)."""

from __future__ import annotations

import re
from pathlib import Path

from .schema import TABLE_MARK

#: The columns the sacct readers read (sacct_text.py). JobName is not last: a newline in the
#: last column cannot be told from a record's end (sacct_records.last_column_risk), and
#: --format=ALL ends with WorkDir, free text too.
SACCT_FORMAT = ("JobID,JobName,User,Account,Partition,QOS,State,ExitCode,Submit,Start,End,"
                "ElapsedRaw,TimelimitRaw,NNodes,NCPUS,NTasks,ReqNodes,ReqCPUS,ReqMem,ReqTRES,"
                "AllocTRES,MaxRSS,TotalCPU,ConsumedEnergyRaw")
#: How to export a job log sacct's way, for the messages: -p ends each record with '|', so a
#: newline inside a job name does not end it.
SACCT_P = f"sacct -a -p --format={SACCT_FORMAT} -S YYYY-MM-DD > jobs.txt"

_SACCT_ID = re.compile(r"(^|\W)JobID(Raw)?(\W|$)")
# Separators a spreadsheet or sacct --delimiter may have used instead of the reader's.
_SEPARATORS = {";": "';'", "\t": "tabs", "|": "'|'", ",": "','"}


#: A sacct field name (JobID, ConsumedEnergyRaw, ...): letters and digits, never a separator.
_FIELD_NAME = re.compile(r"[A-Za-z][A-Za-z0-9]*")
#: Delimiters sacct --delimiter may be given besides '|' and ',' that a header makes certain.
OTHER_DELIMITERS = (";", "\t")
#: The name of an index column a spreadsheet or pandas wrote first (CSD3's export has one):
#: no name, or pandas' "Unnamed: 0". The CSV reader ignores it (:mod:`.sacct_csv`).
_INDEX_NAME = re.compile(r"(Unnamed: \d+)?")


def other_delimiter(first: str) -> str | None:
    """The delimiter of a sacct ``-P --delimiter=';'`` (or tab) export, where its header line
    makes it certain: every field a sacct field name (one named JobID or JobIDRaw; the first
    may be an index column's, :data:`_INDEX_NAME`) when split by it, and no '|' or ',' in
    the line (s43 tester H8); else None."""
    first = first.strip("\r\n")
    if "|" in first or "," in first:
        return None
    for sep in OTHER_DELIMITERS:
        fields = first.split(sep)
        if len(fields) > 1 and _INDEX_NAME.fullmatch(fields[0]):
            fields = fields[1:]  # s45 tester C7: read, as the ','-separated file is
        if sep in first and {"JobID", "JobIDRaw"} & set(fields) and all(
                _FIELD_NAME.fullmatch(f) for f in (fields[:-1] if fields[-1] == "" else fields)):
            return sep
    return None


#: A '|' of a value in a ';'- or tab-separated export while it is read as -P (sacct never
#: writes this unit separator).
_HELD = "\x1f"


def as_pipes(text: str, facts: list[str]) -> tuple[str, str | None]:
    """``text`` as sacct -P writes it where it is a ``--delimiter=';'`` (or tab) export
    (:func:`other_delimiter`), its values' own '|' held apart (:func:`restore_pipes`), said
    in ``facts``; with its delimiter (None: ``text`` as it is)."""
    sep = other_delimiter(text.split("\n", 1)[0])
    if not sep:
        return text, None
    facts.append(f"fields separated by {sep!r} (sacct --delimiter), as the header shows: "
                  "read as sacct -P")
    return text.replace("|", _HELD).replace(sep, "|"), sep


def restore_pipes(rows: list[dict]) -> list[dict]:
    """Rows read from :func:`as_pipes` text with their values' own '|' back."""
    return [{k: v.replace(_HELD, "|") if isinstance(v, str) else v for k, v in r.items()}
            for r in rows]


#: A header line the file repeats, its columns the same (exports joined into one file).
REPEATED_HEADER = "a header line again (exports joined into one file): skipped"


def header_again(fields: list[str], header: list[str], where: str = "",
                 certain: bool = False, also: str = "") -> bool:
    """Whether a row is the header line again (two exports joined with ``cat``): True for the
    same columns, which the reader skips (:data:`REPEATED_HEADER`); a row that names most of
    the header's columns in another order or with others is refused, since the rows after it
    would be read under the first header's columns (s46 tester I1: user and account swapped).

    Args:
        fields: the row's fields.
        header: the file's first header.
        where: what the refusal begins with (the file's path and ": ").
        certain: the caller already knows the row is a header line (sacct's JobID test).
        also: another cause the refusal names (", or -p after -P").

    Raises:
        IngestError: a header line naming other columns.
    """
    # In any case: the header was read with sacct's names case-fixed (s46 review RW4).
    header = [name.lower() for name in header]
    names = set(header) - {""}
    # The first fields first: a data row of a big log never pays for the whole row.
    if not certain and not names & {f.strip().lstrip("\ufeff").lower() for f in fields[:3]}:
        return False
    fields = [f.strip().lstrip("\ufeff").lower() for f in fields]
    if fields == header:
        return True
    if not certain and (len(names) < 2 or sum(f in names for f in fields) * 2 <= len(names)):
        return False
    from hpcds1mpi.errors import IngestError

    raise IngestError(f"{where}a second header line with other columns{also} (two exports "
                      "joined into one file); give each export as its own file")


def first_text(path: str | Path, size: int = 4096) -> str:
    """The first bytes of a file as text (a byte-order mark dropped; "" when unreadable)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(size)
    except OSError:
        return ""
    return head.decode("utf-8", errors="replace").lstrip("\ufeff")


#: A line sacct writes to stderr ("sacct: error: ...", "sacct: fatal: ..."), in the file where
#: its errors were redirected with its output (``2>&1``, ``&>``).
_SACCT_MESSAGE = re.compile(r"sacct: \S")
#: What to do about such a line, wherever it is found.
REDO_WITHOUT_MESSAGES = (f"fix what it says and export again with its errors kept apart (e.g. "
                         f"{SACCT_P} 2> sacct-errors.txt)")


def sacct_message(line: str) -> bool:
    """Whether ``line`` is one of sacct's own messages (its stderr), not its output."""
    return bool(_SACCT_MESSAGE.match(line.lstrip("\ufeff")))


def shown_line(line: str, width: int = 80) -> str:
    """A line of a file quoted in a message: stripped, cut to ``width`` characters."""
    line = line.strip()
    return repr(line if len(line) <= width else line[:width - 3] + "...")


def wrong_export(path: str | Path, text: str, reads: str = "|,") -> str | None:
    """One line on what a text file is and what to do with it, when it is a common wrong
    export; None when it is none of them.

    Args:
        path: the file (named in the line).
        text: its first bytes (:func:`first_text`).
        reads: the separators the asking reader splits on: ``|`` for sacct -P, ``,`` for a
            CSV kind, both for ``--kind auto`` (which also reads a job table ingest wrote).
    """
    if not text.strip():
        return f"{path}: empty file; export the job log again (e.g. {SACCT_P})"
    lines = text.splitlines()
    first = lines[0].strip()
    second = lines[1].strip() if len(lines) > 1 else ""
    if sacct_message(first):  # s48 tester P8: sacct ... &> jobs.txt
        return (f"{path}: begins with sacct's own message ({shown_line(first)}), not its "
                f"output: sacct may not have finished cleanly; {REDO_WITHOUT_MESSAGES}")
    words = first.split()
    if words and words[0] in ("JobID", "JobIDRaw") and second and set(second) <= {"-", " "}:
        return (f"{path}: sacct's fixed-width output (its values are cut to fit the columns); "
                f"re-run sacct with -p, e.g. {SACCT_P}")
    if reads != "|," and set(TABLE_MARK) <= set(re.split(r"[,\s]+", first)):
        return (f"{path}: a job table hpcds1mpi ingest wrote; give it with --kind auto (or "
                "job-table) to merge it with other logs, or as it is to train --jobs / "
                "recommend --history")
    if _SACCT_ID.search(first) and not any(sep in first for sep in reads):
        found = [name for sep, name in _SEPARATORS.items() if sep in first]
        if found == ["'|'"]:
            return f"{path}: sacct -P output, not CSV; give it with --kind sacct-p (or auto)"
        if found:
            wanted = " or ".join(_SEPARATORS[sep] for sep in reads)
            return (f"{path}: a sacct export separated by {found[0]}, not {wanted}; re-run "
                    f"sacct with -p (e.g. {SACCT_P}), or save the file with ',' between "
                    "fields")
    return None


def utf16_text(path: str | Path, head: bytes) -> str | None:
    """The one line for a text file in UTF-16 (PowerShell's ``>`` writes it, s31 tester R7),
    from its first bytes: a UTF-16 byte-order mark, or every other byte zero; None otherwise."""
    half = head[:512]
    zeros = max(half[0::2].count(0), half[1::2].count(0)) if len(half) >= 8 else 0
    if not head.startswith((b"\xff\xfe", b"\xfe\xff")) and zeros < 0.9 * (len(half) // 2 or 1):
        return None
    return (f"{path}: UTF-16 text (as PowerShell's > writes it), not UTF-8; convert it first: "
            f"iconv -f UTF-16 -t UTF-8 {path} > jobs.txt (or in PowerShell: Out-File -Encoding "
            "utf8)")
