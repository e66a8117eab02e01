"""The rows of a job table checked as a job log's are: a table read back from a file (ingest's,
or one edited by hand or written by another tool) and a DataFrame given to the Python API.

A log's reader drops a job whose times are out of order (sacct's "End before Start") and
keeps a job seen twice once (SWF's "duplicate job number"); a table had neither check: every
job written twice (two overlapping tables joined) was counted twice and halved the walltime,
and a frame whose ends came before their submissions moved it silently (s39 tester C7, C8).
Here both are dropped and counted under their reason, as a reader counts its rows.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from .same_jobs import SLURM_KINDS, _unknown_fields

if TYPE_CHECKING:
    import pandas as pd

#: What one job shows in every copy of a table's rows: a Slurm id is one job per cluster and
#: submission, another kind's per its log (SWF users are numbered per log, ingest writes
#: them ``LOG:N``); user and name agree in copies of one job (:mod:`.same_jobs`).
COPY_KEY = ("_kind", "cluster", "job_id", "submit_time", "user", "workload")
#: The reason a copy is counted under.
COPY = ("same job twice in the table (job id, cluster, submit time, user and name agree): "
        "kept once")


def checked_rows(table: "pd.DataFrame", dropped: Counter) -> "pd.DataFrame":
    """``table`` (a normalised job table) without rows whose times are out of order or that
    copy an earlier row's job; each counted in ``dropped`` under its reason.

    Of copies the one with the most fields known is kept (of equals, the first), as ingest
    keeps a job seen in several files; rows without a job id are no one's copies.
    """
    table = _in_time_order(table, dropped)
    if table.empty:
        return table
    kind = table["source_kind"].astype("string").fillna("")
    return _without_copies(table.assign(_kind=kind.where(~kind.isin(SLURM_KINDS), "slurm")),
                           COPY_KEY, dropped, COPY).drop(columns="_kind")


#: Kinds whose reader keeps a job id per job, so that a row again is a copy (the file joins
#: two overlapping exports); Eagle's array tasks share their array's id (:mod:`.eagle`).
ONE_ROW_PER_JOB = ("pm100", "adastra", "eurora")
#: What one job's copies in such a file agree on.
FILE_COPY_KEY = ("job_id", "submit_time", "start_time", "end_time")
#: The note a copy within such a file is counted under.
FILE_COPY = ("same job twice in the file (job id, submit, start and end agree: overlapping "
             "exports joined), kept once")


def _without_copies(table: "pd.DataFrame", key, counts: Counter,
                    reason: str) -> "pd.DataFrame":
    """``table`` without the rows whose ``key`` columns (those it has) repeat an earlier
    row's, counted in ``counts``: of copies the one with the most fields known is kept (of
    equals, the first), as ingest keeps a job seen in several files; rows without a job id
    are no one's copies."""
    keyed = table.assign(_unknown=_unknown_fields(table))
    keys = [c for c in key if c in keyed.columns]
    best = keyed.sort_values("_unknown", kind="stable")
    named = best["job_id"].astype("string").fillna("").ne("").to_numpy(dtype=bool)
    copies = best.index[best.duplicated(subset=keys).to_numpy(dtype=bool) & named]
    if not len(copies):
        return table
    counts[reason] += len(copies)
    return table.drop(index=copies).reset_index(drop=True)


#: (earlier, later, reason): a job's times that must come in this order.
TIME_ORDER = (("start_time", "end_time", "End before Start"),
              ("submit_time", "start_time", "Start before Submit"),
              ("submit_time", "end_time", "End before Submit"))


def _in_time_order(table: "pd.DataFrame", dropped: Counter) -> "pd.DataFrame":
    """``table`` without jobs that end before they start, or start or end before they were
    submitted: one of the times is wrong, and which one cannot be told (as sacct's reader
    drops them). A missing time is no disorder."""
    import numpy as np
    import pandas as pd

    bad = np.zeros(len(table), bool)
    for early, late, reason in TIME_ORDER:
        if early not in table.columns or late not in table.columns:
            continue
        wrong = (pd.to_datetime(table[late], errors="coerce")
                 < pd.to_datetime(table[early], errors="coerce")).to_numpy(dtype=bool) & ~bad
        if wrong.any():
            dropped[reason] += int(wrong.sum())
            bad |= wrong
    return table[~bad].reset_index(drop=True) if bad.any() else table


