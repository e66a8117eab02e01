"""What proves that a sweep's several ranks are one job, for a program whose MPI is not read.

The launch probe shows only that the launcher starts one job of ``sh``. Where the program's MPI
is read the launcher check decides; otherwise :func:`unproven_ranks` says so in a note, and the
way out is ``--ranks-regex`` (the rank count each launch prints). A dynamic binary whose every
library ``ldd`` resolves and none is MPI (an OpenMP-only program) is refused at more than one
rank instead: its ranks are independent copies, recorded ok, and recommend then listed the
2-rank layout as measured (s33 tester D2).
"""

from __future__ import annotations

import os

from hpcds1mpi.errors import ConfigError
from hpcds1mpi.launch.mpi_names import MPICH, OPENMPI, ProgramMPI


def unproven_ranks(program: ProgramMPI, max_ranks: int, ranks_regex: bool) -> str:
    """The note for ``program``'s launches at up to ``max_ranks`` ranks, "" where none is due
    (one rank, ``--ranks-regex`` given, its MPI read).

    Raises:
        ConfigError: more than one rank of a program known to link no MPI library
            (:func:`~hpcds1mpi.launch.mpi_family.known_without_mpi`), without
            ``--ranks-regex``: one line with both ways out.
    """
    from hpcds1mpi.launch.mpi_family import known_without_mpi

    if max_ranks <= 1 or ranks_regex or program.family in (OPENMPI, MPICH):
        return ""
    if known_without_mpi(program):
        from hpcds1mpi.launch.mpi_family import NO_MPI

        how = "" if program.evidence == NO_MPI else f"; {program.evidence}"
        raise ConfigError(
            f"the program {os.path.basename(program.path)} links no MPI library (ldd resolves "
            f"every library it needs{how}), so its {max_ranks} ranks "
            "would run as independent copies, each recorded as the job; the program was not run: for a "
            "threads-only program sweep --ranks-per-node 1 (and --threads); if it loads MPI at "
            "run time, give --ranks-regex with the rank count it prints (e.g. --ranks-regex "
            "'ranks: (\\d+)'), which then proves each launch")
    return (f"note: the launch is unverified: the program's MPI is unknown "
            f"({program.evidence}) and the probe shows only that the launcher starts one job "
            "of sh; were it another MPI's program, its ranks would run as independent 1-rank "
            "copies and still be recorded ok: give --ranks-regex with the rank count the "
            "program prints (e.g. --ranks-regex 'ranks: (\\d+)') to check every launch")
