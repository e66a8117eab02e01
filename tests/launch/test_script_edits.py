"""A rewrite's edits are applied only where they do not overlap (s28 reviewer R1: two cuts
sharing a comma ate the next directive line, unseen)."""

from __future__ import annotations

import pytest

from hpcds1mpi.launch.script_edits import Edits
from hpcds1mpi.launch.script_reading import read_script


def test_overlapping_edits_are_an_internal_error_not_a_wrecked_script():
    e = Edits(read_script("#PBS -l ncpus=4,mem=8gb\n#PBS -N job\nmpiexec ./app\n"))
    e.edits += [(8, 16, ""), (15, 23, "")]  # ncpus=4, and ,mem=8gb: both take the comma
    with pytest.raises(ValueError, match="internal error"):
        e.apply()


def test_touching_edits_and_insertions_at_a_cut_apply():
    e = Edits(read_script("#PBS -l ncpus=4,mem=8gb,walltime=1:00:00\nmpiexec ./app\n"))
    e.edits += [(8, 16, ""), (16, 24, ""), (24, 24, "place=excl,"), (24, 32, "walltime")]
    assert e.apply().startswith("#PBS -l place=excl,walltime=1:00:00\n")


@pytest.mark.parametrize("line, value", [
    ("mpiexec -genv I_MPI_PIN_DOMAIN core -n 2 ./app", "core"),  # hydra's own word
    ("mpiexec -genv I_MPI_PIN_DOMAIN=core -n 2 ./app", "core"),
    ("I_MPI_PIN_DOMAIN=core mpiexec -n 2 ./app", "core"),
    ("srun --export=ALL,I_MPI_PIN_DOMAIN=core -n 2 ./app", "core"),
])
def test_a_launch_variables_value_is_found_where_it_stands(line, value):
    from hpcds1mpi.launch.script_edits import env_value_at

    script = read_script(f"#!/bin/bash\n#SBATCH -n 2\n{line}\n")
    start, end = env_value_at(script.text, "I_MPI_PIN_DOMAIN",
                              script.launch.env["I_MPI_PIN_DOMAIN"][1])
    assert script.text[start:end] == value
