"""A program's recorded command line that cannot be the one its runs ran (s30 tester N6).
The end-to-end story (a real sweep, train, recommend --emit refused) is in
tests/commands/test_recommend.py."""

from __future__ import annotations

import pandas as pd

from hpcds1mpi.decide.stale_command import stale_command
from hpcds1mpi.surrogates.levels import MeasuredLevels


class _Rows:
    """A bundle as far as the check reads it: its training rows, as sweeps record them."""

    def __init__(self, commands):
        self.read = 0
        self.rows = pd.DataFrame({"workload": "app", "kind": "external", "command": commands,
                                  "size": [10, 20][:len(commands)], "nodes": 1,
                                  "ranks_per_node": 1, "threads": 1, "device": "cpu",
                                  "precision": "fp64", "status": "ok"})

    def training_data(self):
        self.read += 1
        return self.rows


RAN = ["mpiexec -n 1 env APP_N=10 ./app", "mpiexec -n 1 env APP_N=20 ./app"]


def test_a_line_that_lost_its_size_says_what_ran_and_to_train_again():
    said = stale_command(_Rows(RAN), MeasuredLevels("app", True, command="./app"), "./app")
    assert said.startswith("the model records app's command as './app', but its runs ran "
                           "'env APP_N={size} ./app'")
    assert said.endswith("train again from the telemetry (hpcds1mpi train --telemetry FILE "
                         "--out DIR), or give the command with --program")


def test_a_line_its_runs_ran_or_one_carrying_its_size_is_not_questioned():
    levels = MeasuredLevels("app", True, command="env APP_N={size} ./app")
    rows = _Rows(RAN)
    assert stale_command(rows, levels, "env APP_N={size} ./app") == "" and rows.read == 0
    # runs of one input file: the recorded line is what they ran
    same = _Rows(["mpiexec -n 1 ./app in.txt", "mpiexec -n 1 ./app in.txt"])
    assert stale_command(same, MeasuredLevels("app", True), "./app in.txt") == ""
    # the size reaches the program through its --setup: nothing read
    setup = MeasuredLevels("app", True, measured_with={"setup": "sed s/N/{size}/ t > in"})
    assert stale_command(rows, setup, "./app") == "" and rows.read == 0
    assert stale_command(rows, None, "./app") == ""  # a kernel
