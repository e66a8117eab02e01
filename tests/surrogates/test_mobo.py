"""MOBO and its baselines on a small enumerated space, objectives, and the ``mobo`` CLI.

Budgets are tiny (a handful of BO iterations) so the file runs in well under a minute on 2 cores.
"""

import json

import numpy as np
import pandas as pd
import pytest

from hpcds1mpi.analysis.metrics import hypervolume
from hpcds1mpi.cluster import Partition
from hpcds1mpi.errors import ConfigError, ModelError
from hpcds1mpi.surrogates import mobo
from hpcds1mpi.surrogates.objectives import (
    AnalyticObjective,
    BundleObjective,
    RealRunObjective,
    TableObjective,
    finalise,
    objective_columns,
)

from tests.helpers import run_cli

PART = Partition(name="small", cores_per_node=4, memory_gb=64, max_nodes=8, gpus_per_node=1,
                 gpu_memory_gb=16)


def make_problem(space="full", objective=None, workload="stencil", size=256):
    cands = mobo.build_candidates(PART, workload, size, space)
    problem = mobo.Problem(cands, objective or AnalyticObjective(PART), ["runtime_s", "energy_j"])
    problem.fix_reference_point()
    return problem


class FailingObjective:
    """Wraps an objective: GPU runs fail, and report a runtime/energy of 1e-9 that would look
    best if it were used (the fault a naive loop would fall for)."""

    source = "modelled"

    def __init__(self, inner):
        self.inner = inner

    def __call__(self, configs):
        out = self.inner(configs).copy()
        gpu = (configs["device"] == "gpu").to_numpy()
        out.loc[gpu, ["runtime_s", "energy_j", "avg_power_w"]] = 1e-9
        out.loc[gpu, "feasible"] = False
        out.loc[gpu, "status"] = "oom"
        return out


def test_candidates_full_space_are_valid_and_mixed():
    cands = mobo.build_candidates(PART, "gemm", 256, "full")
    assert set(cands["device"]) == {"cpu", "gpu"} and set(cands["precision"]) == {"fp64", "fp32", "bf16"}
    # Only what a kernel declares: stencil has no bf16, allreduce no threads.
    assert set(mobo.build_candidates(PART, "stencil", 256, "full")["precision"]) == {"fp64", "fp32"}
    assert set(mobo.build_candidates(PART, "allreduce", 4096, "full")["threads"]) == {1}
    assert "bf16" in set(mobo.build_candidates(PART, "my_app", 1, "full")["precision"])
    assert ((cands["ranks_per_node"] * cands["threads"]) <= PART.cores_per_node).all()
    assert (cands.loc[cands.device == "gpu", "ranks_per_node"] <= PART.gpus_per_node).all()
    assert not cands.duplicated().any()
    X = mobo.encode(cands)
    assert X.min() >= 0 and X.max() <= 1 and len(np.unique(X, axis=0)) == len(cands)
    nodes = mobo.build_candidates(PART, "stencil", 256, "nodes")
    assert nodes["nodes"].tolist() == list(range(1, 9)) and nodes["ranks_per_node"].nunique() == 1


@pytest.mark.parametrize("method", ["mobo", "sobo-runtime", "sobo-energy", "random"])
def test_each_method_respects_budget_and_fixed_reference_point(method):
    problem = make_problem()
    ref_before = problem.ref_point.copy()
    budget = 10
    result = mobo.run(problem, method, budget, seed=3, n_init=8)
    assert len(result.indices) == budget == len(result.Y) == len(result.hv_trace)
    if method != "random":
        assert len(set(result.indices)) == budget  # never re-evaluates a candidate
    assert np.array_equal(result.ref_point, ref_before) and np.array_equal(problem.ref_point, ref_before)
    # The trace is the HV of the evaluated points under that same point, and never decreases.
    assert result.hv_trace[-1] == pytest.approx(hypervolume(result.Y[result.feasible], ref_before))
    assert np.all(np.diff(result.hv_trace) >= -1e-12)


def test_random_search_splits_budget_over_five_streams():
    picks = mobo.random_design(100, 12, seed=0)
    assert len(picks) == 12
    # shares 3,3,2,2,2: each stream is distinct within itself
    chunks = [picks[0:3], picks[3:6], picks[6:8], picks[8:10], picks[10:12]]
    assert all(len(set(c)) == len(c) for c in chunks)
    assert picks == mobo.random_design(100, 12, seed=0) and picks != mobo.random_design(100, 12, seed=1)


