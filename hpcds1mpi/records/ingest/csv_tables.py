"""What every CSV job log shares (sacct CSV exports, NREL Eagle, CINECA Eurora): the header
check (also ``sacct -P``'s: no column named twice), one vectorised read, and rows missing a
required value counted per reason.

A file without a column a reader needs is an :class:`IngestError` naming the missing columns;
a row with more fields than the header, or an empty cell where a required value belongs, is
counted under its reason and dropped, never guessed.
"""

from __future__ import annotations

import csv
import io
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

from hpcds1mpi.errors import IngestError

from .column_names import SACCT_NAMES, near_misses
from .cut_at_end import CUT_AT_END, ends_inside_line
from .schema import FileReport
from .text_encoding import read_log_text
from .wrong_exports import REPEATED_HEADER, first_text, header_again, wrong_export

if TYPE_CHECKING:
    import pandas as pd


def csv_header(text: str) -> list[str]:
    """The column names of a CSV file's first line (its first characters in ``text``)."""
    first = text.lstrip("\ufeff").splitlines()[0] if text.strip() else ""
    try:
        return [c.strip() for c in next(csv.reader([first]))]
    except (csv.Error, StopIteration):
        return []


def check_unique_columns(path: str | Path, header: list[str]) -> None:
    """Refuse a header that names a column twice: which of the two holds the value cannot be
    told (a second ``State``, an ``Account`` pasted twice).

    Raises:
        IngestError: naming the repeated column(s).
    """
    twice = [name for name, n in Counter(c for c in header if c).items() if n > 1]
    if twice:
        raise IngestError(f"{path}: the header names the column {', '.join(twice)} twice; "
                          "keep one (which of them holds the value cannot be told)")


#: How a message names a CSV kind.
_KIND_NAMES = {"eagle": "an NREL Eagle", "eurora": "a CINECA Eurora", "sacct-csv": "a sacct"}


def read_csv_table(path: str | Path, kind: str, required: tuple[str, ...],
                   mend_longer=None, cut_rows: list | None = None, columns=None,
                   free_text: tuple[str, ...] = ()) -> tuple["pd.DataFrame", FileReport]:
    """A CSV job log as text columns, with its report.

    Args:
        path: the file.
        kind: the report's kind.
        required: columns the reader cannot do without.
        mend_longer: ``(header, longer_rows, report) -> rows`` for the rows with more fields
            than the header (an unquoted ',' inside a value): the rows it returns, of the
            header's length, are read; it counts the others itself. Without it they are
            counted and dropped.
        columns: ``(path, header, facts) -> header``: the names as the reader reads them
            (sacct's in their own case, :func:`.column_names.sacct_columns`).
        free_text: columns whose values may hold a newline the file did not quote (sacct
            quotes nothing): a row that stops in one is joined to the next (:func:`_rejoin`).
        cut_rows: where given, the last row is appended to it when the file was cut short
            inside it (:mod:`.cut_at_end`; the row is counted and not read either way).

    Raises:
        IngestError: a column of ``required`` is missing, or the file is not CSV at all.
    """
    import pandas as pd

    path = Path(path)
    report = FileReport(str(path), kind)
    # csv.reader (C) splits records exactly, quotes and all, and tells a short row from a row
    # with empty cells, which pandas' reader fills alike.
    text = read_log_text(path, report.facts)
    try:
        records = [r for r in csv.reader(io.StringIO(text, newline="")) if r]
    except csv.Error as exc:
        raise IngestError(f"{path}: not a CSV file ({exc})") from None
    what = _KIND_NAMES.get(kind, f"a {kind}")
    if not records:
        raise IngestError(wrong_export(path, ""))
    header = [c.strip().lstrip("\ufeff") for c in records[0]]
    if columns is not None:
        header = columns(path, header, report.facts)
    check_unique_columns(path, header)
    missing = [c for c in required if c not in header]
    if missing:
        # A sacct fixed-width or ';'-separated export, a job table: say what it is instead.
        said = wrong_export(path, first_text(path), reads=",")
        if said:
            raise IngestError(said)
        if len(header) == 1:
            raise IngestError(f"{path}: the header is one column, so the file is not "
                              f"comma-separated; save it as CSV with ',' between fields "
                              f"({what} CSV needs {', '.join(missing)})")
        near = near_misses(missing, header, SACCT_NAMES)  # s46 tester I2: the renamed one
        raise IngestError(f"{path}: {what} CSV needs the column(s) {', '.join(missing)} " + (
            near[1:] if near else f"(has {', '.join(header[:10])}"
                                  f"{' ...' if len(header) > 10 else ''})"))
    ncols = len(header)
    body = [r for r in records[1:] if not header_again(r, header, f"{path}: ")]
    if len(body) < len(records) - 1:  # s46 tester I1: exports joined with cat
        report.notes[REPEATED_HEADER] += len(records) - 1 - len(body)
    if free_text:
        body = _rejoin(body, header, free_text, report)
    report.records = len(body)
    if body and len(body[-1]) == ncols and ends_inside_line(text, quoted=True):
        # s43 tester H3: "...,64" cut to "...,6" has every field; as sacct -P's reader does,
        # the unterminated last row is counted, not read with its cut value.
        report.dropped[CUT_AT_END] += 1
        if cut_rows is not None:
            cut_rows.append(body[-1])
        body = body[:-1]
    rows = [r for r in body if len(r) == ncols]
    longer = [r for r in body if len(r) > ncols]
    if len(body) - len(rows) - len(longer):
        report.dropped["fewer fields than the header (truncated row)"] += \
            len(body) - len(rows) - len(longer)
    if longer and mend_longer is None:
        report.dropped["more fields than the header"] += len(longer)
    elif longer:
        # Mended rows keep their place among the others (a job line before its steps).
        mended = {id(r): m for r, m in zip(longer, mend_longer(header, longer, report))
                  if m is not None}
        rows = [r if len(r) == ncols else mended[id(r)] for r in body
                if len(r) == ncols or id(r) in mended]
    df = pd.DataFrame(rows, columns=header, dtype=str)
    return df.apply(lambda s: s.str.strip()), report


