"""Objectives: honest outputs, real runs, the surrogate bundle, table lookups."""

import numpy as np
import pandas as pd
import pytest

from hpcds1mpi.cluster import Partition
from hpcds1mpi.errors import ConfigError, ModelError
from hpcds1mpi.surrogates import mobo
from hpcds1mpi.surrogates.objectives import (BundleObjective, RealRunObjective, TableObjective,
                                             finalise, objective_columns)
from tests.surrogates.mobo import PART, make_problem


def test_finalise_makes_bad_numbers_infeasible():
    raw = pd.DataFrame({"runtime_s": [1.0, -1.0, np.nan, 2.0], "energy_j": [5.0, 5.0, 5.0, np.inf],
                        "feasible": [True, True, True, True]})
    out = finalise(raw)
    assert out["feasible"].tolist() == [True, False, False, False]
    assert out.loc[1:, ["runtime_s", "energy_j"]].isna().all().all()
    assert out.loc[0, "avg_power_w"] == pytest.approx(5.0)


def test_real_run_objective_maps_status_and_crashes():
    def run_one(row):
        if row["nodes"] == 2:
            return {"status": "timeout", "runtime_s": 0.001}
        if row["nodes"] == 3:
            raise RuntimeError("node died")
        return {"status": "ok", "runtime_s": float(row["nodes"]), "energy_j": 10.0 * row["nodes"]}

    obj = RealRunObjective(run_one)
    cands = mobo.build_candidates(PART, "stencil", 256, "nodes").iloc[:4]
    out = obj(cands)
    assert out["status"].tolist() == ["ok", "timeout", "crashed", "ok"]
    assert out["feasible"].tolist() == [True, False, False, True]
    assert np.isnan(out.loc[1, "runtime_s"])
    assert len(obj.history) == 4


class TinyBundle:
    """Bundle interface double: runtime falls with nodes, energy rises, 5 nodes fail."""

    def __init__(self, targets=("runtime_s", "energy_j", "failed"), workloads=("stencil",)):
        self.targets = set(targets)
        self.workloads = set(workloads)
        self.partitions = {"small": {"cores_per_node": 4, "memory_gb": 64, "gpus_per_node": 1}}

    def predict(self, df):
        for col in ("partition", "cores_per_node", "memory_gb", "gpus_per_node", "size"):
            assert col in df
        nodes = df["nodes"].to_numpy(float)
        out = pd.DataFrame({"runtime_s": 100.0 / nodes + nodes, "fail_prob": (nodes == 5) * 0.9},
                           index=df.index)
        if "energy_j" in self.targets:
            out["energy_j"] = 50.0 * nodes + 1000.0 / nodes
        return out


def test_bundle_objective_checks_and_failure_probability():
    with pytest.raises(ModelError, match="energy"):
        BundleObjective(TinyBundle(targets=("runtime_s", "failed")), PART)
    other = Partition(name="elsewhere", cores_per_node=4, memory_gb=64)
    with pytest.raises(ModelError, match="partition"):
        BundleObjective(TinyBundle(), other)
    obj = BundleObjective(TinyBundle(), PART)
    with pytest.raises(ModelError, match="workload"):
        obj.check_workload("fft")
    cands = mobo.build_candidates(PART, "stencil", 256, "nodes")
    out = obj(cands)
    assert out["feasible"].tolist() == [n != 5 for n in cands["nodes"]]
    # runtime-only objectives do not need energy
    BundleObjective(TinyBundle(targets=("runtime_s",)), PART, objectives=["runtime_s", "peak"])


def test_bundle_objective_extrapolates_partition_and_models_energy():
    big = Partition(name="big", cores_per_node=4, memory_gb=64, max_nodes=8, idle_watts_node=100,
                    max_watts_node=300)
    with pytest.raises(ModelError, match="partition 'big'"):
        BundleObjective(TinyBundle(), big)
    with pytest.raises(ModelError, match="energy source"):
        BundleObjective(TinyBundle(), big, model_partition="small", energy_from="guess")
    obj = BundleObjective(TinyBundle(), big, model_partition="small", energy_from="power-model")
    cands = mobo.build_candidates(big, "stencil", 256, "full")
    out = obj(cands)
    ok = out["feasible"].to_numpy()
    # 100 W per node + 50 W per busy core (ranks x threads), times the predicted runtime
    busy = (cands["ranks_per_node"] * cands["threads"]).clip(upper=4) * cands["nodes"]
    watts = 100 * cands["nodes"] + 50 * busy
    np.testing.assert_allclose(out["avg_power_w"][ok], watts[ok])
    np.testing.assert_allclose(out["energy_j"][ok], (out["runtime_s"] * watts)[ok])
    # even a runtime-only bundle can give modelled energy
    BundleObjective(TinyBundle(targets=("runtime_s",)), big, model_partition="small", energy_from="power-model")


