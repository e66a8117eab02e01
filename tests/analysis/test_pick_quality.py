"""Pick quality on measured runs: speed vs the best, runs to 5 %, noise, summaries, AUROC, ECE."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from hpcds1mpi.analysis import pick_quality as pq


@pytest.fixture
def sub():
    return pd.DataFrame({
        "nodes": [1, 1, 2, 2], "ranks_per_node": [4, 2, 4, 1], "threads": [1, 2, 1, 1],
        "device": ["cpu"] * 4, "precision": ["fp64", "fp64", "fp32", "fp64"],
        "status": ["ok", "ok", "oom", "ok"],
        "runtime_s": [2.0, 1.0, np.nan, 1.04],
        "runtime_min_s": [1.9, 0.95, np.nan, 0.99],
    })


def test_speed_and_crashes(sub):
    assert pq.best_runtime(sub) == 1.0
    assert pq.speed(sub, 0) == (0.5, False)
    assert pq.speed(sub, 1) == (1.0, False)
    assert pq.speed(sub, 2) == (0.0, True)  # a crashing pick counts 0 %
    assert pq.GOOD_SPEED == pytest.approx(1 / 1.05)


def test_runs_to_within_five_percent(sub):
    assert pq.runs_to_within(sub, [0, 2, 3, 1]) == 3  # 1.04 s is within 5 % of 1.0 s
    assert pq.runs_to_within(sub, [0, 2]) == 2  # never reached: every run was needed
    assert pq.runs_to_within(sub, [1]) == 1


def test_within_noise_uses_the_fastest_repeat(sub):
    assert pq.within_noise(sub, 3)  # fastest repeat 0.99 s <= the best's median 1.0 s
    assert not pq.within_noise(sub, 0) and not pq.within_noise(sub, 2)
    assert pq.config_label(sub.iloc[2]) == "2x4x1 cpu fp32"


def test_summaries():
    s = pq.summary([1.0, 0.5, 0.0], [False, False, True], [1, 3, 5])
    assert s["median_pct_of_best"] == 50.0 and s["crashing_picks"] == 1.0
    assert s["problems"] == 3 and s["median_runs_to_5pct"] == 3.0
    assert s["geomean_pct_of_best"] == pytest.approx(100 * (1.0 * 0.5 * 1e-3) ** (1 / 3))
    assert pq.summary([], [], [])["median_pct_of_best"] is None
    n = pq.noise_summary([{"pct_of_best": 96.0, "within_noise_of_best": False},
                       {"pct_of_best": 90.0, "within_noise_of_best": True},
                       {"pct_of_best": 50.0, "within_noise_of_best": False}])
    assert n["picks_within_5pct"] == pytest.approx(1 / 3)
    assert n["picks_within_noise_of_best"] == pytest.approx(1 / 3)
    assert n["picks_within_5pct_or_noise"] == pytest.approx(2 / 3)


def test_auroc_and_ece():
    assert pq.auroc([0.9, 0.8, 0.2, 0.1], [True, True, False, False]) == 1.0
    assert pq.auroc([0.1, 0.2, 0.8, 0.9], [True, True, False, False]) == 0.0
    assert pq.auroc([0.5, 0.5], [True, False]) == 0.5
    assert np.isnan(pq.auroc([0.5], [True]))
    assert pq.ece([1.0, 0.0], [1, 0]) == 0.0
    assert pq.ece([0.75] * 4, [1, 1, 1, 0]) == pytest.approx(0.0)
    assert pq.ece([0.9] * 2, [0, 0]) == pytest.approx(0.9)
