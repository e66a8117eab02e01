"""The launcher a program's sweep used, kept by the bundle (s29 tester B4): read from the rows,
written to and read from measured_levels.json, absent in an older file."""

from __future__ import annotations

import json

import pandas as pd

from hpcds1mpi.surrogates.levels import MeasuredLevels, levels_from_frame
from hpcds1mpi.surrogates.program_launcher import SEVERAL, launch_dict, launch_for, launch_of

MPIRUN = {"launcher": "mpiexec", "command": "/usr/bin/mpirun.openmpi",
          "flavour": "OpenMpiMpirun", "args": [], "mpi": ""}


def _rows(*launches) -> pd.DataFrame:
    return pd.DataFrame({"workload": "meep", "kind": "external", "status": "ok",
                         "precision": "fp64", "device": "cpu", "threads": 1,
                         "ranks_per_node": 1, "nodes": 1,
                         "launched_with": [json.dumps(x) if x else None for x in launches]})


def test_the_one_launch_of_a_programs_rows_is_kept_and_missing_is_none():
    assert launch_of(_rows(MPIRUN, MPIRUN)) == MPIRUN
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


SRUN = {**MPIRUN, "launcher": "srun", "command": "srun", "mpi": "pmix"}


def _pooled() -> pd.DataFrame:
    """Two sweeps pooled by train: mpirun ran 3 runs at one thread, srun 1 run at two."""
    rows = _rows(MPIRUN, MPIRUN, MPIRUN, SRUN)
    rows.loc[3, "threads"] = 2
    return rows


def test_pooled_sweeps_of_several_launchers_keep_each_with_the_configurations_it_ran():
    """s31 tester P6: was None, and the script fell back to srun --mpi=pmi2 without a word."""
    got = launch_of(_pooled())
    assert got == {SEVERAL: [{**MPIRUN, "runs": 3, "configs": {"N1xR1xT1-cpu-fp64": 3}},
                             {**SRUN, "runs": 1, "configs": {"N1xR1xT2-cpu-fp64": 1}}]}
    levels = levels_from_frame(_pooled())["meep"]
    back = MeasuredLevels.from_dict(json.loads(json.dumps(levels.as_dict())))
    assert back.launched_with == got  # through measured_levels.json
    assert launch_dict({SEVERAL: [{**MPIRUN, "runs": 3}]}) is None  # damaged: no configs


def test_a_pick_takes_the_launcher_of_its_own_runs_and_says_why():
    several = launch_of(_pooled())
    launch, why = launch_for(several, "N1xR1xT2-cpu-fp64")
    assert launch == SRUN  # fewer runs in all, but the only ones of this configuration
    assert why == ("the pooled sweeps launched the program with 2 launchers "
                   "(/usr/bin/mpirun.openmpi (3 runs), srun --mpi=pmix (1 runs)); this "
                   "script's is srun --mpi=pmix, which ran 1 of the 1 runs of N1xR1xT2-cpu-fp64")
    launch, why = launch_for(several, "N2xR1xT1-cpu-fp64")  # never run: the most runs
    assert launch == MPIRUN and why.endswith("which ran the most runs (3; none of "
                                             "N2xR1xT1-cpu-fp64)")
    assert launch_for(MPIRUN, "N1xR1xT1-cpu-fp64") == (MPIRUN, "")  # one launcher: as before
    assert launch_for(None, "N1xR1xT1-cpu-fp64") == (None, "")


def test_why_a_programs_ranks_cannot_be_one_job_is_kept_through_the_bundle():
    """s39 tester A2: a sweep's record that the program links no MPI reaches recommend's offer
    (``launched_with``'s ``one_rank_only``), from one launch or any of several; an empty one
    and a bundle older than the record say nothing."""
    from hpcds1mpi.records.telemetry_rows import launched_with
    from hpcds1mpi.surrogates.program_launcher import one_rank_only

    why = "the program omp links no MPI library (...), so its ranks would run as copies"
    alone = {**MPIRUN, "one_rank_only": why}
    assert json.loads(launched_with({"launch": json.dumps({**alone, "setup": ""})})) == alone
    levels = levels_from_frame(_rows(alone, alone))["meep"]
    back = MeasuredLevels.from_dict(json.loads(json.dumps(levels.as_dict())))
    assert back.launched_with == alone and one_rank_only(back.launched_with) == why
    pooled = launch_of(_rows(MPIRUN, alone))
    assert SEVERAL in pooled and one_rank_only(pooled) == why
    assert launch_dict({**MPIRUN, "one_rank_only": ""}) == MPIRUN
    assert one_rank_only(launch_of(_rows(MPIRUN))) == "" and one_rank_only(None) == ""
