"""Process groups: a launch (mpiexec / srun and the user's program under it) runs in its own
session, dies with the sweep that started it, and is ended as a group, so nothing outlives us.
The same rule for any child command (:func:`run_child`: quickstart's sweep and train), and the
children of a command that did not start them so (:func:`end_children`, tune's trial sweeps)."""

from __future__ import annotations

import contextlib
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


def run_child(cmd: list[str], timeout: float | None = None,
              env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """Run ``cmd`` as :func:`subprocess.run` with its output captured as text, but in its own
    session, dying with us (:func:`die_with_parent`) and ended as a group when we stop: a
    killed quickstart had left its mpiexec, sweep ranks and train running (s33 tester C5;
    ``subprocess.run`` SIGKILLs the launcher alone, which orphans its ranks). ``env`` as for
    :class:`subprocess.Popen` (tune's trials pass the launcher's environment).

    Raises:
        subprocess.TimeoutExpired: past ``timeout`` seconds (the group ended first).
    """
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            stdin=subprocess.DEVNULL, start_new_session=True, env=env,
                            preexec_fn=die_with_parent())
    try:
        out, err = proc.communicate(timeout=timeout)
    except BaseException:  # a time limit, Ctrl-C, SIGTERM: the whole group ends with us
        end_group(proc)
        raise
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def _children() -> list[int]:
    """This process's child PIDs (Linux ``/proc``; none elsewhere)."""
    found: set[int] = set()
    with contextlib.suppress(OSError):
        for tid in os.listdir("/proc/self/task"):
            with contextlib.suppress(OSError), open(f"/proc/self/task/{tid}/children") as fh:
                found.update(int(pid) for pid in fh.read().split())
    return sorted(found)


def _running(pid: int) -> bool:
    """Whether ``pid`` still runs (a zombie waiting to be reaped has ended)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def end_children(signum: int = signal.SIGTERM, grace_s: float = 3.0) -> None:
    """Send ``signum`` to every child of this process and wait up to ``grace_s`` for them to
    end (a launcher passes it on to its ranks and lets them say what they kept); what still
    runs then gets SIGKILL. For children started by code that gives them no group of their
    own: ``subprocess.run`` interrupted SIGKILLs its launcher at once, orphaning the ranks
    (s33 tester C6: tune's trial sweep went on writing after tune was gone)."""
    import time

    children = _children()
    for pid in children:
        with contextlib.suppress(OSError):
            os.kill(pid, signum)
    deadline = time.monotonic() + grace_s
    while any(_running(pid) for pid in children) and time.monotonic() < deadline:
        time.sleep(0.05)
    for pid in children:
        if _running(pid):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


@contextlib.contextmanager
def children_end_first():
    """While the block runs (main thread only), SIGTERM and SIGINT first end this process's
    children (:func:`end_children`), then do what they did before: the handler in place
    (writers' one line for SIGTERM, ``KeyboardInterrupt`` for SIGINT), else the default."""
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}

    def ending(signum, frame):
        signal.signal(signum, signal.SIG_IGN)  # a second one must not cut the waiting short
        try:
            end_children(signal.SIGTERM)
        finally:
            signal.signal(signum, before[signum])
        previous = before[signum]
        if callable(previous):
            previous(signum, frame)
        elif previous == signal.SIG_DFL:
            signal.raise_signal(signum)

    for sig in before:
        signal.signal(sig, ending)
    try:
        yield
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)
