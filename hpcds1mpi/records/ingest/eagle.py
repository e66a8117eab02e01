"""The NREL Eagle job table (Slurm, NREL/eagle-jobs): one CSV row per job with what was
requested (wallclock, nodes, processors, GPUs, memory), the three times, run time and state.

The file has no allocated counts: ``nodes`` / ``gpus`` are the requested ones (Slurm gives a
job the nodes it asks for) and the report says so. ``mem_req`` is the job's total in MB
(28 nodes ask 20,160,000 = 28 x 720,000, Eagle's big-memory nodes); 0 means no request.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from .csv_tables import drop_rows, empty, numbers, read_csv_table, times
from .eagle_tasks import TASK_IDS, task_ids
from .schema import FileReport
from .slurm_fields import NOT_FINISHED, SLURM_STATUS

if TYPE_CHECKING:
    import pandas as pd

#: The columns the reader needs.
EAGLE_COLUMNS = ("job_id", "user", "account", "partition", "qos", "wallclock_req", "nodes_req",
                 "processors_req", "gpus_req", "mem_req", "submit_time", "start_time",
                 "end_time", "run_time", "state", "name")


def read_eagle(path: str | Path) -> tuple["pd.DataFrame", FileReport]:
    """Read the Eagle CSV into job-table columns (before ``normalise``)."""
    import numpy as np
    import pandas as pd

    src, report = read_csv_table(path, "eagle", EAGLE_COLUMNS)
    checks = empty(src, ("job_id", "submit_time", "state", "run_time"))
    out = pd.DataFrame(index=src.index)
    out["job_id"] = src["job_id"]
    for ours, theirs in (("user", "user"), ("account", "account"), ("partition", "partition"),
                         ("queue", "qos"), ("workload", "name")):
        out[ours] = src[theirs].replace("", pd.NA)
    for ours, theirs in (("req_nodes", "nodes_req"), ("req_procs", "processors_req"),
                         ("req_gpus", "gpus_req"), ("time_limit_s", "wallclock_req"),
                         ("runtime_s", "run_time"), ("mem_req_mb", "mem_req")):
        out[ours] = numbers(src[theirs], theirs, checks)
    stamps = times(src, {name: name for name in ("submit_time", "start_time", "end_time")},
                   checks, path, report.facts)
    for name, values in stamps.items():
        out[name] = values
    base = src["state"].str.split().str[0].str.upper()
    out["state_raw"] = src["state"]
    out["status"] = base.map(SLURM_STATUS)
    checks.append((base.isin(NOT_FINISHED), "not finished (pending/running)"))
    # As for sacct: a job cannot end before it starts, and which time is wrong is unknown.
    checks.append((out["end_time"] < out["start_time"], "end_time before start_time"))
    checks.append((out["status"].isna() & (src["state"] != ""), "unknown job state"))
    out = drop_rows(out, checks, report)
    shared = out["job_id"].duplicated(keep=False)
    if shared.any():
        # A job array's tasks share its id here (532939: 452 rows): one job each, made unique.
        out.loc[shared, "job_id"] = task_ids(out[shared], out.loc[shared, "job_id"],
                                             report.notes)
        report.notes[TASK_IDS] += int(shared.sum())

    out["mem_req_gb"] = out.pop("mem_req_mb").where(lambda mb: mb > 0) / 1000
    out["nodes"] = out["req_nodes"]
    out["gpus"] = out["req_gpus"]
    report.facts.append("nodes and gpus are the requested counts (the file has no allocated "
                        "ones)")
    out["device"] = np.where(out["gpus"].fillna(0) > 0, "gpu", "cpu")
    out["error"] = np.where(out["status"] == "ok", "", out["state_raw"])
    report.jobs = len(out)
    return out.reset_index(drop=True), report
