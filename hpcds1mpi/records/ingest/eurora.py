"""The CINECA Eurora job table (PBS, 2014; AndreaBorghesi/PA-HPC-SIM's trace files joined with
its power predictions): one CSV row per job.

Its ``pred_power_W`` is the average power the dataset's authors PREDICTED with their own model:
nothing was measured. It goes into ``avg_power_w`` / ``energy_j`` only under
``energy_source`` = :data:`ENERGY_PREDICTED`, so no one can take it for a measurement
(measured sources are ``slurm`` and ``job-log power samples``).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from .csv_tables import drop_rows, empty, numbers, read_csv_table, times
from .schema import FileReport
from .slurm_fields import SLURM_STATUS

if TYPE_CHECKING:
    import pandas as pd

#: ``energy_source`` of Eurora's power: a model's prediction, not a measurement.
ENERGY_PREDICTED = "predicted by the dataset authors' model (not measured)"

#: The columns that make a file a Eurora table (and that the reader needs).
EURORA_COLUMNS = ("job_id", "queue", "submit", "start", "end", "used_nodes", "used_cores",
                  "used_gpus", "req_nodes", "req_cores", "req_mem", "req_walltime_s",
                  "status", "run_time_s", "pred_power_W")


def read_eurora(path: str | Path) -> tuple["pd.DataFrame", FileReport]:
    """Read the Eurora CSV into job-table columns (before ``normalise``).

    ``req_mem`` is read as GB (the file states no unit; PBS ``mem`` requests there run 1-416);
    ``apptype_fake`` (a made-up application class) is not a job name and is not used.
    """
    import numpy as np
    import pandas as pd

    src, report = read_csv_table(path, "eurora", EURORA_COLUMNS)
    checks = empty(src, ("job_id", "submit", "status", "run_time_s"))
    out = pd.DataFrame(index=src.index)
    out["job_id"] = src["job_id"]
    out["queue"] = src["queue"].replace("", pd.NA)
    out["partition"] = out["queue"]  # PBS queue: Eurora has no partitions
    for ours, theirs in (("nodes", "used_nodes"), ("cores", "used_cores"), ("gpus", "used_gpus"),
                         ("req_nodes", "req_nodes"), ("req_procs", "req_cores"),
                         ("runtime_s", "run_time_s"), ("time_limit_s", "req_walltime_s"),
                         ("mem_req_gb", "req_mem"), ("avg_power_w", "pred_power_W")):
        out[ours] = numbers(src[theirs], theirs, checks)
    stamps = times(src, {"submit_time": "submit", "start_time": "start", "end_time": "end"},
                   checks, path, report.facts)
    for ours, values in stamps.items():
        out[ours] = values
    states = src["status"].str.split().str[0].str.upper()
    out["state_raw"] = src["status"]
    out["status"] = states.map(SLURM_STATUS)
    checks.append((out["status"].isna() & (src["status"] != ""), "unknown status"))
    # As for sacct: a job cannot end before it starts, and which time is wrong is unknown.
    checks.append((out["end_time"] < out["start_time"], "end_time before start_time"))
    out = drop_rows(out, checks, report)

    has_power = out["avg_power_w"].notna()
    out["energy_j"] = out["avg_power_w"] * out["runtime_s"]
    out["energy_source"] = np.where(has_power, ENERGY_PREDICTED, "")
    if (~has_power).any():
        report.notes["no predicted power (energy missing)"] += int((~has_power).sum())
    if has_power.any():
        report.notes[f"power {ENERGY_PREDICTED}"] += int(has_power.sum())
    out["device"] = np.where(out["gpus"].fillna(0) > 0, "gpu", "cpu")
    out["error"] = np.where(out["status"] == "ok", "", out["state_raw"])
    report.facts.append("req_mem read as GB (the file states no unit)")
    report.jobs = len(out)
    return out.reset_index(drop=True), report
