"""A failed launch whose program says it ran as 1 process where the configuration has more.

A launcher of another MPI family than the program's (MPICH's hydra starting an Open MPI
program) starts each rank as an MPI world of its own, a singleton; a program that needs
several processes then stops, each copy saying it is alone (OpenFOAM: "attempt to run parallel
on 1 processor"), and the reason read was "exit code 134: Aborted" (s29 tester A5). The
preflight (:mod:`hpcds1mpi.launch.preflight`) normally refuses such a launcher before any
run; :func:`singleton_hint` is the fallback that names the likely cause.
"""

from __future__ import annotations

import re

#: What programs print when their MPI world has 1 process: OpenFOAM's refusal, LAMMPS's
#: processor grid, GROMACS's and Quantum ESPRESSO's process counts, CP2K's GLOBAL| line,
#: and a generic "running on 1 MPI process(es)".
ONE_PROCESS = re.compile(r"\battempt to run parallel on 1 processor\b|"
                         r"\b1 by 1 by 1 MPI processor grid\b|"
                         r"\bUsing 1 MPI process\b|"
                         r"\bNumber of MPI processes:\s+1\s*$|"
                         r"\bTotal number of message passing processes\s+1\s*$|"
                         r"\brunning on 1 MPI process(?:es|\(es\))?\b|"
                         r"\bMPI_COMM_WORLD size(?: is|:|=)?\s*1\b", re.MULTILINE)


def singleton_hint(text: str, ranks: int) -> str:
    """A hint when the output ``text`` of a failed launch of ``ranks`` ranks says the program
    ran as 1 process: its launcher is probably not of the program's MPI ("" otherwise)."""
    if ranks <= 1 or not ONE_PROCESS.search(text):
        return ""
    return (f"the program says it ran as 1 process, not {ranks}: the launcher is probably "
            "not of the program's MPI and started each rank alone; pass the program's own "
            "mpiexec with --mpiexec")
