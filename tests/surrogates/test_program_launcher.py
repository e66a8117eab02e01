"""The launcher a program's sweep used, kept by the bundle (s29 tester B4): read from the rows,
written to and read from measured_levels.json, absent in an older file."""

from __future__ import annotations

import json

import pandas as pd

from hpcds1mpi.surrogates.levels import MeasuredLevels, levels_from_frame
from hpcds1mpi.surrogates.program_launcher import launch_dict, launch_of

MPIRUN = {"launcher": "mpiexec", "command": "/usr/bin/mpirun.openmpi",
          "flavour": "OpenMpiMpirun", "args": [], "mpi": ""}


def _rows(*launches) -> pd.DataFrame:
    return pd.DataFrame({"workload": "meep", "kind": "external", "status": "ok",
                         "precision": "fp64", "device": "cpu", "threads": 1,
                         "ranks_per_node": 1, "nodes": 1,
                         "launched_with": [json.dumps(x) if x else None for x in launches]})


def test_the_one_launch_of_a_programs_rows_is_kept_and_mixed_or_missing_is_none():
    assert launch_of(_rows(MPIRUN, MPIRUN)) == MPIRUN
    srun = {**MPIRUN, "launcher": "srun", "command": "srun", "mpi": "pmix"}
    assert launch_of(_rows(MPIRUN, srun)) is None  # learn merged two launchers: none
    assert launch_of(_rows(MPIRUN, None)) is None
    assert launch_of(_rows(MPIRUN).drop(columns="launched_with")) is None


def test_a_damaged_record_is_none():
    assert launch_dict({"launcher": "mpiexec"}) is None  # no command
    assert launch_dict({**MPIRUN, "args": "-x"}) is None
    assert launch_dict("mpiexec") is None


def test_the_levels_keep_it_through_measured_levels_json_and_an_older_file_has_none():
    levels = levels_from_frame(_rows(MPIRUN))["meep"]
    assert levels.launched_with == MPIRUN
    back = MeasuredLevels.from_dict(json.loads(json.dumps(levels.as_dict())))
    assert back.launched_with == MPIRUN
    older = {k: v for k, v in levels.as_dict().items() if k != "launched_with"}
    assert MeasuredLevels.from_dict(older).launched_with is None
