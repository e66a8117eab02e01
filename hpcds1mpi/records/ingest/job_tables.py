"""A job table ``hpcds1mpi ingest`` wrote (``.parquet`` or ``.csv``), read back as an input:
to merge this month's sacct export into last month's table, or as a ``--history``.

Its rows keep the ``source_file`` and ``source_kind`` they were written with, so that a job
read again from its log is recognised as the same job (:func:`.job_logs.ingest`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from hpcds1mpi.errors import IngestError

from .schema import FileReport

if TYPE_CHECKING:
    import pandas as pd


def read_job_table_file(path: str | Path) -> tuple["pd.DataFrame", FileReport]:
    """Read a job table as it was written (before ``normalise``, which checks its columns).

    Raises:
        IngestError: not readable as a parquet or CSV table, or another suffix.
    """
    import pandas as pd

    path = Path(path)
    if path.suffix not in (".parquet", ".csv"):
        raise IngestError(f"{path}: a job table is a .parquet or .csv file ingest wrote")
    try:
        table = pd.read_parquet(path) if path.suffix == ".parquet" else _read_csv(path)
    except IngestError:
        raise
    except Exception as exc:  # pyarrow and the CSV parser raise many kinds: one line
        why = str(exc).splitlines()[0][:160] if str(exc) else type(exc).__name__
        raise IngestError(f"{path}: cannot read it as a job table ({why})") from None
    report = FileReport(str(path), "job-table", records=len(table), jobs=len(table))
    return table, report


def _read_csv(path: Path) -> "pd.DataFrame":
    """A job table CSV, each value under its header's column.

    Raises:
        IngestError: the first row has more fields than the header (a later one: the parser's
            own error). Without ``index_col=False`` pandas would take the first column as the
            index and put every value under the next column's name.
    """
    import warnings

    import pandas as pd

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", pd.errors.ParserWarning)
        table = pd.read_csv(path, low_memory=False, dtype={"job_id": str}, index_col=False)
    if any(issubclass(w.category, pd.errors.ParserWarning) for w in caught):
        raise IngestError(f"{path}: rows have more fields than the header (a value added, or "
                          "a ',' at the end of a row); a job table has one field per column: "
                          "fix the rows, or write the table again with hpcds1mpi ingest")
    return table
