"""Race rounds: only a problem's close configurations are measured again, and a resumed sweep
decides the same way."""

from __future__ import annotations

import math

import pytest

from hpcds1mpi.measure.race import RaceCheck, is_contender, round_medians
from hpcds1mpi.records import telemetry
from tests.helpers import REPO, run_cli

FAULTS = str(REPO / "tests" / "fault_kernels.py")


def _rows(times: dict) -> dict:
    """Run id ``c{config}r{round}`` -> row, from ``{(config, round): runtime or status}``."""
    rows = {}
    for (c, r), value in times.items():
        status, runtime = (value, math.nan) if isinstance(value, str) else ("ok", value)
        rows[f"c{c}r{r}"] = {"status": status, "runtime_s": runtime}
    return rows


def _check(configs: int, rounds: int, own: int, round_: int) -> RaceCheck:
    grid = tuple(tuple(f"c{c}r{r}" for r in range(rounds)) for c in range(configs))
    return RaceCheck(grid, own, round_)


def test_close_configurations_race_and_far_ones_do_not():
    rows = _rows({(0, 0): 1.0, (0, 1): 1.2, (1, 0): 1.1, (1, 1): 1.0, (2, 0): 2.0, (2, 1): 2.2})
    within = 0.1  # medians 1.1, 1.05, 2.1: configurations 0 and 1 are within 10 % of 1.05
    assert [is_contender(_check(3, 4, c, 2), rows.get, within) for c in range(3)] == \
        [True, True, False]


def test_a_best_ahead_of_every_other_configuration_settles_the_problem():
    rows = _rows({(0, 0): 1.0, (0, 1): 1.0, (1, 0): 1.5, (1, 1): 1.6})
    assert not is_contender(_check(2, 4, 0, 2), rows.get, 0.1)  # nothing left to tell apart
    assert not is_contender(_check(2, 4, 1, 2), rows.get, 0.1)


def test_only_the_rounds_before_the_decided_one_count():
    # Round 2 of configuration 1 was measured fast, but round 2 is the one being decided.
    rows = _rows({(0, 0): 1.0, (0, 1): 1.0, (1, 0): 2.0, (1, 1): 2.0, (1, 2): 0.1})
    assert round_medians(_check(2, 4, 1, 2), rows.get) == [1.0, 2.0]
    assert round_medians(_check(2, 4, 1, 3), rows.get) == [1.0, 2.0]


def test_a_failure_in_any_round_takes_the_configuration_out():
    rows = _rows({(0, 0): 1.0, (0, 1): "crashed", (1, 0): 1.05, (1, 1): 1.0, (2, 0): 1.02,
                  (2, 1): 1.03})
    medians = round_medians(_check(3, 4, 0, 2), rows.get)
    assert math.isinf(medians[0]) and medians[1:] == [1.025, 1.025]
    assert not is_contender(_check(3, 4, 0, 2), rows.get, 0.1)
    assert is_contender(_check(3, 4, 1, 2), rows.get, 0.1)


def test_nothing_measured_races_nothing():
    rows = _rows({(0, 0): "unsupported", (1, 0): "unsupported"})
    assert not is_contender(_check(2, 3, 0, 1), rows.get, 0.5)


PLAN = """
[sweep]
min_time = 0.0
min_repeats = 1
max_repeats = 2
warmup = 0
rounds = 2
race_rounds = 3
race_within = 0.5
ranks_per_node = [1]
threads = [1, 2]
precisions = ["fp64", "fp32"]
sizes = [20]

[[kernel]]
name = "fault_slow64"
"""


@pytest.fixture(scope="module")
def raced(tmp_path_factory):
    """A real sweep of fault_slow64 (fp32 sleeps 20 ms at 1 and 2 threads, fp64 60 ms): the
    two fp32 configurations stay within 50 % of each other, the fp64 ones are 3x behind."""
    tmp = tmp_path_factory.mktemp("race")
    (tmp / "plan.toml").write_text(PLAN)
    out = tmp / "race.h5"
    argv = ["sweep", "--plan", str(tmp / "plan.toml"), "--out", str(out), "--kernel-module",
            FAULTS, "--no-progress"]
    first = run_cli(argv, timeout=180)
    again = run_cli(argv + ["--resume"], timeout=180)
    return first, again, telemetry.read_runs(out)


def test_a_sweep_races_only_the_close_configurations(raced):
    first, _, runs = raced
    assert first.returncode == 0, first.stderr[-2000:]
    rounds = runs.groupby(["precision", "threads"]).size().to_dict()
    assert rounds == {("fp32", 1): 5, ("fp32", 2): 5, ("fp64", 1): 2, ("fp64", 2): 2}
    assert sorted(runs["seed"].unique()) == [0, 1, 2, 3, 4]
    assert "6 race runs not needed" in first.stderr
    assert runs["sweep_id"].nunique() == 1


def test_a_resumed_race_decides_the_same_way(raced):
    first, again, runs = raced
    assert again.returncode == 0, again.stderr[-2000:]
    assert "0 configurations" in again.stderr and "6 race runs not needed" in again.stderr
    assert len(runs) == 14
