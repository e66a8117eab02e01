"""Model bundle: round trip, versioning, the prediction contract, bad training data.

The frames here are hand-made test data (a closed-form runtime), never reported as accuracy.
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from hpcds1mpi.errors import DataError, ModelError
from hpcds1mpi.records.training import TrainingData
from hpcds1mpi.surrogates.bundle import load_bundle, train_bundle
from hpcds1mpi.surrogates.features import INPUT_COLUMNS

SMALL_TABNET = {"n_d": 4, "n_a": 4, "max_epochs": 3, "batch_size": 128,
                "virtual_batch_size": 64}


def make_runs(seed: int = 0, machine: str = "m0", workloads=("stencil", "gemm"),
              sizes=(32, 48, 64, 96)) -> pd.DataFrame:
    """A runs table with a closed-form runtime, modelled energy and OOMs (gemm, the two largest
    sizes, at most 2 ranks)."""
    rng = np.random.default_rng(seed)
    rows = []
    for w in workloads:
        for size in sizes:
            for nodes in (1, 2):
                for rpn in (1, 2, 4):
                    for threads in (1, 2):
                        ranks = nodes * rpn
                        runtime = (size ** 3 * 1e-7 * (2.0 if w == "gemm" else 1.0)
                                   / (ranks * threads ** 0.8) + 1e-3 * np.log2(ranks + 1))
                        runtime *= np.exp(rng.normal(0, 0.05))
                        oom = size >= sizes[-2] and ranks <= 2 and w == "gemm"
                        power = nodes * 6.0 + 7.0 * rpn * threads
                        rows.append(dict(
                            run_id=f"{w}-{size}-{nodes}-{rpn}-{threads}", machine_id=machine,
                            workload=w, size=size, nodes=nodes, ranks_per_node=rpn,
                            ranks=ranks, threads=threads, device="cpu", precision="fp64",
                            status="oom" if oom else "ok", error="oom: x" if oom else "",
                            runtime_s=np.nan if oom else runtime,
                            peak_rss_mb=np.nan if oom else 50 + size ** 3 * 8e-6 / ranks,
                            energy_j=np.nan if oom else runtime * power,
                            avg_power_w=power, energy_source="modelled", partition="cpu",
                            cores_per_node=8, memory_gb=16.0, gpus_per_node=0))
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def bundle():
    return train_bundle(make_runs(), sample_rate=0.75, seed=1, n_members=3,
                        embedding_params=SMALL_TABNET, threads=1)


def configs(frame: pd.DataFrame) -> pd.DataFrame:
    return frame[list(INPUT_COLUMNS)].copy()


def test_api_views(bundle):
    assert bundle.targets == {"runtime_s", "energy_j", "peak_rss_mb", "failed"}
    assert bundle.workloads == {"stencil", "gemm"}
    assert bundle.size_range["gemm"] == (32.0, 96.0)
    assert bundle.machine_ids == {"m0"}
    assert bundle.partitions["cpu"]["cores_per_node"] == 8
    assert bundle.energy_source == "modelled"
    rec = bundle.manifest["sampling"]
    assert rec["target_rate"] == 0.75 and rec["seed"] == 1
    assert "modelled" in bundle.manifest["metrics"]["energy_j"]["note"]


def test_predict_contract(bundle):
    df = configs(make_runs()).iloc[::3]
    df.index = df.index + 1000  # output must follow the input's index
    out = bundle.predict(df)
    assert list(out.index) == list(df.index)
    for col in ("runtime_s", "runtime_lo", "runtime_hi", "runtime_spread", "energy_j",
                "energy_lo", "energy_hi", "fail_prob", "fail_prob_max", "peak_rss_mb"):
        assert col in out.columns and np.isfinite(out[col]).all(), col
    assert (out["runtime_lo"] <= out["runtime_s"]).all()
    assert (out["runtime_s"] <= out["runtime_hi"]).all()
    assert (out["fail_prob"] <= out["fail_prob_max"] + 1e-12).all()
    # the OOM configurations are the risky ones
    risky = ((df["workload"] == "gemm") & (df["size"] >= 64)
             & (df["nodes"] * df["ranks_per_node"] <= 2))
    assert risky.any()
    assert out.loc[risky, "fail_prob"].mean() > out.loc[~risky, "fail_prob"].mean() + 0.2


def test_round_trip_identical_predictions(bundle, tmp_path):
    bundle.save(tmp_path / "model")
    again = load_bundle(tmp_path / "model")
    df = configs(make_runs(seed=5))
    pd.testing.assert_frame_equal(bundle.predict(df), again.predict(df), check_exact=True)
    assert np.array_equal(bundle.embed(df), again.embed(df))
    assert np.array_equal(bundle.training_matrix(), again.training_matrix())
    assert again.targets == bundle.targets and again.size_range == bundle.size_range
    assert "energy" in (tmp_path / "model" / "README.txt").read_text().lower()


def test_multi_core_prediction_equals_one_core(bundle, tmp_path, monkeypatch):
    """Large batches spread the embedding's row blocks and the members over the cores; the
    numbers must be exactly those of one core (every step is row-wise)."""
    from hpcds1mpi.surrogates import parallel as models

    bundle.save(tmp_path / "model")
    loaded = load_bundle(tmp_path / "model")  # members scored through libxgboost's C API
    df = configs(make_runs(seed=7))
    monkeypatch.setattr(models, "predict_threads", lambda: 1)
    one = loaded.predict(df)
    calls = []
    real_map = models.parallel_map

    def counting_map(fn, items, n_rows):
        calls.append(len(items))
        return real_map(fn, items, n_rows)

    monkeypatch.setattr(models, "predict_threads", lambda: 2)
    monkeypatch.setattr(models, "PREDICT_PARALLEL_ROWS", 8)  # this small table counts as large
    monkeypatch.setattr(models, "parallel_map", counting_map)
    many = loaded.predict(df)
    assert max(calls) > 1  # the parallel path really ran
    pd.testing.assert_frame_equal(one, many, check_exact=True)


def test_training_matrix_aligned_with_training_frame(bundle):
    frame = bundle.training_frame()
    matrix = bundle.training_matrix()
    assert len(frame) == matrix.shape[0]
    assert matrix.shape[1] == len(bundle.model.spec_.names) + bundle.embed(frame.head(2)).shape[1]
    assert {"status", "peak_rss_mb", "kept", "workload", "size"} <= set(frame.columns)
    assert (frame["status"] == "oom").any()


def test_missing_input_column_is_refused(bundle):
    df = configs(make_runs()).drop(columns=["threads"])
    with pytest.raises(ModelError, match="threads"):
        bundle.predict(df)


def test_feature_table_missing_column_is_refused(bundle):
    from hpcds1mpi.surrogates.features import build_features

    feats = build_features(configs(make_runs()), bundle.model.spec_)
    with pytest.raises(ModelError, match="missing column"):
        bundle.model.predict_features(feats.drop(columns=["nodes"]))


def test_incompatible_format_is_refused(bundle, tmp_path):
    path = bundle.save(tmp_path / "old")
    manifest = json.loads((path / "manifest.json").read_text())
    manifest["format_version"] = 999
    (path / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(ModelError, match="format 999"):
        load_bundle(path)
    with pytest.raises(ModelError, match="not a model bundle"):
        load_bundle(tmp_path / "nowhere")


def test_loading_and_predicting_imports_neither_torch_nor_xgboost(bundle, tmp_path):
    path = bundle.save(tmp_path / "m")
    code = (
        "import sys, pandas as pd\n"
        "from hpcds1mpi.surrogates.bundle import load_bundle\n"
        f"b = load_bundle({str(path)!r})\n"
        f"df = pd.read_parquet({str(path / 'training_data.parquet')!r})\n"
        "b.predict(df); b.embed(df)\n"
        "print('torch' in sys.modules, 'xgboost' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    # the default (XGBoost) members score through libxgboost without importing the package
    assert out.stdout.strip() == "False False"


def test_training_data_and_its_frame_train_the_same_bundle():
    """A DataFrame is checked into TrainingData inside train_bundle: the same rows, hash and
    record as handing TrainingData itself; bad frames are refused there too."""
    from hpcds1mpi.errors import DataError

    jobs = make_runs().drop(columns=["run_id", "machine_id"])
    jobs.loc[3, "runtime_s"] = 0.0
    settings = dict(n_members=2, use_embedding=False, threads=1)
    from_frame = train_bundle(jobs, sources=["j.parquet"], **settings)
    from_data = train_bundle(TrainingData.from_frame(jobs, sources=["j.parquet"]), **settings)
    for key in ("data_hash", "n_rows", "dropped_zero_runtime_jobs", "sources", "workloads"):
        assert from_frame.manifest[key] == from_data.manifest[key], key
    assert from_data.manifest["dropped_zero_runtime_jobs"] == 1
    assert from_data.manifest["sources"] == ["j.parquet"]
    with pytest.raises(DataError, match="unknown column"):
        train_bundle(make_runs().assign(bogus_column=1), **settings)


def test_machine_choice_of_train_bundle():
    frame = pd.concat([make_runs(machine="a"), make_runs(machine="b", seed=3)])
    bundle = train_bundle(frame, machine="b", n_members=2, use_embedding=False, threads=1)
    assert bundle.machine_ids == {"b"} and bundle.manifest["n_rows"] == len(make_runs())


def test_grouped_prediction_equals_row_by_row_and_survives_round_trip(tmp_path):
    """A knob-feature bundle scores a big grid per tree region; every output column equals the
    row-by-row computation, also after save and load (member_features are in the manifest)."""
    from hpcds1mpi.surrogates.models import KNOB_FEATURES

    knobs = train_bundle(make_runs(), n_members=3, use_embedding=False, threads=1,
                         member_features=list(KNOB_FEATURES))
    grid = pd.concat([configs(make_runs())] * 20, ignore_index=True)
    grid["ranks_per_node"] = np.resize(np.arange(1, 41), len(grid))
    grid["threads"] = np.resize(np.arange(1, 7), len(grid))
    grouped = knobs.predict(grid)
    assert knobs.model.predict_regions(knobs.design(grid))[1] is not None  # grouping used
    knobs.save(tmp_path / "b")
    loaded = load_bundle(tmp_path / "b")
    assert loaded.manifest["member_features"] == list(KNOB_FEATURES)
    again = loaded.predict(grid)
    loaded.model._thresholds_cache = None  # row by row
    plain = loaded.predict(grid)
    for col in plain.columns:
        np.testing.assert_allclose(grouped[col], plain[col], rtol=1e-12, atol=0)
        np.testing.assert_allclose(again[col], plain[col], rtol=1e-12, atol=0)


def test_shipped_default_bundle_loads_without_a_path_and_predicts():
    from hpcds1mpi.surrogates.bundle import default_bundle_path

    shipped = load_bundle()
    assert shipped._path == default_bundle_path()
    assert shipped.workloads >= {"stencil", "gemm", "fft", "cg", "nbody", "mltrain",
                                 "allreduce", "io"}
    assert shipped.energy_source == "modelled"
    size = sum(f.stat().st_size for f in default_bundle_path().iterdir())
    assert size < 5e6  # ships inside the wheel: keep it small
    frame = pd.DataFrame({"workload": ["stencil"] * 2, "size": [128, 128], "nodes": [1, 1],
                          "ranks_per_node": [1, 2], "threads": [1, 1], "device": ["cpu"] * 2,
                          "precision": ["fp64"] * 2, "partition": ["local"] * 2,
                          "cores_per_node": [2, 2], "memory_gb": [8.0, 8.0],
                          "gpus_per_node": [0, 0]})
    pred = shipped.predict(frame)
    # measured on the reference sweep: 0.06-0.11 s for these two configurations
    assert ((pred["runtime_s"] > 0.01) & (pred["runtime_s"] < 1.0)).all()


def test_recommend_uses_the_shipped_bundle_by_default(tmp_path):
    from tests.helpers import run_cli

    proc = run_cli(["recommend", "--workload", "stencil", "--size", "300", "--json"],
                   timeout=120, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    import json

    answer = json.loads(proc.stdout)
    assert "stencil" in proc.stdout and answer  # a pick from the shipped model


def test_a_bundle_records_the_cpu_its_partition_was_measured_on(tmp_path):
    """train records each partition's CPU from its runs' machines (s31 tester Q4: the guard's
    CPU check had nothing to compare, so another CPU was answered ``auto``); rows that name
    none (a job table) record none."""
    data = TrainingData.read(telemetry=["data/reference_choice/race_rest_large_b.h5"])
    bundle = train_bundle(data, n_members=2, use_embedding=False, threads=1)
    assert bundle.partitions["local"]["cpu_model"] == "AMD EPYC"
    bundle.save(tmp_path / "b")
    assert load_bundle(tmp_path / "b").partitions["local"]["cpu_model"] == "AMD EPYC"
    jobs = train_bundle(make_runs(), n_members=2, use_embedding=False, threads=1)
    assert all("cpu_model" not in hw for hw in jobs.partitions.values())


def test_a_partition_is_described_as_most_of_its_runs_record_it():
    """s37 tester K3: a partition's hardware was its first row's; learn appends a run read
    again, so after quickstart's rerun learnt its sweep into a bundle learn had extended with a
    tune's runs (an allocation's 4 GB share of the same nodes), the partition was 4 GB and
    recommend escalated every job as "unlike any machine the model was trained on"."""
    runs = make_runs()
    runs.loc[runs.index[:6], "memory_gb"] = 4.0  # a few runs first, recorded with less memory
    bundle = train_bundle(runs, n_members=2, use_embedding=False, threads=1)
    assert bundle.partitions["cpu"]["memory_gb"] == 16.0


def test_a_failed_runs_time_is_not_learnt_as_a_runtime():
    """s43 tester L2: a program's ok runs timed by ``--time-regex`` (its own time) and its
    failed runs by the launch's wall time must not be learnt as one clock: a failed run's
    ``runtime_s`` (and energy) leaves every prediction as it is, whatever its value."""
    def trained(seconds: float):
        runs = make_runs()
        failed = runs.index % 7 == 3
        runs.loc[failed, "status"] = "failed"
        runs.loc[failed, "runtime_s"] = seconds
        runs.loc[failed, "energy_j"] = seconds * 50
        return train_bundle(runs, seed=1, n_members=2, use_embedding=False, threads=1,
                            member_trees=20)

    quick, slow = trained(1e-3), trained(1e4)
    rows = make_runs().drop(columns=["status"]).head(40)
    a, b = quick.predict(rows), slow.predict(rows)
    for column in ("runtime_s", "runtime_lo", "runtime_hi", "energy_j"):
        if column in a.columns:
            np.testing.assert_array_equal(a[column].to_numpy(), b[column].to_numpy())
