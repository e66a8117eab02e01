"""A program's ``--setup`` seconds as its rows recorded them, for a job script's time limit
(s30 tester O1). Rows of a real sweep."""

from __future__ import annotations

import math

from hpcds1mpi.surrogates.setup_times import ANY, setup_allowance, setup_seconds
from tests.measure.test_setup_command import SETUP, _case, _sweep


def test_the_longest_setup_per_configuration_and_of_all(tmp_path):
    from hpcds1mpi.records.telemetry_rows import telemetry_rows

    top = _case(tmp_path)
    # 2 x 2 ranks fails in its setup after its sleep: that time is no setup's need
    slow = ("if [ {ranks} = 2 ]; then sleep 0.4; fi; if [ {size}-{ranks} = 2-2 ]; then "
            "sleep 0.6; exit 3; fi; " + SETUP)
    assert _sweep(top, slow).returncode == 0
    seconds = setup_seconds(telemetry_rows(str(top / "t.h5")))
    assert set(seconds) == {"N1xR1xT1-cpu-fp64", "N1xR2xT1-cpu-fp64", ANY}, seconds
    assert seconds["N1xR1xT1-cpu-fp64"] < 0.4 <= seconds["N1xR2xT1-cpu-fp64"] < 1.0
    assert seconds[ANY] == seconds["N1xR2xT1-cpu-fp64"]
    assert _sweep(top, None, out="plain.h5").returncode == 0
    assert setup_seconds(telemetry_rows(str(top / "plain.h5"))) == {}


def test_the_allowance_is_the_configurations_else_the_programs():
    recorded = {"N1xR2xT1-cpu-fp64": 5.0, ANY: 9.0}
    assert setup_allowance(recorded, "N1xR2xT1-cpu-fp64") == (
        5.0, "the longest measured for this configuration")
    assert setup_allowance(recorded, "N2xR2xT1-cpu-fp64") == (
        9.0, "the longest measured for this program")
    for nothing in (None, {}, {ANY: math.nan}, {ANY: "9"}, [1]):
        assert setup_allowance(nothing, "N1xR1xT1-cpu-fp64") == (0.0, "")
