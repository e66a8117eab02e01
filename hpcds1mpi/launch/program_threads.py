"""Whether more threads per rank can change what a user's program does.

One rule for every place that offers a program threads: the sweep's note (it sweeps
``--threads`` above 1), ``tune``'s search space and ``recommend``'s candidates.
:func:`unthreaded_program` names an MPI binary that loads no OpenMP runtime nor threaded
BLAS, itself or through its libraries (read from the files, nothing run:
:func:`~hpcds1mpi.launch.elf_libraries.threading_libraries`), and whose command has no
``{threads}`` placeholder: its extra cores per rank sit idle, and runs at 2 threads are the
same computation as at 1, told apart by noise only (s27 tester R: pw.x; s28 tester U: ABINIT,
tuned to 1 rank x 2 threads "34 % better" than 2 ranks x 1 thread). A program that links a
threading runtime and ignores it (MPQC) is told by its measured CPU time instead
(:mod:`hpcds1mpi.measure.thread_use`; recorded in its bundle's measured levels).
"""

from __future__ import annotations

import functools
import os
import shlex
import shutil
from typing import Sequence

__all__ = ["THREADS_PLACEHOLDER", "one_thread_line", "unthreaded_program"]

#: The placeholder a program's command takes its thread count from.
THREADS_PLACEHOLDER = "{threads}"


def unthreaded_program(command: str | Sequence[str] | None, env: dict | None = None
                       ) -> str | None:
    """The file name of the program ``command`` starts (found on ``env``'s PATH) where more
    threads per rank cannot change what it does; None where they may, and where that cannot
    be told: a ``{threads}`` in the command (the program takes its thread count), a script, a
    Python program, a library not found, or a binary that loads no MPI (``sh -c``, ``env``,
    ``numactl``: a wrapper of the program)."""
    from hpcds1mpi.launch.shebang import PYTHON_NAME

    if command is None:
        return None
    try:
        tokens = shlex.split(command) if isinstance(command, str) else list(command)
    except ValueError:  # unbalanced quotes: said where the command is checked
        return None
    if not tokens or any(THREADS_PLACEHOLDER in token for token in tokens):
        return None
    env = os.environ if env is None else env
    path = tokens[0] if "/" in tokens[0] else shutil.which(tokens[0], path=env.get("PATH"))
    if not path or not os.path.isfile(path) or PYTHON_NAME.match(os.path.basename(path)):
        return None
    try:
        stat = os.stat(path)
        if not _unthreaded_file(os.path.realpath(path), stat.st_ino, stat.st_mtime_ns,
                                stat.st_size):
            return None
    except OSError:
        return None
    return os.path.basename(path)


@functools.lru_cache(maxsize=64)
def _unthreaded_file(path: str, inode: int, mtime_ns: int, size: int) -> bool:
    """Whether the binary ``path`` loads MPI but no OpenMP runtime nor threaded BLAS. Cached
    per file version (inode, time, size): its library tree costs ~50 ms to read (LAMMPS,
    OpenFOAM), and ``recommend`` asks it for every question of a batch or the service."""
    from hpcds1mpi.launch.elf_libraries import needed_tree, threading_libraries
    from hpcds1mpi.launch.mpi_names import family_of_soname
    from hpcds1mpi.launch.shebang import read_shebang

    return (read_shebang(path) is None and threading_libraries(path) == []
            and any(family_of_soname(name) for name, _ in needed_tree(path)))


def one_thread_line(name: str) -> str:
    """Why only 1 thread per rank is offered for the program file ``name``
    (:func:`unthreaded_program`)."""
    return (f"threads = 1 only: {name} links no OpenMP runtime nor threaded BLAS and its "
            f"command has no {THREADS_PLACEHOLDER}")
