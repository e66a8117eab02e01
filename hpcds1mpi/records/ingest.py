"""Job-log ingestion: Slurm ``sacct`` output and PM100 / Adastra parquet tables -> one job table.

Readers, one per kind, each return one row per job with the columns of :data:`JOB_COLUMNS`.
Names follow the runs table (docs/architecture.md) where the meaning is the same: ``workload``
(job name), ``nodes``, ``ranks`` (tasks), ``ranks_per_node``, ``threads`` (CPUs per task),
``gpus``, ``runtime_s``, ``status``, ``energy_j``, ``avg_power_w``, ``energy_source``,
``partition``, ``peak_rss_mb``, ``cpu_s``; job-log columns come on top (``job_id``, ``user``,
times, ``time_limit_s``, ``exit_code``, ``mem_req_gb``, ``source_file``, ``source_kind``).

Kinds:
    ``sacct-p``: ``sacct -P`` / ``-p`` output with a header, any column subset, including the
        109-column ``--format=ALL`` whose ``SubmitLine`` values may hold newlines.
    ``sacct-json``: ``sacct --json``, the 22.05 layout (``openapi/dbv0.0.38``) and the newer
        ones (``data_parser/v0.0.39+``, where numbers are ``{"set", "infinite", "number"}``).
    ``pm100``: PM100 parquet, both column-name generations.
    ``adastra``: Adastra parquet (PM100-compatible names, one average power per job).

A row that cannot be read is never dropped silently: it is counted under a reason in the
file's :class:`FileReport`. A file of the wrong kind raises :class:`IngestError`.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from hpcds1mpi.errors import IngestError

KINDS = ("sacct-p", "sacct-json", "pm100", "adastra")

# (column, pandas dtype) of the job table, in order.
JOB_COLUMNS: list[tuple[str, str]] = [
    ("job_id", "string"),
    ("workload", "string"),
    ("user", "string"),
    ("partition", "string"),
    ("nodes", "Int64"),
    ("ranks", "Int64"),
    ("ranks_per_node", "Int64"),
    ("threads", "Int64"),
    ("cores", "Int64"),
    ("gpus", "Int64"),
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
    ("time_limit_s", "float64"),
    ("mem_req_gb", "float64"),
    ("source_file", "string"),
    ("source_kind", "string"),
]

# Slurm job states (also PM100's job_state) -> our status. Anything still queued or running is
# not a finished job: it is counted under "not finished" instead.
_STATUS = {
    "COMPLETED": "ok",
    "FAILED": "failed",
    "NODE_FAIL": "failed",
    "BOOT_FAIL": "failed",
    "TIMEOUT": "timeout",
    "DEADLINE": "timeout",
    "OUT_OF_MEMORY": "oom",
    "CANCELLED": "cancelled",
    "PREEMPTED": "cancelled",
    "REVOKED": "cancelled",
}
_NOT_FINISHED = {"PENDING", "RUNNING", "SUSPENDED", "REQUEUED", "RESIZING", "REQUEUE_HOLD",
                 "REQUEUE_FED", "CONFIGURING", "COMPLETING", "STOPPED", "SIGNALING",
                 "STAGE_OUT", "SPECIAL_EXIT"}

_MEM_UNITS = {"": 1024**2, "K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4, "P": 1024**5}

_ENERGY_SLURM = "slurm"
_ENERGY_POWER_LOG = "job-log power samples"


@dataclass
class FileReport:
    """What one file gave: its kind, jobs read, and rows dropped per reason."""

    path: str
    kind: str
    records: int = 0
    jobs: int = 0
    dropped: Counter = field(default_factory=Counter)
    notes: Counter = field(default_factory=Counter)

    def lines(self) -> list[str]:
        """Human-readable summary: one line, then one line per reason."""
        n_drop = sum(self.dropped.values())
        out = [f"{self.path}: {self.kind}, {self.records} records -> {self.jobs} jobs, "
               f"{n_drop} malformed/skipped"]
        out += [f"  dropped {n} x {reason}" for reason, n in sorted(self.dropped.items())]
        out += [f"  note: {n} x {reason}" for reason, n in sorted(self.notes.items())]
        return out


# --------------------------------------------------------------------------------------------
# Small parsers (all return None for missing values, raise ValueError for malformed ones)


def parse_duration(text: str | None) -> float | None:
    """Slurm ``[D-][HH:]MM:SS[.fff]`` -> seconds. Empty/UNLIMITED/Partition_Limit -> None."""
    if text is None:
        return None
    text = text.strip()
    if not text or text in ("UNLIMITED", "Partition_Limit", "INVALID", "NONE"):
        return None
    days = 0
    if "-" in text:
        d, text = text.split("-", 1)
        days = int(d)
    parts = text.split(":")
    if not 1 <= len(parts) <= 3 or any(p == "" for p in parts):
        raise ValueError(f"bad duration {text!r}")
    seconds = 0.0
    for p in parts:
        seconds = seconds * 60 + float(p)
    return days * 86400 + seconds


def parse_memory_bytes(text: str | None) -> float | None:
    """Slurm memory ``76628K`` / ``4.50M`` / ``4000Mn`` / ``2G`` -> bytes (K = 1024)."""
    if text is None or not text.strip():
        return None
    m = re.fullmatch(r"([0-9.]+)([KMGTP]?)([nc]?)", text.strip())
    if not m:
        raise ValueError(f"bad memory {text!r}")
    return float(m.group(1)) * _MEM_UNITS[m.group(2)]


def parse_tres(text: str | None) -> dict[str, float]:
    """``billing=2,cpu=2,mem=8000M,node=2,gres/gpu=4`` -> {key: number} (mem in MB)."""
    out: dict[str, float] = {}
    if not text:
        return out
    for item in text.split(","):
        if "=" not in item:
            continue
        key, value = item.split("=", 1)
        if key == "mem":
            b = parse_memory_bytes(value)
            out[key] = (b or 0.0) / 1024**2
        else:
            try:
                out[key] = float(value)
            except ValueError:
                continue
    return out


def gpus_from_tres(tres: dict[str, float]) -> int:
    """GPUs in a TRES dict: the untyped ``gres/gpu`` count, else the sum of typed ones."""
    if "gres/gpu" in tres:
        return int(tres["gres/gpu"])
    return int(sum(v for k, v in tres.items() if k.startswith("gres/gpu:")))


def parse_exit(text: str | None) -> tuple[int | None, int | None]:
    """``N:S`` -> (return code N, signal S)."""
    if text is None or not text.strip():
        return None, None
    m = re.fullmatch(r"(\d+):(\d+)", text.strip())
    if not m:
        raise ValueError(f"bad exit code {text!r}")
    return int(m.group(1)), int(m.group(2))


def _status(state: str) -> str | None:
    """Slurm state (``CANCELLED by 0`` included) -> our status; None if not finished."""
    base = state.split()[0].upper() if state.strip() else ""
    if base in _STATUS:
        return _STATUS[base]
    if base in _NOT_FINISHED:
        return None
    raise ValueError(f"unknown job state {state!r}")


def _int_or_none(text) -> int | None:
    if text is None:
        return None
    if isinstance(text, str):
        text = text.strip()
        if not text:
            return None
    try:
        return int(float(text))
    except (TypeError, ValueError):
        raise ValueError(f"bad number {text!r}") from None


def _ceil_div(a: int | None, b: int | None) -> int | None:
    if a is None or not b:
        return None
    return -(-a // b)


def _error_text(status: str, state: str, exit_code, exit_signal) -> str:
    if status == "ok":
        return ""
    code = f" exit {exit_code}" if exit_code else ""
    sig = f" signal {exit_signal}" if exit_signal else ""
    return f"{state}{code}{sig}".strip()


# --------------------------------------------------------------------------------------------
# Kind detection


def detect_kind(path: str | Path) -> str:
    """Guess a file's kind from its first bytes (and its columns, for parquet).

    Raises:
        IngestError: a file of none of the supported kinds.
    """
    path = Path(path)
    try:
        with open(path, "rb") as fh:
            head = fh.read(4096)
    except OSError as exc:
        raise IngestError(f"{path}: cannot read ({exc.strerror})") from None
    if head.startswith(b"PAR1"):
        return _parquet_kind(path, _parquet_columns(path))
    text = head.decode("utf-8", errors="replace").lstrip()
    if text.startswith("{"):
        return "sacct-json"
    first = text.splitlines()[0] if text else ""
    if "|" in first and re.search(r"(^|\|)JobID(Raw)?(\||$)", first):
        return "sacct-p"
    if first.startswith("JobId=") and "JobState=" in first:
        raise IngestError(f"{path}: this is a jobcomp/filetxt log, not supported; "
                          "ingest `sacct -P` output instead")
    if "|" in first:
        raise IngestError(f"{path}: '|'-separated but no JobID header; "
                          "run sacct -P without --noheader and with JobID in --format")
    raise IngestError(f"{path}: not a sacct -P/--json output or a PM100/Adastra parquet file "
                      f"(use --kind to say which it is)")


def _parquet_columns(path: Path) -> list[str]:
    import pyarrow.parquet as pq

    try:
        return list(pq.read_schema(path).names)
    except Exception as exc:  # pyarrow raises several types for a broken file
        raise IngestError(f"{path}: unreadable parquet file ({exc})") from None


def _parquet_kind(path: Path, cols: list[str]) -> str:
    names = set(cols)
    pm100_only = {"num_cores_alloc", "num_cpus_alloc", "cpus_alloc", "num_gpus_alloc",
                  "num_tasks", "cores_per_task", "num_cores_req", "num_cpus_req"}
    if names & pm100_only:
        return "pm100"
    if {"num_nodes_alloc", "run_time"} <= names:
        return "adastra"
    raise IngestError(f"{path}: parquet without PM100/Adastra job columns "
                      f"(need num_nodes_alloc and run_time; has {', '.join(cols[:8])}...)")


# --------------------------------------------------------------------------------------------
# sacct -P


def _split_records(lines: list[str], ncols: int, report: FileReport) -> list[list[str]]:
    """Join physical lines into records of exactly ``ncols`` fields (``--format=ALL`` values
    can hold newlines). A record with more fields than the header (a '|' inside a value,
    which sacct does not escape) or too few is counted and dropped."""
    records: list[list[str]] = []
    i = 0
    while i < len(lines):
        buf = lines[i]
        i += 1
        if not buf.strip():
            continue
        while buf.count("|") + 1 < ncols and i < len(lines):
            candidate = buf + "\n" + lines[i]
            if candidate.count("|") + 1 > ncols:
                break
            buf = candidate
            i += 1
        fields = buf.split("|")
        report.records += 1
        if len(fields) > ncols:
            report.dropped["more fields than the header ('|' inside a value; sacct does not "
                           "escape it)"] += 1
        elif len(fields) < ncols:
            report.dropped["fewer fields than the header (truncated record)"] += 1
        else:
            records.append(fields)
    return records


def read_sacct_parsable(path: str | Path) -> tuple[list[dict], FileReport]:
    """Read ``sacct -P`` (or ``-p``) output into one dict per job."""
    path = Path(path)
    report = FileReport(str(path), "sacct-p")
    text = path.read_text(errors="replace")
    lines = text.splitlines()
    if not lines or not {"JobID", "JobIDRaw"} & set(lines[0].split("|")):
        raise IngestError(f"{path}: not sacct -P output (first line is not a header with JobID)")
    header = lines[0].split("|")
    trailing = header[-1] == ""  # sacct -p ends every line with the delimiter
    if trailing:
        header = header[:-1]
    ncols = len(header) + (1 if trailing else 0)
    idcol = "JobID" if "JobID" in header else "JobIDRaw"
    records = _split_records(lines[1:], ncols, report)

    jobs: dict[str, dict] = {}
    steps: dict[str, list[dict]] = {}
    order: list[str] = []
    for fields in records:
        row = dict(zip(header, fields))
        jid = row[idcol].strip()
        if not jid:
            report.dropped["empty JobID"] += 1
            continue
        if "." in jid:
            steps.setdefault(jid.split(".", 1)[0], []).append(row)
        elif jid in jobs:
            report.dropped["duplicate job line"] += 1
        else:
            jobs[jid] = row
            order.append(jid)
    for jid in steps:
        if jid not in jobs:
            report.dropped["step rows without their job line"] += len(steps[jid])

    out = []
    for jid in order:
        try:
            job = _job_from_sacct_rows(jid, jobs[jid], steps.get(jid, []), report)
        except ValueError as exc:
            report.dropped[f"unparseable value ({_reason(exc)})"] += 1
            continue
        if job is not None:
            out.append(job)
    report.jobs = len(out)
    return out, report


def _reason(exc: Exception) -> str:
    """Group ValueErrors by their kind, not by the value, so counts add up per reason."""
    return re.sub(r"\s*'[^']*'$", "", str(exc))


def _job_from_sacct_rows(jid: str, job: dict, steps: list[dict], report: FileReport
                         ) -> dict | None:
    state = job.get("State", "").strip()
    if not state:
        report.dropped["no State column/value"] += 1
        return None
    status = _status(state)
    if status is None:
        report.dropped["not finished (pending/running)"] += 1
        return None

    exit_code, exit_signal = parse_exit(job.get("ExitCode"))
    runtime = _int_or_none(job.get("ElapsedRaw"))
    runtime_s = float(runtime) if runtime is not None else parse_duration(job.get("Elapsed"))
    nodes = _int_or_none(job.get("NNodes")) or _int_or_none(job.get("AllocNodes"))
    alloc = parse_tres(job.get("AllocTRES")) or parse_tres(job.get("ReqTRES"))
    if nodes is None and "node" in alloc:
        nodes = int(alloc["node"])
    cores = _int_or_none(job.get("NCPUS")) or _int_or_none(job.get("AllocCPUS"))
    if cores is None and "cpu" in alloc:
        cores = int(alloc["cpu"])

    # Ranks and threads come from the widest srun step; a batch-only job is one task.
    ranks = threads = None
    numbered = [s for s in steps if s[_idcol(s)].split(".", 1)[1] not in ("batch", "extern")]
    widest = max(numbered, key=lambda s: _int_or_none(s.get("NTasks")) or 0, default=None)
    if widest is None:
        widest = next((s for s in steps if s[_idcol(s)].endswith(".batch")), None)
    if widest is not None:
        ranks = _int_or_none(widest.get("NTasks"))
        step_cpus = _int_or_none(widest.get("NCPUS")) or _int_or_none(widest.get("AllocCPUS"))
        if step_cpus is None:
            step_cpus = int(parse_tres(widest.get("AllocTRES")).get("cpu", 0)) or None
        if ranks and step_cpus:
            threads = max(1, step_cpus // ranks)

    peak = None
    for s in steps:
        b = parse_memory_bytes(s.get("MaxRSS"))
        if b is not None:
            peak = max(peak or 0.0, b / 1e6)

    energy = _sacct_energy(job, steps)
    mem_req_gb = _mem_req_gb(job.get("ReqMem"), nodes, cores)
    limit_raw = job.get("TimelimitRaw", "").strip()
    if limit_raw.isdigit():
        time_limit_s = float(limit_raw) * 60
    else:
        time_limit_s = parse_duration(job.get("Timelimit"))

    status = _oom_from_steps(status, [s.get("State", "") for s in steps], report)
    # jobacct_gather's OverMemoryKill ends a job with SIGKILL and records FAILED/CANCELLED, not
    # OUT_OF_MEMORY: call it oom when a step was killed by signal 9 at or above its request.
    if status in ("failed", "cancelled") and mem_req_gb and peak:
        req_bytes = mem_req_gb * 1000 * 1024**2 / max(nodes or 1, 1)
        killed = [s for s in steps if parse_exit(s.get("ExitCode"))[1] == 9]
        if (exit_signal == 9 or killed) and peak * 1e6 >= req_bytes:
            status = "oom"
            report.notes["killed by signal 9 at its memory request -> oom"] += 1

    return _slurm_job_row(
        job_id=jid, workload=job.get("JobName", ""), user=job.get("User", ""),
        partition=job.get("Partition", ""), nodes=nodes, ranks=ranks, threads=threads,
        cores=cores, gpus=gpus_from_tres(alloc), status=status, state=state,
        exit_code=exit_code, exit_signal=exit_signal, runtime_s=runtime_s,
        cpu_s=parse_duration(job.get("TotalCPU")), peak_rss_mb=peak, energy_j=energy,
        submit_time=_time_or_none(job.get("Submit")), start_time=_time_or_none(job.get("Start")),
        end_time=_time_or_none(job.get("End")), time_limit_s=time_limit_s, mem_req_gb=mem_req_gb)


def _slurm_job_row(*, job_id, workload, user, partition, nodes, ranks, threads, cores, gpus,
                   status, state, exit_code, exit_signal, runtime_s, cpu_s, peak_rss_mb,
                   energy_j, submit_time, start_time, end_time, time_limit_s, mem_req_gb
                   ) -> dict:
    """One job-table row from what ``sacct -P`` or ``sacct --json`` gave; the derived fields
    (ranks per node, device, error text, average power, energy source) are computed here."""
    return {
        "job_id": job_id,
        "workload": workload,
        "user": user,
        "partition": partition,
        "nodes": nodes,
        "ranks": ranks,
        "ranks_per_node": _ceil_div(int(ranks) if ranks else None, nodes),
        "threads": threads,
        "cores": cores,
        "gpus": gpus,
        "device": "gpu" if gpus else "cpu",
        "status": status,
        "state_raw": state,
        "exit_code": exit_code,
        "exit_signal": exit_signal,
        "error": _error_text(status, state, exit_code, exit_signal),
        "runtime_s": runtime_s,
        "cpu_s": cpu_s,
        "peak_rss_mb": peak_rss_mb,
        "energy_j": energy_j,
        "avg_power_w": energy_j / runtime_s if energy_j and runtime_s else None,
        "energy_source": _ENERGY_SLURM if energy_j else "",
        "submit_time": submit_time,
        "start_time": start_time,
        "end_time": end_time,
        "time_limit_s": time_limit_s,
        "mem_req_gb": mem_req_gb,
    }


def _oom_from_steps(status: str, step_states: list[str], report: FileReport) -> str:
    """A job whose srun step ran out of memory ends FAILED (srun returned 1): call it oom."""
    if status == "failed" and any(st.startswith("OUT_OF_MEMORY") for st in step_states):
        report.notes["FAILED job with an OUT_OF_MEMORY step -> oom"] += 1
        return "oom"
    return status


def _idcol(row: dict) -> str:
    return "JobID" if "JobID" in row else "JobIDRaw"


def _sacct_energy(job: dict, steps: list[dict]) -> float | None:
    """Joules: the job line if it has them, else the extern step (it spans the allocation),
    else the srun steps summed, else the batch step. 0 means "no energy plugin" -> None."""

    def joules(row: dict | None) -> float | None:
        if row is None:
            return None
        v = (row.get("ConsumedEnergyRaw") or "").strip()
        if not v:
            return None
        j = float(v)
        return j if j > 0 else None

    def step(name: str) -> dict | None:
        return next((s for s in steps if s[_idcol(s)].endswith("." + name)), None)

    for value in (joules(job), joules(step("extern"))):
        if value:
            return value
    numbered = [joules(s) for s in steps
                if s[_idcol(s)].split(".", 1)[1] not in ("batch", "extern")]
    total = sum(v for v in numbered if v)
    return total or joules(step("batch"))


def _mem_req_gb(text: str | None, nodes: int | None, cores: int | None) -> float | None:
    """ReqMem -> GB for the whole job. 22.05 prints the job total with no suffix; older
    versions append ``n`` (per node) or ``c`` (per CPU)."""
    if not text or not text.strip():
        return None
    b = parse_memory_bytes(text)
    suffix = text.strip()[-1]
    if suffix == "n":
        b *= nodes or 1
    elif suffix == "c":
        b *= cores or 1
    return b / 1024**2 / 1000  # MB (Slurm's MiB) -> GB, as cluster.py does for RealMemory


def _time_or_none(text: str | None):
    import pandas as pd

    if text is None or not text.strip() or text.strip() in ("Unknown", "None"):
        return None
    return pd.Timestamp(text.strip())


# --------------------------------------------------------------------------------------------
# sacct --json


def _num(value):
    """Unwrap ``{"set": bool, "infinite": bool, "number": x}`` (data_parser v0.0.39+)."""
    if isinstance(value, dict):
        if not value.get("set", True) or value.get("infinite", False):
            return None
        return value.get("number")
    return value


def _first(value):
    """State and status fields are strings in 22.05 and lists of flags later."""
    if isinstance(value, list):
        return value[0] if value else ""
    return value or ""


def _json_version(doc: dict) -> tuple[int, int, str]:
    meta = doc.get("meta", {})
    slurm = meta.get("Slurm") or meta.get("slurm") or {}
    ver = slurm.get("version", {})
    try:
        major, minor = int(ver.get("major")), int(ver.get("minor"))
    except (TypeError, ValueError):
        major = minor = 0
    plugin = meta.get("plugin", {})
    parser = plugin.get("data_parser") or plugin.get("type") or ""
    return major, minor, parser


def read_sacct_json(path: str | Path) -> tuple[list[dict], FileReport]:
    """Read ``sacct --json`` into one dict per job (22.05 and newer layouts)."""
    path = Path(path)
    report = FileReport(str(path), "sacct-json")
    try:
        doc = json.loads(path.read_text(errors="replace"))
    except json.JSONDecodeError as exc:
        raise IngestError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno})") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("jobs"), list):
        raise IngestError(f"{path}: JSON without a 'jobs' list; not sacct --json output")
    major, minor, parser = _json_version(doc)
    # 22.05 (openapi/dbv0.0.38 and older) loses non-zero exit codes; see read_sacct_json.
    old_exit_codes = (0, 0) < (major, minor) <= (22, 5) or bool(re.search(r"v0\.0\.3[0-8]$", parser))
    out = []
    for job in doc["jobs"]:
        report.records += 1
        try:
            row = _job_from_json(job, report, old_exit_codes)
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            report.dropped[f"unparseable job entry ({type(exc).__name__})"] += 1
            continue
        if row is not None:
            out.append(row)
    report.jobs = len(out)
    return out, report


def _job_from_json(job: dict, report: FileReport, old_exit_codes: bool) -> dict | None:
    import pandas as pd

    state = _first(job["state"]["current"])
    status = _status(state)
    if status is None:
        report.dropped["not finished (pending/running)"] += 1
        return None
    ex = job.get("exit_code") or {}
    exit_status = _first(ex.get("status"))
    exit_code = _num(ex.get("return_code"))
    sig = ex.get("signal") or {}
    exit_signal = _num(sig.get("signal_id", sig.get("id")))
    if exit_status == "SIGNALED":
        exit_code = exit_code if exit_code is not None else 0
    else:
        exit_signal = exit_signal or 0
    if old_exit_codes and exit_status == "SUCCESS" and state == "FAILED":
        # 22.05's openapi/dbv0.0.38 writes SUCCESS/0 for every normal non-zero exit.
        exit_code = None
        report.notes["22.05 --json exit code unreliable (set to missing; use sacct -P)"] += 1

    t = job.get("time", {})
    runtime_s = _num(t.get("elapsed"))
    alloc = {}
    for item in (job.get("tres") or {}).get("allocated") or []:
        key = item["type"] + (f"/{item['name']}" if item.get("name") else "")
        if _num(item.get("count")) is not None:
            alloc[key] = float(_num(item["count"]))
    requested = {}
    for item in (job.get("tres") or {}).get("requested") or []:
        if item.get("type") in ("mem", "node") and _num(item.get("count")) is not None:
            requested[item["type"]] = float(_num(item["count"]))
    nodes = _num(job.get("allocation_nodes")) or alloc.get("node") or requested.get("node")
    nodes = int(nodes) if nodes else None
    cores = int(alloc["cpu"]) if "cpu" in alloc else _num((job.get("required") or {}).get("CPUs"))

    steps = job.get("steps") or []
    numbered = [s for s in steps if str(s["step"].get("name")) not in ("batch", "extern")
                and str(s["step"].get("id")) not in ("batch", "extern")]
    ranks = threads = None
    widest = max(numbered, key=lambda s: _num((s.get("tasks") or {}).get("count")) or 0,
                 default=None)
    if widest is None:
        widest = next((s for s in steps if s["step"].get("name") == "batch"), None)
    if widest is not None:
        ranks = _num((widest.get("tasks") or {}).get("count"))
        step_cpus = next((_num(i.get("count")) for i in
                          ((widest.get("tres") or {}).get("allocated") or [])
                          if i.get("type") == "cpu"), None)
        if ranks and step_cpus:
            threads = max(1, int(step_cpus) // int(ranks))

    def step_energy(s):
        e = _num(((s.get("statistics") or {}).get("energy") or {}).get("consumed"))
        return float(e) if e and e > 0 else None

    energies = [step_energy(s) for s in steps]
    extern = [step_energy(s) for s in steps if s["step"].get("name") == "extern"]
    energy = (extern[0] if extern and extern[0] else
              sum(e for s, e in zip(steps, energies) if e and s in numbered) or
              next((e for s, e in zip(steps, energies) if e and s["step"].get("name") == "batch"),
                   None))

    limit = _num(t.get("limit"))
    mem_mb = requested.get("mem") or alloc.get("mem")
    status = _oom_from_steps(status, [_first(s.get("state")) for s in steps], report)

    def ts(v):
        v = _num(v)
        return pd.Timestamp(int(v), unit="s") if v else None

    gpus = int(alloc.get("gres/gpu", 0))
    name = job.get("name", "")
    array = job.get("array") or {}
    task = _num(array.get("task_id"))
    array_id = _num(array.get("job_id"))
    jid = f"{array_id}_{task}" if array_id and task is not None else str(job["job_id"])
    return _slurm_job_row(
        job_id=jid, workload=name, user=job.get("user", ""), partition=job.get("partition", ""),
        nodes=nodes, ranks=ranks, threads=threads, cores=cores, gpus=gpus, status=status,
        state=state, exit_code=exit_code, exit_signal=exit_signal,
        runtime_s=float(runtime_s) if runtime_s is not None else None,
        cpu_s=None,  # job-level CPU time is 0 in 22.05 JSON; sacct -P TotalCPU has it
        peak_rss_mb=None, energy_j=energy, submit_time=ts(t.get("submission")),
        start_time=ts(t.get("start")), end_time=ts(t.get("end")),
        time_limit_s=float(limit) * 60 if limit is not None else None,
        mem_req_gb=mem_mb / 1000 if mem_mb else None)


# --------------------------------------------------------------------------------------------
# PM100 / Adastra parquet

# Our column <- candidate source columns, newest generation first.
_PM100_COLUMNS = {
    "job_id": ["job_id"],
    "workload": ["job_name", "name"],
    "user": ["user_id", "user"],
    "partition": ["partition"],
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


def read_job_parquet(path: str | Path, kind: str) -> tuple["pd.DataFrame", FileReport]:  # noqa: F821
    """Read a PM100 (both generations) or Adastra parquet job table."""
    import numpy as np
    import pandas as pd

    path = Path(path)
    report = FileReport(str(path), kind)
    cols = _parquet_columns(path)
    found = _parquet_kind(path, cols)
    if found != kind:
        raise IngestError(f"{path}: looks like a {found} table, not {kind} (check --kind)")
    src = pd.read_parquet(path)
    report.records = len(src)
    n = len(src)

    def col(name, default=None):
        s = _pick(src, _PM100_COLUMNS[name])
        return s if s is not None else pd.Series([default] * n, index=src.index)

    out = pd.DataFrame(index=src.index)
    out["job_id"] = col("job_id").astype("string")
    out["workload"] = col("workload", "").fillna("").astype("string")
    out["user"] = col("user", "").astype("string").fillna("")
    out["partition"] = col("partition", "").astype("string").fillna("")
    for name in ("nodes", "ranks", "threads", "cores", "gpus"):
        out[name] = pd.to_numeric(col(name), errors="coerce")
    out["runtime_s"] = pd.to_numeric(col("runtime_s"), errors="coerce")
    states = col("state_raw", "").astype("string").fillna("").str.strip()
    out["state_raw"] = states
    for name in ("submit_time", "start_time", "end_time"):
        out[name] = _to_datetime(col(name))
    out["time_limit_s"] = pd.to_numeric(col("time_limit_min"), errors="coerce") * 60
    out["mem_req_gb"] = pd.to_numeric(col("mem_req_mb"), errors="coerce") / 1000

    power = col("power")
    avg_power = np.array([_mean_power(v) for v in power], dtype=float)
    out["avg_power_w"] = avg_power
    out["energy_j"] = avg_power * out["runtime_s"].to_numpy(dtype=float)
    has_energy = np.isfinite(out["energy_j"].to_numpy(dtype=float))
    out["energy_source"] = np.where(has_energy, _ENERGY_POWER_LOG, "")

    base = states.str.split().str[0].str.upper().fillna("")
    out["status"] = base.map(_STATUS)

    # Rows that cannot be a finished job are counted per reason, then dropped.
    checks = [
        (out["job_id"].isna() | (out["job_id"] == ""), "missing job_id"),
        (base.isin(_NOT_FINISHED), "not finished (pending/running)"),
        (out["status"].isna() & ~base.isin(_NOT_FINISHED), "unknown or missing job_state"),
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
    out["device"] = np.where(out["gpus"].fillna(0) > 0, "gpu", "cpu")
    out["exit_code"] = pd.NA
    out["exit_signal"] = pd.NA
    out["cpu_s"] = np.nan
    out["peak_rss_mb"] = np.nan
    out["error"] = np.where(out["status"] == "ok", "", out["state_raw"])
    report.jobs = len(out)
    return out, report


def _to_datetime(series):
    import pandas as pd

    if series is None or series.isna().all():
        return pd.Series(pd.NaT, index=series.index if series is not None else None)
    if pd.api.types.is_numeric_dtype(series):
        return pd.to_datetime(series, unit="s", errors="coerce")
    out = pd.to_datetime(series, errors="coerce", utc=True)
    return out.dt.tz_convert(None)


# --------------------------------------------------------------------------------------------
# Public entry points


def _frame(rows: list[dict]):
    import pandas as pd

    return pd.DataFrame(rows, columns=[c for c, _ in JOB_COLUMNS if c not in
                                       ("source_file", "source_kind")])


def normalise(df, path: str, kind: str):
    """Give a reader's frame the exact columns and dtypes of :data:`JOB_COLUMNS`."""
    import pandas as pd

    df = df.copy()
    df["source_file"] = str(path)
    df["source_kind"] = kind
    for name, dtype in JOB_COLUMNS:
        if name not in df.columns:
            df[name] = pd.NA
        if dtype == "Int64":
            df[name] = pd.to_numeric(df[name], errors="coerce").round().astype("Int64")
        elif dtype == "float64":
            df[name] = pd.to_numeric(df[name], errors="coerce").astype("float64")
        elif dtype.startswith("datetime64"):
            df[name] = pd.to_datetime(df[name], errors="coerce")
            if getattr(df[name].dt, "tz", None) is not None:
                df[name] = df[name].dt.tz_convert(None)
            df[name] = df[name].astype("datetime64[ns]")
        else:
            df[name] = df[name].astype("string")
    return df[[c for c, _ in JOB_COLUMNS]].reset_index(drop=True)


def read_job_log(path: str | Path, kind: str = "auto"):
    """Read one job log into the job table.

    Args:
        path: the file.
        kind: one of :data:`KINDS`, or ``auto`` to detect it.

    Returns:
        (DataFrame with :data:`JOB_COLUMNS`, one row per finished job; FileReport)

    Raises:
        IngestError: wrong kind, unreadable, or no job could be read at all.
    """
    path = Path(path)
    if not path.is_file():
        raise IngestError(f"{path}: no such file")
    if kind == "auto":
        kind = detect_kind(path)
    if kind not in KINDS:
        raise IngestError(f"unknown kind {kind!r}; use one of auto, {', '.join(KINDS)}")
    if kind in ("pm100", "adastra"):
        with open(path, "rb") as fh:
            if fh.read(4) != b"PAR1":
                raise IngestError(f"{path}: not a parquet file, so not a {kind} table")
        df, report = read_job_parquet(path, kind)
    elif kind == "sacct-json":
        rows, report = read_sacct_json(path)
        df = _frame(rows)
    else:
        rows, report = read_sacct_parsable(path)
        df = _frame(rows)
    if report.jobs == 0:
        reasons = "; ".join(f"{n} x {r}" for r, n in report.dropped.most_common(3)) or "empty"
        raise IngestError(f"{path}: no job could be read as {kind} ({reasons})")
    return normalise(df, str(path), kind), report


