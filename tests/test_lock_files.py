"""A writer's lock file in a folder several users share (s34 tester U2): readable whatever the
umask, its holder found by the kernel where the file cannot be read."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from hpcds1mpi.errors import LockError, OutputError
from hpcds1mpi.lock_files import (LOCK_MODE, holder, holding_pid, owner_name, read_side_file,
                                  take_lock)


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


# --------------------------------------------------------------------------------------------
# A side file that is no regular file (s35 tester R1-R3)

from tests.other_user import as_other_user, shared_folder  # noqa: E402,F401 (a fixture)
from tests.planted_files import (left_as_it_was, plant, plant_link, private_file,  # noqa: E402
                                 within)


def test_a_link_planted_by_another_user_is_refused_and_its_target_left_as_it_was(
        tmp_path, shared_folder):  # noqa: F811
    """R1: bob's ``ln -s ~alice/id_key t.h5.lock`` had alice's writer empty the key, write
    "pid N on HOST" into it and make it 0644."""
    key = private_file(tmp_path / "id_key")
    lock = shared_folder / "t.h5.lock"
    plant_link(lock, key)
    with pytest.raises(OutputError, match=f"^{lock} is a symbolic link, not a file hpcds1mpi "
                                          rf"writes; remove it \(rm {lock}\) if no hpcds1mpi"):
        _take(lock)
    assert left_as_it_was(key) and lock.is_symlink()
    assert holder(lock) == "?" or "id_key" not in holder(lock)  # the target is never read


def test_a_dangling_link_creates_nothing_where_it_points(tmp_path):
    lock, target = tmp_path / "x.lock", tmp_path / "made-through-the-link"
    plant_link(lock, target)
    with pytest.raises(OutputError, match="is a symbolic link"):
        _take(lock)
    assert not os.path.lexists(target)


def test_a_hard_link_to_the_callers_file_is_never_written_through(tmp_path):
    key = private_file(tmp_path / "id_key")
    lock = tmp_path / "x.lock"
    os.link(key, lock)
    with pytest.raises(OutputError, match=r"is a hard link \(2 names of one file\)"):
        _take(lock)
    assert left_as_it_was(key)


def _take_within_a_second(lock) -> str:
    with within(1.0):
        os.close(_take(lock))
    return "taken"


@pytest.mark.parametrize("kind", ["fifo", "folder", "socket"])
def test_a_fifo_socket_or_folder_is_refused_at_once_naming_it(tmp_path, kind):
    """R2, R3: a FIFO hung the writer for ever; a folder read as a full disk (exit 1)."""
    lock = tmp_path / "t.h5.lock"
    what = plant(kind, lock)
    with pytest.raises(OutputError, match=f"^{lock} {what}, not a file hpcds1mpi writes; "
                                          f"remove it \\(rm {'-r ' if kind == 'folder' else ''}"):
        _take_within_a_second(lock)
    assert OutputError.exit_code == 2
    with within(1.0):
        assert holder(lock) == "?" or what not in holder(lock)  # a reader does not block either


@pytest.mark.parametrize("kind", ["fifo", "folder"])
def test_another_users_fifo_or_folder_is_refused_at_once(shared_folder, kind):  # noqa: F811
    """R2: another user's FIFO blocked the read-only open taken for another user's lock."""
    lock = shared_folder / "t.h5.lock"
    what = plant(kind, lock)
    assert as_other_user(_take_within_a_second, lock) == (
        "OutputError", f"{lock} {what}, not a file hpcds1mpi writes; remove it "
        f"(rm {'-r ' if kind == 'folder' else ''}{lock}) if no hpcds1mpi command is running, "
        "then rerun")


def test_a_side_file_is_read_without_blocking_or_following(tmp_path):
    fifo = tmp_path / "t.h5.journal"
    plant("fifo", fifo)
    with within(1.0), pytest.raises(OutputError, match="is a FIFO"):
        read_side_file(fifo)
    link = tmp_path / "note"
    plant_link(link, private_file(tmp_path / "id_key"))
    with pytest.raises(OutputError, match="is a symbolic link"):
        read_side_file(link)
