"""The job table: its columns, the one constructor of a scheduler job's row, the per-file report.

Every reader (``sacct -P``, ``sacct --json``, PM100 / Adastra parquet) ends in the columns of
:data:`JOB_COLUMNS` through :func:`normalise`; the two Slurm readers build each row with
:func:`job_row` from the fields they parsed, so the formats cannot drift apart in what they
derive (ranks per node, device, error text, average power, energy source).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

KINDS = ("sacct-p", "sacct-json", "sacct-csv", "pm100", "adastra", "swf", "eagle", "eurora",
         "job-table")

#: Columns whose presence marks a file as a job table ``ingest`` wrote (kind ``job-table``).
TABLE_MARK = ("job_id", "runtime_s", "source_kind")

# (column, pandas dtype) of the job table, in order. What is known at submission: ``user``,
# ``account`` (Slurm account / SWF group id), ``workload`` (job name / SWF executable id),
# ``partition`` (partition, else queue), ``queue`` (queue / QOS, when a log has both),
# ``req_nodes`` / ``req_procs`` / ``req_gpus``, ``time_limit_s`` (requested time), ``mem_req_gb``,
# ``submit_time``; ``wait_s`` is start minus submit. A ``status`` of NA is a job whose end is
# not known (SWF status -1, a partial-execution record): ``state_raw`` says which. ``cluster``
# is the Slurm cluster an export names (``sacct --json``, ``Cluster`` in ``--format``), else
# NA: a job is (cluster, id) across files (:mod:`.cluster_ids`). ``raw_id`` is Slurm's own
# number of the job (JobIDRaw, --json's job_id: ``127`` of array task ``123_4``; a
# heterogeneous job's components' numbers, comma-separated, leader first), NA where the export
# has none: a job is one key across files whichever id each export wrote (:mod:`.same_jobs`).
JOB_COLUMNS: list[tuple[str, str]] = [
    ("job_id", "string"),
    ("cluster", "string"),
    ("raw_id", "string"),
    ("workload", "string"),
    ("user", "string"),
    ("account", "string"),
    ("partition", "string"),
    ("queue", "string"),
    ("nodes", "Int64"),
    ("ranks", "Int64"),
    ("ranks_per_node", "Int64"),
    ("threads", "Int64"),
    ("cores", "Int64"),
    ("gpus", "Int64"),
    ("req_nodes", "Int64"),
    ("req_procs", "Int64"),
    ("req_gpus", "Int64"),
    ("device", "string"),
    ("status", "string"),
    ("state_raw", "string"),
    ("exit_code", "Int64"),
    ("exit_signal", "Int64"),
    ("error", "string"),
    ("runtime_s", "float64"),
    ("cpu_s", "float64"),
    ("peak_rss_mb", "float64"),
    ("energy_j", "float64"),
    ("avg_power_w", "float64"),
    ("energy_source", "string"),
    ("submit_time", "datetime64[ns]"),
    ("start_time", "datetime64[ns]"),
    ("end_time", "datetime64[ns]"),
    ("wait_s", "float64"),
    ("time_limit_s", "float64"),
    ("mem_req_gb", "float64"),
    ("source_file", "string"),
    ("source_kind", "string"),
]

def bytes_to_mib(count):
    """Bytes -> ``peak_rss_mb``'s unit, MiB (2**20 bytes): the telemetry's ``peak_rss_mb``
    counts MiB and recommend compares the learned need with MiB, so a job log's MaxRSS is
    read so too (s40 review: the readers divided by 1e6, 4.9 % apart). ``count``: a number,
    numpy array or pandas Series."""
    return count / 2**20


#: ``energy_source`` of energies Slurm's energy plugin measured.
ENERGY_SLURM = "slurm"
#: ``energy_source`` of energies from a job log's power samples (PM100, Adastra).
ENERGY_POWER_LOG = "job-log power samples"


@dataclass
class FileReport:
    """What one file gave: its kind, jobs read, rows dropped per reason, notes on rows (counted)
    and facts about the whole file (how it was read: a unit assumed, a time zone)."""

    path: str
    kind: str
    records: int = 0
    jobs: int = 0
    dropped: Counter = field(default_factory=Counter)
    notes: Counter = field(default_factory=Counter)
    facts: list[str] = field(default_factory=list)
    #: Slurm job lines not ended (running, pending, requeued), as :func:`.requeue_attempts.
    #: unended_attempt` gives them: across files such an attempt may be a job's newest.
    unended: list[dict] = field(default_factory=list)
    #: Per job id, seconds from a requeued job's ``submit_time`` (moved back to its first
    #: submission) to its kept attempt's own Submit: across files attempts are ordered by
    #: their own times (s44 tester O5).
    attempt_submit_s: dict[str, float] = field(default_factory=dict)

    def lines(self) -> list[str]:
        """Human-readable summary: one line, then one line per reason."""
        n_drop = sum(self.dropped.values())
        out = [f"{self.path}: {self.kind}, {self.records} records -> {self.jobs} jobs, "
               f"{n_drop} malformed/skipped"]
        out += [f"  dropped {n} x {reason}" for reason, n in sorted(self.dropped.items())]
        out += [f"  note: {n} x {reason}" for reason, n in sorted(self.notes.items())]
        out += [f"  note: {fact}" for fact in self.facts]
        return out



def _ceil_div(a: int | None, b: int | None) -> int | None:
    if a is None or not b:
        return None
    return -(-a // b)


def error_text(status: str, state: str, exit_code, exit_signal) -> str:
    """The ``error`` of a job: "" when ok, else its state with exit code and signal."""
    if status == "ok":
        return ""
    code = f" exit {exit_code}" if exit_code else ""
    sig = f" signal {exit_signal}" if exit_signal else ""
    return f"{state}{code}{sig}".strip()


def job_row(*, job_id, workload, user, partition, nodes, ranks, threads, cores, gpus,
            status, state, exit_code, exit_signal, runtime_s, cpu_s, peak_rss_mb,
            energy_j, submit_time, start_time, end_time, time_limit_s, mem_req_gb,
            account=None, queue=None, req_nodes=None, req_procs=None, req_gpus=None,
            cluster=None, raw_id=None) -> dict:
    """One job-table row from what ``sacct -P`` or ``sacct --json`` gave; the derived fields
    (ranks per node, device, error text, average power, energy source, wait) are computed
    here."""
    row = {
        "job_id": job_id,
        "cluster": cluster or None,
        "raw_id": raw_id or None,
        "workload": workload,
        "user": user,
        "account": account,
        "partition": partition,
        "queue": queue,
        "req_nodes": req_nodes,
        "req_procs": req_procs,
        "req_gpus": req_gpus,
        "nodes": nodes,
        "ranks": ranks,
        "ranks_per_node": _ceil_div(int(ranks) if ranks else None, nodes),
        "threads": threads,
        "cores": cores,
        "gpus": gpus,
        "device": None if gpus is None else "gpu" if gpus else "cpu",
        "status": status,
        "state_raw": state,
        "exit_code": exit_code,
        "exit_signal": exit_signal,
        "error": error_text(status, state, exit_code, exit_signal),
        "runtime_s": runtime_s,
        "cpu_s": cpu_s,
        "peak_rss_mb": peak_rss_mb,
        "energy_j": energy_j,
        "avg_power_w": energy_j / runtime_s if energy_j and runtime_s else None,
        "energy_source": ENERGY_SLURM if energy_j else "",
        "submit_time": submit_time,
        "start_time": start_time,
        "end_time": end_time,
        "wait_s": (start_time - submit_time).total_seconds()
        if start_time is not None and submit_time is not None else None,
        "time_limit_s": time_limit_s,
        "mem_req_gb": mem_req_gb,
    }
    return {c: row[c] for c, _ in JOB_COLUMNS if c in row}


def build_rows(entries, build, report: FileReport, errors: tuple[type[Exception], ...],
               reason) -> list[dict]:
    """One job row per entry of a file; sets ``report.jobs``.

    Args:
        entries: the file's jobs, as the reader split them.
        build: entry -> row (:func:`job_row`), or None for a job it skipped (and counted).
        report: the file's report; an entry ``build`` raises ``errors`` on is counted in
            ``report.dropped`` under ``reason(exc)``.
        errors: the exceptions that mean "this entry is malformed".
        reason: exception -> the reason it is counted under.
    """
    out = []
    for entry in entries:
        try:
            row = build(entry)
        except errors as exc:
            report.dropped[reason(exc)] += 1
            continue
        if row is not None:
            out.append(row)
    report.jobs = len(out)
    return out


def rows_frame(rows: list[dict]):
    """A reader's rows (from :func:`job_row`) as a DataFrame, before :func:`normalise`."""
    import pandas as pd

    return pd.DataFrame(rows, columns=[c for c, _ in JOB_COLUMNS if c not in
                                       ("source_file", "source_kind")])


