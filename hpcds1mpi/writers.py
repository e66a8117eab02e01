"""The processes that write an output: one at a time, named in what they leave, and ended by
SIGTERM as cleanly as by SIGINT.

A lock is an exclusive ``flock`` on a small file beside the output (:func:`lock_path`), as the
telemetry writer's ``.lock``: the kernel lets go of it when its process dies, so a killed
writer never leaves a lock that blocks the next one; the file says who holds it
(``pid N on HOST``) for the refusal message; in a folder several users share, another
user's lock is tested and taken as :mod:`hpcds1mpi.lock_files` says (s34 tester U2). A lock is
held per process (taking it twice is one lock) until :func:`release_lock`, the end of the
click command that took it, or the end of the process.

Python's default SIGTERM (``scancel``, the walltime) kills the process before any ``finally``
runs, leaving half-written temporaries behind. While a lock is held or a temporary is being
written (:func:`catch_sigterm` ... :func:`uncatch_sigterm`), SIGTERM raises instead: the
writer unwinds, removes what it started and prints one line (exit 1), as for SIGINT.

A ``kill -9`` still leaves temporaries: their names carry ``PID@HOST`` (:func:`tmp_prefix`),
so the next writer of the same output removes those of dead processes of its host
(:func:`remove_stale`), never a live one's nor another host's.

A file that replaces another keeps its mode and group (:func:`keep_mode`), whichever writer
writes it; a folder swapped in for another keeps the old one's, and so do its files
(:func:`keep_folder_modes`). A name made from the output's (a temporary, a lock, a journal) must fit
:data:`NAME_MAX` as the output's own name does: :func:`side_name` shortens the output's part
of it, the same way each time, so the next writer (and the clean-up of a dead one's
temporaries) finds it again.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import os
import re
import shutil
import signal
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

from hpcds1mpi.errors import LockError, OutputError
from hpcds1mpi.lock_files import holder, take_lock

#: Prefix of every temporary file and folder and of the lock files (readers of a folder, a
#: bundle's or quickstart's, skip such names).
TMP_PREFIX = ".hpcds1mpi-tmp-"
#: This host, in lock files and temporaries' names (a shared file system sees several).
HOST = os.uname().nodename

#: The longest file name (bytes) Linux file systems hold: the output's own name may be that
#: long, so what is named after it is shortened to fit (s32 tester T1).
NAME_MAX = 255

#: This process's locks: :func:`lock_key` -> the open lock file that ``flock`` is held on.
_HELD: dict[str, int] = {}


def lock_key(path: str | os.PathLike) -> str:
    """The output ``path`` once its links are followed: one lock, however it is spelt."""
    return os.path.realpath(path)


def lock_path(path: str | os.PathLike) -> Path:
    """The lock file beside output ``path``."""
    real = Path(lock_key(path))
    return real.parent / side_name(real.name, TMP_PREFIX, ".lock")


def fit_name(name: str, room: int) -> str:
    """``name``, or when it takes more than ``room`` bytes its start, ``~`` and 12 hex digits
    of a hash of the whole: the same name each time, and not the shortening of another long
    name that starts the same."""
    if len(os.fsencode(name)) <= room:
        return name
    mark = "~" + hashlib.sha256(os.fsencode(name)).hexdigest()[:12]
    keep = name
    while keep and len(os.fsencode(keep + mark)) > room:
        keep = keep[:-1]
    return keep + mark


def side_name(name: str, before: str = "", after: str = "", longest: str | None = None) -> str:
    """The name ``before + name + after`` of a file beside output ``name``, with ``name``
    shortened (:func:`fit_name`) where the longest such name (its end ``longest``, else
    ``after``) would pass :data:`NAME_MAX`: a legal output name always has its side files."""
    room = NAME_MAX - len(os.fsencode(before + (after if longest is None else longest)))
    return f"{before}{fit_name(name, room)}{after}"


def hold_lock(path: str | os.PathLike, what: str = "output", option: str = "--out",
              wait_s: float = 0.0) -> bool:
    """Take this process's write lock of ``path`` (held already: nothing more to do).

    Returns:
        False when no lock can be taken here: the folder of ``path`` does not exist yet, or
        its file system has no locks (written unlocked then, as before locks existed).

    Raises:
        LockError: (exit 1) another process holds it, still after ``wait_s`` seconds.
        OutputError: (exit 2) the lock file cannot be created (a read-only folder).
    """
    key = lock_key(path)
    if key in _HELD:
        return True
    lock = lock_path(key)
    if not lock.parent.is_dir():
        return False
    fd = take_lock(  # another user's lock in a shared folder: hpcds1mpi.lock_files (s34 U2)
        lock, busy=lambda holder: LockError(_held_line(path, holder, lock, what, option)),
        cannot_create=lambda exc: OutputError(f"{lock}: cannot create the lock of the {what} "
                                              f"({exc.strerror or exc}); choose another "
                                              f"{option}"), wait_s=wait_s)
    if fd is None:
        return False
    _HELD[key] = fd
    catch_sigterm(path, what)
    click = sys.modules.get("click")  # taken by a command: let go when it ends (a test's
    ctx = click.get_current_context(silent=True) if click else None  # CliRunner, quickstart)
    if ctx is not None:
        ctx.call_on_close(lambda: release_lock(key))
    return True


def held_message(path: str | os.PathLike, what: str, option: str) -> str:
    """The one-line refusal: who holds the lock of ``path``, and what to do."""
    lock = lock_path(path)
    return _held_line(path, holder(lock), lock, what, option)


def _held_line(path, owner: str, lock: Path, what: str, option: str) -> str:
    return (f"{path} is being written by another process ({owner}; lock {lock}); wait for "
            f"it to finish, or choose another {option} for the {what}")


def release_lock(path: str | os.PathLike) -> None:
    """Let go of this process's lock of ``path`` (not held: nothing to do)."""
    fd = _HELD.pop(lock_key(path), None)
    if fd is None:
        return
    with contextlib.suppress(OSError):  # another user's, in a sticky folder: it stays
        lock_path(path).unlink(missing_ok=True)  # while still held: nobody holds the next file
    os.close(fd)
    uncatch_sigterm()


