"""The ranks' memory and CPU time as Slurm's accounting recorded them, for a launch inside an
allocation whose ranks ran under ``slurmstepd`` (the ``srun`` launcher; Open MPI's ``mpirun``,
whose daemons start through ``srun``), out of the launch's own process tree.

:class:`StepAccounting` is asked only *after* a launch whose tree showed ``srun``
(:mod:`hpcds1mpi.measure.ranks_usage`): nothing is called before each launch, nor for ranks that
ran under it (s28 tester Z5: a hung sacct had cost 15 s before every launch of a local
``mpirun``). :meth:`~StepAccounting.read` takes the steps that started at or after the launch
(``Start`` as epoch seconds, ``SLURM_TIME_FORMAT=%s``) and that no earlier read took, once
they are finished: ``sacct -j JOBID -P -n --format
JobID,JobIDRaw,Start,State,MaxRSS,TotalCPU,NTasks,JobName``, polled every :data:`POLL_S` for at most
:data:`WAIT_S` (one call where srun's steps are listed when it exits, as they are). A step is
matched by its raw id (an array task's show as ``1230_5.0``), or as a heterogeneous job's
component (``1234+1.0``). :meth:`~StepAccounting.mark`, one call at the sweep's start, sets
the preflight's steps aside (its ``srun true`` and probe may share the first launch's second).
A sacct that does not answer is said once and not asked again in the sweep.

``MaxRSS`` is the largest *task*'s: one rank under ``srun``, but under a launcher's daemons (a
step named ``orted``, ``prted``, ``hydra_pmi_proxy``) one task holds a node's ranks (and the
daemon), so it is divided by the ranks on the busiest node, the configuration's ranks per node.
Not by the ranks over the step's tasks: Open MPI's ``mpirun`` starts a daemon on every node of
the allocation, and one that runs no rank is no task holding one (s29 tester A4: 2 ranks on 1
node of a 2-node allocation, 2 tasks, recorded 260 MB per rank for 130 MB ranks). A step that
ends before Slurm's first memory sample (``JobAcctGatherFrequency``, often 30 s) has a final
record with no ``MaxRSS`` at all: its peak is unknown, not late (the old read waited 5 s for it,
polling 20 times, and then dropped the CPU time it had). ``TotalCPU`` is the step's tasks'
user + system time.
"""

from __future__ import annotations

import math
import os
import re
import shutil
import time
from dataclasses import dataclass

from hpcds1mpi.measure.allocation_state import NoAnswer, ask_slurm, tell

#: Seconds the read waits for the launch's steps to be listed finished (slurmdbd writes them a
#: moment after srun exits), and the period it asks again at.
WAIT_S, POLL_S = 4.0, 1.0
#: Seconds a step's Start (the controller's clock, whole seconds) may read before the launch's
#: start on this node's clock: a step started earlier was an earlier read's or the mark's.
CLOCK_SLACK_S = 1
#: Seconds one sacct call may take: a few, as the user waits for it after the launch.
SACCT_TIMEOUT_S = 5.0
#: A job step by its raw id (``JobIDRaw``: ``1235.0``; not ``.batch`` / ``.extern`` /
#: ``.interactive``): an array task's steps show as ``1230_5.0`` in ``JobID``, while
#: ``SLURM_JOB_ID`` is the task's own (raw) id, 1235.
STEP_ID = re.compile(r"^(\d+)\.(\d+)$")
#: A step of a heterogeneous job's component (``1234+1.0`` in ``JobID``): ``SLURM_JOB_ID`` is
#: the leader's id (1234), but only component 0's raw id is it (component 1's is 1235).
HET_STEP_ID = re.compile(r"^(\d+)\+\d+\.(\d+)$")
#: States a step is still in while its numbers are not final.
UNFINISHED = ("PENDING", "RUNNING", "REQUEUED", "RESIZING", "SUSPENDED")
#: A step of a launcher's daemons (``srun orted``): one task per node holds its ranks.
DAEMONS = frozenset({"orted", "prted", "hydra_pmi_proxy", "hydra_bstrap_proxy"})
_UNITS = {"": 2**-10, "K": 2**-10, "M": 1.0, "G": 2**10, "T": 2**20, "P": 2**30}


