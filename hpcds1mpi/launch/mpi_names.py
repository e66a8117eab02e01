"""The MPI families, and how a library or a version text tells one.

Open MPI, the MPICH ABI family (MPICH, Intel MPI, Cray MPICH, MVAPICH) and the MPI-5 standard
ABI: how each family and its launchers are named in messages, and the launchers looked for on
PATH to name one that can start a program. A library's soname tells its family (``libmpi.so.40``
and Open MPI's older ``libmpi.so.20``: Open MPI; ``libmpich.so.12`` / ``libmpi.so.12``: the MPICH
family; ``libmpi_abi.so``: the standard ABI, whose implementation is whichever library the
loader finds), and so does the version banner every MPI library carries ("Open MPI v...",
"MPICH Version:", "Intel(R) MPI Library"), cleaned as C reads the string
(:func:`clean_version`). :class:`ProgramMPI` is what a program's MPI was read as
(:mod:`hpcds1mpi.launch.mpi_family` reads it from the program). Split out of ``mpi_family``,
which had reached the module size limit (s31 review M5).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

OPENMPI = "openmpi"
MPICH = "mpich"
MPI_ABI = "mpi-abi"
#: How each family is named in messages.
FAMILY_NAMES = {OPENMPI: "Open MPI", MPICH: "the MPICH family (MPICH, Intel MPI, Cray MPICH)",
                MPI_ABI: "the MPI-5 standard ABI (libmpi_abi)"}

#: sonames (up to the version) -> family. Open MPI's libmpi.so.12 (1.10, 2015) collides with
#: MPICH's and is read as MPICH: Open MPI 1.10 is long unsupported.
_SONAMES = [(re.compile(r"^libmpi_abi\.so"), MPI_ABI),
            (re.compile(r"^libmpi\.so\.(40|20)(\.|$)"), OPENMPI),
            (re.compile(r"^libmpich\.so"), MPICH),
            (re.compile(r"^libmpi\.so\.12(\.|$)"), MPICH),
            (re.compile(r"^libmpi_ilp64\.so|^libmpi_intel"), MPICH)]
#: Version banners compiled into an MPI library (static binaries, Get_library_version).
_BANNERS = [(re.compile(rb"Open MPI v\d|OpenRTE|Open MPI: "), OPENMPI),
            (re.compile(rb"MPICH Version:|Intel\(R\) MPI Library|CRAY MPICH|MVAPICH"), MPICH)]
#: How a launcher of each family is named in messages.
LAUNCHER_NAMES = {OPENMPI: "Open MPI's launcher", MPICH: "a launcher of the MPICH family (hydra)"}
#: Launchers that start each family, looked for on PATH to name one that can.
CANDIDATES = {OPENMPI: ("mpirun.openmpi", "mpiexec.openmpi", "mpirun", "mpiexec"),
              MPICH: ("mpiexec.mpich", "mpiexec.hydra", "mpirun.mpich", "mpiexec", "mpirun")}


@dataclass(frozen=True)
class ProgramMPI:
    """The MPI a program uses: ``family`` (None when it cannot be told), how it was told, and
    ``path``: the file read (the binary, or the interpreter whose mpi4py was asked; "" when
    none), which :func:`~hpcds1mpi.launch.mpi_family.library_file` follows to the MPI library
    the program loads."""

    family: str | None
    evidence: str
    path: str = ""

    def describe(self) -> str:
        return FAMILY_NAMES.get(self.family or "", "an unknown MPI")


def family_of_soname(name: str) -> str | None:
    """The MPI family of a shared-library name, e.g. ``libmpi.so.40`` -> ``"openmpi"``."""
    return next((family for pattern, family in _SONAMES if pattern.search(name)), None)


def family_of_banner(text: str | bytes) -> str | None:
    """The MPI family named by a library version text (``MPI_Get_library_version``)."""
    data = text.encode() if isinstance(text, str) else text
    return next((family for pattern, family in _BANNERS if pattern.search(data)), None)


#: Control characters (C0 and DEL), which no version text means to show.
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def clean_version(text: str) -> str:
    """An MPI library's version text as C reads the string: up to its first NUL (Debian's
    mpi4py returns ``Get_library_version()`` with the terminating NUL, which HDF5 cannot
    store), control characters made spaces, runs of spaces one."""
    return " ".join(_CONTROL.sub(" ", text.split("\0", 1)[0]).split())


def version_line(text: str) -> str:
    """The first non-blank line of an MPI library's version text (:func:`clean_version`'s
    rules, stripped); "" when there is none."""
    for line in text.split("\0", 1)[0].splitlines():
        if line := _CONTROL.sub(" ", line).strip():
            return line
    return ""


#: A launcher's own version line among its ``--version`` lines: hydra's ``Version:``,
#: Open MPI's and PRRTE's banners, Slurm's.
_LAUNCHER_VERSION_MARK = re.compile(r"^Version:|Open MPI|OpenRTE|\(PRRTE\)|^slurm")
#: A version number (4.1.4, 23.02.7), which a version line carries.
_VERSION_NUMBER = re.compile(r"\d+\.\d+")


def launcher_version_line(text: str) -> str:
    """The version line of a launcher's ``--version`` ``text``: a marked line with a version
    number, else the first line with one; never a help box's frame or words (s40: the PyPI
    Open MPI 5 wheel's ``prterun``, which cannot find its help files, was recorded as its
    box's line of dashes); "unknown" where no line gives a version."""
    numbered = [line.strip() for line in text.splitlines() if _VERSION_NUMBER.search(line)]
    return next((line for line in numbered if _LAUNCHER_VERSION_MARK.search(line)),
                numbered[0] if numbered else "unknown")


#: Where an interpreter's mpi4py extension is, asked without importing it (that starts MPI).
MPI4PY_FILE = "import importlib.util as u; print(u.find_spec('mpi4py.MPI').origin)"
