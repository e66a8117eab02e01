"""Launcher lines that start no ranks (``mpirun --version``, ``srun --test-only``) are no
launch: only the launcher's own words before the program count."""

from __future__ import annotations

import pytest

from hpcds1mpi.launch import script_repeats as sr
from hpcds1mpi.launch.informational_launches import starts_no_ranks
from hpcds1mpi.launch.script_reading import read_script


@pytest.mark.parametrize("line, option", [
    ("srun --version", "--version"), ("srun -V", "-V"), ("srun --help", "--help"),
    ("srun --usage", "--usage"), ("srun --test-only -N 2 -n 8 ./app", "--test-only"),
    ("srun --mpi=list", "--mpi=list"), ("/usr/bin/srun -V -n 2", "-V"),
    ("mpirun --version", "--version"), ("mpirun -V", "-V"), ("mpiexec -version", "-version"),
    ("mpiexec.hydra -info", "-info"), ("mpiexec --help", "--help"),
    ("mpirun --display-map --do-not-launch -np 4 ./app", "--do-not-launch"),
    ("prterun -h", "-h"),
])
def test_an_informational_option_of_the_launcher_starts_no_ranks(line, option):
    assert starts_no_ranks(line.split()) == option


@pytest.mark.parametrize("line", [
    "srun -n 2 ./app --version", "srun -l ./app -h", "srun -n 2 -- ./app --help",
    "mpirun -np 4 ./app --version", "mpiexec -n 2 ./app -V", "mpirun -np 4 ./app",
    "srun ./app", "aprun -n 2 ./app", "python3 --version", "",
])
def test_a_launch_or_another_command_is_not_one(line):
    assert starts_no_ranks(line.split()) is None


@pytest.mark.parametrize("query", ["mpirun --version", "srun --version", "mpiexec -V",
                                   "srun --test-only -n 4 ./app"])
def test_a_version_query_before_the_launch_is_no_second_launch(query):
    """s42 tester F3: ``mpirun --version`` before the launch was read as a launch: "the
    program mpirun starts could not be read" and "the script launches more than once", the
    limit kept; now the script launches once, on its real launch line."""
    script = read_script(f"#!/bin/bash\n#SBATCH -t 120\n{query}\nsrun ./app 48\n")
    [launch] = script.launches
    assert (launch.line, launch.program, launch.args) == (4, "./app", ["48"])
    assert sr.repeats_note(script, 60) is None
    assert not [n for n in script.notes if "line 3" in n]
