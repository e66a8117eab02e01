"""One launch at a time per ``--output-file``, across processes: a lock file beside it.

A launch's readings come from what it wrote to its output file since a mark taken just before
it (:class:`~hpcds1mpi.measure.readings.FileMark`). Two sweeps run at once in one folder with
the same ``--output-file history.txt`` read each other's lines: one recorded another's size-3
time as its size-40 repeat, another failed with a wrong unit-mistake message (s33 tester D6).
:func:`output_lock` holds an exclusive ``flock`` on ``.<name>.hpcds1mpi-lock`` beside the file
from just before the mark until its lines are read; a sweep that waits says so once. The lock
file is opened as every side file is (:func:`~hpcds1mpi.lock_files.open_side_file`).
"""

from __future__ import annotations

import contextlib
import os

#: The lock file's name beside an output file ``name``.
LOCK_NAME = ".{name}.hpcds1mpi-lock"


def lock_path(path: str) -> str:
    """The lock file of the output file ``path`` (its real path: ``./a`` and ``a`` share it),
    named as every side file is (:func:`~hpcds1mpi.writers.side_name`: a long output name is
    shortened, so its lock can be made and the launches still take turns)."""
    from hpcds1mpi.writers import side_name

    real = os.path.realpath(path)
    before, _, after = LOCK_NAME.partition("{name}")
    return os.path.join(os.path.dirname(real), side_name(os.path.basename(real), before, after))


@contextlib.contextmanager
def output_lock(path: str | None, say=None, said: set | None = None):
    """Hold the lock of output file ``path`` (nothing when None); where another process holds
    it, wait, said once per sweep through ``say`` (``said``: what was said already). A folder
    the lock file cannot be created in (read-only) is not locked: the program could not write
    its output there either."""
    import fcntl

    if not path:
        yield
        return
    from hpcds1mpi.lock_files import open_side_file

    name = lock_path(path)
    try:  # a link, a FIFO or a folder there: refused, never followed (s35 tester R1); only
        # flocked, never written: read-only, so a hard link of a copied run folder (cp -al) is
        # no write through another name (s35 review 2)
        fd = open_side_file(name, os.O_RDONLY | os.O_CREAT, 0o644)
    except OSError:
        yield
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            note = (f"note: another process is running a launch that writes {path!r}; each "
                    f"launch waits for the one before to end (lock {name}), so that every run "
                    "reads only its own lines")
            if say is not None and (said is None or "output_lock" not in said):
                say(note)
                if said is not None:
                    said.add("output_lock")
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock
