"""Whether an MPICH-family library speaks PMIx (``srun --mpi=pmix``), from its dependencies.

One rule for the two readers: a sweep reads the library its own program loads through
``ldd`` (:func:`hpcds1mpi.launch.mpi_family.speaks_pmix`); ``advise`` reads a script's program
from its ELF files with nothing run (:mod:`hpcds1mpi.launch.script_mpi_check`: the program
may be anyone's).
"""

from __future__ import annotations

import re

__all__ = ["PMIX_SONAME", "RUNTIME_PMI_MARK", "VENDOR_PMI_SONAME", "mpich_speaks_pmix"]

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