def ingest(paths: list[str | Path], kind: str = "auto"):
    """Read several job logs into one job table.

    The same job seen in two files (same ``job_id`` and ``submit_time``) is kept once, from
    the ``sacct -P`` file when there is one (22.05's ``--json`` loses exit codes); the
    duplicates are counted in the returned notes.

    Returns:
        (job table DataFrame, list of FileReport, Counter of cross-file notes)
    """
    import pandas as pd

    frames, reports = [], []
    for p in paths:
        df, rep = read_job_log(p, kind)
        frames.append(df)
        reports.append(rep)
    table = pd.concat(frames, ignore_index=True)
    priority = {"sacct-p": 0, "sacct-json": 1, "pm100": 2, "adastra": 2}
    table["_prio"] = table["source_kind"].map(priority)
    table = table.sort_values("_prio", kind="stable")
    key = table["job_id"].astype(str) + "@" + table["submit_time"].astype(str) + "@" + \
        table["source_kind"].isin(["sacct-p", "sacct-json"]).astype(str)
    dup = key.duplicated()
    notes: Counter = Counter()
    if dup.any():
        notes["same job in several files, kept once (sacct -P preferred)"] = int(dup.sum())
    table = table[~dup].drop(columns="_prio").sort_index().reset_index(drop=True)
    return table, reports, notes


def write_job_table(table, out: str | Path) -> Path:
    """Write the job table as parquet (``.parquet``) or CSV (``.csv``)."""
    out = Path(out)
    if out.suffix not in (".parquet", ".csv"):
        raise IngestError(f"{out}: output must end in .parquet or .csv")
    out.parent.mkdir(parents=True, exist_ok=True)
    if out.suffix == ".csv":
        table.to_csv(out, index=False)
    else:
        table.to_parquet(out, index=False)
    return out
