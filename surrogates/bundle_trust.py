"""Whether a bundle folder may be loaded at all: who else could have written it.

A bundle is pickles (``members.pkl``): loading one runs whatever code its author put there,
and its manifest's SHA-256 list (:mod:`.bundle_files`) does not help against someone who can
rewrite the folder, hashes and all. So, like ssh's ``StrictModes`` for key files, a bundle is
refused when its folder or any file in it is writable by other users (``o+w``), or is owned
by someone other than the caller or root and writable by its group. Group write on the
caller's own files is accepted: with a umask of 002 (per-user groups) that is how ``train``
writes them.

The bundle shipped with the package is not judged: whoever can write it can write the
package's code beside it, and a group-writable site install must not lock its users out.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from hpcds1mpi.errors import ModelError


def check_bundle_permissions(path: Path) -> None:
    """Refuse a bundle folder another user could have written (see the module docstring).

    Args:
        path: the bundle folder (it exists).

    Raises:
        ModelError: one line naming the folder or file, why, and the chmod that fixes it.
    """
    if not hasattr(os, "geteuid") or _is_shipped(path):  # Windows: no POSIX owners to judge
        return
    me = os.geteuid()
    found = _writable_by_others(path, "the folder", me)
    if found is None:
        try:
            entries = sorted(path.iterdir())
        except OSError:  # unreadable: reading the manifest says so in its own words
            entries = []
        for entry in entries:
            name = entry.name if entry.name.isprintable() else ascii(entry.name)  # one line
            found = _writable_by_others(entry, name, me)
            if found is not None:
                break
    if found is not None:
        import shlex  # only to say how to fix it

        why, bits = found
        raise ModelError(f"model bundle {path}: {why}, and a bundle runs code when loaded: its "
                         f"owner can run `chmod -R {bits} {shlex.quote(str(path))}`, or copy the "
                         "bundle into a folder of your own")


def _writable_by_others(item: Path, label: str, me: int) -> tuple[str, str] | None:
    """(why another user could write ``item``, called ``label``; the chmod mode change that
    stops it), or None. A link is judged by what it points to: that is what gets read."""
    try:
        st = item.stat()
    except OSError:  # a dangling link: the read that needs it fails in its own words
        return None
    mode = stat.S_IMODE(st.st_mode)
    if mode & stat.S_IWOTH:
        return (f"{label} is writable by every user (mode {mode:04o})",
                "o-w")
    if st.st_uid not in (me, 0) and mode & stat.S_IWGRP:
        return (f"{label} belongs to user {_user_name(st.st_uid)} and is writable by its group "
                f"(mode {mode:04o})", "g-w")
    return None


def _user_name(uid: int) -> str:
    try:
        import pwd

        return pwd.getpwuid(uid).pw_name
    except (ImportError, KeyError):  # no such user in the password database
        return str(uid)


def _is_shipped(path: Path) -> bool:
    from hpcds1mpi import SHIPPED_MODEL

    try:
        return path.resolve() == SHIPPED_MODEL.resolve()
    except OSError:
        return False


__all__ = ["check_bundle_permissions"]