def test_budget_smaller_than_initial_design_is_an_error():
    problem = make_problem()
    with pytest.raises(ConfigError, match="initial design"):
        mobo.run(problem, "mobo", 3, n_init=8)


def test_reference_point_required():
    cands = mobo.build_candidates(PART, "stencil", 256, "nodes")
    problem = mobo.Problem(cands, AnalyticObjective(PART), ["runtime_s", "energy_j"])
    with pytest.raises(ConfigError, match="reference point"):
        mobo.run(problem, "random", 5)


def test_exact_method_finds_the_enumerated_front():
    problem = make_problem()
    result = mobo.run(problem, "exact", 1)
    idx, front = problem.exact()
    assert sorted(result.front_indices()) == sorted(idx.tolist())
    assert result.hv_trace[-1] == pytest.approx(hypervolume(front, problem.ref_point))


def test_failed_evaluations_are_infeasible_never_best():
    problem = make_problem(objective=FailingObjective(AnalyticObjective(PART)))
    Y_all, feasible_all = problem.evaluate_all()
    assert np.isnan(Y_all[~feasible_all]).all() and (~feasible_all).any()
    # The reference point and exact front ignore the fake 1e-9 values.
    assert problem.ref_point.min() > 1e-6
    idx, _ = problem.exact()
    assert (problem.candidates.loc[idx, "device"] == "cpu").all()
    for method in ("mobo", "random"):
        result = mobo.run(problem, method, 12, seed=0, n_init=8)
        failed = ~result.feasible
        gpu_picked = problem.candidates.loc[result.indices, "device"].to_numpy() == "gpu"
        assert (failed == gpu_picked).all()
        assert np.isnan(result.Y[failed]).all()
        assert all(s == "oom" for s, f in zip(result.status, failed) if f)
        front = result.front()
        assert len(front) and front.min() > 1e-6


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


def test_can_improve_prunes_only_candidates_that_cannot_improve():
    import torch
    from botorch.models import ModelListGP, SingleTaskGP
    from botorch.sampling.normal import SobolQMCNormalSampler

    X = torch.linspace(0, 1, 8, dtype=torch.double)[:, None]
    Y = np.stack([np.exp(3 * X[:, 0].numpy()), np.exp(3 * X[:, 0].numpy())], axis=1)  # no trade-off
    gps = [SingleTaskGP(X, torch.as_tensor(np.log(Y[:, j:j + 1])), train_Yvar=torch.full((8, 1), 1e-8,
                        dtype=torch.double)) for j in range(2)]
    model = ModelListGP(*gps).eval()
    sampler = SobolQMCNormalSampler(torch.Size([128]), seed=0)
    cand = torch.tensor([[0.5], [0.9], [-0.5]], dtype=torch.double)
    assert mobo.improvement_outlook(model, cand, sampler, 2, Y, np.array([30.0, 30.0])) is None  # no base samples yet
    sampler(model.posterior(cand[:1, None]))
    keep, _ = mobo.improvement_outlook(model, cand, sampler, 2, Y, np.array([30.0, 30.0]))
    # x = 0.5 and 0.9 sit between observed points, dominated by the one at x = 0 (both objectives
    # grow with x); x = -0.5 extrapolates below the best observed value (uncertain, can improve)
    assert keep.tolist() == [False, False, True]
    # beyond the reference point: nothing can improve
    assert not mobo.improvement_outlook(model, cand[1:2], sampler, 2, Y, np.array([1e-3, 1e-3]))[0].any()


