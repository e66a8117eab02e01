"""Whether the Slurm allocation a sweep runs in is alive, and whether it ended under a launch.

A launch that fails because its allocation ended under it (``scancel``, the time limit, a
``timeout`` around ``salloc``) says nothing of the program: Open MPI's ``mpirun`` only reports
that it "lost communication with a remote daemon" and exits 1 or 205. Recorded ``failed``, such
a run was learnt from (s28 tester U: 457 s and 5488 J of a hung run that was killed).

:meth:`Allocation.at_start` asks Slurm once, when the sweep starts, whether ``SLURM_JOB_ID``
names a running allocation (the answer the partition's reader,
:func:`hpcds1mpi.slurm_allocation.in_allocation`, got, where it asked first): a stale one (a
shell left from an ended ``salloc``, a copied environment), or a running one whose ``SLURM_*``
contradict it (another job's, perhaps another user's, whose end is no launch's: s35 fixer
L1), is ignored, with one note, so a program's own failure is never taken for the end
of a job that had ended long before (s28 tester Z6: exit 3 recorded ``interrupted``). After a
failed launch, :meth:`Allocation.end` asks again; when the allocation seen alive no longer
runs, or it still runs past its end time (squeue's ``%e``: Slurm refuses new steps from then,
"Job/step already completing or completed", before it marks the job ended: s33 tester A8), the
run is ``interrupted`` and the sweep stops. A squeue that does not answer in
:data:`ASK_TIMEOUT_S` is said once and not asked again in the sweep (s28 tester Z5: 15 s of a
hung squeue after every failed launch, silently).
"""

from __future__ import annotations

import os
import shutil
import time

# Asking Slurm about a job is the allocation reader's, so that a sweep and the partition it
# runs on take one answer per process (s32 tester T4); re-exported for slurm_accounting.
from hpcds1mpi.slurm_allocation import (ALIVE, ASK_TIMEOUT_S, NoAnswer, ask_slurm,
                                        first_job_state, job_state, leftover_job,
                                        say_leftover_once)

__all__ = ["ALIVE", "ASK_TIMEOUT_S", "ENDED", "Allocation", "NoAnswer", "allocation_end",
           "ask_slurm", "tell"]

#: Words for how an allocation ended, by Slurm job state.
ENDED = {"CANCELLED": "was cancelled", "TIMEOUT": "reached its time limit",
         "DEADLINE": "reached its deadline", "NODE_FAIL": "lost a node (NODE_FAIL)",
         "PREEMPTED": "was preempted", "OUT_OF_MEMORY": "ran out of memory",
         "BOOT_FAIL": "failed to boot a node"}


def allocation_end(env: dict | None = None, timeout_s: float | None = None) -> str:
    """How this process's Slurm allocation ended ("the Slurm allocation (job 123) was
    cancelled"), or "" while it runs, outside an allocation, or where squeue does not answer
    (no evidence it ended).

    Raises:
        NoAnswer: squeue did not answer (only where ``SLURM_JOB_ID`` names a job).
    """
    env = dict(os.environ if env is None else env)
    job = env.get("SLURM_JOB_ID", "")
    if not job.isdigit() or shutil.which("squeue", path=env.get("PATH")) is None:
        return ""
    timeout_s = timeout_s or ASK_TIMEOUT_S
    state = job_state(job, env, timeout_s)
    if state in ALIVE:
        return f"the Slurm allocation (job {job}) {ENDED['TIMEOUT']}" if _past_end(
            job, env, timeout_s) else ""
    # COMPLETING (being revoked) or gone: sacct says why, where it answers.
    final = None
    if shutil.which("sacct", path=env.get("PATH")):
        try:
            final = ask_slurm(["sacct", "-X", "-n", "-P", "-j", job, "-o", "State"], env, timeout_s)
        except NoAnswer:
            pass  # the end is known; only its cause is not
    final = (final or "").split("\n")[0].split(" ")[0]  # "CANCELLED by 0"
    words = ENDED.get(final) or f"has ended ({state or 'squeue no longer lists it'})"
    return f"the Slurm allocation (job {job}) {words}"


def _past_end(job: str, env: dict, timeout_s: float) -> bool:
    """Whether squeue's end time of running ``job`` has passed: Slurm then refuses its new
    steps, though it may list the job running for up to a minute more (s33 tester A8). False
    where it has none ("N/A", "Unknown": no time limit) or squeue does not answer."""
    from datetime import datetime

    try:
        text = ask_slurm(["squeue", "-h", "-j", job, "-o", "%e"], env, timeout_s) or ""
        end = datetime.fromisoformat(text.split()[0]).timestamp() if text.split() else None
    except (NoAnswer, ValueError):
        return False
    return end is not None and end <= time.time()


class Allocation:
    """The Slurm allocation (``job_id``) a sweep was seen running in at its start."""

    def __init__(self, job_id: str, env: dict, say=None, timeout_s: float | None = None):
        self.job_id = job_id
        self.env = env
        self.say = say
        self.timeout_s = timeout_s
        self.unanswered = False  # squeue did not answer once: not asked again this sweep

    @classmethod
    def at_start(cls, env: dict | None = None, say=None,
                 timeout_s: float | None = None) -> "Allocation | None":
        """The running allocation ``SLURM_JOB_ID`` names; None outside one, where squeue is
        missing, or (said once through ``say``) where the job is not running, its ``SLURM_*``
        contradict it (:func:`~hpcds1mpi.slurm_allocation.leftover_job`) or squeue does not
        answer: a later failed launch is then the program's failure."""
        env = dict(os.environ if env is None else env)
        job = env.get("SLURM_JOB_ID", "")
        if not job.isdigit() or shutil.which("squeue", path=env.get("PATH")) is None:
            return None
        try:
            state = first_job_state(job, env, timeout_s or ASK_TIMEOUT_S)
        except NoAnswer as exc:
            tell(say, f"note: {exc} about SLURM_JOB_ID={job}: it is not watched in this sweep "
                      "(a failed launch is recorded failed, never interrupted by the "
                      "allocation's end)")
            return None
        if state not in ALIVE:
            # Said once per process: the partition's reader may have said it already.
            say_leftover_once(job, f"note: SLURM_JOB_ID={job} names no running allocation "
                                   f"({state or 'squeue does not list it'}): it is ignored (a "
                                   "failed launch is the program's failure; memory and CPU of "
                                   "ranks under srun are not read from sacct); unset the "
                                   "leftover SLURM_* variables, or sweep from an "
                                   "allocation's shell", say)
            return None
        # a running job whose SLURM_* contradict it (copied from another job, perhaps another
        # user's: s35 fixer L1) is not this sweep's: its end says nothing of a launch here
        if note := leftover_job(env, timeout_s):  # the same one squeue answer
            say_leftover_once(job, f"note: {note} (a failed launch is the program's failure, "
                                   "never that job's end)", say)
            return None
        return cls(job, env, say, timeout_s)

    def end(self) -> str:
        """How the allocation ended since the start ("" while it runs, or once squeue did not
        answer: said once, then never asked again in the sweep)."""
        if self.unanswered:
            return ""
        try:
            return allocation_end(self.env, self.timeout_s)
        except NoAnswer as exc:
            self.unanswered = True
            tell(self.say, f"note: {exc}: whether the Slurm allocation (job {self.job_id}) "
                           "ends under a launch is not checked for the rest of this sweep (a "
                           "failed launch is recorded failed)")
            return ""


def tell(say, line: str) -> None:
    if say is not None:
        say(line)