def holds_lock(path: str | os.PathLike) -> bool:
    """Whether this process holds the lock of ``path``."""
    return lock_key(path) in _HELD


@contextlib.contextmanager
def output_lock(path: str | os.PathLike, what: str = "output", option: str = "--out",
                wait_s: float = 0.0) -> Iterator[bool]:
    """Hold the write lock of ``path`` for the block (a read-modify-write), see
    :func:`hold_lock`; yields whether a lock is held."""
    held = holds_lock(path)
    taken = hold_lock(path, what, option, wait_s)
    try:
        yield taken
    finally:
        if taken and not held:
            release_lock(path)


@atexit.register
def _release_all() -> None:
    for key in list(_HELD):
        release_lock(key)


# --------------------------------------------------------------------------------------------
# SIGTERM while writing

#: The line to print for each write in progress (they nest: a lock, then its temporary).
_WRITING: list[str] = []
_CAUGHT = [False]
#: The unraisable hook in place before :func:`catch_sigterm` put :func:`_stop_again`'s.
_HOOK: list = [None]


class SigtermStop(SystemExit):
    """What SIGTERM raises while an output is written: its one line, exit 1."""


#: What a stop leaves of an output written by temp-and-rename, or swapped in whole.
NOTHING_LEFT = "no partial output is left, rerun to write it"


def catch_sigterm(path: str | os.PathLike, what: str, left: str = NOTHING_LEFT) -> None:
    """Until :func:`uncatch_sigterm`, SIGTERM raises ``SystemExit`` with one line: ``finally``
    blocks run (temporaries removed, locks let go) and no ``except Exception`` swallows it.
    Only in the main thread, and only where nobody else handles SIGTERM (a sweep's launcher
    and supervisor have their own). The line says ``left``: what a stop leaves (a folder
    filled in place, as quickstart's, keeps what was finished). The first, outermost catch's
    line is the one printed."""
    _WRITING.append(f"hpcds1mpi: error: {path}: stopped by SIGTERM while writing the {what}; "
                    f"{left}")
    if (len(_WRITING) == 1 and threading.current_thread() is threading.main_thread()
            and signal.getsignal(signal.SIGTERM) is signal.SIG_DFL):
        signal.signal(signal.SIGTERM, _stop)
        _CAUGHT[0] = True
        _HOOK[0], sys.unraisablehook = sys.unraisablehook, _stop_again


