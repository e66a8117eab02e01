"""A failed launch whose output shows it failed inside ``MPI_Init``: a hint at the launcher.

A launcher of another MPI than the program's, or an ``srun`` plugin that cannot wire its MPI
up, fails every run in ``MPI_Init`` (a segfault in Open MPI's ``ompi_mpi_init`` under MPICH's
hydra, Open MPI's "An error occurred in MPI_Init", MPICH's "Fatal error in PMPI_Init"), and the
reason read was the crash alone ("exit code 6: reduce.rb:5: [BUG] Segmentation fault"), which
never named the launcher (s35 tester A1). The pre-flight refuses such a launcher where it reads
the program's MPI; :func:`init_failure_hint` is the fallback where it could not.
"""

from __future__ import annotations

import re

#: MPI start-up named in a failure: the call (MPI_Init, PMPI_Init_thread, Fortran's MPI_INIT,
#: a binding's MPI.Init in a backtrace line of its library) or the library's own init function.
IN_INIT = re.compile(r"\bP?MPI_Init(?:_thread)?\b|\bMPI_INIT(?:_THREAD)?\b|\bompi_mpi_init\b|"
                     r"\bMPI[IRD]_Init\w*\b")


def init_failure_hint(text: str) -> str:
    """A hint when the output ``text`` of a failed launch names MPI start-up (:data:`IN_INIT`):
    its launcher is probably not one that can start the program's MPI ("" otherwise)."""
    if not IN_INIT.search(text):
        return ""
    return ("it failed in MPI_Init: the launcher is probably not of the program's MPI (or "
            "srun's --mpi plugin cannot wire it up); pass the program's own MPI's mpiexec with "
            "--mpiexec, or srun --mpi=pmix for Open MPI")
