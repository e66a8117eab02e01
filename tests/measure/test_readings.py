"""What a program says about its own run: time, figure of merit, rank count."""

from __future__ import annotations

import math

import pytest

from hpcds1mpi.errors import ConfigError, LaunchError
from hpcds1mpi.measure.readings import Readings, compile_regex, number


def test_regexes_need_a_group_and_must_compile():
    with pytest.raises(ConfigError, match="--time-regex needs a group"):
        compile_regex("time", "--time-regex", "t: (.*)")
    with pytest.raises(ConfigError, match="--ranks-regex: "):
        compile_regex("(", "--ranks-regex", "r: (.*)")
    assert compile_regex(None, "--fom-regex", "") is None


def test_the_last_match_is_the_number_and_nan_where_none():
    pattern = compile_regex(r"HPL_time=([0-9.eE+-]+)", "--time-regex", "")
    assert number(pattern, "HPL_time=1.5\nHPL_time=2.5e-1\n") == 0.25
    assert math.isnan(number(pattern, "no time here"))
    assert math.isnan(number(pattern, "HPL_time=inf"))  # not a finite time
    assert math.isnan(number(None, "HPL_time=1"))


def test_only_what_the_launch_appended_to_the_output_file_is_read(tmp_path):
    readings = Readings.of(time_regex=r"HPL_time=([0-9.]+)", output_file="out-{ranks}.txt")
    path = readings.output_path(str(tmp_path), {"ranks": 2})
    assert path == str(tmp_path / "out-2.txt")
    assert readings.mark(path) == 0  # not there yet
    with open(path, "w") as fh:
        fh.write("HPL_time=9.0\n")  # an earlier run's (HPCC appends to hpccoutf.txt)
    start = readings.mark(path)
    with open(path, "a") as fh:
        fh.write("HPL_time=0.5\n")
    assert readings.read(readings.new_text(path, start))["time"] == 0.5
    assert readings.runtime_source().startswith("program's own time")
    assert Readings.of().runtime_source() == "launch wall time (s)"


def test_a_launch_whose_program_reports_other_ranks_is_an_error():
    readings = Readings.of(ranks_regex=r"CommWorldProcs=(\d+)")
    one_job = readings.read("CommWorldProcs=2\n")
    readings.check_ranks(one_job, 2, "hpcc 200 1x2x1", ["mpirun", "-n", "2"])
    copies = readings.read("CommWorldProcs=1\nCommWorldProcs=1\n")
    with pytest.raises(LaunchError, match="launched 2 rank.*matched .* with 1: its ranks are "
                                          "not one job"):
        readings.check_ranks(copies, 2, "hpcc 200 1x2x1", ["mpiexec", "-n", "2"])
    with pytest.raises(LaunchError, match="with nothing"):
        readings.check_ranks(readings.read(""), 2, "x", ["mpiexec"])
    Readings.of().check_ranks(copies, 2, "x", ["mpiexec"])  # no regex: nothing to check


def test_an_empty_output_file_name_is_refused():
    with pytest.raises(ConfigError, match="--output-file is empty"):
        Readings.of(output_file=" ")
