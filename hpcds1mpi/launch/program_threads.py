"""Whether more threads per rank can change what a user's program does.

One rule for every place that offers a program threads: the sweep's note (it sweeps
``--threads`` above 1), ``tune``'s search space and ``recommend``'s candidates.
:func:`unthreaded_program` names an MPI binary that loads no OpenMP runtime nor threaded
BLAS, itself or through its libraries (read from the files, nothing run:
:func:`~hpcds1mpi.launch.elf_libraries.threading_libraries`), and whose command does not
give it its thread count (:func:`gives_threads`): its extra cores per rank sit idle, and runs
at 2 threads are the same computation as at 1, told apart by noise only (s27 tester R: pw.x;
s28 tester U: ABINIT, tuned to 1 rank x 2 threads "34 % better" than 2 ranks x 1 thread). A
program that links a threading runtime and ignores it (MPQC) is told by its measured CPU time
instead (:mod:`hpcds1mpi.measure.thread_use`; recorded in its bundle's measured levels), whose
advice follows the same :func:`gives_threads`: where the rules differed, tune / recommend and
the sweep's advice said opposite things of one command (s48: ``log-{threads}.txt``).
"""

from __future__ import annotations

import functools
import os
import re
import shlex
import shutil
from typing import Sequence

__all__ = ["THREADS_PLACEHOLDER", "gives_threads", "one_thread_line", "unthreaded_program"]

#: The placeholder a program's command takes its thread count from.
THREADS_PLACEHOLDER = "{threads}"
#: What comes before a word's value: an option's name with ``=`` (``--threads=``, ``-nt=``),
#: a variable's (``OMP_NUM_THREADS=``), or a short option the value is glued to (``-t``, and
#: Charm++'s ``+p`` / ``+ppn``: NAMD links no OpenMP).
_VALUE_AFTER = re.compile(r"^(?:[-+]{1,2}[A-Za-z][\w.-]*=|[A-Za-z_]\w*=|[-+]{1,2}[A-Za-z]\w*"
                          r"(?=\{threads\}))")
#: A placeholder joined to these, before or after it, is part of a name (``log-{threads}.txt``,
#: ``run{threads}``, ``out/{threads}/``, ``{ranks}x{threads}``), not a count given; a ``-``
#: joins a name only after a letter (``0-{threads}``: a range, sized by it).
_NAME_BEFORE = re.compile(r"(?:[\w./{}]|[A-Za-z_.}]-)$")
_NAME_AFTER = re.compile(r"^[\w./{}-]")


def gives_threads(command: str | Sequence[str] | None) -> bool:
    """Whether ``command`` (placeholders unfilled; a string or its words) gives the program its
    thread count: a word that is ``{threads}``, or an option's or a variable's value that is
    (``-t {threads}``, ``-t{threads}``, ``--threads={threads}``, ``OMP_NUM_THREADS={threads}``,
    ``{threads},1``, ``$(({threads}*2))``) — not a name holding it (``log-{threads}.txt``,
    ``--out=run{threads}``, s47 review RX11). The one rule of tune, recommend and the sweep's
    note and advice; what is not clearly a name counts as giving it, as a program's thread
    levels are lost where it does not."""
    return any(_gives_threads_word(word) for word in _words(command))


def _words(command: str | Sequence[str] | None) -> list[str]:
    if not command:
        return []
    if not isinstance(command, str):
        return [str(word) for word in command]
    try:
        return shlex.split(command)
    except ValueError:  # unbalanced quotes: its words as they stand (a quote glues nothing)
        return command.split()


def _gives_threads_word(word: str) -> bool:
    value = word[len(m.group()):] if (m := _VALUE_AFTER.match(word)) else word
    at = value.find(THREADS_PLACEHOLDER)
    while at >= 0:
        end = at + len(THREADS_PLACEHOLDER)
        if not (_NAME_BEFORE.search(value[:at]) or _NAME_AFTER.match(value[end:])):
            return True
        at = value.find(THREADS_PLACEHOLDER, end)
    return False


def unthreaded_program(command: str | Sequence[str] | None, env: dict | None = None
                       ) -> str | None:
    """The file name of the program ``command`` starts (found on ``env``'s PATH) where more
    threads per rank cannot change what it does; None where they may, and where that cannot
    be told: a command that gives it its thread count (:func:`gives_threads`), a script, a
    Python program, a library not found, or a binary that loads no MPI (``sh -c``, ``env``,
    ``numactl``: a wrapper of the program)."""
    from hpcds1mpi.launch.shebang import PYTHON_NAME

    if command is None:
        return None
    try:
        tokens = shlex.split(command) if isinstance(command, str) else list(command)
    except ValueError:  # unbalanced quotes: said where the command is checked
        return None
    if not tokens or gives_threads(tokens):
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


def one_thread_line(name: str, command: str | Sequence[str] | None = None) -> str:
    """Why only 1 thread per rank is offered for the program file ``name``
    (:func:`unthreaded_program`); ``command``: its command, whose ``{threads}`` inside a name
    (``log-{threads}.txt``) is said to be one, so that the line does not read as wrong."""
    named = [word for word in _words(command) if THREADS_PLACEHOLDER in word]
    inside = f" giving its thread count (in {named[0]} it is part of a name)" if named else ""
    return (f"threads = 1 only: {name} links no OpenMP runtime nor threaded BLAS and its "
            f"command has no {THREADS_PLACEHOLDER}{inside}")
