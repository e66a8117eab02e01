"""A guard that takes a command's whole process group down with the process that started it.

``PR_SET_PDEATHSIG`` (:func:`~hpcds1mpi.runtime.processes.die_with_parent`) reaches only the
child it is set on: a ``/bin/sh -c`` setup died with a SIGKILLed sweep, but what the shell had
started (``decomposePar``, ``sleep 301``) was reparented to init and ran on (s30 tester O4).
Run as ``python -I -S group_guard.py CMD ARGS...`` under that death signal, in a session of its
own, the guard starts CMD in its process group (the session's) and waits; the death signal (or SIGTERM /
SIGHUP / SIGINT from anyone) makes it send SIGTERM to the group, wait :data:`GRACE_S` for CMD,
then SIGKILL the group, itself included. When CMD ends, whatever it left running in the group
gets SIGTERM (nothing of a finished setup runs beside the measured program), and the guard
exits as CMD did (a signal re-raised, so its parent sees ``-N``).

A process that leaves the group (``setsid``, a daemon's double fork) is still the guard's
descendant: the guard is a child subreaper (``PR_SET_CHILD_SUBREAPER``), so such orphans are
reparented to it, not to init, and every signal above goes to its descendants as well as to
its group (s30 verifier D2: ``setsid sleep 300 &`` had outlived its setup and the sweep).
Descendants still there :data:`GRACE_S` after CMD ended and they were sent SIGTERM are
SIGKILLed.

It imports the standard library only (``-I -S``: no site, no user paths): started per setup, it
must not pay for the package's import, and it stays a plain script whatever the venv holds.
"""

from __future__ import annotations

import os
import signal
import sys
import time

#: ``prctl`` option (linux/prctl.h): orphaned descendants are reparented to this process.
PR_SET_CHILD_SUBREAPER = 36

#: Seconds CMD gets after SIGTERM before the group is SIGKILLed (below ``end_group``'s 3 s, so
#: the guard finishes its own ending before a parent ending the group SIGKILLs it).
GRACE_S = 2.0
#: The signals that end the group: the death signal (SIGTERM), a hang-up, an interrupt.
ENDING = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)


def _become_subreaper() -> None:
    """Have orphaned descendants reparented to the guard (where the kernel allows: Linux)."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):  # no prctl: the group alone is ended, as before
        pass


def _descendants() -> list[int]:
    """The guard's living descendants, read from ``/proc`` (zombies left out: reaped)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else ():
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                fields = fh.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):  # gone meanwhile
            continue
        if fields[0] != b"Z":
            children.setdefault(int(fields[1]), []).append(int(entry))
    found, todo = [], list(children.get(os.getpid(), ()))
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, ()))
    return found


def _reap() -> None:
    """Reap whatever of the guard's children has ended (orphans reparented to it)."""
    try:
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass
    except ChildProcessError:
        pass


def _signal_all(sig: int, group: bool = True) -> None:
    """Send ``sig`` to every descendant and (``group``) to the guard's own group."""
    for pid in _descendants():
        try:
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass
    if group:
        os.killpg(0, sig)


def _end_group(child: int) -> None:
    """SIGTERM the group and every descendant, :data:`GRACE_S` for ``child``, then SIGKILL
    them and the group (the guard too: it has nothing left to report)."""
    for sig in ENDING:
        signal.signal(sig, signal.SIG_IGN)
    _signal_all(signal.SIGTERM)
    deadline = time.monotonic() + GRACE_S
    while time.monotonic() < deadline:
        try:
            if os.waitpid(child, os.WNOHANG)[0]:
                break
        except ChildProcessError:
            break
        time.sleep(0.02)
    _signal_all(signal.SIGKILL, group=False)
    os.killpg(0, signal.SIGKILL)


def _end_leftovers() -> None:
    """After CMD ended: SIGTERM what it left running, SIGKILL what is still there
    :data:`GRACE_S` later (a leftover that ignores SIGTERM, in or out of the group)."""
    _signal_all(signal.SIGTERM)
    deadline = time.monotonic() + GRACE_S
    while True:
        _reap()
        if not _descendants():
            return
        if time.monotonic() >= deadline:
            break
        time.sleep(0.02)
    _signal_all(signal.SIGKILL, group=False)
    _reap()


def main(argv: list[str]) -> int:
    if not argv:
        print("group_guard: give the command to run", file=sys.stderr)
        return 2
    if os.getpgrp() != os.getpid():  # started without a session of its own: never end the
        os.setpgid(0, 0)  # starter's group, only a group of the guard's
    _become_subreaper()
    child = -1

    def ending(signum, frame):
        if child > 0:
            _end_group(child)
        os._exit(128 + signum)  # before the fork: nothing started

    for sig in ENDING:
        signal.signal(sig, ending)
    # held over the fork: a death signal between the fork and ``child`` set would orphan CMD
    signal.pthread_sigmask(signal.SIG_BLOCK, ENDING)
    child = os.fork()
    if child == 0:
        for sig in ENDING:
            signal.signal(sig, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, ENDING)
        try:
            os.execvp(argv[0], argv)
        except OSError as exc:
            print(f"group_guard: cannot start {argv[0]}: {exc.strerror}", file=sys.stderr)
            os._exit(127)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, ENDING)
    _, status = os.waitpid(child, 0)
    for sig in ENDING:
        signal.signal(sig, signal.SIG_IGN)
    _end_leftovers()  # what CMD left running, in its group or not
    code = os.waitstatus_to_exitcode(status)
    if code < 0:
        if -code not in (signal.SIGKILL, signal.SIGSTOP):  # these cannot be set
            signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
