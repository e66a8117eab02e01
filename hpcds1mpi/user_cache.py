"""The user's cache folder: where computed guard calibrations and the failure history live.

``HPCDS1MPI_CACHE``, else ``~/.cache/hpcds1mpi``. A home that does not exist
(``HOME=/nonexistent``, as services set it) is never created: there is no cache then, and each
caller says what that costs (the guard computes its calibration each time; recording a
failure asks for ``HPCDS1MPI_HISTORY`` or ``HPCDS1MPI_CACHE``).
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["cache_dir", "folder_key"]


def cache_dir() -> Path | None:
    """The cache folder (not created here), or None when there is no home to hold one.

    An empty ``HPCDS1MPI_CACHE`` counts as unset (``Path("")`` is the current folder).
    """
    env = os.environ.get("HPCDS1MPI_CACHE")
    if env:
        return Path(env)
    home = os.environ.get("HOME")
    if not home:  # unset, or empty (Path.home() reads that as "/"): the account's home
        try:
            import pwd

            home = pwd.getpwuid(os.getuid()).pw_dir
        except (ImportError, KeyError):  # no account entry (a container's arbitrary uid)
            return None
    if not os.path.isabs(home) or not os.path.isdir(home):
        return None
    return Path(home) / ".cache" / "hpcds1mpi"


def folder_key(folder: str | os.PathLike) -> str:
    """A key for what is cached of ``folder`` (a bundle's guard calibration): its path and its
    files' names, mtimes and sizes (the first 200), hashed; it changes when a file does."""
    path = Path(folder).resolve()
    stamp = []
    for p in sorted(path.glob("*"))[:200]:
        try:
            stamp.append(f"{p.name}:{p.stat().st_mtime_ns}:{p.stat().st_size}")
        except OSError:
            continue
    from hpcds1mpi.digests import sha256

    # a name's bytes that are not UTF-8 (surrogate escapes) are hashed as the bytes they are
    return sha256("|".join([str(path), *stamp]).encode("utf-8", "surrogateescape")
                  ).hexdigest()[:16]
