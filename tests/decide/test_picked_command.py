"""Which recorded command line a recommendation's script runs (s30 tester O3)."""

from __future__ import annotations

from hpcds1mpi.decide.picked_command import picked_command
from hpcds1mpi.surrogates.levels import MeasuredLevels

ONE_RANK = {"nodes": 1, "ranks_per_node": 1, "threads": 1, "device": "cpu", "precision": "fp64"}


def _levels(**kw) -> MeasuredLevels:
    return MeasuredLevels("cav", True, ranks_per_node=(1, 2), command="icoFoam -parallel",
                          other_commands=("icoFoam",), **kw)


def test_a_pick_of_one_rank_runs_the_line_its_runs_ran_and_says_so():
    """Was: 'mpirun -n 1 icoFoam -parallel', the line of most runs, never run at 1 rank."""
    levels = _levels(command_configs=(
        ((1, 2, 1, "cpu", "fp64", 20, 1), (1, 2, 1, "cpu", "fp64", 30, 1)),
        ((1, 1, 1, "cpu", "fp64", 20, 1),)))
    line, note = picked_command(None, levels, levels.command, ONE_RANK, 25)
    assert line == "icoFoam"
    assert note == ("the script runs 'icoFoam' (the line this configuration ran); the runs "
                    "of cav also ran 'icoFoam -parallel'")
    assert picked_command(None, levels, levels.command, {**ONE_RANK, "ranks_per_node": 2},
                          25)[0] == "icoFoam -parallel"


def test_one_line_or_no_pick_changes_nothing():
    one = MeasuredLevels("cav", True, command="icoFoam")
    assert picked_command(None, one, "icoFoam", ONE_RANK, 25) == ("icoFoam", "")
    assert picked_command(None, _levels(), "icoFoam -parallel", None, 25) == (
        "icoFoam -parallel", "")
