"""System 1's view of a tuning space: expected improvement, System 1's pick."""

from __future__ import annotations

import numpy as np
import pytest

from hpcds1mpi.cluster import Partition
from hpcds1mpi.decide import tune_predictions
from hpcds1mpi.decide.tune_space import build_space


def test_expected_improvement_is_zero_far_above_and_positive_below():
    ei = tune_predictions.expected_improvement(1.0, np.log(np.array([10.0, 0.5])), np.array([0.05, 0.05]))
    assert ei[0] < 1e-9 and ei[1] == pytest.approx(1 - 0.5 * np.exp(0.05 ** 2 / 2), rel=1e-6)


def test_system1_start_is_the_best_feasible_prediction():
    space = build_space(Partition("p", cores_per_node=4, memory_gb=16, max_nodes=1), max_nodes=1)
    n = len(space.configs)
    value = np.arange(n, 0, -1, dtype=float)
    feasible = np.ones(n, bool)
    feasible[-1] = False  # the lowest prediction is ruled out
    preds = tune_predictions.Predictions(value, np.full(n, 0.1), np.zeros(n), feasible)
    assert tune_predictions.system1_start(space, preds) == space.configs[-2]
    preds.feasible[:] = False
    assert tune_predictions.system1_start(space, preds) is None


def test_a_bundle_of_another_machine_is_set_aside_with_a_note():
    """Was: an H200 bundle's pick used as the start on a 2-core node, without a word."""
    from types import SimpleNamespace

    here = Partition("local", cores_per_node=2, memory_gb=25.3, max_nodes=1)
    h200 = SimpleNamespace(partitions={"gpu_h200": {"cores_per_node": 64, "memory_gb": 1000,
                                                    "gpus_per_node": 4}})
    note = tune_predictions.other_machine_note(h200, here)
    assert note.startswith("the model was trained on other hardware than local (2 cores")
    same = SimpleNamespace(partitions={"box": {"cores_per_node": 2, "memory_gb": 25,
                                               "gpus_per_node": 0}})
    assert tune_predictions.other_machine_note(same, here) is None


def test_the_levels_system1_flags_as_never_measured_are_named_per_configuration():
    """s31 tester Q3: System 2 tries each of these before trusting the model's guess there."""
    from hpcds1mpi.decide.scores import UNMEASURED

    space = build_space(Partition("p", cores_per_node=2, memory_gb=16, max_nodes=2),
                        max_nodes=2, precisions=["fp64", "fp32"])
    cols = {k: np.array([getattr(c, k) for c in space.configs])
            for k in ("nodes", "ranks_per_node", "threads", "device", "precision")}
    # The bundle ran fp64 on one node, one thread.
    cols[UNMEASURED] = (cols["precision"] != "fp64") | (cols["nodes"] > 1) | (cols["threads"] > 1)
    got = dict(zip((c.label() for c in space.configs),
                   tune_predictions.unmeasured_levels(space, cols)))
    assert got["N1xR2xT1-cpu-fp64"] == ()
    assert got["N1xR2xT1-cpu-fp32"] == ("precision fp32",)
    assert got["N2xR1xT2-cpu-fp32"] == ("nodes above 1", "threads 2", "precision fp32")
    cols.pop(UNMEASURED)
    assert tune_predictions.unmeasured_levels(space, cols) is None  # scores that do not say
