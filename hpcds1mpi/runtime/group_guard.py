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

It imports the standard library only (``-I -S``: no site, no user paths): started per setup, it
must not pay for the package's import, and it stays a plain script whatever the venv holds.
"""

from __future__ import annotations

import os
import signal
import sys
import time

#: Seconds CMD gets after SIGTERM before the group is SIGKILLed (below ``end_group``'s 3 s, so
#: the guard finishes its own ending before a parent ending the group SIGKILLs it).
GRACE_S = 2.0
#: The signals that end the group: the death signal (SIGTERM), a hang-up, an interrupt.
ENDING = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)


def _end_group(child: int) -> None:
    """SIGTERM the group, :data:`GRACE_S` for ``child``, then SIGKILL the group (the guard
    too: it has nothing left to report)."""
    for sig in ENDING:
        signal.signal(sig, signal.SIG_IGN)
    os.killpg(0, signal.SIGTERM)
    deadline = time.monotonic() + GRACE_S
    while time.monotonic() < deadline:
        try:
            if os.waitpid(child, os.WNOHANG)[0]:
                break
        except ChildProcessError:
            break
        time.sleep(0.02)
    os.killpg(0, signal.SIGKILL)


def main(argv: list[str]) -> int:
    if not argv:
        print("group_guard: give the command to run", file=sys.stderr)
        return 2
    if os.getpgrp() != os.getpid():  # started without a session of its own: never end the
        os.setpgid(0, 0)  # starter's group, only a group of the guard's
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
    os.killpg(0, signal.SIGTERM)  # what CMD left running in its group
    code = os.waitstatus_to_exitcode(status)
    if code < 0:
        if -code not in (signal.SIGKILL, signal.SIGSTOP):  # these cannot be set
            signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
