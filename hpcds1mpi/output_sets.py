"""Several output files written as one set: all whole on disk, or the old set left as it was.

``mobo --out`` writes a csv, a json and a plot that describe one run: a full disk or an
interrupt between them had left the old plot beside the new csv and json.
"""

from __future__ import annotations

import os
import signal
from contextlib import ExitStack
from pathlib import Path

__all__ = ["write_set"]


def write_set(out: Path, writers: dict) -> None:
    """Write several files into folder ``out`` as one set (``writers``: file name ->
    ``(what, write(tmp))``): each is written whole into its temporary and synced, the slow one too;
    only then are all renamed over the old ones, SIGINT and SIGTERM held off until the last.
    A full disk or an interrupt leaves the old set as it was (the old png had stayed beside
    the new csv and json); only a ``kill -9`` between the renames themselves can split it."""
    from hpcds1mpi.atomic import atomic_path, write_error

    mask = None
    try:
        with ExitStack() as temporaries:  # on leaving: renamed onto the files, or all removed
            for name, (what, write) in writers.items():
                tmp = temporaries.enter_context(atomic_path(out / name, what))
                write(tmp)
                try:  # a delayed allocation's ENOSPC surfaces here, before any rename
                    with open(tmp, "rb") as fh:
                        os.fsync(fh.fileno())
                except OSError as exc:
                    raise write_error(exc, out / name, what) from None
            mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    finally:
        if mask is not None:  # a signal that came meanwhile is taken now, the set complete
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)