def test_objective_columns_needs_two():
    assert objective_columns(["runtime", "energy"]) == ["runtime_s", "energy_j"]
    with pytest.raises(ConfigError, match="two objectives"):
        objective_columns(["runtime"])
    with pytest.raises(ConfigError, match="unknown objective"):
        objective_columns(["runtime", "speed"])


def test_table_objective_counts_lookups():
    problem = make_problem(space="nodes")
    table = TableObjective(problem.candidates, problem.table, "modelled")
    problem.objective = table
    mobo.run(problem, "random", 5, seed=0)
    assert table.calls == 5


class MemoryBundle(TinyBundle):
    """TinyBundle that measured stencil at sizes 64..512 and predicts each rank's peak memory:
    80 GB over the job's ranks."""

    size_range = {"stencil": (64.0, 512.0)}

    def predict(self, df):
        out = super().predict(df)
        out["peak_rss_mb"] = 80_000.0 / (df["nodes"] * df["ranks_per_node"]).to_numpy(float)
        return out


def test_a_configuration_over_its_memory_limit_is_oom_and_carries_need_and_limit():
    """mobo proposed configurations recommend rejects for memory: the objective now judges
    memory by the judge it is given (the command's: recommend's limits) and says both."""
    cands = mobo.build_candidates(PART, "stencil", 256, "nodes")
    asked = []

    def judge(configs, pred):
        asked.append((len(configs), "peak_rss_mb" in pred))
        need = 80_000.0 / configs["nodes"].to_numpy(float)
        need[configs["nodes"].to_numpy() == 8] = np.nan  # an unknown need passes, as recommend
        return need, np.full(len(configs), 30_000.0)

    out = BundleObjective(MemoryBundle(), PART, memory=judge)(cands)
    assert asked == [(len(cands), True)]  # once, with the bundle's own answer
    nodes = cands["nodes"].to_numpy()
    too_big = nodes <= 2  # 80 GB over the nodes above 30 GB
    assert (out["status"] == "oom").tolist() == too_big.tolist()
    assert not out.loc[too_big, "feasible"].any()
    assert out.loc[too_big, ["runtime_s", "energy_j"]].isna().all().all()
    assert out.loc[~too_big, "feasible"].tolist() == [n != 5 for n in nodes[~too_big]]
    np.testing.assert_allclose(out["mem_need_mb"][nodes < 8], 80_000.0 / nodes[nodes < 8])
    assert (out["mem_limit_mb"] == 30_000.0).all()
    plain = BundleObjective(MemoryBundle(), PART)(cands)  # no judge: memory is not judged
    assert "mem_need_mb" not in plain and "oom" not in set(plain["status"])


def test_a_partition_the_bundle_lacks_says_what_it_knows_and_what_to_do():
    """The objective's and partition_for_bundle's refusals named no way out."""
    from hpcds1mpi.surrogates.objectives import partition_for_bundle

    other = Partition(name="elsewhere", cores_per_node=4, memory_gb=64)
    with pytest.raises(ModelError) as info:
        BundleObjective(TinyBundle(), other)
    assert str(info.value) == (
        "the model bundle was not trained for partition 'elsewhere'; it knows small: predict "
        "it as one of them with model_partition=NAME (mobo: --model-partition NAME), or use a "
        "partition the bundle was trained on")
    with pytest.raises(ModelError) as info:
        BundleObjective(TinyBundle(), other, model_partition="smal")
    assert str(info.value) == ("model partition 'smal' is not one the model bundle was trained "
                               "on; it knows small: give one of them (mobo: --model-partition)")
    with pytest.raises(ModelError) as info:
        partition_for_bundle(TinyBundle(), "elsewhere")
    assert str(info.value) == (
        "the model bundle was not trained for partition 'elsewhere'; it knows small: name one "
        "of them with --partition, or describe 'elsewhere' with --cluster FILE --partition "
        "elsewhere")
