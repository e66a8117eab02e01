"""Whether the Slurm allocation a sweep runs in is still alive.

A launch that fails because its allocation ended under it (``scancel``, the time limit, a
``timeout`` around ``salloc``) says nothing of the program: Open MPI's ``mpirun`` only reports
that it "lost communication with a remote daemon" and exits 1 or 205. Recorded ``failed``, such
a run was learnt from (s28 tester U: 457 s and 5488 J of a hung run that was killed). After a
failed launch inside an allocation, :func:`allocation_end` asks Slurm whether the allocation is
still running; when it is not, the run is ``interrupted`` and the sweep stops.
"""

from __future__ import annotations

import os
import shutil
import subprocess

#: squeue states of an allocation that still runs its steps.
ALIVE = ("RUNNING", "CONFIGURING", "RESIZING", "SUSPENDED")
#: Words for how an allocation ended, by Slurm job state.
ENDED = {"CANCELLED": "was cancelled", "TIMEOUT": "reached its time limit",
         "DEADLINE": "reached its deadline", "NODE_FAIL": "lost a node (NODE_FAIL)",
         "PREEMPTED": "was preempted", "OUT_OF_MEMORY": "ran out of memory",
         "BOOT_FAIL": "failed to boot a node"}
#: Seconds one squeue / sacct call may take.
ASK_TIMEOUT_S = 15.0


def _ask(command: list[str], env: dict) -> str | None:
    try:
        proc = subprocess.run(command, capture_output=True, text=True, timeout=ASK_TIMEOUT_S,
                              env=env, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return proc.stdout.strip() if proc.returncode == 0 else None


def allocation_end(env: dict | None = None) -> str:
    """How this process's Slurm allocation ended ("job 123 was cancelled"), or "" while it
    runs, outside an allocation, or where squeue does not answer (no evidence it ended)."""
    env = dict(os.environ if env is None else env)
    job = env.get("SLURM_JOB_ID", "")
    if not job.isdigit() or shutil.which("squeue", path=env.get("PATH")) is None:
        return ""
    state = _ask(["squeue", "-h", "-j", job, "-o", "%T"], env)
    if state is None:  # squeue refuses a job it no longer holds: "Invalid job id specified"
        listed = _ask(["squeue", "-h", "-o", "%i"], env)
        if listed is None or job in listed.split():
            return ""  # squeue itself did not answer
        state = ""
    state = state.split()[0] if state else ""
    if state in ALIVE:
        return ""
    # COMPLETING (being revoked) or gone: sacct says why, where it answers.
    final = _ask(["sacct", "-X", "-n", "-P", "-j", job, "-o", "State"], env) \
        if shutil.which("sacct", path=env.get("PATH")) else None
    final = (final or "").split("\n")[0].split(" ")[0]  # "CANCELLED by 0"
    words = ENDED.get(final) or f"has ended ({state or 'squeue no longer lists it'})"
    return f"the Slurm allocation (job {job}) {words}"
