"""Submission features: nothing a job could not have known at its submit time (real Gaia slice)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from hpcds1mpi.records.ingest import read_job_log
from hpcds1mpi.surrogates.submit_features import (CATEGORICAL, completed_mask, numeric_columns,
                                                  submit_features)
from tests.records.ingest.joblogs import GAIA, needs_joblogs, swf_slice

pytestmark = needs_joblogs


@pytest.fixture(scope="module")
def gaia(tmp_path_factory):
    """The first 3,000 jobs of the real UniLu Gaia log, through the shipped SWF reader."""
    path = swf_slice(GAIA, tmp_path_factory.mktemp("gaia") / "gaia.swf", jobs=3000)
    return read_job_log(path)[0]


def _by_job(table, feats):
    return feats.set_index(table["job_id"].astype(str).to_numpy()).sort_index()


def past_rows_unchanged(build, table: pd.DataFrame, cut: pd.Timestamp, seed: int = 0) -> bool:
    """Whether ``build``'s features of the jobs submitted by ``cut`` survive a changed future:
    every job not finished by ``cut`` gets another run time, end and status (still ending
    after ``cut``), jobs submitted after it are dropped, and the rows are shuffled."""
    rng = np.random.default_rng(seed)
    before = _by_job(table, build(table))
    future = table.copy()
    late = (future["end_time"] > cut).to_numpy()
    new_run = rng.uniform(1, 1e5, late.sum())
    start = future.loc[late, "start_time"].where(future.loc[late, "start_time"] > cut, cut)
    future.loc[late, "runtime_s"] = new_run
    future.loc[late, "end_time"] = start + pd.to_timedelta(new_run + 1, unit="s")
    future.loc[late, "status"] = rng.choice(["ok", "failed", "timeout"], late.sum())
    future = future[future["submit_time"] <= cut]
    future = future.iloc[rng.permutation(len(future))]
    after = _by_job(future, build(future))
    past = before.loc[after.index]
    return past.equals(after)


def leaky_features(table: pd.DataFrame) -> pd.DataFrame:
    """A leak on purpose: the run time of the user's previous *submitted* job (the joblogs
    README's last-two baseline does this), whether or not it had finished."""
    order = table["submit_time"].sort_values(kind="stable").index
    prev = table.loc[order].groupby("user")["runtime_s"].shift(1)
    return pd.DataFrame({"prev_run": prev.reindex(table.index)}, index=table.index)


def test_no_feature_uses_a_job_unfinished_at_submission(gaia):
    for q in (0.3, 0.6, 0.9):
        cut = gaia["submit_time"].quantile(q)
        assert past_rows_unchanged(submit_features, gaia, cut), f"a leak at {cut}"


def test_the_leak_check_catches_a_leak(gaia):
    # The check above can fail: a feature that reads the previous submitted job's run time.
    cut = gaia["submit_time"].quantile(0.6)
    assert not past_rows_unchanged(leaky_features, gaia, cut)


def _tiny(ends_after_s: float):
    t0 = pd.Timestamp("2024-01-01")
    return pd.DataFrame({
        "job_id": ["1", "2"], "user": ["u", "u"], "status": ["ok", "ok"],
        "runtime_s": [100.0, 50.0], "time_limit_s": [200.0, 200.0],
        "submit_time": [t0, t0 + pd.Timedelta(seconds=100 + ends_after_s)],
        "start_time": [t0, t0 + pd.Timedelta(seconds=100 + ends_after_s)],
        "end_time": [t0 + pd.Timedelta(seconds=100), t0 + pd.Timedelta(seconds=150)]})


def test_a_job_ending_at_the_submit_second_counts_one_a_moment_later_not():
    same = submit_features(_tiny(0.0))
    assert same.loc[1, "user_n"] == 1 and same.loc[1, "user_last1"] == pytest.approx(np.log(100))
    assert same.loc[1, "user_active"] == 0
    # Ended half a second after the second job came: not known then (ends round up).
    late = submit_features(_tiny(-0.5))
    assert late.loc[1, "user_n"] == 0 and np.isnan(late.loc[1, "user_last1"])
    assert late.loc[1, "user_active"] == 1


def test_history_values_match_a_plain_loop(gaia):
    feats = submit_features(gaia)
    done = completed_mask(gaia)
    rng = np.random.default_rng(1)
    for i in rng.choice(len(gaia), 40, replace=False):
        row = gaia.iloc[i]
        mine = gaia[(gaia["user"] == row["user"]) & done &
                    (gaia["end_time"].dt.ceil("s") <= row["submit_time"].floor("s"))]
        mine = mine.sort_values("end_time", kind="stable")
        runs = np.log(np.maximum(mine["runtime_s"].to_numpy(), 1.0))
        assert feats["user_n"].iloc[i] == len(mine)
        if len(mine):
            assert feats["user_last1"].iloc[i] == pytest.approx(runs[-1])
            assert feats["user_mean5"].iloc[i] == pytest.approx(runs[-5:].mean())
            assert feats["user_med20"].iloc[i] == pytest.approx(np.median(runs[-20:]))


def test_columns_and_missing_fields():
    t0 = pd.Timestamp("2024-01-01")
    table = pd.DataFrame({"runtime_s": [5.0, 6.0], "status": ["ok", pd.NA],
                          "submit_time": [t0, t0], "end_time": [t0, t0]})
    feats = submit_features(table)  # no user, no request: one anonymous user, NaN requests
    assert list(feats.columns[:len(CATEGORICAL)]) == list(CATEGORICAL)
    assert feats["log_limit"].isna().all()
    assert all(feats[c].dtype == "float64" for c in numeric_columns(feats))
