"""What a script for another scheduler than Slurm says of a program its sweep ran under ``srun``.

A PBS job has no ``srun``, so its script launches the program with the bare ``mpiexec`` its
job's PATH finds, which the program was never measured under: where that ``mpiexec`` is
another MPI's, the ranks run as independent 1-rank copies or abort. A sweep under
``mpirun``/``mpiexec`` names that launcher by its path in the script; an ``srun`` sweep cannot,
so the script says which MPI's ``mpiexec`` it needs (the program's, read from its file as the
sweep reads it) and the cluster-file keys that name one (s42 tester E, a minor point: the
script of an ``srun --mpi=pmix`` sweep said nothing).
"""

from __future__ import annotations

import shlex


def srun_swept_mpiexec(scheduler: str, mpi: str | None, program: str | None) -> str:
    """The note, after "the script", on the bare ``mpiexec`` of a ``scheduler`` job (not
    Slurm) for a program its sweep ran with ``srun --mpi=mpi``; ``program``: the command the
    script runs, whose MPI the note names where its file tells it."""
    from hpcds1mpi.launch.mpi_family import candidates, library_file, program_mpi
    from hpcds1mpi.launch.mpi_names import MPICH, OPENMPI, FAMILY_NAMES

    ran = f"srun --mpi={mpi}" if mpi else "srun"
    try:
        tokens = shlex.split(program or "")
    except ValueError:
        tokens = []
    found = program_mpi(tokens) if tokens else None
    if found is not None and found.family in (OPENMPI, MPICH):
        own = candidates(found.family, library=library_file(found))
        which = (f"{FAMILY_NAMES[found.family]}'s ({found.evidence})"
                 + (f", such as {own[0]}" if own else ""))
    else:
        why = f": {found.evidence}" if found is not None and found.evidence else ""
        which = f"the one of the MPI the program was built with (not read here{why})"
    return (f"launches with the bare mpiexec the job's PATH finds: the program's sweep ran it "
            f"with {ran} only, which a {scheduler.upper()} job does not have, so that mpiexec "
            f"must be {which}, or its ranks run as independent copies or abort; to name one, "
            'set launcher = "mpiexec" and mpiexec = its path in a --cluster file')
