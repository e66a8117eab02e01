"""The baselines System 1 is compared with: rules of thumb, random order, the noise ceiling."""

from __future__ import annotations

import pandas as pd
import pytest

from hpcds1mpi.analysis.system1_baselines import (
    neighbour_oracle,
    random_expectation,
    rules_order,
)


def test_rules_prefer_gpu_then_every_core_a_rank_one_thread_fp64():
    sub = pd.DataFrame({
        "nodes": [1, 1, 1, 1], "ranks_per_node": [8, 4, 8, 1], "threads": [1, 2, 1, 1],
        "device": ["cpu", "cpu", "cpu", "gpu"], "precision": ["fp32", "fp64", "fp64", "fp32"]})
    assert rules_order(sub) == [3, 2, 0, 1]
    cpu_only = sub.iloc[:3].reset_index(drop=True)
    assert rules_order(cpu_only) == [2, 0, 1]


def test_rules_never_oversubscribe_the_node():
    sub = pd.DataFrame({
        "nodes": [1, 1, 1], "ranks_per_node": [4, 2, 1], "threads": [4, 1, 1],
        "device": ["cpu"] * 3, "precision": ["fp64"] * 3, "cores_per_node": [2, 2, 2]})
    assert rules_order(sub) == [1, 2, 0]


def test_random_expectation_is_exact():
    sub = pd.DataFrame({"status": ["ok", "ok", "failed", "ok"],
                        "runtime_s": [1.0, 2.0, float("nan"), 1.04]})
    mean_speed, crash, runs = random_expectation(sub)
    assert mean_speed == pytest.approx((1.0 + 0.5 + 0.0 + 1 / 1.04) / 4)
    assert crash == 0.25
    # Two good configurations among four: the first good one is expected at (4 + 1) / (2 + 1).
    assert runs == pytest.approx(5 / 3)


def test_neighbour_oracle_picks_what_was_fastest_at_the_neighbouring_sizes():
    rows = []
    for size, (a, b) in {1: (1.0, 2.0), 2: (1.0, 1.1), 3: (1.0, 2.0)}.items():
        for threads, runtime in ((1, a), (2, b)):
            rows.append({"workload": "w", "partition": "p", "size": size, "nodes": 1,
                         "ranks_per_node": 1, "threads": threads, "device": "cpu",
                         "precision": "fp64", "status": "ok", "runtime_s": runtime})
    out = neighbour_oracle(pd.DataFrame(rows))
    assert out["problems"] == 1 and out["median_pct_of_best"] == pytest.approx(100.0)
    rows[2]["runtime_s"], rows[3]["runtime_s"] = 2.0, 1.0  # at size 2 the other one wins
    out = neighbour_oracle(pd.DataFrame(rows))
    assert out["median_pct_of_best"] == pytest.approx(50.0) and out["picks_within_5pct"] == 0.0
