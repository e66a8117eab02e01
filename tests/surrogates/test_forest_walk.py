"""The numpy walk of the forest gives the bits libxgboost gives, on the shipped bundle."""

from __future__ import annotations

import numpy as np
import pytest

from hpcds1mpi.cluster import Partition
from hpcds1mpi.decide.system1_candidates import candidate_columns, candidate_frame
from hpcds1mpi.decide.model_bundle import load_model
from hpcds1mpi.surrogates import forest_walk
from hpcds1mpi.surrogates.xgboost_scorer import XGBoostScorer


@pytest.fixture(scope="module")
def model():
    return load_model(None).model


def test_margins_are_libxgboosts_bits(model):
    forest, index = forest_walk._layout(model)
    jobs = [m for members in model.members_.values() for m in members]
    rng = np.random.default_rng(0)
    Z = rng.normal(size=(300, len(model.member_features))) * 3
    Z[rng.random(Z.shape) < 0.05] = np.nan  # missing values take the default direction
    values = forest.finish(forest_walk.margins(forest, Z.astype(np.float32)))
    for row, i in enumerate(index):
        assert isinstance(jobs[i], XGBoostScorer)
        want = jobs[i].predict(Z)
        assert np.array_equal(values[row], want), f"member {i}"


@pytest.mark.parametrize("gpus, nodes", [(1, 16), (0, 4), (4, 8)])
def test_a_grid_predicts_as_the_model_does(model, gpus, nodes):
    part = Partition("big", cores_per_node=128, memory_gb=512, max_nodes=nodes,
                     gpus_per_node=gpus, gpu_memory_gb=80 if gpus else 0)
    grid = candidate_columns("stencil", 300, [part])
    assert forest_walk._layout(model) is not None  # laid out: the walk scores the regions
    preds, inverse, baseline = forest_walk.predict_regions(model, grid)
    want = model.predict_frame_regions(candidate_frame("stencil", 300, [part]))
    assert inverse is not None and np.array_equal(inverse, want[1])
    for target in want[0]:
        assert np.array_equal(preds[target], want[0][target]), target
        assert np.array_equal(np.broadcast_to(baseline[target], len(grid)),
                              np.broadcast_to(want[2][target], len(grid))), target


def test_a_one_question_process_does_not_lay_out_the_forest():
    """The layout costs ~0.25 s: a model's first grid goes through libxgboost."""
    model = load_model(None).model
    part = Partition("big", cores_per_node=128, memory_gb=512, max_nodes=16, gpus_per_node=1,
                     gpu_memory_gb=80)
    forest_walk.predict_regions(model, candidate_columns("stencil", 300, [part]))
    assert not hasattr(model, "_walk_forest")
    forest_walk.predict_regions(model, candidate_columns("stencil", 300, [part]))
    assert model._walk_forest is not None
