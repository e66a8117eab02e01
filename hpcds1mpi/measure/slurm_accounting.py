"""The ranks' memory and CPU time as Slurm's accounting recorded them, for a launch inside an
allocation whose ranks ran under ``slurmstepd`` (the ``srun`` launcher; Open MPI's ``mpirun``,
whose daemons start through ``srun``), out of the launch's own process tree.

:class:`StepAccounting` notes the allocation's highest job step before a launch
(:meth:`~StepAccounting.mark`) and afterwards reads the steps the launch started
(:meth:`~StepAccounting.read`): ``sacct -j JOBID --format JobID,Start,State,MaxRSS,TotalCPU,
NTasks -P -n``. Slurm writes a step's numbers when it ends, sometimes a moment later, so the read
waits up to :data:`WAIT_S` for them. ``MaxRSS`` is the largest *task*'s: one rank under ``srun``,
but under Open MPI's daemons one task holds a node's ranks (and the daemon), so it is divided by
the ranks per task. ``TotalCPU`` is the step's tasks' user + system time.
"""

from __future__ import annotations

import math
import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass

#: Seconds the read waits for the launch's steps to be written with their numbers.
WAIT_S = 5.0
#: Seconds one sacct call may take.
SACCT_TIMEOUT_S = 15.0
#: A job step of the allocation (``1234.0``; not ``.batch`` / ``.extern`` / ``.interactive``).
STEP_ID = re.compile(r"^(\d+)\.(\d+)$")
#: States a step is still in while its numbers are not final.
UNFINISHED = ("PENDING", "RUNNING", "REQUEUED", "RESIZING", "SUSPENDED")
_UNITS = {"": 2**-10, "K": 2**-10, "M": 1.0, "G": 2**10, "T": 2**20, "P": 2**30}


@dataclass(frozen=True)
class StepUsage:
    """What the launch's steps used: ``peak_rss_mb`` per rank (MB), ``cpu_s`` summed over its
    tasks, ``ranks_per_task`` the MaxRSS was divided by."""

    peak_rss_mb: float
    cpu_s: float
    ranks_per_task: int

    def source(self) -> str:
        if self.ranks_per_task == 1:
            return "slurm accounting (sacct MaxRSS)"
        return (f"slurm accounting (sacct MaxRSS of a task holding {self.ranks_per_task} ranks, "
                f"/ {self.ranks_per_task})")


def memory_mb(text: str) -> float:
    """sacct's ``MaxRSS`` (``16188K``, ``1.5G``; a bare number is KiB) in MB; NaN for ""."""
    match = re.fullmatch(r"\s*([\d.]+)\s*([KMGTP]?)\s*", text or "")
    if not match:
        return math.nan
    return float(match.group(1)) * _UNITS[match.group(2)]


def cpu_seconds(text: str) -> float:
    """sacct's ``TotalCPU`` (``[D-][HH:]MM:SS[.mmm]``) in seconds; NaN when unreadable."""
    match = re.fullmatch(r"\s*(?:(\d+)-)?(?:(\d+):)?(\d+):(\d+(?:\.\d*)?)\s*", text or "")
    if not match:
        return math.nan
    days, hours, minutes, seconds = match.groups()
    return (int(days or 0) * 86400 + int(hours or 0) * 3600 + int(minutes) * 60
            + float(seconds))


class StepAccounting:
    """The accounting of one allocation's job steps (``job_id``)."""

    def __init__(self, job_id: str, env: dict | None = None):
        self.job_id = job_id
        self.env = env
        self.last_step = -1

    @classmethod
    def here(cls, env: dict | None = None) -> "StepAccounting | None":
        """The allocation this process runs in, when it has one and sacct is on PATH."""
        env = os.environ if env is None else env
        job = env.get("SLURM_JOB_ID", "")
        if not job.isdigit() or shutil.which("sacct", path=env.get("PATH")) is None:
            return None
        return cls(job, dict(env))

    def _steps(self) -> list[dict] | None:
        """The allocation's job steps as sacct lists them; None when it does not answer."""
        try:
            proc = subprocess.run(
                ["sacct", "-j", self.job_id, "--format", "JobID,Start,State,MaxRSS,TotalCPU,NTasks",
                 "-P", "-n"], capture_output=True, text=True, timeout=SACCT_TIMEOUT_S,
                env=self.env, stdin=subprocess.DEVNULL)
        except (OSError, subprocess.TimeoutExpired):
            return None
        if proc.returncode != 0:
            return None
        steps = []
        for line in proc.stdout.splitlines():
            fields = line.split("|")
            if len(fields) < 6 or not (match := STEP_ID.match(fields[0])) \
                    or match.group(1) != self.job_id:
                continue
            steps.append({"step": int(match.group(2)), "state": fields[2].split()[0] if
                          fields[2] else "", "rss_mb": memory_mb(fields[3]),
                          "cpu_s": cpu_seconds(fields[4]),
                          "tasks": int(fields[5]) if fields[5].isdigit() else 0})
        return steps

    def mark(self) -> None:
        """Note the highest step started so far: a later :meth:`read` takes only newer ones."""
        steps = self._steps() or []
        self.last_step = max([self.last_step, *(s["step"] for s in steps)])

    def read(self, ranks: int, wait_s: float = WAIT_S) -> StepUsage | None:
        """The usage of the steps started since :meth:`mark`, once sacct has their final
        numbers (waiting up to ``wait_s``); None when there are none or they never came."""
        deadline = time.monotonic() + wait_s
        while True:
            new = [s for s in (self._steps() or []) if s["step"] > self.last_step]
            done = new and all(s["state"] not in UNFINISHED and not math.isnan(s["rss_mb"])
                               and not math.isnan(s["cpu_s"]) for s in new)
            if done or time.monotonic() >= deadline:
                break
            time.sleep(0.25)
        if not done:
            return None
        self.last_step = max(s["step"] for s in new)
        tasks = sum(s["tasks"] for s in new) or 1
        per_task = max(1, math.ceil(ranks / tasks))
        return StepUsage(peak_rss_mb=max(s["rss_mb"] for s in new) / per_task,
                         cpu_s=sum(s["cpu_s"] for s in new), ranks_per_task=per_task)