def uncatch_sigterm() -> None:
    """End the latest :func:`catch_sigterm`; after the last, SIGTERM kills as before (unless
    someone installed a handler of their own in between: theirs stays)."""
    if _WRITING:
        _WRITING.pop()
    if not _WRITING and _CAUGHT[0] and threading.current_thread() is threading.main_thread():
        if signal.getsignal(signal.SIGTERM) in (_stop, signal.SIG_IGN):
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
        if sys.unraisablehook is _stop_again:  # else someone put theirs on top: it stays
            sys.unraisablehook = _HOOK[0]
        _CAUGHT[0] = False


def _stop(signum, frame) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # the clean-up runs once, uninterrupted
    raise SigtermStop(_WRITING[0] if _WRITING else "hpcds1mpi: error: stopped by SIGTERM")


def _stop_again(unraisable) -> None:
    """A stop raised where Python drops exceptions (a weakref callback of h5py's object
    registry, a ``__del__``) was printed as "Exception ignored", the write went on and SIGTERM
    stayed ignored: a merge stopped mid-write finished and exited 0 (s33 tester C7). The
    signal is delivered again a moment later (now, it would be raised in this hook and dropped
    again), in whatever Python code runs then."""
    if isinstance(unraisable.exc_value, SigtermStop) and _CAUGHT[0]:
        if signal.getsignal(signal.SIGTERM) is signal.SIG_IGN:
            signal.signal(signal.SIGTERM, _stop)
        # a real signal, from another thread: it also wakes a main thread that sleeps
        later = threading.Timer(0.05, os.kill, args=(os.getpid(), signal.SIGTERM))
        later.daemon = True
        with contextlib.suppress(RuntimeError):  # the interpreter is shutting down
            later.start()
        return
    (_HOOK[0] or sys.__unraisablehook__)(unraisable)


# --------------------------------------------------------------------------------------------
# What a replaced file keeps: its mode and group, as the writer may give them


def umask_mode(mode: int) -> int:
    """``mode`` less the bits this process's umask denies."""
    mask = os.umask(0)
    os.umask(mask)
    return mode & ~mask


def replacement_mode(path: Path) -> int:
    """The mode of the file that replaces ``path``: a new file's (0666 less the umask), else
    the old file's, without the group/other write bits the umask denies and, when the old file
    was another user's, without its set-id bits. The new file is the caller's: write access
    the old owner granted (a world-writable script the caller is about to submit) and set-id
    bits (the caller's id, not the old owner's) must not pass to it."""
    try:
        st = path.stat()
    except (FileNotFoundError, NotADirectoryError):
        return umask_mode(0o666)
    group_other_write = 0o022
    mode = st.st_mode & 0o7777 & ~(group_other_write & ~umask_mode(group_other_write))
    return mode if st.st_uid == os.geteuid() else mode & ~0o6000


def keep_mode(new: str | os.PathLike, old: str | os.PathLike) -> None:
    """Give ``new``, about to replace ``old``, the permission bits of :func:`replacement_mode`
    and ``old``'s group where this process may set it; where it may not, that other group gets
    no more than everyone else. The one rule of every writer that replaces a file (a resumed
    sweep's snapshot had turned a private 0600 or 0440 file into 0644, s32 tester T8); a new
    file follows the umask."""
    mode = replacement_mode(Path(old))
    try:
        group = os.stat(old).st_gid
    except OSError:
        group = None
    if group is not None and os.stat(new).st_gid != group:
        try:
            os.chown(new, -1, group)
        except OSError:
            mode &= ~0o070 | ((mode & 0o007) << 3)
    os.chmod(new, mode)


