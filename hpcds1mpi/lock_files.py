"""A writer's lock file, in a folder several users share.

A writer holds an exclusive ``flock`` on a small file beside its output (a bundle's
``.hpcds1mpi-tmp-NAME.lock``, a telemetry file's ``t.h5.lock``); the file says who holds it
(``pid N on HOST``). In a folder a group shares, the file may be another user's (s34 tester
U2): opened for writing only, a live writer's lock had told the second user "cannot create the
lock (Permission denied)", and a killed writer's lock had blocked everyone else for good.

- A lock file is made readable by all who reach its folder (0644 whatever the umask): ``flock``
  works on a read-only descriptor, so another user can test it.
- Another user's lock that we may not write is taken through a read-only descriptor; once
  ours (its writer is gone) it is replaced by a lock file of our own where the folder lets us,
  so that it names us.
- Another user's lock that we cannot open at all (one made 0600 before this rule): the
  kernel's list of locks (``/proc/locks``) says whether a process of this host holds it; if
  none does, the refusal names the file, its owner and the fix, since a writer on another
  host of a shared file system would not be seen there.

Every side file beside an output that is opened in place (these locks, the telemetry journal
and its notes, a program's output-file lock) is opened by :func:`open_side_file`: never through
a symbolic link, never blocking on a FIFO, and only where it is a regular file. Opened as they
were, a link planted by another user had a lock's writer empty the link's target and make it
0644 (s35 tester R1), a FIFO had hung every writer and reader (R2), and a folder had read as a
full disk (R3).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
import time
from collections.abc import Callable
from pathlib import Path

from hpcds1mpi.errors import LockError, OutputError

#: A lock file's mode: anyone who reaches its folder may open it read-only to test it.
LOCK_MODE = 0o644
_REFUSED = (errno.EACCES, errno.EPERM)
_BUSY = (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES)
#: How every side file is opened: the last name never followed, a FIFO's open never waiting
#: for a writer, the descriptor never inherited by a launched program.
_IN_PLACE = os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | getattr(os, "O_NOCTTY", 0)
#: What a side file that is not a regular file is, in the refusal.
_KINDS = {stat.S_IFLNK: "a symbolic link", stat.S_IFIFO: "a FIFO", stat.S_IFSOCK: "a socket",
          stat.S_IFCHR: "a character device", stat.S_IFBLK: "a block device",
          stat.S_IFDIR: "a folder"}


def not_regular(path: str | os.PathLike) -> str | None:
    """What ``path`` is where it is there and is no regular file ("a FIFO", "a character
    device", "a folder"; a link is followed), else None: a reader refuses it before an
    ``open`` that would wait for a FIFO's writer forever (s47 tester M2, M3)."""
    try:
        st = os.stat(path)
    except OSError:  # nothing there (or its folder unreadable): the open says
        return None
    return None if stat.S_ISREG(st.st_mode) else _KINDS.get(stat.S_IFMT(st.st_mode),
                                                             "not a regular file")


def open_side_file(path: str | os.PathLike, flags: int, mode: int = LOCK_MODE) -> int:
    """A descriptor of side file ``path`` opened with ``flags``, only where it is (or is
    created as) a regular file: nothing is followed, nothing blocks, nothing is written first.

    ``O_TRUNC`` truncates once the file is checked; a file opened for writing must have no
    other name (a hard link to another file would be written through).

    Raises:
        OutputError: (exit 2) ``path`` is a symbolic link, a FIFO, a socket, a device, a folder
            or a hard link: named, with what it is and the fix (s35 tester R1-R3).
        OSError: the open failed otherwise (the caller's to say: permission, a read-only folder).
    """
    path = os.fspath(path)
    writes = flags & os.O_ACCMODE != os.O_RDONLY
    _refuse_unless_regular(path, _lstat(path), writes)  # a device is never opened at all
    try:
        fd = os.open(path, (flags & ~os.O_TRUNC) | _IN_PLACE, mode)
    except OSError:  # ELOOP (a link), ENXIO (a socket), EISDIR: what it is, said
        _refuse_unless_regular(path, _lstat(path), writes)
        raise
    try:
        _refuse_unless_regular(path, os.fstat(fd), writes)  # swapped since the lstat
        if flags & os.O_TRUNC:
            os.ftruncate(fd, 0)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_side_file(path: str | os.PathLike) -> bytes:
    """The bytes of side file ``path``, read as :func:`open_side_file` opens it (OutputError
    for what is no regular file, OSError as reading raises it)."""
    with os.fdopen(open_side_file(path, os.O_RDONLY), "rb") as fh:
        return fh.read()


def _lstat(path: str) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except OSError:  # none yet (or its folder unreadable): the open says
        return None


def _refuse_unless_regular(path: str, st: os.stat_result | None, writes: bool) -> None:
    if st is None:
        return
    kind = _KINDS.get(stat.S_IFMT(st.st_mode), "not a regular file")
    if stat.S_ISREG(st.st_mode):
        if not writes or st.st_nlink <= 1:
            return
        kind = f"a hard link ({st.st_nlink} names of one file)"
    import shlex

    remove = f"rm {'-r ' if stat.S_ISDIR(st.st_mode) else ''}{shlex.quote(path)}"
    raise OutputError(f"{path} is {kind}, not a file hpcds1mpi writes; remove it ({remove}) if "
                      "no hpcds1mpi command is running, then rerun")


def take_lock(lock: Path, *, busy: Callable[[str], BaseException],
              cannot_create: Callable[[OSError], BaseException], wait_s: float = 0.0
              ) -> int | None:
    """An open descriptor of ``lock`` holding its exclusive ``flock``, the file saying
    ``pid N on HOST`` where it is ours.

    Args:
        busy: the exception to raise when another process holds it (given :func:`holder`).
        cannot_create: the exception for an ``OSError`` creating it (a read-only folder).
        wait_s: how long to wait for a holder to let go.

    Returns:
        None where the file system has no locks (the caller writes unlocked then).

    Raises:
        what ``busy`` and ``cannot_create`` give; LockError: another user's lock that this
        user cannot open, held by no process of this host.
    """
    deadline = time.monotonic() + wait_s
    while True:
        fd = _open(lock, busy, cannot_create)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            if exc.errno not in _BUSY:
                return None
            if time.monotonic() >= deadline:
                raise busy(holder(lock)) from None
            time.sleep(0.05)
            continue
        try:  # its last holder may have removed the file between our open and our flock
            same = os.lstat(lock).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if same and not _writable(fd) and _removed(lock):
            same = False  # another user's free lock: made again, ours (held while removed)
        if same:
            break
        os.close(fd)
    with contextlib.suppress(OSError):
        os.ftruncate(fd, 0)
        os.write(fd, f"pid {os.getpid()} on {os.uname().nodename}\n".encode())
    return fd


def _open(lock: Path, busy, cannot_create) -> int:
    try:
        fd = open_side_file(lock, os.O_RDWR | os.O_CREAT, LOCK_MODE)
    except OSError as exc:
        if exc.errno not in _REFUSED or not os.path.lexists(lock):
            raise cannot_create(exc) from None
        try:  # another user's: flock works on a read-only descriptor
            return open_side_file(lock, os.O_RDONLY)
        except OSError as again:
            raise _unopenable(lock, again, busy) from None
    if os.fstat(fd).st_uid == os.geteuid():
        with contextlib.suppress(OSError):  # the umask (077) must not hide it from others
            os.fchmod(fd, LOCK_MODE)
    return fd


def _writable(fd: int) -> bool:
    return fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE != os.O_RDONLY


def _removed(lock: Path) -> bool:
    try:
        os.unlink(lock)
    except OSError:  # a sticky folder (/tmp): held through the read-only descriptor
        return False
    return True


def _unopenable(lock: Path, exc: OSError, busy) -> BaseException:
    owner = owner_name(lock)
    pid = holding_pid(lock)
    if pid is not None:
        return busy(f"pid {pid} on {os.uname().nodename}, user {owner}")
    return LockError(f"{lock}: a lock of user {owner} that this user cannot open "
                     f"({exc.strerror or exc}) and no process of this host holds: unless "
                     f"{owner} is writing there from another host, remove it (rm {lock}) "
                     "and rerun")


def holder(lock: Path) -> str:
    """Who holds ``lock``, in words: what the file says, with its user where that is another;
    where it cannot be read, the process the kernel names, else "?"."""
    try:
        said = read_side_file(lock).decode().strip()
    except (OSError, OutputError, UnicodeDecodeError):
        said = ""
    try:
        mine = os.stat(lock).st_uid == os.geteuid()
    except OSError:
        return said or "?"
    if said:
        return said if mine else f"{said}, user {owner_name(lock)}"
    pid = holding_pid(lock)
    return f"{'pid %d' % pid if pid else 'a process'}, user {owner_name(lock)}"


def owner_name(path: Path) -> str:
    """The name (else ``uid N``) of the user who owns ``path`` ("?" when it is gone)."""
    import pwd

    try:
        uid = os.stat(path).st_uid
    except OSError:
        return "?"
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


def holding_pid(lock: Path) -> int | None:
    """The process of this host that holds a lock on file ``lock`` (``/proc/locks``), else
    None."""
    try:
        st = os.stat(lock)
        with open("/proc/locks") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return None
    want = (os.major(st.st_dev), os.minor(st.st_dev), st.st_ino)
    for line in lines:
        words = line.split()
        # only a writer's flock counts: "->" is a process waiting, a reader's LOCK_SH
        # (writer_alive's test) or a POSIX / OFD lock (pid -1) is no writer (s34 review)
        if len(words) < 6 or words[1] != "FLOCK" or words[3] != "WRITE":
            continue
        try:
            major, minor, inode = words[5].split(":")
            if (int(major, 16), int(minor, 16), int(inode)) == want and int(words[4]) > 0:
                return int(words[4])
        except ValueError:
            continue
    return None


__all__ = ["LOCK_MODE", "holder", "holding_pid", "not_regular", "open_side_file", "owner_name",
           "read_side_file", "take_lock"]