def test_can_improve_blocks_agree_with_one_joint_posterior():
    import torch
    from botorch.models import ModelListGP, SingleTaskGP
    from botorch.sampling.normal import SobolQMCNormalSampler

    gen = torch.Generator().manual_seed(3)
    X = torch.rand(40, 2, generator=gen, dtype=torch.double)
    Y = np.exp(np.stack([X[:, 0].numpy() + 0.2 * X[:, 1].numpy(), 1 - X[:, 0].numpy()], axis=1))
    model = ModelListGP(*[SingleTaskGP(X, torch.as_tensor(np.log(Y[:, j:j + 1])),
                                       train_Yvar=torch.full((40, 1), 1e-8, dtype=torch.double))
                          for j in range(2)]).eval()
    sampler = SobolQMCNormalSampler(torch.Size([128]), seed=0)
    cand = torch.rand(700, 2, generator=gen, dtype=torch.double) * 1.4 - 0.2  # three blocks
    sampler(model.posterior(cand[:1, None]))
    keep, _ = mobo.improvement_outlook(model, cand, sampler, 2, Y, Y.max(axis=0) * 1.1)
    z = sampler.base_samples.reshape(-1, 2).numpy()
    with torch.no_grad():
        post = model.posterior(cand)  # one joint posterior of all 700
        mean, sd = post.mean.numpy(), post.variance.clamp_min(0).sqrt().numpy()
    ref = Y.max(axis=0) * 1.1
    front = Y[mobo.pareto_mask(Y)]
    expected = []
    for mu, sigma in zip(mean, sd):  # candidate by candidate, sample by sample
        points = np.exp(mu + sigma * z)
        improves = [not (any(np.all(f <= p * (1 - 1e-6)) for f in front) or np.any(p >= ref * (1 + 1e-6)))
                    for p in points]
        expected.append(any(improves))
    assert keep.tolist() == expected
    assert 0 < keep.sum() < len(cand)  # both kinds present, so a shuffled block would show


def test_when_nothing_can_improve_the_closest_raw_samples_are_scored(monkeypatch):
    problem = make_problem(space="full")
    problem.objective = TableObjective(problem.candidates, problem.table, "modelled")
    raw = mobo.PAPER_PROFILE.raw_samples
    assert len(problem.candidates) > 2 * raw
    gap = np.random.default_rng(0).permutation(len(problem.candidates)).astype(float)
    seen = []

    def outlook(model, X, *args, **kwargs):  # nothing improves; gap by candidate
        rows = [int(np.flatnonzero(np.all(problem.X == x, axis=1))[0]) for x in X.numpy()]
        seen.append(rows)
        return np.zeros(len(X), dtype=bool), gap[rows]

    monkeypatch.setattr(mobo, "improvement_outlook", outlook)
    res = mobo.run(problem, "mobo", 10, seed=0)
    remaining = len(problem.candidates) - np.arange(res.n_init, 10)
    assert res.pruned == (remaining - raw).tolist()
    for rows, pick in zip(seen, res.indices[res.n_init:]):
        closest = sorted(rows, key=lambda r: gap[r])[:raw]
        assert pick in closest  # chosen among the raw_samples smallest gaps, not at random


def test_pruned_candidates_have_exactly_zero_monte_carlo_improvement():
    """The pruning against BoTorch itself: the non-smoothed qEHVI (same sampler, partitioning
    and objective as the loop's qLogEHVI) is exactly 0 on every pruned candidate."""
    import torch
    from botorch.acquisition.multi_objective.monte_carlo import qExpectedHypervolumeImprovement
    from botorch.acquisition.multi_objective.objective import GenericMCMultiOutputObjective
    from botorch.models import ModelListGP, SingleTaskGP
    from botorch.models.transforms.outcome import Standardize
    from botorch.sampling.normal import SobolQMCNormalSampler
    from botorch.utils.multi_objective.box_decompositions.non_dominated import (
        FastNondominatedPartitioning,
    )

    gen = torch.Generator().manual_seed(7)
    X = torch.rand(30, 2, generator=gen, dtype=torch.double)
    Y = np.exp(np.stack([2 * X[:, 0].numpy() + X[:, 1].numpy(), 2 * (1 - X[:, 0].numpy())], axis=1))
    model = ModelListGP(*[SingleTaskGP(X, torch.as_tensor(np.log(Y[:, j:j + 1])),
                                       train_Yvar=torch.full((30, 1), 1e-6, dtype=torch.double),
                                       outcome_transform=Standardize(m=1)) for j in range(2)]).eval()
    ref = Y.max(axis=0) * 1.05
    sampler = SobolQMCNormalSampler(torch.Size([128]), seed=0)
    acq = qExpectedHypervolumeImprovement(
        model=model, ref_point=(-ref).tolist(), sampler=sampler,
        partitioning=FastNondominatedPartitioning(ref_point=torch.as_tensor(-ref), Y=torch.as_tensor(-Y)),
        objective=GenericMCMultiOutputObjective(lambda samples, X=None: -samples.exp()))
    cand = torch.rand(500, 2, generator=gen, dtype=torch.double)
    with torch.no_grad():
        ehvi = acq(cand[:, None, :]).numpy()
    keep, gap = mobo.improvement_outlook(model, cand, sampler, 2, Y, ref)
    assert (~keep).sum() > 50 and keep.sum() > 0
    assert np.all(ehvi[~keep] == 0.0)
    assert ehvi[keep].max() > 0 and np.all(gap[ehvi > 0] < 1)


