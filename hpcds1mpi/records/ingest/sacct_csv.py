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
    _say_unquoted_commas(header, report)
    rows = rows_from_records(header, df[header].to_numpy().tolist(), report)
    return rows, report


#: Columns whose sacct values are comma-separated lists (s31 tester R1).
LIST_COLUMNS = ("ReqTRES", "AllocTRES", "ReqGRES", "AllocGRES", "ReqTres", "TRESUsageInAve",
                "TRESUsageInMax", "TRESUsageInTot", "TRESUsageOutTot", "NodeList", "Constraints")


def _say_unquoted_commas(header: list[str], report: FileReport) -> None:
    """Reword the count of rows with more fields than the header where the header has list
    columns: sacct quotes nothing, so ``sacct -P --delimiter=,`` (or ``tr '|' ,``) splits
    every TRES list. Not mended: two list columns side by side (ReqTRES, AllocTRES; either may
    be empty) leave no way to tell where one list ends, so the rows are refused, with the
    export that works (s31 tester R1)."""
    longer = report.dropped.pop("more fields than the header", 0)
    if not longer:
        return
    lists = [c for c in header if c in LIST_COLUMNS or "TRES" in c]
    if not lists:
        report.dropped["more fields than the header"] = longer
        return
    report.dropped[f"more fields than the header: the ',' inside {', '.join(lists[:3])} (sacct "
                   "quotes nothing) splits them; export with sacct -P, not --delimiter=, or "
                   "tr '|' ,"] = longer