@dataclass(frozen=True)
class StepUsage:
    """What the launch's steps used: ``peak_rss_mb`` per rank (MB; NaN where a step ended before
    Slurm's first memory sample), ``cpu_s`` summed over its tasks, ``ranks_per_task`` the
    MaxRSS was divided by."""

    peak_rss_mb: float
    cpu_s: float
    ranks_per_task: int

    def source(self) -> str:
        if math.isnan(self.peak_rss_mb):
            return ("not measured: the ranks ran under slurmstepd and their job step ended "
                    "before Slurm's first memory sample (JobAcctGatherFrequency), so sacct has no "
                    "MaxRSS; their CPU time is sacct's TotalCPU")
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
    """The accounting of one allocation's job steps (``job_id``).

    Attributes:
        why_not: why sacct gives nothing in this sweep ("" while it answers): it timed out or
            failed once, was said once through ``say``, and is not asked again.
    """

    def __init__(self, job_id: str, env: dict | None = None, say=None,
                 timeout_s: float | None = None):
        self.job_id = job_id
        self.env = {**(os.environ if env is None else env), "SLURM_TIME_FORMAT": "%s"}
        self.say = say
        self.timeout_s = timeout_s
        self.last_step = -1  # the highest step an earlier read (or the mark) took
        self.why_not = ""

    @classmethod
    def here(cls, job_id: str, env: dict | None = None, say=None) -> "StepAccounting | None":
        """The accounting of the allocation ``job_id`` (one seen running), when sacct is on
        PATH."""
        env = os.environ if env is None else env
        if not job_id.isdigit() or shutil.which("sacct", path=env.get("PATH")) is None:
            return None
        return cls(job_id, dict(env), say)

    def _steps(self) -> list[dict] | None:
        """The allocation's job steps as sacct lists them; None once it did not answer."""
        if self.why_not:
            return None
        try:
            text = ask_slurm(["sacct", "-j", self.job_id, "--format",
                              "JobID,JobIDRaw,Start,State,MaxRSS,TotalCPU,NTasks,JobName",
                              "-P", "-n"],
                             self.env, self.timeout_s or SACCT_TIMEOUT_S)
        except NoAnswer as exc:
            text, failure = None, str(exc)
        else:
            failure = "sacct failed"
        if text is None:
            self.why_not = failure
            tell(self.say, f"note: {failure}: memory and CPU of ranks under srun are not "
                           "measured for the rest of this sweep")
            return None
        steps = []
        for line in text.splitlines():
            fields = line.split("|")
            step = self._step_number(*fields[:2]) if len(fields) >= 7 else None
            if step is None:
                continue
            start, state, rss, cpu, tasks = fields[2:7]
            steps.append({"step": step, "start": int(start) if start.isdigit() else -1,
                          "state": state.split()[0] if state else "",
                          "rss_mb": memory_mb(rss), "cpu_s": cpu_seconds(cpu),
                          "tasks": int(tasks) if tasks.isdigit() else 0,
                          "name": fields[7] if len(fields) > 7 else ""})
        return steps

    def _step_number(self, job_id: str, raw_id: str) -> int | None:
        """The step number of a sacct line (``JobID``, ``JobIDRaw``) when it is a step of this
        allocation (an array task's, a heterogeneous job's components'); None otherwise."""
        for pattern, text in ((STEP_ID, raw_id), (HET_STEP_ID, job_id)):
            match = pattern.match(text)
            if match and match.group(1) == self.job_id:
                return int(match.group(2))
        return None

    def mark(self) -> None:
        """Set the steps started so far aside (once, at the sweep's start: the preflight's):
        no :meth:`read` takes them."""
        self.last_step = max([self.last_step, *(s["step"] for s in self._steps() or [])])

    def read(self, ranks: int, launch_start: float, wait_s: float = WAIT_S,
             ranks_per_node: int = 0) -> StepUsage | None:
        """The usage of the steps started at or after ``launch_start`` (epoch seconds) that no
        earlier read took, once sacct lists them all finished (asked every :data:`POLL_S` for
        at most ``wait_s``); None when there are none, or sacct did not answer.
        ``ranks_per_node``: the ranks the configuration placed on each node (0: unknown, then a
        launcher's daemons are taken to share the ranks evenly)."""
        deadline = time.monotonic() + wait_s
        while True:
            steps = self._steps()
            if steps is None:
                return None
            new = [s for s in steps if s["step"] > self.last_step
                   and s["start"] >= int(launch_start) - CLOCK_SLACK_S]
            done = new and all(s["state"] not in UNFINISHED and not math.isnan(s["cpu_s"])
                               for s in new)  # final: a MaxRSS missing now never comes
            if done or time.monotonic() + POLL_S > deadline:
                break
            time.sleep(POLL_S)
        if not done:
            return None
        self.last_step = max(s["step"] for s in new)
        tasks = sum(s["tasks"] for s in new) or 1
        even = max(1, math.ceil(ranks / tasks))
        busiest = min(ranks_per_node, ranks) if ranks_per_node > 0 else even
        # (per-rank MB, ranks per task) of each sampled step: a daemon's task holds its node's.
        sampled = [(s["rss_mb"] / held, held) for s in new if not math.isnan(s["rss_mb"])
                   for held in [busiest if s["name"] in DAEMONS else even]]
        peak, per_task = max(sampled) if sampled else (math.nan, even)
        return StepUsage(peak_rss_mb=peak, cpu_s=sum(s["cpu_s"] for s in new),
                         ranks_per_task=per_task)