#: Largest magnitude an integer column keeps (2^62: exact in float64, inside int64).
INT_LIMIT = float(2**62)


def normalise(df, path: str, kind: str, dropped: Counter | None = None, *,
              keep_source: bool = False):
    """Give a reader's frame the exact columns and dtypes of :data:`JOB_COLUMNS`.

    Args:
        df: the reader's frame.
        path, kind: the ``source_file`` and ``source_kind`` of every row.
        dropped: where a row with a time outside the years a job can have
            (:data:`.times.FIRST_YEAR`..:data:`.times.LAST_YEAR`: a year-1 or 2999 placeholder,
            which nanosecond times cannot even hold) or a fraction in a count (1.5 nodes: not
            rounded, which would make up a count) is counted, under its column, once; the row
            is dropped either way.
        keep_source: keep the rows' own ``source_file`` / ``source_kind`` where they have them
            (a job table ``ingest`` wrote, read back: each job keeps the log it came from).
    """
    import pandas as pd

    from .times import FIRST_YEAR, LAST_YEAR, outside_years

    df = df.copy()
    if "wait_s" not in df.columns and {"submit_time", "start_time"} <= set(df.columns):
        # One rule for every reader that has both times (PM100, Eagle, Eurora): start - submit.
        # Of times within the years only: a far one (epoch ms read as s: year 54055) is
        # dropped below, and start - submit overflowed nanoseconds first (s48 tester P1).
        start, submit = (values.where(~outside_years(values)) for values in (
            pd.to_datetime(df[c], errors="coerce", utc=True).dt.tz_convert(None)
            for c in ("start_time", "submit_time")))
        df["wait_s"] = (start - submit).dt.total_seconds()
    for name, value in (("source_file", str(path)), ("source_kind", kind)):
        if keep_source and name in df.columns:
            df[name] = df[name].astype("string").fillna(value).replace("", value)
        else:
            df[name] = value
    outside = pd.Series(False, index=df.index)  # rows dropped, each counted once

    def drop(mask, reason: str) -> None:
        nonlocal outside
        mask = mask & ~outside
        if mask.any() and dropped is not None:
            dropped[reason] += int(mask.sum())
        outside |= mask

    for name, dtype in JOB_COLUMNS:
        if name not in df.columns:
            # Created empty in its dtype: converting 300k pd.NA objects costs ~0.3 s a column.
            df[name] = pd.Series(index=df.index, dtype=dtype)
            continue
        if dtype == "Int64":
            # A count beyond 64 bits (1e300, inf) stays absurdly large instead of failing the
            # cast, so the range check drops its job and counts it (schemas/jobs.JOB_RANGES).
            number = pd.to_numeric(df[name], errors="coerce")
            part = number.astype("float64") % 1  # NaN for NaN and inf
            drop(part.notna() & (part != 0), f"a fraction in {name} (a count is whole)")
            df[name] = number.clip(-INT_LIMIT, INT_LIMIT).round().astype("Int64")
        elif dtype == "float64":
            df[name] = pd.to_numeric(df[name], errors="coerce").astype("float64")
        elif dtype.startswith("datetime64"):
            values = pd.to_datetime(df[name], errors="coerce")
            if getattr(values.dt, "tz", None) is not None:
                values = values.dt.tz_convert(None)
            far = outside_years(values)
            drop(far, f"{name} outside {FIRST_YEAR}-{LAST_YEAR} (a placeholder or corrupt "
                      "date)")
            df[name] = values.where(~far).astype("datetime64[ns]")
        else:
            df[name] = df[name].astype("string")
    return df.loc[~outside, [c for c, _ in JOB_COLUMNS]].reset_index(drop=True)
