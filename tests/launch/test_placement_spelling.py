"""A launch's rank-placement option that only the other MPI family's launcher takes (session
43's left list: Open MPI's -rr, --bynode and --npersocket were neither counted nor warned of)."""

from __future__ import annotations

import pytest

from hpcds1mpi.decide.advise_launch import text_only_checks
from hpcds1mpi.launch.script_reading import read_script

SCRIPT = ("#!/bin/bash\n#SBATCH -N 2\n#SBATCH --ntasks-per-node=2\n#SBATCH -t 5\n"
          "{launch} ./hyb 30000\n")


def _checks(launch: str) -> tuple[tuple, list[str]]:
    script = read_script(SCRIPT.format(launch=launch))
    return script.layout(), text_only_checks(script)


@pytest.mark.parametrize("launch, stops", [
    # measured (s44, 2-node salloc): Open MPI 4.1.4 exit 1, MPICH 5.0.2's hydra and Intel
    # MPI's mpirun exit 255
    ("mpirun.openmpi -n 2 -rr", "Open MPI's mpirun stops at it (unknown option, exit 1); "
                                "give --map-by ppr:1:node"),
    ("mpiexec.mpich -rr -n 2", "MPICH's hydra and Intel MPI's mpirun stop at it "
                               "(unrecognized argument, exit 255); give -ppn 1"),
    ("mpirun.mpich -n 2 -rr", "stop at it"),
])
def test_rr_is_warned_of_where_the_launcher_stops_at_it(launch, stops):
    layout, warnings = _checks(launch)
    [said] = [w for w in warnings if "-rr" in w]
    assert said.startswith(f"line 5: {launch.split()[0]} -rr: only Intel MPI's mpiexec takes "
                           "-rr (one rank per node); ")
    assert stops in said


@pytest.mark.parametrize("launch, layout", [
    # Intel MPI's mpiexec (measured): -n 2 -rr and -rr alone run 1 + 1 on the 2 nodes
    ("mpiexec -n 2 -rr", (2, 1, 1)), ("mpiexec -rr", (2, 1, 1)),
    ("mpiexec -rr -n 2", (2, 1, 1))])
def test_rr_is_counted_one_rank_per_node(launch, layout):
    """-rr alone had been read as the job's 2 tasks per node (2 x 2)."""
    assert _checks(launch)[0] == layout


def test_a_launcher_of_unknown_mpi_is_not_warned_of_rr():
    assert not [w for w in _checks("mpirun -n 2 -rr")[1] if "-rr" in w]


@pytest.mark.parametrize("name, warned", [("mpiexec", False), ("mpiexec.hydra", False),
                                          ("mpirun", True)])
def test_intel_mpis_mpiexec_takes_rr_and_its_mpirun_does_not(tmp_path, name, warned):
    """Told by the folder (mpiexec.hydra and impi_info beside it), as host_spelling tells it."""
    for f in ("mpiexec", "mpiexec.hydra", "mpirun", "impi_info"):
        (tmp_path / f).write_text("#!/bin/sh\n")
    layout, warnings = _checks(f"{tmp_path}/{name} -n 2 -rr")
    assert layout == (2, 1, 1)
    assert bool([w for w in warnings if "-rr" in w]) is warned


@pytest.mark.parametrize("option, right", [
    ("--bynode", "-ppn K"), ("-bynode", "-ppn K"), ("--byslot", "give nothing"),
    ("-byslot", "give nothing"), ("--npersocket 1", "-ppn K")])
@pytest.mark.parametrize("launcher", ["mpiexec.mpich", "mpirun.mpich", "mpiexec.hydra"])
def test_open_mpis_placement_options_are_warned_of_under_hydra(launcher, option, right):
    """Measured: MPICH 5.0.2's hydra and Intel MPI's stop at each (unrecognized argument)."""
    _, warnings = _checks(f"{launcher} -n 2 {option}")
    [said] = [w for w in warnings if option in w]
    assert said.startswith(f"line 5: {launcher} {option}: hydra (MPICH, Intel MPI) has no --")
    assert "it stops (unrecognized argument, exit 255)" in said and right in said


@pytest.mark.parametrize("launch, layout", [
    # Open MPI 4.1.4 (measured): deprecated spellings of --map-by node / slot
    ("mpirun.openmpi -n 2 --bynode", (2, 1, 1)), ("mpirun.openmpi -n 2 -bynode", (2, 1, 1)),
    ("mpirun.openmpi -n 4 --bynode", (2, 2, 1)), ("mpirun.openmpi --bynode", (2, 2, 1)),
    ("mpirun.openmpi -n 2 --byslot", (1, 2, 1)), ("mpirun.openmpi -n 2 -byslot", (1, 2, 1))])
def test_open_mpi_takes_bynode_and_byslot_as_map_by(launch, layout):
    got, warnings = _checks(launch)
    assert got == layout and not [w for w in warnings if "by" in w.split(":")[1]]


def test_hydras_f_given_to_open_mpi_is_warned_of():
    """Measured: Open MPI 4.1.4 stops at -f (unknown option, exit 1); hydra takes it."""
    _, warnings = _checks("mpirun.openmpi -n 2 -f hosts.txt")
    assert ("line 5: mpirun.openmpi -f hosts.txt: Open MPI's mpirun has no -f (hydra's): it "
            "stops (unknown option, exit 1); give --hostfile hosts.txt") in warnings
    for fine in ("mpirun.openmpi -n 2 --hostfile hosts.txt", "mpiexec.mpich -n 2 -f hosts.txt"):
        assert not [w for w in _checks(fine)[1] if "no -f" in w]
