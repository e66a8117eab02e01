"""Whether a job script's launcher is of the installation of the MPI library its ranks load.

Two installations of one MPI family share a soname (Debian's Open MPI 4.1 and the PyPI
wheel's 5.0.11 are both ``libmpi.so.40``), so the family check
(:func:`~hpcds1mpi.launch.script_mpi_check.mpi_mismatch`) passes a launcher of the other one:
PRRTE 5's ``prterun`` starts a program that loads Open MPI 4.1 as independent 1-rank copies
(s40 tester A9), ORTE 4.1's ``mpirun`` a 5.0 program as one job only through PMIx luck (A2).
The library is the one the ranks load: the program's ELF files read as the loader would, with
the ``PREFIX/lib`` Open MPI's ``mpirun`` started by its path gives its ranks first
(:func:`~hpcds1mpi.launch.rank_program.openmpi_prefix`); its installation's own launcher is
:func:`~hpcds1mpi.launch.mpi_installation.installation_launcher`'s. Files are read.
"""

from __future__ import annotations

import os
import re
from typing import Sequence

from hpcds1mpi.launch.elf_libraries import elf_dynamic, elf_needed, needed_tree
from hpcds1mpi.launch.mpi_installation import (PRRTE_LAUNCHERS, installation_launcher,
                                               of_installation)
from hpcds1mpi.launch.mpi_names import OPENMPI

#: Open MPI 5's runtime libraries (PRRTE; OPAL 5), linked by its own launchers.
_PRRTE_LIBS = re.compile(r"^lib(prrte|open-pal)\.so\.(\d+)")
#: The ELF dynamic tags of the search paths: an object's ``DT_RPATH`` is searched before
#: ``LD_LIBRARY_PATH``, its ``DT_RUNPATH`` after (and turns its ``DT_RPATH`` off).
_DT_RPATH, _DT_RUNPATH = 15, 29
#: ORTE, the runtime of Open MPI 4 and older, which PRRTE 5's launch does not wire up.
_ORTE_LIB = re.compile(r"^libopen-rte\.so")


def ranks_library(program: str, library: str, launcher_word: str, args: Sequence[str]) -> str:
    """The MPI ``library`` file the ELF ``program`` loads as read from its files, or the one
    of that soname in the ``PREFIX/lib`` Open MPI's ``mpirun`` puts first on its ranks'
    ``LD_LIBRARY_PATH`` (which only a ``DT_RPATH`` without ``RUNPATH`` comes before)."""
    from hpcds1mpi.launch.rank_program import openmpi_prefix

    prefix = openmpi_prefix(launcher_word, args)
    first = os.path.join(prefix, "lib", os.path.basename(library)) if prefix else None
    if first is None or not os.path.isfile(first):
        return library
    try:
        dynamic = elf_dynamic(program) or {}
    except OSError:
        return library
    return library if dynamic.get(_DT_RPATH) and not dynamic.get(_DT_RUNPATH) else first


def _prrte_launcher(launcher: str) -> bool:
    """Whether ``launcher`` is Open MPI 5's (PRRTE's ``prterun``, or one linking OPAL 5)."""
    real = os.path.realpath(launcher)
    if os.path.basename(real) in PRRTE_LAUNCHERS:
        return True
    for name in elf_needed(real) or []:
        found = _PRRTE_LIBS.match(name)
        if found and (found.group(1) == "prrte" or int(found.group(2)) >= 80):
            return True
    return False


def _orte_library(library: str) -> bool:
    """Whether the Open MPI ``library`` is of Open MPI 4 or older (it links ORTE)."""
    try:
        return any(_ORTE_LIB.match(name) for name, _ in needed_tree(library))
    except OSError:
        return False


def other_installation_line(line: int, name: str, library: str, family: str,
                            launcher: str, launcher_word: str,
                            caveat: str = "") -> tuple[str, str] | None:
    """("warning", line) where ``launcher`` of ``family`` is another installation's than the
    one owning the ``library`` the program ``name`` loads and is known not to start it as one
    job (PRRTE 5 with an Open MPI 4 library: independent 1-rank copies), ("note", line) for
    another installation otherwise; None where they are one, or either is not found.

    ``caveat`` (`` (line 4 changes the job's environment first ...)``): the launcher or the
    program was found on a PATH the script's lines before the launch change in a way not
    followed here, so the job may run others: said, and never more than a note (s40 review
    G3: a `prterun` found before `module load openmpi/5` was warned of as the job's)."""
    own = installation_launcher(library, family)
    if own is None or of_installation(launcher, own):
        return None
    real = os.path.realpath(launcher)
    seen = " on the PATH advise sees" if caveat and "/" not in launcher_word else ""
    shown = launcher_word if real == launcher_word else f"{launcher_word} ({real}{seen})"
    copies = family == OPENMPI and _prrte_launcher(launcher) and _orte_library(library)
    effect = ("where the job runs this one, " if caveat else "") + (
        "Open MPI 5's launcher does not wire up an Open MPI 4 library: it would start "
        "independent 1-rank copies" if copies else
        "it may start or place it otherwise than its own")
    return ("warning" if copies and not caveat else "note"), (
        f"line {line}: {name} loads {library}, but {shown} is another installation's "
        f"launcher of its MPI family (not {own}, the one beside that library){caveat}: "
        f"{effect}; launch it with {own}")
