"""A writer's lock file in a folder several users share (s34 tester U2): readable whatever the
umask, its holder found by the kernel where the file cannot be read."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from hpcds1mpi.errors import LockError, OutputError
from hpcds1mpi.lock_files import LOCK_MODE, holder, holding_pid, owner_name, take_lock


def _busy(words: str) -> LockError:
    return LockError(f"held by {words}")


def _take(lock):
    return take_lock(lock, busy=_busy, cannot_create=lambda exc: OutputError(str(exc)))


def test_a_lock_is_readable_by_others_whatever_the_umask(tmp_path):
    old = os.umask(0o077)
    try:
        fd = _take(tmp_path / "x.lock")
    finally:
        os.umask(old)
    try:
        assert (tmp_path / "x.lock").stat().st_mode & 0o777 == LOCK_MODE
        assert (tmp_path / "x.lock").read_text() == f"pid {os.getpid()} on {os.uname().nodename}\n"
    finally:
        os.close(fd)


def test_the_kernel_names_the_holder_of_a_lock_that_cannot_be_read(tmp_path):
    lock = tmp_path / "x.lock"
    code = textwrap.dedent(f"""
        import fcntl, os, time
        fd = os.open({str(lock)!r}, os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX)
        print("held", flush=True)
        time.sleep(60)
    """)
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "held"
        assert holding_pid(lock) == proc.pid
        assert holder(lock) == f"pid {proc.pid}, user {owner_name(lock)}"  # the file is empty
        with pytest.raises(LockError, match=f"held by pid {proc.pid}"):
            _take(lock)
    finally:
        proc.kill()
        proc.wait()
    assert holding_pid(lock) is None
    os.close(_take(lock))


@pytest.mark.parametrize("how", ["LOCK_SH", "lockf"])
def test_a_readers_lock_or_a_posix_lock_is_no_writer(tmp_path, how):
    """s34 review: every lock line on the inode counted, so a reader's brief LOCK_SH (as
    writer_alive takes) or a POSIX lock (pid -1 for OFD locks) read as a live writer."""
    lock = tmp_path / "x.lock"
    take = ("fcntl.flock(fd, fcntl.LOCK_SH)" if how == "LOCK_SH"
            else "fcntl.lockf(fd, fcntl.LOCK_EX)")
    code = textwrap.dedent(f"""
        import fcntl, os, time
        fd = os.open({str(lock)!r}, os.O_RDWR | os.O_CREAT, 0o600)
        {take}
        print("held", flush=True)
        time.sleep(60)
    """)
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "held"
        assert holding_pid(lock) is None
    finally:
        proc.kill()
        proc.wait()


def test_a_lock_that_cannot_be_created_is_the_callers_error(tmp_path):
    with pytest.raises(OutputError):
        _take(tmp_path / "missing" / "x.lock")
