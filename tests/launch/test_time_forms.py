"""The time limits sbatch and qsub take, as they check them (s35 tester T8). Each value's
verdict was sbatch 22.05's on the test Slurm (``sbatch --test-only --time=X``);
tests/slurm/test_script_reading.py asks sbatch again where it runs."""

from __future__ import annotations

import pytest

from hpcds1mpi.launch.time_forms import (pbs_walltime_accepted, slurm_asks_no_limit,
                                         slurm_time_accepted)

#: Taken by sbatch (``-5`` too: a negative day count, read as some huge limit).
SBATCH_TAKES = ["UNLIMITED", "unlimited", "INFINITE", "-1", "0", "00", "000", "-0", "90",
                "99999999", "1:30", "1:60", "0:0", "1:30:00", "1:99:99", "3:70:00", "00:00:00",
                "2-", "1-", "2-0", "0-0", "2-1:30", "0-0:0", "2-3:4", "2-1:30:00",
                "1-25:00:00", "-5"]
#: Refused: "Invalid --time specification".
SBATCH_REFUSES = ["Partition_Limit", "1:2:3:4", "1:2:3:4:5", "", " 90", "1.5", "10s", "5m",
                  "+5", "abc", "5:", "1-2-3", "-2-1", "1:2-3", "-1:30", "1\u0663"]


@pytest.mark.parametrize("value", SBATCH_TAKES)
def test_what_sbatch_takes_is_taken(value):
    assert slurm_time_accepted(value)


@pytest.mark.parametrize("value", SBATCH_REFUSES)
def test_what_sbatch_refuses_is_refused(value):
    assert not slurm_time_accepted(value)


def test_a_time_of_zero_asks_no_limit():
    zero = ["UNLIMITED", "infinite", "-1", "0", "000", "-0", "0:0", "00:00:00", "0-0", "0-0:0"]
    assert all(slurm_asks_no_limit(v) for v in zero)
    assert not any(slurm_asks_no_limit(v) for v in ["90", "2-", "0:01", "Partition_Limit"])


@pytest.mark.parametrize("value, taken", [
    ("100:00:00", True), ("1:00:00:00", True), ("3600", True), ("90:00", True),
    ("00:00:30.5", True), ("1-00:00:00", False), ("Partition_Limit", False), ("", False),
    ("1:2:3:4:5", False), ("10h", False), ("1 00", False),
])
def test_a_pbs_walltime_is_refused_only_where_no_qsub_takes_it(value, taken):
    assert pbs_walltime_accepted(value) is taken
