"""Which of ``srun``'s wire-ups an MPI library speaks, read from its files.

* :func:`mpich_speaks_pmix`: whether an MPICH-family library speaks PMIx (``srun
  --mpi=pmix``), from its dependencies.
* :func:`openmpi_slurm_pmi`: whether an Open MPI installation speaks Slurm's PMI-1/PMI-2
  (``srun --mpi=pmi2``), from its components.

One rule each for the two readers: a sweep reads the library its own program loads through
``ldd`` (:mod:`hpcds1mpi.launch.mpi_family`); ``advise`` reads a script's program from its ELF
files with nothing run (:mod:`hpcds1mpi.launch.script_mpi_check`: the program may be
anyone's).
"""

from __future__ import annotations

import glob
import os
import re

from hpcds1mpi.launch.elf_libraries import needed_tree

__all__ = ["PMIX_SONAME", "RUNTIME_PMI_MARK", "SLURM_PMI_COMPONENTS", "VENDOR_PMI_SONAME",
           "mpich_speaks_pmix", "openmpi_component_folder", "openmpi_slurm_pmi",
           "openmpi_without_pmix"]

#: A PMIx client library (OpenPMIx's ``libpmix.so.2``), by soname.
PMIX_SONAME = re.compile(r"^libpmix\.so")
#: An MPICH-family library that loads its PMI library at run time (Intel MPI's
#: ``I_MPI_PMI_LIBRARY``), or links a vendor's PMI library (Cray PMI): its dependencies cannot
#: say whether it speaks PMIx.
RUNTIME_PMI_MARK = re.compile(rb"Intel\(R\) MPI Library|I_MPI_PMI_LIBRARY")
VENDOR_PMI_SONAME = re.compile(r"^libpmi2?\.so")


def mpich_speaks_pmix(library: str, names, unresolved: bool = False) -> bool | None:
    """Whether the MPICH-family library file ``library``, whose dependencies (or its
    program's) are the sonames ``names``, speaks PMIx: True where one is a PMIx library; None
    where that cannot be told (``unresolved``: one was not found; a vendor's PMI library; a
    library that loads its PMI at run time, or an unreadable one); False otherwise. Its
    built-in PMI speaks PMI-1/PMI-2 alone: under ``--mpi=pmix`` Debian's MPICH 4.0 starts
    each rank as a 1-rank world, MPICH 5 aborts ("unsupported PMI version PMIx")."""
    names = list(names)
    if any(PMIX_SONAME.search(name) for name in names):
        return True
    if unresolved or any(VENDOR_PMI_SONAME.search(name) for name in names):
        return None
    try:
        with open(library, "rb") as fh:
            return None if RUNTIME_PMI_MARK.search(fh.read()) else False
    except OSError:
        return None


#: Open MPI's components that join its ranks through Slurm's PMI-1 / PMI-2: Open MPI 2 to 4
#: built ``--with-pmi`` has them; Debian's has none (``ext3x``, ``flux``, ``isolated``).
SLURM_PMI_COMPONENTS = ("mca_pmix_s1.so", "mca_pmix_s2.so")
#: Where Open MPI keeps its components, from the folder of its ``libmpi``: ``PREFIX/lib/openmpi``
#: (upstream, Spack, RHEL's ``/usr/lib64/openmpi/lib/openmpi``), Debian's
#: ``/usr/lib/<arch>/openmpi/lib/openmpi3`` beside ``/usr/lib/<arch>/libmpi.so.40``.
_COMPONENT_FOLDERS = ("openmpi", "openmpi[0-9]*", "openmpi/lib/openmpi",
                      "openmpi/lib/openmpi[0-9]*")
#: Open MPI 5's OPAL (``libopen-pal.so.80``): PMIx only, no Slurm PMI component at all.
OPENMPI5_PAL_SONAME = re.compile(r"^libopen-pal\.so\.8\d")


def openmpi_component_folder(library: str) -> str | None:
    """The folder of the Open MPI installation owning ``library`` (its ``libmpi`` file) that
    holds its ``mca_*.so`` components, None when none is found there."""
    home = os.path.dirname(os.path.realpath(library))
    for pattern in _COMPONENT_FOLDERS:
        for folder in sorted(glob.glob(os.path.join(glob.escape(home), pattern))):
            if glob.glob(os.path.join(glob.escape(folder), "mca_*.so")):
                return folder
    return None


def openmpi_slurm_pmi(library: str) -> tuple[bool | None, str]:
    """(whether the Open MPI whose ``libmpi`` is the file ``library`` can join its ranks through
    Slurm's PMI-1/PMI-2, i.e. start under ``srun --mpi=pmi2``; how that is known).

    True where its component folder holds ``mca_pmix_s1.so`` / ``mca_pmix_s2.so``, or its
    libraries link Slurm's ``libpmi`` / ``libpmi2`` (components built into the libraries);
    False for Open MPI 5 (PMIx only) and where the component folder has neither (it aborts in
    ``MPI_Init`` under ``--mpi=pmi2``); None when neither is found (a layout not known here).
    Files are read, nothing is run."""
    try:
        names = [name for name, _ in needed_tree(library)]
    except OSError:
        names = []
    if any(VENDOR_PMI_SONAME.search(name) for name in names):
        return True, f"{library} links Slurm's PMI library"
    if any(OPENMPI5_PAL_SONAME.search(name) for name in names):
        return False, f"its Open MPI 5 ({library}) joins its ranks through PMIx only"
    folder = openmpi_component_folder(library)
    if folder is None:
        return None, f"no component folder of Open MPI found beside {library}"
    found = [name for name in SLURM_PMI_COMPONENTS if os.path.isfile(os.path.join(folder, name))]
    if found:
        return True, f"its Open MPI has {found[0]} in {folder}"
    return False, f"its Open MPI has no Slurm PMI component (no mca_pmix_s1/s2 in {folder})"


def openmpi_without_pmix(library: str | None) -> str:
    """What the Open MPI whose ``libmpi`` is the file ``library`` does under ``srun`` with no
    PMIx server (``--mpi=pmi2`` / ``none`` without its Slurm PMI): Open MPI 5 starts each
    rank as a singleton, a 1-rank job that exits 0 (measured with the PyPI wheel's 5.0.11, s40
    tester A11); Open MPI 4 (Debian's) aborts in ``MPI_Init``."""
    try:
        names = [name for name, _ in needed_tree(library)] if library else []
    except OSError:
        names = []
    if any(OPENMPI5_PAL_SONAME.search(name) for name in names):
        return "each rank runs alone as an independent 1-rank copy and exits 0"
    return "it aborts in MPI_Init"