def test_sampler_draws_are_mean_plus_sd_times_base_sample_per_output():
    """What the pruning assumes of BoTorch: for one point, output j's draw is mu_j + sd_j * z_j
    in output order, with Standardize and with a third (feasibility) output."""
    import torch
    from botorch.models import ModelListGP, SingleTaskGP
    from botorch.models.transforms.outcome import Standardize
    from botorch.sampling.normal import SobolQMCNormalSampler

    gen = torch.Generator().manual_seed(1)
    X = torch.rand(12, 2, generator=gen, dtype=torch.double)
    ys = [X[:, :1] * 3, 1 - X[:, 1:] * 5, torch.sign(X[:, :1] - 0.5)]
    model = ModelListGP(*[SingleTaskGP(X, y, outcome_transform=Standardize(m=1)) for y in ys]).eval()
    sampler = SobolQMCNormalSampler(torch.Size([128]), seed=0)
    cand = torch.rand(40, 2, generator=gen, dtype=torch.double)
    with torch.no_grad():
        post = model.posterior(cand[:, None, :])
        draws = sampler(post)[..., 0, :]  # (128, 40, 3)
        z = sampler.base_samples.reshape(-1, 3)
        expected = post.mean[:, 0, :] + post.variance[:, 0, :].sqrt() * z[:, None, :]
    assert torch.allclose(draws, expected, atol=1e-9)


def test_node_counts_every_count_or_powers_of_two():
    assert mobo.node_counts(PART, "pow2") is None
    assert mobo.node_counts(PART, "all") == list(range(1, 9))
    with pytest.raises(ConfigError, match="node counts"):
        mobo.node_counts(PART, "odd")
    pow2 = mobo.build_candidates(PART, "stencil", 256, "full")
    every = mobo.build_candidates(PART, "stencil", 256, "full", nodes=mobo.node_counts(PART, "all"))
    assert sorted(set(pow2["nodes"])) == [1, 2, 4, 8] and sorted(set(every["nodes"])) == list(range(1, 9))
    assert len(every) == 2 * len(pow2)  # 8 node counts instead of 4, the rest unchanged


def test_objective_columns_needs_two():
    assert objective_columns(["runtime", "energy"]) == ["runtime_s", "energy_j"]
    with pytest.raises(ConfigError, match="two objectives"):
        objective_columns(["runtime"])
    with pytest.raises(ConfigError, match="unknown objective"):
        objective_columns(["runtime", "speed"])


def test_optimised_loop_matches_straightforward_on_nodes_space():
    problem = make_problem(space="nodes")
    problem.objective = TableObjective(problem.candidates, problem.table, "modelled")
    fast = mobo.run(problem, "mobo", 7, seed=1, n_init=4, policy=mobo.OPTIMISED)
    slow = mobo.run(problem, "mobo", 7, seed=1, n_init=4, policy=mobo.STRAIGHTFORWARD)
    assert fast.indices[:4] == slow.indices[:4]  # same initial design
    _, front = problem.exact()
    exact_hv = hypervolume(front, problem.ref_point)
    assert fast.hv_trace[-1] / exact_hv > 0.9 and slow.hv_trace[-1] / exact_hv > 0.9
    assert len(fast.pruned) == 3 and not slow.pruned  # the pruning was consulted each iteration


def test_table_objective_counts_lookups():
    problem = make_problem(space="nodes")
    table = TableObjective(problem.candidates, problem.table, "modelled")
    problem.objective = table
    mobo.run(problem, "random", 5, seed=0)
    assert table.calls == 5


# ------------------------------------------------------------------------------------------
# CLI


CLUSTER_TOML = """
[clusters.t]
[clusters.t.partitions.small]
cores_per_node = 4
memory_gb = 64
max_nodes = 8
gpus_per_node = 1
gpu_memory_gb = 16
"""


