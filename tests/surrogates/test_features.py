"""Feature builder and feature specification: one builder, a spec that refuses mismatches."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from hpcds1mpi.errors import ModelError
from hpcds1mpi.surrogates.features import (INPUT_COLUMNS, build_features, fit_spec,
                                           normalise_frame)


def configs(workload="stencil", sizes=(40, 64), nodes=(1, 2, 8)) -> pd.DataFrame:
    rows = []
    for size in sizes:
        for n in nodes:
            for rpn in (1, 2):
                rows.append(dict(workload=workload, size=size, nodes=n, ranks_per_node=rpn,
                                 threads=1, device="cpu", precision="fp64", partition="cpu",
                                 cores_per_node=2, memory_gb=16.0, gpus_per_node=0))
    return pd.DataFrame(rows)


def test_spec_records_names_dtypes_categories():
    spec = fit_spec(configs())
    assert spec.categories["workload"] == ["stencil"]
    assert all(spec.dtypes[n] == "float64" for n in spec.names)
    feats = build_features(configs(), spec)
    assert list(feats.columns) == spec.names
    assert np.isfinite(feats.to_numpy()).all()


def test_kernel_work_model_extrapolates_to_unseen_node_counts():
    spec = fit_spec(configs(nodes=(1,)))
    feats = build_features(configs(nodes=(1, 64)), spec)
    flops = feats["log_flops_rank"].to_numpy()
    assert (flops > 0).all(), "stencil's WorkModel must give flops for every rank count"
    one = feats[(feats["nodes"] == 1) & (feats["ranks_per_node"] == 1)]["log_flops_rank"]
    many = feats[(feats["nodes"] == 64) & (feats["ranks_per_node"] == 2)]["log_flops_rank"]
    # 128 ranks share the grid: per-rank work is far smaller than on one rank.
    assert (many.to_numpy() < one.to_numpy() - 1.0).all()


def test_recorded_work_model_is_used_and_the_kernel_fills_rows_without_one():
    """A runs table carries the work model the sweep recorded; a recorded value that differs
    from the kernel's formula (e.g. the formula changed since the run) is the one used, and
    only rows without recorded values (candidate grids, job tables) get the formula's."""
    from hpcds1mpi import kernels
    from hpcds1mpi.kernels.base import WORK_COLUMNS

    frame = configs(sizes=(64,), nodes=(1, 2))
    spec = fit_spec(frame)
    plain = build_features(frame, spec)
    recorded = frame.copy()
    for col, value in zip(WORK_COLUMNS, (1e12, 1e11, 7.0, 1e6, 1e9)):
        recorded[col] = value
    recorded.loc[0, WORK_COLUMNS[0]] = np.nan  # row 0 incomplete: from the kernel
    feats = build_features(recorded, spec)
    assert np.allclose(feats.loc[1:, "log_flops_rank"], np.log10(1 + 1e12))
    assert np.allclose(feats.loc[1:, "log_messages_rank"], np.log10(1 + 7.0))
    assert np.allclose(feats.loc[1:, "log_mem_rank"], np.log10(1 + 1e9))
    w = kernels.get("stencil").work(64, int(frame.loc[0, "nodes"] * frame.loc[0, "ranks_per_node"]))
    assert feats.loc[0, "log_flops_rank"] == pytest.approx(np.log10(1 + w.flops))
    assert feats.loc[0, "log_flops_rank"] == plain.loc[0, "log_flops_rank"]
    assert (feats.loc[1:, "log_t_roofline"] != plain.loc[1:, "log_t_roofline"]).all()


def test_unknown_workload_gets_sentinel_code_and_no_work_model():
    spec = fit_spec(configs())
    feats = build_features(configs(workload="my_program"), spec)
    assert (feats["workload_code"] == -1).all()
    assert (feats["log_flops_rank"] == -1).all()


def test_missing_input_column_is_refused():
    spec = fit_spec(configs())
    with pytest.raises(ModelError, match="precision"):
        build_features(configs().drop(columns=["precision"]), spec)


def test_feature_table_with_missing_or_unknown_column_is_refused():
    spec = fit_spec(configs())
    feats = build_features(configs(), spec)
    with pytest.raises(ModelError, match="missing column"):
        spec.check_features(feats.drop(columns=["log_size"]))
    with pytest.raises(ModelError, match="unknown column"):
        spec.check_features(feats.assign(extra=1.0))
    spec.check_features(feats)  # the exact table passes


def test_job_table_requests_become_features_and_are_then_required():
    jobs = pd.DataFrame({"workload": ["a", "b", "a"], "nodes": [1, 2, 4], "ranks": [4, 8, 16],
                         "gpus": [0, 0, 4], "time_limit_s": [600.0, 3600.0, 60.0],
                         "status": ["ok"] * 3, "runtime_s": [1.0, 2.0, 3.0]})
    frame = normalise_frame(jobs)
    assert set(INPUT_COLUMNS) <= set(frame.columns)
    assert list(frame["ranks_per_node"]) == [4, 4, 4]
    assert list(frame["device"]) == ["cpu", "cpu", "gpu"]
    spec = fit_spec(frame)
    assert "time_limit_s" in spec.request_columns and "req_time_limit_s" in spec.names
    with pytest.raises(ModelError, match="time_limit_s"):
        build_features(frame.drop(columns=["time_limit_s"]), spec)


def test_categorical_text_columns_give_the_same_features_as_plain_text():
    """System 1's grids hand categoricals (codes used directly, unused categories allowed);
    a missing value falls back to hashing: the features must not change either way."""
    plain = pd.concat([configs(), configs("gemm", sizes=(128,))], ignore_index=True)
    plain.loc[3, "precision"] = "fp32"
    spec = fit_spec(plain)
    want = build_features(plain, spec).to_numpy()
    cat = plain.copy()
    for col in ("workload", "device", "precision", "partition"):
        cat[col] = pd.Categorical(cat[col], categories=["zzz", *sorted(set(cat[col]))])
    assert np.array_equal(build_features(cat, spec).to_numpy(), want, equal_nan=True)
    cat.loc[0, "device"] = np.nan  # a missing code: the hashing path
    plain.loc[0, "device"] = np.nan
    assert np.array_equal(build_features(cat, spec).to_numpy(),
                          build_features(plain, spec).to_numpy(), equal_nan=True)
