"""A sacct export saved as CSV (a header of sacct field names, one comma-separated row per job
or step, e.g. Cambridge CSD3's JobIDRaw, JobName, Partition, ElapsedRaw, Account, State, ...).

The fields are parsed by the same code as ``sacct -P`` (:func:`.sacct_text.rows_from_records`
and :mod:`.slurm_fields`); only the splitting differs. A leading unnamed column (a pandas
index written with the table) is ignored.
"""

from __future__ import annotations

from pathlib import Path

from hpcds1mpi.errors import IngestError

from .csv_tables import read_csv_table
from .sacct_text import rows_from_records
from .schema import FileReport

#: Columns that make a CSV a sacct export (one of the two job-id columns and State).
SACCT_ID_COLUMNS = ("JobIDRaw", "JobID")


def is_sacct_header(columns) -> bool:
    """Whether CSV column names are sacct field names (a job id column and ``State``)."""
    cols = set(columns)
    return bool(cols & set(SACCT_ID_COLUMNS)) and "State" in cols


def read_sacct_csv(path: str | Path) -> tuple[list[dict], FileReport]:
    """Read a sacct CSV export into one dict per job (:func:`.schema.job_row`)."""
    path = Path(path)
    df, report = read_csv_table(path, "sacct-csv", ("State",))
    report.kind = "sacct-csv"
    if not set(df.columns) & set(SACCT_ID_COLUMNS):
        raise IngestError(f"{path}: a sacct CSV needs a JobIDRaw or JobID column "
                          f"(has {', '.join(df.columns[:10])})")
    header = [c for c in df.columns if c and not c.startswith("Unnamed:")]
    if "Submit" not in header:
        report.facts.append("no Submit column: submit_time and wait_s unknown")
    if not {"ElapsedRaw", "Elapsed"} & set(header):
        report.facts.append("no ElapsedRaw or Elapsed column: run times unknown (such a table "
                            "cannot train a runtime model)")
    rows = rows_from_records(header, df[header].to_numpy().tolist(), report)
    return rows, report
