"""A failed launch whose program says it ran alone where several ranks were asked for."""

from __future__ import annotations

import pytest

from hpcds1mpi.measure.singleton_ranks import singleton_hint


@pytest.mark.parametrize("said", [
    "--> FOAM FATAL ERROR: \nattempt to run parallel on 1 processor\n",  # OpenFOAM
    "  1 by 1 by 1 MPI processor grid\n",  # LAMMPS
    "Using 1 MPI process\n",  # GROMACS
    "     Number of MPI processes:                 1\n",  # Quantum ESPRESSO
    " GLOBAL| Total number of message passing processes                             1\n",
])
def test_a_program_that_says_it_ran_alone_gets_the_hint_only_with_several_ranks(said):
    hint = singleton_hint(said, 4)
    assert "ran as 1 process, not 4" in hint and "--mpiexec" in hint
    assert singleton_hint(said, 1) == ""  # one rank: alone is right


@pytest.mark.parametrize("said", [
    "Number of MPI processes:                 16\n", "Using 12 MPI processes\n",
    "  2 by 1 by 1 MPI processor grid\n", "attempt to run parallel on 10 processors\n", ""])
def test_other_counts_give_no_hint(said):
    assert singleton_hint(said, 2) == ""
