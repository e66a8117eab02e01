"""A job table ``hpcds1mpi ingest`` wrote (``.parquet`` or ``.csv``), read back as an input:
to merge this month's sacct export into last month's table, or as a ``--history``.

Its rows keep the ``source_file`` and ``source_kind`` they were written with, so that a job
read again from its log is recognised as the same job (:func:`.job_logs.ingest`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from hpcds1mpi.errors import IngestError
from hpcds1mpi.records.table_files import read_file

from .cut_at_end import CUT_AT_END, file_ends_inside_line
from .eagle_tasks import renamed_old_tasks
from .schema import JOB_COLUMNS, TABLE_MARK, FileReport
from .wrong_exports import REPEATED_HEADER, header_again

if TYPE_CHECKING:
    import pandas as pd


def read_job_table_file(path: str | Path, kind_of=None) -> tuple["pd.DataFrame", FileReport]:
    """Read a job table as it was written (before ``normalise``, which checks its columns);
    ``kind_of``: the kind detector (:func:`.job_logs.detect_kind`, passed in: that module
    reads job tables through this one) that names what another table reads as.

    Raises:
        IngestError: not readable as a parquet or CSV table, or another suffix.
    """
    import pandas as pd

    path = Path(path)
    if path.suffix not in (".parquet", ".csv"):
        raise IngestError(f"{path}: a job table is a .parquet or .csv file ingest wrote")
    report = FileReport(str(path), "job-table")
    try:
        table = (read_file(pd.read_parquet, path) if path.suffix == ".parquet"
                 else _read_csv(path, report))
    except IngestError:
        raise
    except Exception as exc:  # pyarrow and the CSV parser raise many kinds: one line
        why = str(exc).splitlines()[0][:160] if str(exc) else type(exc).__name__
        raise IngestError(f"{path}: cannot read it as a job table ({why})") from None
    _refuse_other_table(path, table.columns, kind_of)
    # A table written before session 48 named Eagle tasks ID_N: named as its CSV's now (RY1).
    table = renamed_old_tasks(table, report.notes)
    if path.suffix == ".parquet":
        report.records = len(table)
    report.jobs = len(table)
    return table, report


#: The column no job table is without (as the API's history frames: a table of jobs without
#: ids still says how long they ran).
NEEDED = ("runtime_s",)


def _refuse_other_table(path: Path, columns, kind_of=None) -> None:
    """Refuse a table without :data:`NEEDED` (any CSV or parquet, under ``--kind job-table``:
    s48 tester P7, a PM100 table read as 1994 jobs without a status), naming what it is when
    ingest reads it as a log.

    Raises:
        IngestError: a needed column missing.
    """
    from .parquet_tables import saved_as_csv

    missing = [c for c in NEEDED if c not in columns]
    if not missing:
        return
    said = saved_as_csv(path) if path.suffix == ".csv" else None
    if said:
        raise IngestError(said)
    start = f"{path}: not a job table hpcds1mpi ingest wrote (it has no {', '.join(missing)})"
    try:
        kind = kind_of(path) if kind_of is not None else None
    except IngestError:  # its "--kind" hint would lead back here
        kind = None
    if kind and kind != "job-table":
        raise IngestError(f"{start}; it reads as kind {kind}: give --kind {kind}, or auto")
    names = ", ".join(map(str, list(columns)[:8])) + (" ..." if len(columns) > 8 else "")
    raise IngestError(f"{start}; its columns are {names}: give a job table ingest wrote, or "
                      "the job log with --kind auto")


def csv_separator(first_line: str) -> str | None:
    """The separator of a job table CSV from its header line: ``,`` as ingest writes it, ``;``
    as a spreadsheet in a decimal-comma locale saves it (None: not a job table's header)."""
    for sep in (",", ";"):
        if set(TABLE_MARK) <= {c.strip().strip('"') for c in first_line.split(sep)}:
            return sep
    return None


def _read_csv(path: Path, report: FileReport) -> "pd.DataFrame":
    """A job table CSV, each value under its header's column, its numbers and times read as
    the file writes them, the same for every value (s36 tester L1: a spreadsheet's re-save
    had moved dates by months and emptied decimal values, "0 malformed").

    A ``;``-separated file is a decimal-comma locale's CSV or another tool's with ``.``
    decimals: the mark is decided for the file (:func:`_decimal_mark`; s36 review 4: every
    job of a ``;`` + ``.`` file was dropped). Times are read in the one format :func:`.csv_tables.times` decides
    for the file (dotted dates day-first, said). A value that is not a number or a time in
    that format drops its job, counted under its column.

    Raises:
        IngestError: the first row has more fields than the header (a later one: the parser's
            own error; without ``index_col=False`` pandas would take the first column as the
            index and put every value under the next column's name), a ``,``-separated
            file with decimal commas, or a ``;``-separated one with both decimal marks.
    """
    import warnings

    import pandas as pd

    from .csv_tables import drop_rows, times

    with open(path, encoding="utf-8-sig", errors="replace") as fh:
        sep = csv_separator(fh.readline()) or ","
    # s44 tester N3: a copy cut inside its last row ("...,60" to "...,6") has every field.
    cut = file_ends_inside_line(path, quoted=True)
    if sep == ",":
        table = _as_ingest_wrote_it(path, report, cut)
        if table is not None:
            return table
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", pd.errors.ParserWarning)
        table = read_file(pd.read_csv, path, sep=sep, dtype=str, index_col=False,
                          encoding="utf-8-sig")
    if any(issubclass(w.category, pd.errors.ParserWarning) for w in caught):
        raise IngestError(f"{path}: rows have more fields than the header (a value added, or "
                          f"a '{sep}' at the end of a row); a job table has one field per "
                          "column: fix the rows, or write the table again with hpcds1mpi "
                          "ingest")
    table = _without_header_again(table, path, report)
    report.records = len(table)
    table = _without_cut_row(table, cut, report)
    checks: list = []
    stamps = {}
    numeric = [name for name, dtype in JOB_COLUMNS
               if dtype in ("Int64", "float64") and name in table.columns]
    decimal = _decimal_mark(table, numeric, path) if sep == ";" else "."
    for name, dtype in JOB_COLUMNS:
        if name not in table.columns:
            continue
        text = table[name].str.strip()
        if dtype in ("Int64", "float64"):
            table[name] = _numbers(text, name, decimal, path, checks)
        elif dtype.startswith("datetime64"):
            stamps[name] = text.fillna("")
    if stamps:
        read = times(pd.DataFrame(stamps), {c: c for c in stamps}, checks, path, report.facts)
        for name, values in read.items():
            table[name] = values
    return drop_rows(table, checks, report).reset_index(drop=True)


def _without_header_again(table: "pd.DataFrame", path: Path,
                          report: FileReport) -> "pd.DataFrame":
    """``table`` without the rows that are its header again (two tables joined with ``cat``,
    s46 tester I1), noted; a header naming other columns is refused (:func:`header_again`)."""
    names = list(table.columns)
    if table.empty:
        return table
    named = sum(table[c].str.strip().isin(names).astype(int) for c in names)
    again = [i for i in table.index[named * 2 > len(names)]
             if header_again(list(table.loc[i].fillna("")), names, f"{path}: ")]
    if again:
        report.notes[REPEATED_HEADER] += len(again)
    return table.drop(index=again)


def _without_cut_row(table: "pd.DataFrame", cut: bool, report: FileReport) -> "pd.DataFrame":
    """``table`` without its last row where the file ends inside it, counted as such."""
    if not (cut and len(table)):
        return table
    report.dropped[CUT_AT_END] += 1
    return table.iloc[:-1]


def _as_ingest_wrote_it(path: Path, report: FileReport, cut: bool) -> "pd.DataFrame | None":
    """The table when it is as ingest writes it — every number column parsed as numbers and
    every time ISO 8601 — else None (then read value by value): 2.7x faster on Curie's 313k
    jobs than the careful read, which a spreadsheet's re-save needs."""
    import warnings

    import pandas as pd

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", pd.errors.ParserWarning)
        table = read_file(pd.read_csv, path, low_memory=False,
                          dtype={"job_id": str, "cluster": str},
                          index_col=False, encoding="utf-8-sig")
    if caught:
        return None  # the careful read says what is wrong
    for name, dtype in JOB_COLUMNS:
        if name not in table.columns:
            continue
        column = table[name]
        if dtype in ("Int64", "float64"):
            if column.notna().any() and not pd.api.types.is_numeric_dtype(column):
                return None
        elif dtype.startswith("datetime64") and column.notna().any():
            read = pd.to_datetime(column, format="ISO8601", errors="coerce")
            if (read.isna() & column.notna()).any():
                return None
            table[name] = read
    report.records = len(table)
    return _without_cut_row(table, cut, report)


#: A number written with a decimal comma (``0,024``), as a spreadsheet in such a locale does.
_DECIMAL_COMMA = r"[-+]?\d*,\d+(?:[eE][-+]?\d+)?"
#: A number written with a decimal point (``3.0``; not ``1.234,5``, a thousands mark).
_DECIMAL_POINT = r"[-+]?\d+\.\d+(?:[eE][-+]?\d+)?"


def _decimal_mark(table: "pd.DataFrame", numeric: list[str], path: Path) -> str:
    """The decimal mark of a ``;``-separated file's ``numeric`` columns (text): ``,`` where
    some value is written with a decimal comma and none with a decimal point, else ``.``
    (many tools export ``;`` with ``.`` decimals).

    Raises:
        IngestError: values with either mark, which no one reading can tell apart.
    """
    found = {}
    for mark, pattern in ((",", _DECIMAL_COMMA), (".", _DECIMAL_POINT)):
        for name in numeric:
            text = table[name].str.strip()
            hits = text[text.str.fullmatch(pattern, na=False)]
            if len(hits):
                found[mark] = (name, hits.iloc[0])
                break
    if len(found) == 2:
        (comma_in, comma), (point_in, point) = found[","], found["."]
        raise IngestError(f"{path}: numbers are written with a decimal comma ({comma!r} in "
                          f"{comma_in}) and with a decimal point ({point!r} in {point_in}); "
                          "save it again with one decimal mark, or ingest the logs again")
    return "," if "," in found else "."


def _numbers(text: "pd.Series", name: str, decimal: str, path: Path, checks: list):
    """A column's text -> numbers with the file's decimal mark; a value that is no number in
    it is flagged in ``checks`` (counted under the column, one example given).

    Raises:
        IngestError: a decimal comma in a ``,``-separated file (which a reader cannot tell from
            a thousands separator there, and which a locale's own CSV separates with ``;``).
    """
    import pandas as pd

    if decimal == ",":  # a '.' is then a thousands mark or another locale's: not read
        values = pd.to_numeric(text.where(~text.str.contains(".", regex=False, na=False))
                               .str.replace(",", ".", regex=False), errors="coerce")
    else:
        values = pd.to_numeric(text, errors="coerce")
    bad = text.notna() & values.isna()
    if bad.any():
        example = text[bad].iloc[0]
        if decimal == "." and text[bad].str.fullmatch(_DECIMAL_COMMA).any():
            example = text[bad & text.str.fullmatch(_DECIMAL_COMMA, na=False)].iloc[0]
            raise IngestError(f"{path}: {name} has numbers with a decimal comma ({example!r}) "
                              "in a ','-separated file (a spreadsheet's re-save in a "
                              "decimal-comma locale); save it as CSV with ';' between fields, "
                              "or with '.' decimals, or ingest the logs again")
        checks.append((bad, f"{name} not a number (e.g. {example!r})"))
    return values
