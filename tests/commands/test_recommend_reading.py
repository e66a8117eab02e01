"""How recommend's calibration sweep reads --program (:mod:`hpcds1mpi.commands.
recommend_reading`); through the command: ``test_recommend.py``."""

from __future__ import annotations

import pytest

from hpcds1mpi.commands.recommend_reading import READING_OPTIONS, calibration_reading
from hpcds1mpi.errors import ConfigError

NONE_GIVEN = {key.removeprefix("--").replace("-", "_"): None for key in READING_OPTIONS}


def test_a_kernel_has_no_reading_options_and_refuses_given_ones():
    assert calibration_reading(None, "gemm", None, NONE_GIVEN, escalated=True) == ({}, [])
    with pytest.raises(ConfigError, match="^--time-regex applies to --program only"):
        calibration_reading(None, "gemm", None, {**NONE_GIVEN, "time_regex": "t=(.*)"},
                            escalated=True)


def test_a_job_not_escalated_checks_the_given_options_and_says_them_unused():
    given = {**NONE_GIVEN, "time_regex": "t=([0-9.]+)"}
    measure, notes = calibration_reading(None, "app", "./app", given, escalated=False)
    assert measure == {} and len(notes) == 1 and "not escalated" in notes[0]
    assert calibration_reading(None, "app", "./app", NONE_GIVEN, escalated=False) == ({}, [])
    with pytest.raises(ConfigError, match="^--time-regex: missing \\)"):  # checked all the same
        calibration_reading(None, "app", "./app", {**NONE_GIVEN, "time_regex": "(("},
                            escalated=False)
