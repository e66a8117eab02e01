"""The MPI a model's sweep ran a program with, for ``advise`` where the program's file does not
tell it.

A program whose MPI cannot be read from its file (a shell script that chooses its binary in an
``if``, as Debian's ``HYPHYMPI`` does; a wrapper naming its program by a variable) was still
swept: the launcher its sweep used is in the bundle (``launched_with``), and its ranks ran as
one job there (the sweep's launch probe; its MPI library recorded as that launcher's
installation's, "assumed"). An ``mpirun``/``mpiexec`` recorded there is of one MPI family
(its ``flavour``), so a job script's launcher of the other family, or an ``srun`` plugin that
family cannot start with, is warned of as for a program read directly (s42 tester E4: advise
said nothing of ``srun --mpi=pmi2`` nor of the venv's hydra ``mpirun``, both of which fail).
Where the bundle records no family (an ``srun`` sweep, pooled sweeps of several launchers, a
model trained before launchers were recorded) the launch line is unchecked, and
:mod:`~hpcds1mpi.launch.unchecked_launch` says so. Files are read, nothing is run.
"""

from __future__ import annotations

import glob
import os
import shutil
from dataclasses import dataclass

#: The launcher class a sweep recorded (``flavour``) -> the MPI family it was of then (as
#: :mod:`~hpcds1mpi.launch.script_launcher` reads it).
_FLAVOUR_FAMILY = {"HydraMpiexec": "mpich", "OpenMpiMpirun": "openmpi"}
#: Where an installation keeps its MPI library, below its prefix (the sweep's stand-in
#: library is looked for in the same folders).
_LIBRARY_FOLDERS = ("lib", "lib64", "lib/*-linux-gnu*", "lib64/*-linux-gnu*")


@dataclass(frozen=True)
class RecordedMPI:
    """How a model's sweep launched a program: ``family`` (None: not told by the launcher),
    ``launcher`` (the recorded ``mpirun``/``mpiexec`` file, or ``srun --mpi=X``),
    ``evidence`` (for the warning's parenthesis) and ``library`` (the MPI library of that
    launcher's installation, which the ``srun`` plugin check reads; None: not found)."""

    family: str | None
    launcher: str
    evidence: str
    library: str | None = None


def recorded_mpi(launched: dict | None) -> RecordedMPI | None:
    """The MPI of a sweep's recorded launch (``launched_with``); None where none is recorded."""
    if not isinstance(launched, dict) or not launched.get("launcher"):
        return None
    kind, command = launched.get("launcher"), str(launched.get("command") or "")
    if kind == "srun":
        mpi = launched.get("mpi")
        ran = f"srun --mpi={mpi}" if mpi else "srun"
        return RecordedMPI(None, ran, f"its sweep ran it with {ran}")
    family = launched.get("family") or _FLAVOUR_FAMILY.get(str(launched.get("flavour") or ""))
    if kind not in ("mpiexec", "mpirun") or not command or family not in _FLAVOUR_FAMILY.values():
        return RecordedMPI(None, command, f"its sweep ran it with {command or kind}")
    from hpcds1mpi.launch.mpi_names import LAUNCHER_NAMES

    return RecordedMPI(family, command, (
        f"as the model's sweep found: it ran it as one job with {command}, "
        f"{LAUNCHER_NAMES[family]}; its own file does not say"),
        installation_library(command, family))


def installation_library(launcher: str, family: str) -> str | None:
    """The ``family`` MPI library file of the installation ``launcher`` belongs to (its real
    path's prefix's ``lib`` folders, owned by it: :func:`~hpcds1mpi.launch.mpi_installation.
    installation_launcher`); None where none is found."""
    from hpcds1mpi.launch.mpi_installation import installation_launcher, of_installation
    from hpcds1mpi.launch.mpi_names import family_of_soname

    path = launcher if "/" in launcher else shutil.which(launcher)
    if not path or not os.path.isfile(path):
        return None
    prefix = os.path.dirname(os.path.dirname(os.path.realpath(path)))
    found = [f for folder in _LIBRARY_FOLDERS
             for f in glob.glob(os.path.join(prefix, folder, "lib*.so*"))
             if family_of_soname(os.path.basename(f)) == family]
    for library in sorted(found, key=lambda f: (len(os.path.basename(f)), f)):
        own = installation_launcher(library, family)
        if own and of_installation(path, own):
            return library
    return None


def taken_mpi(read, recorded: RecordedMPI | None) -> RecordedMPI | None:
    """``recorded`` where it stands in for the program file's MPI ``read``: the file does not
    tell it (and is not known to link none) and the model's sweep ran a launcher of one
    family; None otherwise."""
    if read.family is not None or read.without_mpi or recorded is None:
        return None
    return recorded if recorded.family else None
