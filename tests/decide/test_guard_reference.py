"""The guard's reference from plain arrays: the same rows and query configurations that the
pandas recipe (drop_duplicates, then sample(48, random_state=0)) picked from the shipped
bundle, so verdicts are unchanged."""

from __future__ import annotations

import numpy as np

from hpcds1mpi.decide import bundle_cache
from hpcds1mpi.decide.guard_reference import CONFIG_COLUMNS, QUERY_CONFIGS, build_reference
from hpcds1mpi.decide.model_bundle import load_model
from tests.fake_bundle import FakeBundle


def test_reference_picks_the_rows_pandas_picked():
    bundle = load_model(None)
    ref = build_reference(bundle)
    frame = bundle.training_frame()
    configs = frame[list(CONFIG_COLUMNS)].drop_duplicates().reset_index(drop=True)
    if len(configs) > QUERY_CONFIGS:
        configs = configs.sample(QUERY_CONFIGS, random_state=0).reset_index(drop=True)
    got = ref.configs.to_frame()
    for col in CONFIG_COLUMNS:
        assert got[col].astype(str).tolist() == configs[col].astype(str).tolist(), col
    assert ref.workloads.tolist() == frame["workload"].astype(str).tolist()
    assert np.array_equal(ref.sizes, frame["size"].to_numpy(float))


def test_training_columns_are_the_training_frame():
    bundle = load_model(None)
    cols = bundle_cache.training_columns(bundle)
    frame = bundle.training_frame()
    assert cols.columns == list(frame.columns)
    for col in frame.columns:
        want = frame[col]
        if want.dtype.kind in "biuf":
            assert np.array_equal(cols[col], want.to_numpy(), equal_nan=want.dtype.kind == "f")
        else:
            assert cols[col].tolist() == want.fillna("").astype(str).tolist(), col


class AllFailedThere(FakeBundle):
    """The fake bundle whose every run of gemm at 2048 on cpu failed."""

    def training_frame(self):
        frame = super().training_frame().copy()
        there = (frame["workload"] == "gemm") & (frame["size"] == 2048) \
            & (frame["partition"] == "cpu")
        frame.loc[there, "status"] = "failed"
        frame.loc[there, "runtime_s"] = np.nan
        self._frame = frame
        return frame


def test_a_problem_whose_runs_all_failed_is_not_measured():
    """s31 reviewer: the failed runs' rows made gemm 2048 "measured" at distance 0."""
    from hpcds1mpi.decide.guard import job_distance

    bundle = AllFailedThere()
    ref = build_reference(bundle)
    assert not ref.measured("gemm", 2048, "cpu")
    assert ref.measured("gemm", 2048, "gpu-big") and ref.measured("gemm", 1024, "cpu")
    assert job_distance(bundle, ref, "gemm", 2048, "cpu") > 0.0
    assert job_distance(bundle, ref, "gemm", 1024, "cpu") == 0.0


def test_a_subsampled_reference_keeps_every_measured_problem():
    """s31 reviewer: the set came from the subsample, so a problem whose rows were all left
    out lost its distance 0 at random."""
    bundle = FakeBundle()
    frame = bundle.training_frame()
    ref = build_reference(bundle, max_rows=20)
    assert len(ref.frame) == 20
    ok = frame[frame["status"] == "ok"]
    for w, size, part in set(zip(ok["workload"], ok["size"], ok["partition"])):
        assert ref.measured(w, size, part), (w, size, part)
