"""One line for a path this user may not use: which folder or file stops them, whose it is,
and what to do.

A ``PermissionError`` says "Permission denied: PATH" and nothing of why: the file may be
unreadable, or a folder above it closed to this user (s34 tester U1: ``Path.exists()`` on a
file inside another user's 0700 folder had a traceback in ~15 commands; U5: such a file was
called "not found", "unreadable; retrain the bundle" or "fix or delete it", none of which
helps). :func:`denied_line` finds the folder or file that stops this user, from the root down,
and says what would let them through.
"""

from __future__ import annotations

import errno
import grp
import os
import pwd
import stat

from hpcds1mpi.runtime.message_paths import shell_word, shown_path

#: errno values that mean "this user may not": EACCES, EPERM.
DENIED_ERRNOS = frozenset({errno.EACCES, errno.EPERM})


def is_denied(exc: BaseException) -> bool:
    """Whether ``exc`` is an OSError for a permission this user lacks."""
    return isinstance(exc, OSError) and (isinstance(exc, PermissionError)
                                         or exc.errno in DENIED_ERRNOS)


def denied_line(path: str | os.PathLike, what: str = "") -> str:
    """``PATH: permission denied (...); what to do``, one line, for ``path`` that this user
    could not enter, read or write. ``what`` names it first ("model bundle file")."""
    # a newline in a path had broken the one line in two (s35 tester R8)
    shown = f"{what} {shown_path(path)}" if what else shown_path(path)
    reason, advice = _why(os.fsdecode(path))
    return f"{shown}: permission denied ({reason}); {advice}"


def path_error_line(exc: OSError) -> str:
    """One line for an OSError about a named path that the user can put right (the CLI's
    backstop, s34 tester U1): one they may not enter, read or write, one on a read-only file
    system, a link loop; "" for any other (a bug, which keeps its traceback)."""
    # A rename's target (filename2) is the file replaced, not our temporary (s34 review)
    name = next((n for n in (getattr(exc, "filename2", None), exc.filename) if n is not None),
                None)
    name = name if name is not None else _h5py_file_name(exc)
    if name is None:
        return ""
    if is_denied(exc):
        return denied_line(name)
    shown = shown_path(name)
    if exc.errno == errno.EROFS:
        return (f"{shown}: the file system is read-only ({exc.strerror}); write to a folder on a "
                "writable file system")
    if exc.errno == errno.ELOOP:
        return f"{shown}: too many levels of symbolic links; point the link at a real file"
    return ""


def _h5py_file_name(exc: OSError):
    """The file an h5py "unable to open file" error names (it sets no ``filename``) where the
    errno it quotes is a permission one (set on ``exc``); else None."""
    import re

    found = re.search(r"name = '(.*?)', errno = (\d+)", str(exc))
    if found is None or int(found.group(2)) not in DENIED_ERRNOS:
        return None
    exc.errno = int(found.group(2))
    return found.group(1)


def closed_folder(path: str | os.PathLike) -> str | None:
    """The first folder above ``path``, from the root down, that this user cannot enter (so
    that ``os.path.exists(path)`` says False whether or not it is there); None if none."""
    parts = os.path.abspath(os.fsdecode(path)).split(os.sep)
    for depth in range(2, len(parts)):
        folder = os.sep.join(parts[:depth])
        if not os.access(folder, os.X_OK):
            return folder if os.path.isdir(folder) else None  # a missing one closes nothing
    return None


def _why(path: str) -> tuple[str, str]:
    """What stops this user at ``path``, and what to do; for a path through symbolic links,
    what stops them where the links lead (s35 tester R8: a link to a file in another user's
    closed folder was "owner and mode unknown", its chmod naming no path)."""
    full = os.path.abspath(path)
    real = os.path.realpath(full)
    if real == full:
        return _why_here(full)
    reason, advice = _why_here(real)
    return f"it is {shown_path(real)} through a symbolic link; {reason}", advice


def _why_here(full: str) -> tuple[str, str]:
    """:func:`_why` for absolute ``full`` as it is named (its links resolved, or unreadable)."""
    folder = closed_folder(full)
    if folder is not None:
        return (f"you cannot enter the folder {shown_path(folder)}: {_whose(folder)}",
                f"ask its owner to let you in ({_grant(folder, 'x')}), or use a path outside "
                "it (for an input, a copy you can read)")
    if os.path.lexists(full):
        parent = os.path.dirname(full) or os.sep
        if _sticky_not_ours(full, parent):  # /tmp-like: only its owner may replace it
            return (f"it is another user's file in a sticky folder ({shown_path(parent)}: "
                    f"{_whose(parent)}), which only its owner may replace or remove: "
                    f"{_whose(full)}", "write to another path, or ask its owner to remove it")
        if not os.access(full, os.R_OK):
            return (f"you may not read it: {_whose(full)}",
                    f"ask its owner to grant read access ({_grant(full, 'r')}) or use a copy "
                    "you can read")
        if os.path.isdir(full) and not os.access(full, os.X_OK):
            return (f"you cannot enter this folder: {_whose(full)}",
                    f"ask its owner to let you in ({_grant(full, 'x')}) or use a copy")
        if not os.access(full, os.W_OK):
            return (f"you may not write it: {_whose(full)}",
                    "write to a path of your own instead, or ask its owner for write access")
        return ("refused although its mode allows you",
                "check its ACLs (getfacl) and how its file system is mounted")
    parent = os.path.dirname(full) or os.sep
    if os.path.isdir(parent) and not os.access(parent, os.W_OK):
        return (f"you may not create files in the folder {shown_path(parent)}: "
                f"{_whose(parent)}",
                "choose a folder you can write, or ask its owner for write access")
    return ("refused by the system", "check the permissions of it and of the folders above it")


def _sticky_not_ours(path: str, parent: str) -> bool:
    """Whether ``path`` is another user's file in a sticky folder (mode ``t``, as /tmp)."""
    try:
        return bool(os.stat(parent).st_mode & stat.S_ISVTX) and \
            os.lstat(path).st_uid != os.geteuid()
    except OSError:
        return False


def _whose(path: str) -> str:
    """``owner NAME, group NAME, mode drwx------`` of ``path`` (the part that can be read)."""
    try:
        st = os.stat(path)
    except OSError:
        return "its owner and mode unknown"
    try:
        owner = pwd.getpwuid(st.st_uid).pw_name
    except KeyError:
        owner = str(st.st_uid)
    try:
        group = grp.getgrgid(st.st_gid).gr_name
    except KeyError:
        group = str(st.st_gid)
    return f"owner {owner}, group {group}, mode {stat.filemode(st.st_mode)}"


def _grant(path: str, bit: str) -> str:
    """The chmod that would let this user in: ``g+BIT`` where they share the file's group,
    else ``o+BIT`` (open to everyone: the owner may rather make a copy)."""
    try:
        gid = os.stat(path).st_gid
    except OSError:
        return f"chmod g+{bit} {shell_word(path)}"
    ours = gid == os.getegid() or gid in os.getgroups()
    return f"chmod {'g' if ours else 'o'}+{bit} {shell_word(path)}"