@pytest.fixture
def cluster_file(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text(CLUSTER_TOML)
    return path


def test_cli_random_writes_table_csv_json_and_plot(tmp_path, cluster_file):
    out = tmp_path / "out"
    res = run_cli(["mobo", "--analytic", "--cluster", str(cluster_file), "--partition", "small",
                   "--workload", "stencil", "--size", "256", "--space", "nodes", "--method", "random",
                   "--budget", "6", "--out", str(out), "--seed", "1"], timeout=240)
    assert res.returncode == 0, res.stderr
    assert "runtime_s" in res.stdout and "reference point" in res.stdout
    doc = json.loads((out / "mobo.json").read_text())
    assert doc["method"] == "random" and doc["evaluations"] == 6 and len(doc["ref_point"]) == 2
    assert doc["objective_source"] == "modelled"
    assert (out / "pareto.csv").stat().st_size > 0 and (out / "pareto.png").stat().st_size > 1000
    assert doc["hv_ratio_to_exact"] <= 1.0 + 1e-9


def test_cli_full_space_with_every_node_count(tmp_path, cluster_file):
    out = tmp_path / "out"
    res = run_cli(["mobo", "--analytic", "--cluster", str(cluster_file), "--partition", "small",
                   "--workload", "stencil", "--size", "256", "--space", "full", "--node-counts", "all",
                   "--method", "random", "--budget", "6", "--out", str(out)], timeout=240)
    assert res.returncode == 0, res.stderr
    doc = json.loads((out / "mobo.json").read_text())
    every = mobo.build_candidates(PART, "stencil", 256, "full", nodes=list(range(1, 9)))
    assert doc["candidates"] == len(every) and doc["node_counts"] == "all"


@pytest.mark.parametrize("args, message", [
    (["--objectives", "runtime"], "two objectives"),
    (["--method", "mobo", "--budget", "2"], "initial design"),
    (["--workload", "nosuch"], "workload"),
    (["--partition", "nosuch"], "partition"),
])
def test_cli_bad_input_is_one_line(tmp_path, cluster_file, args, message):
    base = {"--cluster": str(cluster_file), "--partition": "small", "--workload": "stencil",
            "--size": "256", "--out": str(tmp_path / "o")}
    for i in range(0, len(args), 2):
        base[args[i]] = args[i + 1]
    argv = ["mobo", "--analytic"] + [x for kv in base.items() for x in kv]
    res = run_cli(argv, timeout=120)
    assert res.returncode != 0
    assert message in res.stderr and "Traceback" not in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1


def test_cli_model_without_energy(tmp_path):
    res = run_cli(["mobo", "--model", str(tmp_path / "missing"), "--workload", "stencil",
                   "--size", "256"], timeout=120)
    assert res.returncode != 0 and "Traceback" not in res.stderr


def test_cli_bundle_without_energy_target_is_one_line_error(monkeypatch, tmp_path, cluster_file):
    from click.testing import CliRunner

    import hpcds1mpi.surrogates.bundle as bundle_module
    from hpcds1mpi.commands.mobo import command

    monkeypatch.setattr(bundle_module, "load_bundle", lambda path: TinyBundle(targets=("runtime_s", "failed")))
    res = CliRunner().invoke(command, ["--model", str(tmp_path), "--workload", "stencil", "--size", "256",
                                       "--cluster", str(cluster_file), "--partition", "small"])
    assert isinstance(res.exception, ModelError)
    assert "no energy target" in str(res.exception) and "\n" not in str(res.exception)
    # Runtime and power need energy or power too; runtime-only would be one objective.
    monkeypatch.setattr(bundle_module, "load_bundle", lambda path: TinyBundle())
    res = CliRunner().invoke(command, ["--model", str(tmp_path), "--workload", "fft", "--size", "256",
                                       "--cluster", str(cluster_file), "--partition", "small"])
    assert isinstance(res.exception, ModelError) and "workload" in str(res.exception)


def test_weakly_dominated_two_objectives_matches_pairwise():
    rng = np.random.default_rng(5)
    front = rng.random((9, 2))
    points = np.vstack([rng.random((402, 2)), front, front + [0.0, 1e-9], front - [1e-9, 0.0]])
    pairwise = np.array([any(np.all(f <= p) for f in front) for p in points])
    assert mobo.weakly_dominated(points, front).tolist() == pairwise.tolist()
    assert mobo.weakly_dominated(points.reshape(-1, 3, 2), front).ravel().tolist() == pairwise.tolist()
    assert not mobo.weakly_dominated(points, np.empty((0, 2))).any()
    three = rng.random((5, 3))
    cloud = rng.random((50, 3))
    assert mobo.weakly_dominated(cloud, three).tolist() == [any(np.all(f <= p) for f in three) for p in cloud]