def checked_jobs(table: "pd.DataFrame", source: str, kind: str, report) -> "pd.DataFrame":
    """``table`` as a reader of ``kind`` read it from ``source``, checked as every job log's
    rows are: normalised to :data:`JOB_COLUMNS` (a job table keeping each job's own source),
    malformed values dropped (:data:`~hpcds1mpi.schemas.jobs.JOB_RANGES`), a job table's time
    order and copies checked (:func:`checked_rows`; a reader checks these in its log), run
    times checked against end - start (:mod:`.run_times`) and run times or time limits in
    another unit refused; what is dropped counted in ``report``, ``report.jobs`` set.

    Raises:
        IngestError: the run times or time limits are not in the unit the reader takes.
    """
    from hpcds1mpi.schemas.jobs import drop_malformed

    from .run_times import check_run_times
    from .schema import normalise
    from .time_limits import check_time_limits

    table = drop_malformed(normalise(table, source, kind, report.dropped,
                                     keep_source=kind == "job-table"), report.dropped)
    if kind == "job-table":  # written by hand or joined (s39 tester C7)
        table = checked_rows(table, report.dropped)
    elif kind in ONE_ROW_PER_JOB:  # s48 tester P3: two monthly tables joined, overlapping
        table = _without_copies(table, FILE_COPY_KEY, report.notes, FILE_COPY)
    # Before the limits: run times in milliseconds would read as limits in another unit.
    table = check_run_times(table, source, kind, report)
    table = check_time_limits(table, source, kind, report)
    report.jobs = len(table)
    return table


def dropped_reasons(report) -> str:
    """The three commonest reasons ``report`` dropped rows for, with their counts."""
    return "; ".join(f"{n} x {r}" for r, n in report.dropped.most_common(3))


def refuse_nameless(table: "pd.DataFrame", who: str) -> None:
    """Refuse ``table`` as a history where no job names its user (whose history would it be?).

    Raises:
        DataError: one line, ``who`` first.
    """
    from hpcds1mpi.errors import DataError

    users = table["user"] if "user" in table.columns else None
    if users is None or not users.astype("string").fillna("").ne("").any():
        raise DataError(f"{who}: no job in it names its user, so no job is anyone's history; "
                        "give a log that names users")


def frame_history(frame, what: str = "history"):
    """A job table given as a DataFrame (the Python API's ``history``), checked as the same
    table read from a file is (:func:`.job_logs.read_job_log` of a job table): columns and
    types, ranges, time order, copies, time limits.

    Returns:
        (DataFrame with :data:`JOB_COLUMNS`, FileReport counting what was dropped)

    Raises:
        DataError: the frame lacks ``user`` or ``runtime_s``, cannot be read as a job table,
            names no user, or has no job left.
    """
    import pandas as pd

    from hpcds1mpi.errors import DataError, HpcdsError

    from .schema import FileReport

    if not isinstance(frame, pd.DataFrame):
        raise DataError(f"{what}: a job table is a pandas DataFrame, got {type(frame).__name__}")
    missing = [c for c in ("user", "runtime_s") if c not in frame.columns]
    if missing:
        raise DataError(f"the {what} job table lacks {', '.join(missing)}: give an ingested "
                        "job table (hpcds1mpi ingest, or records.ingest.read_job_log)")
    source = f"{what} DataFrame"
    report = FileReport(source, "job-table", records=len(frame))
    try:
        table = checked_jobs(frame.reset_index(drop=True), source, "job-table", report)
    except HpcdsError:
        raise
    except Exception as exc:  # a column pandas cannot convert (lists, objects): one line
        why = str(exc).splitlines()[0][:160] if str(exc) else type(exc).__name__
        raise DataError(f"{what}: cannot be read as a job table ({why}); give one from "
                        "hpcds1mpi ingest or records.ingest.read_job_log") from None
    if len(table):
        refuse_nameless(table, what)
    if not len(table) and len(frame):
        raise DataError(f"{what}: no job of the {len(frame)} rows could be used "
                        f"({dropped_reasons(report)})")
    return table, report
