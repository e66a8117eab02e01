"""Writing outputs so that a failure never leaves a partial file, nor costs a user a file.

Files go through temp-and-rename: a temporary name in the target's directory is written,
fsync'ed and ``os.replace``d onto the target (:func:`atomic_path`, :func:`write_text`,
:func:`write_bytes`), so a reader sees the old file or the whole new one, never half of one.
A folder (a model bundle) is written whole into a temporary folder beside the target and then
swapped in (:func:`atomic_dir`): the old folder stays whole until the new one is complete.

Before anything is written, :func:`check_output_file` and :func:`check_output_dir` refuse paths
that cannot work: a folder where a file is expected, a missing or read-only parent, a non-empty
folder that is not one of ours. An ``OSError`` while writing becomes one line:
:class:`~hpcds1mpi.errors.OutputError` (exit 2) when the path is not writable,
:class:`~hpcds1mpi.errors.WriteError` (exit 1) when the write failed part-way (disk full).

One writer per folder: :func:`check_output_dir` takes the folder's lock
(:mod:`hpcds1mpi.writers`) and :func:`atomic_dir` lets it go after the swap, so a second
``train``/``learn``/``campaign emit`` into the same place is refused in one line instead of
swapping over the first one's work. While a lock is held or a temporary exists, SIGTERM ends
the command as SIGINT does (temporaries removed, one line, exit 1). Temporaries are named
``.hpcds1mpi-tmp-NAME.PID@HOST.XXXXXXXX``: the next writer of NAME removes those of dead
processes of its host (a ``kill -9``), never a live one's.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

from hpcds1mpi.errors import HpcdsError, LockError, OutputError, WriteError
from hpcds1mpi.output_paths import refuse_unswappable
from hpcds1mpi.writers import (NAME_MAX, TMP_PREFIX, catch_sigterm, hold_lock,
                               keep_folder_modes, keep_mode, lock_key, release_lock,
                               remove_stale, tmp_prefix, uncatch_sigterm)

_NOT_WRITABLE = (errno.EACCES, errno.EPERM, errno.EROFS)
_FULL = (errno.ENOSPC, errno.EDQUOT)
#: A path the file system will not hold a file at (a folder under /proc or /sys, a name too
#: long, a component that is a file): rerunning unchanged fails the same way, so exit 2.
_UNUSABLE = (errno.ENOENT, errno.ENOTDIR, errno.EISDIR, errno.EINVAL, errno.ENAMETOOLONG,
             errno.ELOOP)


def write_error(exc: OSError, path: Path | str, what: str = "output") -> HpcdsError:
    """The one-line error for an ``OSError`` raised while writing ``path``."""
    reason = exc.strerror or str(exc)
    if exc.errno in _NOT_WRITABLE:
        return OutputError(f"{path}: cannot write the {what} ({reason}); choose another path")
    if exc.errno in _UNUSABLE:
        return OutputError(f"{path}: no file can be written there ({reason}); choose another "
                           f"path for the {what}")
    if exc.errno in _FULL:
        return WriteError(f"{path}: {what} not written, the disk is full ({reason}); free some "
                          "space and rerun (nothing already there was changed)")
    return WriteError(f"{path}: {what} not written ({reason}); nothing already there was changed")


def _check_parent(parent: Path, what: str) -> None:
    if not parent.exists():
        raise OutputError(f"{parent}: no such directory; create it or choose another path for "
                          f"the {what}")
    if not parent.is_dir():
        raise OutputError(f"{parent} is not a directory; choose another path for the {what}")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise OutputError(f"{parent}: directory is not writable; choose another path for the "
                          f"{what}")


def is_link_loop(path: str | os.PathLike) -> bool:
    """Whether ``path`` is a symbolic link that leads back to itself (Path.exists() says False
    and Path.resolve() raises RuntimeError for one)."""
    try:
        os.stat(path)
    except OSError as exc:
        return exc.errno == errno.ELOOP
    return False


def _refuse_link_loop(path: str | os.PathLike, what: str) -> None:
    if is_link_loop(path):
        raise OutputError(f"{path} is a loop of symbolic links; remove it or choose another "
                          f"path for the {what}")


def check_output_file(path: str | os.PathLike, what: str = "output") -> Path:
    """``path`` as a Path if a file can be written there, else a one-line :class:`OutputError`.

    Refused: a name ending in a slash (a folder was meant: Path would drop the slash and write a
    file of the folder's name), an existing folder or other non-file, a missing, non-directory
    or read-only parent.
    """
    if str(path).endswith(("/", os.sep)) and not Path(path).is_dir():
        raise OutputError(f"{path} ends in '/' (a folder) but the {what} is a file; give a file "
                          "name, without the trailing '/'")
    _refuse_too_long(path, what)
    _refuse_link_loop(path, what)
    path = Path(path)
    if path.is_dir():
        raise OutputError(f"{path} is a directory; give a file name for the {what}")
    if path.exists() and not path.is_file():
        raise OutputError(f"{path} is not a regular file; choose another path for the {what}")
    _check_parent(path.parent, what)
    return path


#: The longest path the system takes (PATH_MAX less its NUL).
_PATH_MAX = 4095


def _refuse_too_long(path: str | os.PathLike, what: str) -> None:
    """One line for a name the file system cannot hold, before any check stats it (Python's
    exists() raises on one), so that every rank of a sweep refuses it alike (s32 tester T1)."""
    whole = os.fsencode(path)
    longest = max(os.fsencode(path).split(b"/"), key=len)
    if len(longest) > NAME_MAX or len(whole) > _PATH_MAX:
        shown = os.fsdecode(longest[:60]) + "..."
        limit = (f"a name of {len(longest)} bytes, at most {NAME_MAX}"
                 if len(longest) > NAME_MAX else f"{len(whole)} bytes, at most {_PATH_MAX}")
        raise OutputError(f"{shown}: file name too long ({limit}); give a shorter path for "
                          f"the {what}")


def check_replace(path: str | os.PathLike, *, ours: Callable[[Path], bool], force: bool,
                  what: str, option: str) -> None:
    """Refuse to replace an existing file that hpcds1mpi did not write, unless ``force``: a
    rerun replaces its own output, while a file of the user's named by mistake is kept.

    A file owned by another user is never taken for ours, whatever it holds: its content
    (a checksum line, a header) can be copied by anyone.

    Raises:
        OutputError: (exit 2) ``path`` is a file ``ours`` does not recognise, or another
            user's, without ``force``.
    """
    path = Path(path)
    if force or not path.is_file():
        return
    owner = _owner_other_than_caller(path)
    if owner is not None:
        raise OutputError(f"{path} exists and belongs to another user ({owner}); pass --force "
                          f"to replace it with a {what} of your own, or choose another {option}")
    try:
        mine = bool(ours(path))
    except (OSError, ValueError):
        mine = False
    if not mine:
        raise OutputError(f"{path} exists and is not a {what} hpcds1mpi wrote; pass --force to "
                          f"replace it, or choose another {option}")


def _owner_other_than_caller(path: Path) -> str | None:
    """The name (else uid) of ``path``'s owner when that is not this process's user, else None."""
    try:
        uid = path.stat().st_uid
    except OSError:
        return None
    if uid == os.geteuid():
        return None
    import pwd

    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


def check_output_dir(path: str | os.PathLike, *, ours: Callable[[Path], bool], force: bool,
                     what: str = "bundle", option: str = "--out") -> Path:
    """``path`` as a Path if a folder of kind ``what`` may be (re)written there, locked for
    this process until :func:`atomic_dir` has swapped the new folder in (or the process ends).

    A missing or empty folder may be written. A non-empty one only when ``ours(path)`` says it
    is one of ours *and* ``force`` is set. Its nearest existing ancestor must be writable.

    Raises:
        OutputError: (exit 2) a file, a foreign non-empty folder, one of ours without
            ``force``, or an unwritable place.
        LockError: (exit 1) another process is writing ``path``.
    """
    _refuse_link_loop(path, what)
    refuse_unswappable(path, what, option)
    path = Path(path)
    return claim_output_dir(path, lambda: _check_dir(path, ours, force, what, option), what,
                            option)


def claim_output_dir(path: Path, check: Callable[[], None], what: str,
                     option: str = "--out") -> Path:
    """Run ``check`` (it raises when folder ``path`` may not be written), take the folder's
    lock and run ``check`` again under it (a writer that just finished may have filled it).
    :func:`atomic_dir` then swaps over what was checked only, and lets the lock go.

    Raises:
        LockError: (exit 1) another process is writing ``path``; what ``check`` raises.
    """
    check()
    if hold_lock(path, what, option):
        try:
            check()
        except BaseException:
            release_lock(path)
            raise
    _APPROVED[lock_key(path)] = _state(path)
    return path


def _check_dir(path: Path, ours, force: bool, what: str, option: str) -> None:
    if path.exists() or path.is_symlink():
        if not path.is_dir():
            raise OutputError(f"{path} is a file, not a folder; choose another {option}")
        if any(path.iterdir()):
            if not ours(path):
                raise OutputError(f"{path} is not empty and not a hpcds1mpi {what}; choose "
                                  f"another {option}")
            if not force:
                raise OutputError(f"{path} already holds a hpcds1mpi {what}; pass --force to "
                                  f"replace it, or choose another {option}")
    ancestor = path.absolute().parent
    while not ancestor.exists():
        ancestor = ancestor.parent
    _check_parent(ancestor, what)


def check_output_folder(path: str | os.PathLike, what: str = "outputs") -> Path:
    """``path`` as a Path if files may be written into folder ``path`` (created when missing).

    Raises:
        OutputError: (exit 2) ``path`` is a file, or it (or, when missing, its nearest existing
            ancestor) is not a writable directory.
    """
    _refuse_link_loop(path, what)
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise OutputError(f"{path} is a file, not a folder; choose another folder for the {what}")
    nearest = path.absolute()
    while not nearest.exists():
        nearest = nearest.parent
    _check_parent(nearest, what)
    return path


def _through_link(path: str | os.PathLike, what: str) -> Path:
    """What a symlink at ``path`` points to (written through, as ``open`` would), else ``path``.

    Raises:
        OutputError: (exit 2) the link is, or leads into, a loop of links; a name the file
            system cannot hold (before it is statted: one line, not an OSError, s32 review).
    """
    from hpcds1mpi.output_paths import written_path  # the one rule (s33 tester C3)

    _refuse_too_long(path, what)
    _refuse_link_loop(path, what)
    return written_path(path, what)


#: What :func:`check_output_dir` saw under the lock (by ``lock_key``): :func:`atomic_dir`
#: swaps over that only.
_APPROVED: dict[str, tuple | None] = {}


def _state(path: Path) -> tuple | None:
    """None for a missing or empty folder, else what changes when one is swapped in."""
    try:
        if not any(path.iterdir()):
            return None
        st = path.stat()
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


def _fsync(path: Path, *, directory: bool = False) -> None:
    fd = os.open(path, os.O_RDONLY | (os.O_DIRECTORY if directory else 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike, what: str = "output") -> Iterator[Path]:
    """A temporary path beside ``path`` to write; moved onto ``path`` when the block succeeds.

    The temporary name keeps ``path``'s suffix (for writers that choose the format by it). On
    any exception the temporary file is removed and ``path`` is untouched; an ``OSError``
    becomes a one-line :class:`OutputError` / :class:`WriteError`.
    """
    path = check_output_file(_through_link(path, what), what)
    # a long "suffix" (a name with a dot near its start) is no format: the name stays whole
    stem, suffix = ((path.stem, path.suffix) if len(os.fsencode(path.suffix)) <= 16
                    else (path.name, ""))
    remove_stale(path, stem, suffix, folders=False)
    catch_sigterm(path, what)
    try:
        try:
            fd, name = tempfile.mkstemp(prefix=tmp_prefix(stem, suffix), suffix=suffix,
                                        dir=path.parent)
        except OSError as exc:
            raise write_error(exc, path, what) from None
        os.close(fd)
        tmp = Path(name)
        try:
            yield tmp
            _fsync(tmp)
            keep_mode(tmp, path)
            os.replace(tmp, path)
            _fsync(path.parent, directory=True)
        except OSError as exc:
            raise write_error(exc, path, what) from None
        finally:
            tmp.unlink(missing_ok=True)
    finally:
        uncatch_sigterm()


def write_bytes(path: str | os.PathLike, data: bytes, what: str = "output") -> Path:
    """Write ``data`` to ``path`` through temp-and-rename; returns ``path``."""
    with atomic_path(path, what) as tmp:
        with open(tmp, "wb") as fh:
            fh.write(data)
    return Path(path)


def write_text(path: str | os.PathLike, text: str, what: str = "output") -> Path:
    """Write ``text`` (UTF-8) to ``path`` through temp-and-rename; returns ``path``."""
    return write_bytes(path, text.encode("utf-8"), what)


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths atomically (Linux ``renameat2(RENAME_EXCHANGE)``); False if unsupported."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    rc = renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange)
    if rc == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):
        return False
    raise OSError(err, os.strerror(err), str(b))


def _swap_in(new: Path, target: Path) -> None:
    """Put folder ``new`` at ``target``; an old ``target`` is whole until ``new`` is in place."""
    if not target.exists() or (target.is_dir() and not any(target.iterdir())):
        os.rename(new, target)  # onto nothing or an empty folder: one atomic rename
        return
    if _exchange(new, target):
        shutil.rmtree(new, ignore_errors=True)  # ``new`` now holds the old folder
        return
    old = Path(tempfile.mkdtemp(prefix=tmp_prefix(target.name, old=True), dir=target.parent))
    os.rename(target, old / "d")
    try:
        os.rename(new, target)
    except OSError:
        os.rename(old / "d", target)
        raise
    finally:
        shutil.rmtree(old, ignore_errors=True)


@contextlib.contextmanager
def atomic_dir(path: str | os.PathLike, what: str = "bundle") -> Iterator[Path]:
    """A temporary folder beside ``path`` to fill; swapped in for ``path`` when the block succeeds.

    Missing parents of ``path`` are created. Every file is fsync'ed before the swap; the new
    folder and its files keep the old ones' modes and group (writers.keep_folder_modes). On any
    exception the temporary folder is removed and ``path`` (if there was one) is untouched; an
    ``OSError`` becomes a one-line :class:`OutputError` / :class:`WriteError`. The write lock
    (:func:`check_output_dir`'s, else taken here) is let go at the end.

    Raises:
        LockError: (exit 1) another process writes ``path``, or wrote it since
            :func:`check_output_dir` looked.
    """
    path = _through_link(path, what)
    approved = _APPROVED.pop(lock_key(path), "unchecked")
    try:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise write_error(exc, path, what) from None
        hold_lock(path, what)
        if approved != "unchecked" and _state(path) != approved:
            raise LockError(f"{path} was written by another process while this one ran; "
                            "nothing was written: rerun to build on what is there now")
        remove_stale(path, path.name, "", folders=True)
        catch_sigterm(path, what)
        try:
            yield from _fill_and_swap(path, what)
        finally:
            uncatch_sigterm()
    finally:
        release_lock(path)


def _fill_and_swap(path: Path, what: str) -> Iterator[Path]:
    try:
        tmp = Path(tempfile.mkdtemp(prefix=tmp_prefix(path.name), dir=path.parent))
    except OSError as exc:
        raise write_error(exc, path, what) from None
    try:
        yield tmp
        for item in tmp.rglob("*"):
            if item.is_file():
                _fsync(item)
        keep_folder_modes(tmp, path)  # a private bundle stays private (s32 verifier V1)
        _fsync(tmp, directory=True)
        _swap_in(tmp, path)
        _fsync(path.parent, directory=True)
    except OSError as exc:
        raise write_error(exc, path, what) from None
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def carry_files(old: Path, new: Path, names) -> None:
    """Hard-link (else copy) the files ``names`` that exist in folder ``old`` into ``new``
    (an old folder's files carried into the temporary folder that replaces it)."""
    for name in names:
        src = Path(old) / name
        if src.is_file():
            try:
                os.link(src, Path(new) / name)
            except OSError:
                shutil.copy2(src, Path(new) / name)


__all__ = ["TMP_PREFIX", "atomic_dir", "atomic_path", "carry_files", "check_output_dir",
           "claim_output_dir", "check_output_file", "check_output_folder", "is_link_loop",
           "keep_mode", "write_bytes", "write_error", "write_text"]
