"""Process groups: a launch (mpiexec / srun and the user's program under it) runs in its own
session, dies with the sweep that started it, and is ended as a group, so nothing outlives us."""

from __future__ import annotations

import os
import signal
import subprocess
import sys


def die_with_parent():
    """A ``preexec_fn`` asking Linux to send the launch SIGTERM when its parent (the sweep, the
    supervisor) dies, even by SIGKILL (``PR_SET_PDEATHSIG``; mpiexec / srun pass it on to their
    ranks), so no launch outlives us; None where there is no prctl."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        prctl = libc.prctl
    except (OSError, AttributeError):
        return None
    parent = os.getpid()

    def preexec() -> None:
        prctl(1, signal.SIGTERM, 0, 0, 0)  # 1 = PR_SET_PDEATHSIG
        if os.getppid() != parent:  # the sweep died before the prctl took effect
            os._exit(1)

    return preexec


def end_group(proc: subprocess.Popen, signum: int = signal.SIGTERM, grace_s: float = 3.0) -> None:
    """End ``proc``'s process group: ``signum``, ``grace_s`` to finish, then SIGKILL; reap
    ``proc``. Members that outlive the leader (children of the program) get SIGKILL too."""
    for sig, grace in ((signum, grace_s), (signal.SIGKILL, 10.0)):
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            break
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            continue
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # members that outlived the leader
        except (ProcessLookupError, PermissionError):
            pass
        break
