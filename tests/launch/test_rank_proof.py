"""Several ranks of a program whose MPI is not read: a note, or for one known to link no MPI a
refusal (s33 tester D2), on a real OpenMP-only binary."""

from __future__ import annotations

import pytest

from hpcds1mpi.errors import ConfigError
from hpcds1mpi.launch.mpi_family import program_mpi
from hpcds1mpi.launch.mpi_names import ProgramMPI
from hpcds1mpi.launch.rank_proof import unproven_ranks
from tests.helpers import openmp_binary




def test_ranks_of_a_program_without_mpi_are_refused_with_both_ways_out(tmp_path):
    program = program_mpi([openmp_binary(tmp_path)])
    with pytest.raises(ConfigError) as refused:
        unproven_ranks(program, 2, ranks_regex=False)
    said = str(refused.value)
    assert "links no MPI library" in said and "--ranks-per-node 1" in said
    assert "--ranks-regex" in said and "\n" not in said
    assert unproven_ranks(program, 1, ranks_regex=False) == ""
    assert unproven_ranks(program, 2, ranks_regex=True) == ""


def test_an_unknown_program_gets_the_note_not_a_refusal():
    unknown = ProgramMPI(None, "run.sh is a script run by /bin/sh: its MPI cannot be read")
    assert unproven_ranks(unknown, 2, ranks_regex=False).startswith("note: the launch is "
                                                                     "unverified")
    assert unproven_ranks(ProgramMPI("mpich", "links libmpi.so.12"), 2, False) == ""
