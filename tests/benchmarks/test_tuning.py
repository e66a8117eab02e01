"""benchmarks/tuning.py: which measured configurations make a replayed problem."""

from __future__ import annotations

import pandas as pd
import pytest

from tests.benchmarks import load_benchmark


@pytest.fixture(scope="module")
def tuning():
    return load_benchmark("tuning")


def _row(threads, status, runtime=1.0, size=64, precision="fp64"):
    return {"machine_id": "m", "workload": "io", "size": size, "nodes": 1,
            "ranks_per_node": 1, "threads": threads, "device": "cpu", "precision": precision,
            "status": status, "runtime_s": runtime if status == "ok" else float("nan")}


def test_a_configuration_never_tried_is_not_in_the_problem(tuning):
    # io cannot use threads: its 2- and 4-thread rows say "unsupported" and were never run;
    # a failed run is a real outcome and stays.
    runs = pd.DataFrame([_row(1, "ok"), _row(1, "ok", precision="fp32"),
                         _row(2, "unsupported"), _row(4, "unsupported"),
                         _row(2, "failed", precision="fp32"), _row(4, "cancelled",
                                                                   precision="fp32")])
    (key, rows), = tuning.problems(runs, min_ok=2)
    assert key == ("m", "io", 64)
    assert sorted(zip(rows["threads"], rows["status"])) == [(1, "ok"), (1, "ok"),
                                                            (2, "failed")]


def test_a_problem_needs_enough_successful_configurations(tuning):
    runs = pd.DataFrame([_row(1, "ok"), _row(2, "unsupported"), _row(4, "unsupported")])
    assert tuning.problems(runs, min_ok=2) == []
    assert len(tuning.problems(runs, min_ok=1)) == 1
