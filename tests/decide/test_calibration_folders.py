"""A calibration script lists and checks its steps' --workdir folders before its first step."""

from __future__ import annotations

from hpcds1mpi.config import Configuration
from hpcds1mpi.decide.calibration_folders import step_folders
from hpcds1mpi.launch.calibration_script import CalibrationStep

STEPS = [CalibrationStep(Configuration(1, r, 1)) for r in (1, 2, 1)]


def test_each_folder_is_listed_once_relative_to_the_submit_folder():
    values = step_folders(STEPS, 64, {"workdir": "runs/{size}-{ranks}"})
    assert values["step_folders"] == ["runs/64-1", "runs/64-2"]
    assert values["folders_where"] == ", in the folder you submit from"
    assert values["missing_where"] == " in $PWD"
    assert step_folders(STEPS, 64, None) == {}


def test_an_absolute_workdir_is_its_folders_wherever_the_job_is_submitted():
    """s29 V1-2: an absolute --workdir was listed "in the folder you submit from"."""
    values = step_folders(STEPS, 64, {"workdir": "/scratch/me/{size}-{ranks}"})
    assert values["folders_shown"] == "/scratch/me/64-1, /scratch/me/64-2"
    assert values["folders_where"] == "" and values["missing_where"] == ""


def test_the_submit_folder_is_no_folder_to_create():
    """s30 tester N5: a sweep's --workdir '.' had its calibration script list '.' among the
    folders to create and check; the submit folder is neither."""
    assert step_folders(STEPS, 64, {"workdir": "."}) == {}
    assert step_folders(STEPS, 64, {"workdir": "./"}) == {}
    assert step_folders(STEPS, 64, {"workdir": "./{ranks}"})["step_folders"] == ["./1", "./2"]
