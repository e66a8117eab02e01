"""A sacct export saved as CSV (a header of sacct field names, one comma-separated row per job
or step, e.g. Cambridge CSD3's JobIDRaw, JobName, Partition, ElapsedRaw, Account, State, ...).

The fields are parsed by the same code as ``sacct -P`` (:func:`.sacct_text.rows_from_records`
and :mod:`.slurm_fields`); only the splitting differs. A leading unnamed column (a pandas
index written with the table) is ignored.
"""

from __future__ import annotations

import re
from pathlib import Path

from hpcds1mpi.errors import IngestError

from .column_names import sacct_case, sacct_columns
from .csv_tables import read_csv_table
from .sacct_records import FREE_TEXT_COLUMNS
from .sacct_text import rows_from_records
from .schema import FileReport

#: Columns that make a CSV a sacct export (one of the two job-id columns and State).
SACCT_ID_COLUMNS = ("JobIDRaw", "JobID")


def is_sacct_header(columns) -> bool:
    """Whether CSV column names are sacct field names (a job id column and ``State``)."""
    cols = set(sacct_case(list(columns)))  # s46 tester I2: jobid,state,... too
    return bool(cols & set(SACCT_ID_COLUMNS)) and "State" in cols


def read_sacct_csv(path: str | Path) -> tuple[list[dict], FileReport]:
    """Read a sacct CSV export into one dict per job (:func:`.schema.job_row`)."""
    path = Path(path)
    dropped: list[str] = []
    cut_rows: list[list[str]] = []
    df, report = read_csv_table(path, "sacct-csv", ("State",),
                                mend_longer=lambda header, rows, rep: _mend_unquoted_commas(
                                    header, rows, rep, dropped), cut_rows=cut_rows,
                                columns=sacct_columns, free_text=FREE_TEXT_COLUMNS)
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
    id_at = list(df.columns).index("JobID" if "JobID" in df.columns else "JobIDRaw")
    cut_ids = [r[id_at].strip() for r in cut_rows]  # a cut step's job keeps no step values
    rows = rows_from_records(header, df[header].to_numpy().tolist(), report, cut_ids,
                             dropped_jobs=dropped)
    return rows, report


#: Columns whose sacct values are comma-separated lists (s31 tester R1).
LIST_COLUMNS = ("ReqTRES", "AllocTRES", "ReqGRES", "AllocGRES", "ReqTres", "TRESUsageInAve",
                "TRESUsageInMax", "TRESUsageInTot", "TRESUsageOutTot", "NodeList", "Constraints")


#: sacct fields whose values never hold a ',' (ids, names of one thing, states, times, counts,
#: sizes): a row longer than the header is mended only where every other column is one of
#: these. Not in it, as able to: free text, lists (TRES, node lists), ``Flags``
#: ("SchedMain,StartRecieved"), ``Partition`` (a job sent to several), a pending array's
#: ``JobID`` / ``ArrayTaskID`` (``7007_[1,3]``) — s37 reviewer R1.
COMMA_FREE_COLUMNS = frozenset((
    "JobIDRaw", "User", "UID", "Group", "GID", "Account", "State", "ExitCode",
    "DerivedExitCode", "Submit", "Start", "End", "Eligible", "Elapsed", "ElapsedRaw",
    "Timelimit", "TimelimitRaw", "NNodes", "NCPUS", "AllocCPUS", "AllocNodes", "NTasks",
    "ReqCPUS", "ReqMem", "MaxRSS", "AveRSS", "MaxVMSize", "AveVMSize", "CPUTime", "CPUTimeRAW",
    "TotalCPU", "UserCPU", "SystemCPU", "Suspended", "QOS", "Priority", "Restarts",
    "ConsumedEnergy", "ConsumedEnergyRaw", "Cluster", "ReqNodes", "Planned", "PlannedCPU",
    "PlannedCPURAW", "Reserved", "ResvCPU", "ResvCPURAW", "MaxDiskRead", "MaxDiskWrite",
    "AveDiskRead", "AveDiskWrite", "AveCPU", "MinCPU", "AvePages", "MaxPages", "NodeCount"))
#: A sacct State as it prints one ("COMPLETED", "CANCELLED by 1000").
_STATE = re.compile(r"[A-Z_]+( by \d+)?\+?")
#: A job id a mended row may have (no array range: a pending range may hold ',').
_PLAIN_ID = re.compile(r"\d+([_+]\d+)?(\.[\w+]+)?")


def _mend_unquoted_commas(header: list[str], longer: list[list[str]], report: FileReport,
                          dropped: list[str]) -> list[list[str] | None]:
    """Rows with more fields than the header: sacct quotes nothing, so ``sacct -P
    --delimiter=,`` (or ``tr '|' ,``) splits a value holding ',' — a job name, a TRES list,
    its Flags. Where every column but one is known to hold none
    (:data:`COMMA_FREE_COLUMNS`, besides the job id) the extra fields are joined back into
    that one, noted, and the row kept only where its job id and State then read as sacct
    writes them; otherwise which field is whose cannot be told: the row is dropped, its job
    named in a fact (its steps then counted as such), with the export that works (s31
    tester R1; s36 tester L7: a name "run,x=1"; s37 reviewer R1: Flags' ',' had been joined
    into JobName, every column after it shifted)."""
    name = lambda c: c.strip().lstrip("\ufeff")  # noqa: E731
    cols = [name(c) for c in header]
    id_at = cols.index("JobID" if "JobID" in cols else "JobIDRaw")
    can_hold = [i for i, c in enumerate(cols)
                if c and i != id_at and c not in COMMA_FREE_COLUMNS]
    out: list[list[str] | None] = [None] * len(longer)
    unread = list(range(len(longer)))
    if len(can_hold) == 1:
        at, state_at = can_hold[0], cols.index("State")
        unread = []
        for k, r in enumerate(longer):
            extra = len(r) - len(cols)
            row = r[:at] + [",".join(r[at:at + extra + 1])] + r[at + extra + 1:]
            if _PLAIN_ID.fullmatch(row[id_at].strip()) and \
                    _STATE.fullmatch(row[state_at].strip()):
                out[k] = row
            else:
                unread.append(k)
        if len(unread) < len(longer):
            report.notes[f"',' inside {cols[at]} (sacct does not quote it): joined back, the "
                         "only column that can hold one"] += len(longer) - len(unread)
    if not unread:
        return out
    longer = [longer[k] for k in unread]
    ids = [r[id_at].strip() for r in longer] if all(i > id_at for i in can_hold) else []
    dropped.extend(i.split(".", 1)[0] for i in ids)
    # The lists first (every row of a TRES column splits), then Flags and the like, then free
    # text (a name's ',' is rarer).
    def rank(i):
        return 0 if cols[i] in LIST_COLUMNS or "TRES" in cols[i] else \
            2 if cols[i] in FREE_TEXT_COLUMNS else 1
    held = ", ".join(cols[i] for i in sorted(can_hold, key=rank)[:4]) or "a value"
    report.dropped[f"more fields than the header: the ',' inside {held} (sacct quotes nothing; "
                   "which field is whose cannot be told); export with sacct -P, not "
                   "--delimiter=, or tr '|' ,"] += len(longer)
    if ids:
        report.facts.append(f"{len(ids)} row(s) with a ',' inside a value dropped: jobs "
                            f"{', '.join(ids[:5])}{' ...' if len(ids) > 5 else ''}")
    return out
