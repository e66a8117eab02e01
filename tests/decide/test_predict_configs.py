"""The one validity check before System 1 scores named configurations (``/v1/predict`` and
``Model.predict``): what the partition cannot run is ``valid: False`` with its reason and no
scores; what it can run is scored."""

from __future__ import annotations

import pytest

from hpcds1mpi.cluster import Partition
from hpcds1mpi.config import Configuration
from hpcds1mpi.decide.predict_configs import SCORED, predict_configs, why_invalid


@pytest.fixture(scope="module")
def bundle():
    from hpcds1mpi.decide.model_bundle import load_model

    return load_model(None)


PART = Partition(name="standard", cores_per_node=2, memory_gb=8.0, max_nodes=4,
                 gpus_per_node=0)


@pytest.mark.parametrize("cfg,words", [
    (Configuration(100, 2, 1), "at most 4"),
    (Configuration(1, 64, 1), "64 ranks"),
    (Configuration(1, 1, 1, device="gpu"), "no GPUs"),
    (Configuration(1, 1, 1, precision="bf16"), "cannot run cpu bf16"),
])
def test_what_the_partition_cannot_run_is_invalid_and_unscored(bundle, cfg, words):
    from hpcds1mpi.kernels import offered

    assert words in why_invalid(cfg, "stencil", PART, offered("stencil", PART))
    row = predict_configs(bundle, "stencil", 128, PART, [cfg])[0]
    assert not row["valid"] and not row["feasible"] and words in row["reason"]
    assert all(row[k] is None for k in SCORED)


def test_what_it_can_run_is_scored_in_order(bundle):
    cfgs = [Configuration(1, 2, 1), Configuration(100, 1, 1), Configuration(2, 1, 1)]
    rows = predict_configs(bundle, "stencil", 128, PART, cfgs)
    assert [r["valid"] for r in rows] == [True, False, True]
    assert [r["nodes"] for r in rows] == [1, 100, 2]
    assert rows[0]["runtime_s"] > 0 and rows[2]["runtime_s"] > 0


def test_a_level_never_measured_says_it_is_extrapolated(bundle):
    """The shipped bundle measured one node: 4 nodes was answered like a measured level, with
    no word (a recommendation's pick says so; a named configuration did not)."""
    one, four = predict_configs(bundle, "stencil", 128, PART,
                                [Configuration(1, 1, 1), Configuration(4, 1, 1)])
    assert one["valid"] and one["extrapolated"] == []
    assert four["valid"] and four["extrapolated"] == ["nodes 4 above the most measured (1)"]


def test_a_configuration_measured_at_the_size_says_how_many_runs_its_values_are():
    """s31 tester Q1: the shipped bundle's stencil 2 x 1 fp32 ran 77.6 ms at 256."""
    from hpcds1mpi.cluster import load_clusters
    from hpcds1mpi.decide.model_bundle import load_model

    part = list(load_clusters("tests/data/jobscripts/lab.toml").values())[0] \
        .partitions["standard"]
    rows = predict_configs(load_model(None), "stencil", 256, part,
                           [Configuration(1, 2, 1, precision="fp32"),
                            Configuration(1, 2, 1, precision="bf16")])
    assert [r["measured_runs"] for r in rows] == [1, 0]
    assert rows[0]["runtime_s"] == pytest.approx(0.0776045, rel=1e-5)
