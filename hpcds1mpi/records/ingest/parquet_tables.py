"""PM100 (both column-name generations) and Adastra (PM100-compatible names, one average power
per job) parquet job tables, read column-wise."""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING

from hpcds1mpi.errors import IngestError
from hpcds1mpi.records.table_files import read_file

from .schema import ENERGY_POWER_LOG, TABLE_MARK, FileReport
from .slurm_fields import NOT_FINISHED, SLURM_STATUS

if TYPE_CHECKING:
    import pandas as pd


def parquet_columns(path: Path) -> list[str]:
    """The column names of a parquet file (IngestError when it is not one)."""
    import pyarrow.parquet as pq

    try:
        return list(pq.read_schema(path).names)
    except Exception as exc:  # pyarrow raises several types for a broken file
        raise IngestError(f"{path}: unreadable parquet file ({exc})") from None


#: Columns only PM100 tables have (Adastra's have none of them).
PM100_ONLY = {"num_cores_alloc", "num_cpus_alloc", "cpus_alloc", "num_gpus_alloc", "num_tasks",
              "cores_per_task", "num_cores_req", "num_cpus_req"}


def saved_as_csv(path: str | Path) -> str | None:
    """The one line for a PM100 or Adastra table saved as CSV (their columns in its header):
    ingest reads those as parquet, so the conversion is named (s48 tester P13: "not a job log
    of a known kind", and --kind job-table wrote its jobs without states); else None."""
    from .csv_tables import csv_header
    from .wrong_exports import first_text

    names = set(csv_header(first_text(path)))
    if not ({"job_id", "run_time", "job_state"} <= names
            and names & (PM100_ONLY | {"num_nodes_alloc"})):
        return None
    parquet = Path(path).with_suffix(".parquet")
    return (f"{path}: a PM100/Adastra job table saved as CSV; ingest reads these as parquet: "
            f"convert it (python -c \"import pandas as pd; pd.read_csv({str(path)!r})"
            f".to_parquet({str(parquet)!r})\") and ingest {parquet}")


def parquet_kind(path: Path, cols: list[str], asked: str | None = None) -> str:
    """``pm100`` or ``adastra`` from a parquet file's columns: PM100's core, GPU or task
    columns, else its power samples (a list per job) or Adastra's one average; with none of
    them the kind ``asked`` (``--kind``), else PM100 (:data:`UNTOLD` says so).

    Raises:
        IngestError: neither kind.
    """
    names = set(cols)
    if {"num_nodes_alloc", "run_time"} <= names or names & PM100_ONLY:
        told = _told_apart(path, names)
        # s48 tester P5: the Marconi100 subset without num_gpus_alloc was stored as Adastra.
        return told or (asked if asked in ("pm100", "adastra") else "pm100")
    if set(TABLE_MARK) <= names:
        raise IngestError(f"{path}: a job table hpcds1mpi ingest wrote, not a PM100/Adastra "
                          "table; give it with --kind auto (or job-table)")
    raise IngestError(f"{path}: parquet without PM100/Adastra job columns "
                      f"(need num_nodes_alloc and run_time; has {', '.join(cols[:8])}...)")


#: The fact on a table whose columns tell neither kind.
UNTOLD = ("no GPU, core, task or power column tells PM100 from Adastra: read as {kind} "
          "(else give --kind {other})")