def _rejoin(body: list[list[str]], header: list[str], free_text: tuple[str, ...],
            report: FileReport) -> list[list[str]]:
    """``body`` with each row that stops short in a free-text column joined to the rows after
    it while their fields fit the header (s46 tester I9: a job name holding a newline, which
    ``sacct --delimiter=,`` writes bare, lost the job as "truncated row"), noted."""
    ncols, out, i = len(header), [], 0
    while i < len(body):
        row, i = body[i], i + 1
        while (len(row) < ncols and i < len(body) and header[len(row) - 1] in free_text
               and len(row) + len(body[i]) - 1 <= ncols):
            report.notes[f"newline inside {header[len(row) - 1]} (not quoted): joined back"] += 1
            row, i = row[:-1] + [row[-1] + "\n" + body[i][0]] + body[i][1:], i + 1
        out.append(row)
    return out


def drop_rows(df: "pd.DataFrame", checks, report: FileReport) -> "pd.DataFrame":
    """``df`` without the rows a check flags; each counted once, under its first reason.

    Args:
        checks: (bool Series over ``df``'s index, reason) pairs, in order.
    """
    import pandas as pd

    bad = pd.Series(False, index=df.index)
    for mask, reason in checks:
        mask = mask.fillna(True) & ~bad
        if mask.any():
            report.dropped[reason] += int(mask.sum())
        bad |= mask
    return df[~bad]


def empty(df: "pd.DataFrame", columns: tuple[str, ...]):
    """(mask, reason) pairs: a row whose required cell is empty."""
    return [(df[c] == "", f"empty {c}") for c in columns if c in df.columns]


def numbers(series, name: str, mask_out: list) -> "pd.Series":
    """Text -> float; a cell that is not a number (and not empty) is flagged for dropping."""
    import pandas as pd

    values = pd.to_numeric(series, errors="coerce")
    mask_out.append(((series != "") & values.isna(), f"{name} not a number"))
    return values


def times(src: "pd.DataFrame", columns: dict[str, str], mask_out: list, path,
          facts: list | None = None) -> dict[str, "pd.Series"]:
    """Text time columns -> naive datetimes (as the log writes them), all in the one format
    :func:`.times.decide_format` finds in them (never guessed value by value); a value in
    another format is flagged for dropping.

    Args:
        src: the file's text columns.
        columns: our column name -> the file's column.
        mask_out: the (mask, reason) list the flags are appended to.
        path: the file (for messages).
        facts: where a fact on how the times were read goes (a date order the file settled
            or its dots imply; times without seconds), when given.

    Returns:
        our column name -> datetime Series over ``src``'s index.

    Raises:
        IngestError: the times have no year, or their format or date order cannot be told.
    """
    import pandas as pd

    from .times import BLANK_TIMES, classify, decide_format, describe, minutes_fact

    uniques = pd.unique(pd.concat([src[theirs] for theirs in columns.values()]))
    fmt = decide_format(uniques, str(path), "write the times as YYYY-MM-DD HH:MM:SS")
    if fmt is not None and facts is not None:
        facts.extend(said for said in (describe(fmt), minutes_fact(fmt)) if said)
    out = {}
    for ours, theirs in columns.items():
        series = src[theirs]
        blank = series.isin(BLANK_TIMES)
        if fmt is None:
            values = pd.Series(pd.NaT, index=series.index, dtype="datetime64[ns]")
        elif fmt.kind == "iso":
            values = pd.to_datetime(series.where(~blank), errors="coerce", format="ISO8601")
        elif fmt.is_epoch:
            values = pd.to_datetime(pd.to_numeric(series.where(~blank), errors="coerce"),
                                    unit="s", errors="coerce")
        else:
            def one(text):
                try:
                    return pd.Timestamp(*fmt.fields(text)) if classify(text) == fmt.kind \
                        else pd.NaT
                except ValueError:
                    return pd.NaT
            values = pd.to_datetime(series.where(~blank).map(one, na_action="ignore"))
        if getattr(values.dt, "tz", None) is not None:
            values = values.dt.tz_convert(None)
        mask_out.append((~blank & values.isna(), f"{theirs} not a time"))
        out[ours] = values
    return out