def keep_folder_modes(new: str | os.PathLike, old: str | os.PathLike) -> None:
    """Give folder ``new``, filled and about to replace folder ``old``, what :func:`keep_mode`
    gives a file, and each thing in it what it replaces: ``learn`` and ``train --force`` had
    turned a private 0700 bundle and its 0600 files into 0755 and 0644 (s32 verifier V1).

    The folder keeps ``old``'s bits and group (a setgid bit ``new`` took from a setgid parent
    stays). A file or folder in it that replaces one of the same name and kind keeps that
    one's (:func:`keep_mode`); a new one keeps its own bits only where the folder grants them
    (0644 in a 0700 folder: 0600) and takes the folder's group. A file that is the old one
    (hard-linked over) is left as it is. No old folder: ``new`` follows the umask."""
    new, old = Path(new), Path(old)
    inherited = os.stat(new).st_mode & 0o2000  # what is made in it later keeps the group
    if old.is_symlink() or not old.is_dir():
        os.chmod(new, umask_mode(0o777) | inherited)
        return
    keep_mode(new, old)
    if inherited:
        os.chmod(new, os.stat(new).st_mode & 0o7777 | inherited)
    folder = os.stat(new)
    for top, dirs, files in os.walk(new):  # links are not followed, nor changed
        for name in (*dirs, *files):
            item = Path(top) / name
            if item.is_symlink():
                continue
            before = old / item.relative_to(new)
            if before.is_symlink() or not before.exists() or before.is_dir() != item.is_dir():
                _limit_to_folder(item, folder)
            elif not os.path.samefile(before, item):  # one linked over is the old one
                keep_mode(item, before)


def _limit_to_folder(item: Path, folder: os.stat_result) -> None:
    """A new ``item`` of a kept folder: its bits where the folder grants them, the folder's
    group (else no more for its group than for everyone)."""
    st = os.stat(item)
    mode = st.st_mode & 0o777 & folder.st_mode | (st.st_mode & 0o2000 if item.is_dir() else 0)
    if st.st_gid != folder.st_gid:
        try:
            os.chown(item, -1, folder.st_gid)
        except OSError:
            mode &= ~0o070 | ((mode & 0o007) << 3)
    os.chmod(item, mode)


# --------------------------------------------------------------------------------------------
# Temporaries named after their writer: .hpcds1mpi-tmp-NAME.[old.]PID@HOST.XXXXXXXX[SUFFIX]


def _fit(name: str, suffix: str) -> str:
    """NAME shortened so that a temporary's whole name stays a legal one (the longest PID,
    ``old.`` and tempfile's 8 letters counted): the same for the writer and the clean-up."""
    return side_name(name, TMP_PREFIX, "", f".old.{'9' * 7}@{HOST}.{'x' * 8}{suffix}")[
        len(TMP_PREFIX):]


def tmp_prefix(name: str, suffix: str = "", old: bool = False) -> str:
    """The prefix for ``tempfile`` of a temporary of output ``name`` (``old``: the folder a
    two-rename swap parks the old output in)."""
    return f"{TMP_PREFIX}{_fit(name, suffix)}.{'old.' if old else ''}{os.getpid()}@{HOST}."


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        pass  # another user's process
    return True


def remove_stale(target: Path, name: str, suffix: str, folders: bool) -> None:
    """Remove the temporaries of ``target`` (files, or ``folders``) that a dead process of this
    host left (a kill -9); another host's, a live process's and an unknown name are kept."""
    pattern = re.compile(re.escape(f"{TMP_PREFIX}{_fit(name, suffix)}.") + r"(old\.)?(\d+)"
                         + re.escape(f"@{HOST}.") + "[a-z0-9_]{8}"  # tempfile's 8 letters
                         + re.escape(suffix) + "$")
    try:
        entries = list(os.scandir(target.parent))
    except OSError:
        return
    for entry in entries:
        match = pattern.match(entry.name)
        if not match or _alive(int(match[2])):
            continue
        if not folders and entry.is_file(follow_symlinks=False):
            with contextlib.suppress(OSError):
                os.unlink(entry.path)
        # a dead two-rename swap's old folder holds the only copy while the target is missing
        elif folders and entry.is_dir(follow_symlinks=False) and (not match[1]
                                                                   or target.exists()):
            shutil.rmtree(entry.path, ignore_errors=True)


__all__ = ["HOST", "NAME_MAX", "SigtermStop", "TMP_PREFIX", "catch_sigterm", "fit_name",
           "held_message", "hold_lock", "holds_lock", "keep_folder_modes", "keep_mode",
           "lock_key", "lock_path", "output_lock", "release_lock", "remove_stale",
           "replacement_mode", "side_name", "tmp_prefix", "umask_mode", "uncatch_sigterm"]