def _told_apart(path: Path, names: set[str]) -> str | None:
    """``pm100`` for PM100's own columns or power samples (a list per job), ``adastra`` for
    one average power per job; None where no column tells."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if names & PM100_ONLY:
        return "pm100"
    column = next((n for n in _PM100_COLUMNS["power"] if n in names), None)
    if column is None:
        return None
    kind = pq.read_schema(path).field(column).type
    return "pm100" if pa.types.is_list(kind) or pa.types.is_large_list(kind) else "adastra"


# Our column <- candidate source columns, newest generation first.
_PM100_COLUMNS = {
    "job_id": ["job_id"],
    "workload": ["job_name", "name"],
    "user": ["user_id", "user"],
    "account": ["account"],
    "partition": ["partition"],
    "queue": ["qos"],
    "req_nodes": ["num_nodes_req"],
    "req_procs": ["num_cores_req", "num_cpus_req", "cpus_req"],
    "req_gpus": ["num_gpus_req"],
    "nodes": ["num_nodes_alloc", "num_nodes_req", "num_nodes"],
    "ranks": ["num_tasks"],
    "threads": ["cores_per_task", "cpus_per_task"],
    "cores": ["num_cores_alloc", "num_cpus_alloc", "cpus_alloc", "num_cores_req",
              "num_cpus_req", "cpus_req"],
    "gpus": ["num_gpus_alloc", "num_gpus_req", "gpus_alloc"],
    "runtime_s": ["run_time"],
    "state_raw": ["job_state", "state"],
    "submit_time": ["submit_time"],
    "start_time": ["start_time"],
    "end_time": ["end_time"],
    "time_limit_min": ["time_limit"],
    "mem_req_mb": ["mem_req"],
    "power": ["node_power_consumption", "power_consumption"],
}


def _pick(df, names: list[str]):
    for n in names:
        if n in df.columns:
            return df[n]
    return None


#: Columns a job cannot be read without: each row would be "missing run_time" (s48 P10).
_NEEDED = ("runtime_s", "nodes")
#: Columns said by name when missing and a near miss is there (a rename: "user_name").
_SAID = ("user", "submit_time", "start_time", "end_time", "time_limit_min", "workload",
         "gpus")


def _needed_columns(path: Path, kind: str, cols: list[str], facts: list[str]) -> None:
    """Refuse a table without a column of :data:`_NEEDED`, naming it and its near miss (a
    renamed column read as every row's value missing, s48 tester P10); a column of
    :data:`_SAID` missing where a near miss is there is said in ``facts``.

    Raises:
        IngestError: a needed column missing.
    """
    from .column_names import near_misses

    known = [n for names in _PM100_COLUMNS.values() for n in names]
    missing = [_PM100_COLUMNS[ours][0] for ours in _NEEDED
               if not set(_PM100_COLUMNS[ours]) & set(cols)]
    if missing:
        has = near_misses(missing, cols, known) or f" (has {', '.join(cols[:10])})"
        raise IngestError(f"{path}: a {kind} table needs the column(s) {', '.join(missing)}"
                          f"{has}; rename it back, or save the table with it")
    for ours in _SAID:
        if not set(_PM100_COLUMNS[ours]) & set(cols):
            near = near_misses([_PM100_COLUMNS[ours][0]], cols, known)
            if near:
                facts.append(f"no {_PM100_COLUMNS[ours][0]} column{near}: not read; rename "
                             "it back to read it")


def _mean_power(value) -> float:
    """A power list (W samples) -> its mean; a scalar (already an average) -> itself."""
    import numpy as np

    if value is None:
        return math.nan
    if isinstance(value, (list, tuple)) or hasattr(value, "__len__") and not isinstance(value, str):
        arr = np.asarray(value, dtype=float)
        arr = arr[np.isfinite(arr)]
        return float(arr.mean()) if arr.size else math.nan
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


def read_job_parquet(path: str | Path, kind: str) -> tuple["pd.DataFrame", FileReport]:
    """Read a PM100 (both generations) or Adastra parquet job table."""
    import numpy as np
    import pandas as pd

    path = Path(path)
    report = FileReport(str(path), kind)
    cols = parquet_columns(path)
    found = parquet_kind(path, cols, kind)
    if found != kind:
        raise IngestError(f"{path}: looks like a {found} table, not {kind} (check --kind)")
    if _told_apart(path, set(cols)) is None:
        other = "adastra" if kind == "pm100" else "pm100"
        report.facts.append(UNTOLD.format(kind=kind, other=other))
    src = read_file(pd.read_parquet, path)  # a "~" folder's file, as parquet_columns read it
    report.records = len(src)
    n = len(src)
    if _pick(src, _PM100_COLUMNS["state_raw"]) is None:
        # Without it no job can be told finished, or how it ended.
        raise IngestError(f"{path}: a {kind} table needs the column job_state (or state) "
                          f"(has {', '.join(cols[:10])}{' ...' if len(cols) > 10 else ''})")

    _needed_columns(path, kind, cols, report.facts)

    def col(name, default=None):
        s = _pick(src, _PM100_COLUMNS[name])
        return s if s is not None else pd.Series([default] * n, index=src.index)

    out = pd.DataFrame(index=src.index)
    out["job_id"] = col("job_id").astype("string")
    out["workload"] = col("workload", "").fillna("").astype("string")
    out["user"] = col("user", "").astype("string").fillna("")
    out["partition"] = col("partition", "").astype("string").fillna("")
    for name in ("account", "queue"):
        out[name] = col(name).astype("string")
    for name in ("nodes", "ranks", "threads", "cores", "gpus", "req_nodes", "req_procs",
                 "req_gpus"):
        out[name] = pd.to_numeric(col(name), errors="coerce")
    out["runtime_s"] = pd.to_numeric(col("runtime_s"), errors="coerce")
    states = col("state_raw", "").astype("string").fillna("").str.strip()
    out["state_raw"] = states
    if n and not states.ne("").any():
        raise IngestError(f"{path}: no job has a value in the {kind} table's job_state column, "
                          "so none can be told finished or how it ended; give a copy with the "
                          "states")
    for name in ("submit_time", "start_time", "end_time"):
        out[name] = _to_datetime(col(name), name, report.facts)
    out["time_limit_s"] = pd.to_numeric(col("time_limit_min"), errors="coerce") * 60
    out["mem_req_gb"] = pd.to_numeric(col("mem_req_mb"), errors="coerce") / 1000

    power = col("power")
    avg_power = np.array([_mean_power(v) for v in power], dtype=float)
    out["avg_power_w"] = avg_power
    out["energy_j"] = avg_power * out["runtime_s"].to_numpy(dtype=float)
    has_energy = np.isfinite(out["energy_j"].to_numpy(dtype=float))
    out["energy_source"] = np.where(has_energy, ENERGY_POWER_LOG, "")

    # The first word ("CANCELLED by 123" -> CANCELLED); extract keeps the string dtype where
    # every state is empty (split()[0] gave floats, and .str failed).
    base = states.str.extract(r"^(\S+)", expand=False).str.upper().fillna("")
    out["status"] = base.map(SLURM_STATUS)

    # Rows that cannot be a finished job are counted per reason, then dropped.
    checks = [
        (out["job_id"].isna() | (out["job_id"] == ""), "missing job_id"),
        (base.isin(NOT_FINISHED), "not finished (pending/running)"),
        (out["status"].isna() & ~base.isin(NOT_FINISHED), "unknown or missing job_state"),
        (out["runtime_s"].isna() | (out["runtime_s"] < 0), "missing or negative run_time"),
        (out["nodes"].isna() | (out["nodes"] < 1), "missing or non-positive node count"),
    ]
    bad = pd.Series(False, index=out.index)
    for mask, reason in checks:
        mask = mask.fillna(True) & ~bad
        if mask.any():
            report.dropped[reason] += int(mask.sum())
        bad |= mask
    out = out[~bad].copy()
    if (~has_energy[~bad.to_numpy()]).any():
        report.notes["no power samples (energy missing)"] += int((~has_energy[~bad.to_numpy()]).sum())

    out["ranks_per_node"] = np.ceil(out["ranks"] / out["nodes"])
    # Unknown where the GPU count is (as schema.job_row): not a CPU job by default.
    out["device"] = pd.Series(np.where(out["gpus"].fillna(0) > 0, "gpu", "cpu"),
                              index=out.index, dtype="string").where(out["gpus"].notna())
    if _pick(src, _PM100_COLUMNS["gpus"]) is None:
        report.facts.append("no num_gpus_alloc column: gpus and device unknown")
    out["exit_code"] = pd.NA
    out["exit_signal"] = pd.NA
    out["cpu_s"] = np.nan
    out["peak_rss_mb"] = np.nan
    out["error"] = np.where(out["status"] == "ok", "", out["state_raw"])
    report.jobs = len(out)
    return out, report


#: Epoch units by a column's typical magnitude: below 1e11 seconds (the year 5138), 1e14
#: milliseconds, 1e17 microseconds, else nanoseconds. A job log's times fall in 1970-2261
#: (:data:`.times.FIRST_YEAR`), where the units lie 1000x apart (1.6e9 s is 1.6e12 ms).
EPOCH_UNITS = ((1e11, "s", "seconds"), (1e14, "ms", "milliseconds"),
               (1e17, "us", "microseconds"), (float("inf"), "ns", "nanoseconds"))


def _to_datetime(series, name: str = "", facts: list | None = None):
    """A time column -> naive UTC datetimes; numbers are epoch times in the unit their
    median's magnitude says (s48 tester P1: ``.astype('int64')`` of PM100's own times gives
    milliseconds, read as seconds: year 54055 and a traceback), said in ``facts`` where not
    seconds. A value far from the others' unit falls outside the years and is counted so."""
    import pandas as pd

    if series is None or series.isna().all():
        return pd.Series(pd.NaT, index=series.index if series is not None else None)
    if pd.api.types.is_numeric_dtype(series):
        typical = float(series.abs().median())
        unit, word = next((u, w) for bound, u, w in EPOCH_UNITS if typical < bound)
        if unit != "s" and facts is not None:
            facts.append(f"{name} read as epoch {word} (the size of its values)")
        return pd.to_datetime(series, unit=unit, errors="coerce")
    out = pd.to_datetime(series, errors="coerce", utc=True)
    return out.dt.tz_convert(None)

