"""Jobs running at a submission: the vectorised answer against a plain loop (real Gaia slice)
and the edges of "running" (a start in the same second, an end at it, no start at all)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from hpcds1mpi.records.ingest import read_job_log
from hpcds1mpi.surrogates.running_jobs import running_at
from hpcds1mpi.surrogates.submit_features import submit_features
from tests.records.ingest.joblogs import GAIA, needs_joblogs, swf_slice

MISSING = np.iinfo(np.int64).min
NEVER = np.iinfo(np.int64).max


@pytest.fixture(scope="module")
def gaia(tmp_path_factory):
    """The first 6,000 jobs of the real UniLu Gaia log (three in four submitted while another
    job of their user ran)."""
    if not GAIA.is_file():
        pytest.skip(needs_joblogs.kwargs["reason"])
    path = swf_slice(GAIA, tmp_path_factory.mktemp("gaia") / "gaia.swf", jobs=6000)
    return read_job_log(path)[0].reset_index(drop=True)


def _loop(table: pd.DataFrame, i: int, same) -> tuple[int, float, float]:
    """The jobs running at job ``i``'s submission, one job at a time."""
    sub = table["submit_time"].dt.floor("s")
    start = table["start_time"].dt.ceil("s")
    end = table["end_time"].dt.ceil("s")
    mine = same(i) & (start < sub[i]) & (end > sub[i]) & (end > start)
    ran = (sub[i] - start[mine]).dt.total_seconds()
    return int(mine.sum()), (ran.max() if len(ran) else np.nan), (ran.min() if len(ran) else np.nan)


def test_running_jobs_match_a_plain_loop(gaia):
    feats = submit_features(gaia, in_flight=True)
    request = ["time_limit_s", "req_procs", "partition"]
    groups = {"user": lambda i: gaia["user"] == gaia["user"][i],
              "request": lambda i: (gaia["user"] == gaia["user"][i]) & (
                  gaia[request].astype("string").fillna("") ==
                  gaia.loc[i, request].astype("string").fillna("")).all(axis=1)}
    rng = np.random.default_rng(3)
    seen = 0
    for i in rng.choice(len(gaia), 150, replace=False):
        for name, same in groups.items():
            n, longest, newest = _loop(gaia, i, same)
            assert feats[f"{name}_running"][i] == n, (name, i)
            if n:
                seen += 1
                assert np.expm1(feats[f"{name}_run_longest"][i]) == pytest.approx(longest)
                assert np.expm1(feats[f"{name}_run_newest"][i]) == pytest.approx(newest)
            else:
                assert np.isnan(feats[f"{name}_run_longest"][i])
    assert seen > 100  # the slice does have running jobs to check


def test_what_counts_as_running():
    # Query at t=100 for group 0: jobs as (start, end).
    jobs = [(50, 200),        # running, 50 s in
            (90, 150),        # running, 10 s in
            (100, 300),       # starts in the submission's second: not yet
            (20, 100),        # ended at the submission's second: finished
            (60, 60),         # started and ended in one second: never running
            (100, 100),       # ... in the submission's second: not running, not subtracted
            (MISSING, 500),   # no start: never counted
            (10, NEVER)]      # no end known: still running, 90 s in
    start = np.array([s for s, _ in jobs], dtype=np.int64)
    end = np.array([e for _, e in jobs], dtype=np.int64)
    codes = np.zeros(len(jobs), dtype=np.int64)
    # Every job also asks at its own time; the last is a job of another group, starting at it.
    count, longest, newest = running_at(np.r_[codes, 1], np.r_[start, 100],
                                        np.r_[end, 120], np.r_[np.full(len(jobs), 100), 100])
    assert count[0] == 3 and longest[0] == 90 and newest[0] == 10
    assert count[-1] == 0 and np.isnan(longest[-1]) and np.isnan(newest[-1])


def test_a_job_without_a_submit_time_asks_nothing():
    count, longest, _ = running_at(np.zeros(2, np.int64), np.array([0, 5], np.int64),
                                   np.array([50, 60], np.int64),
                                   np.array([10, MISSING], np.int64))
    assert count.tolist() == [2, 0] and longest[0] == 10 and np.isnan(longest[1])


def test_in_flight_features_are_only_there_when_asked(gaia):
    without = submit_features(gaia)
    assert not [c for c in without if "running" in c or "_run_" in c]
    with_them = submit_features(gaia, in_flight=True)
    shared = list(without.columns)
    pd.testing.assert_frame_equal(with_them[shared], without)


def test_a_logged_job_without_an_end_runs_at_most_its_request():
    # Gaia's 127 "partial" jobs have a start and no run time. Whether a job's end is ever
    # logged is not known at a later submission, so such a job is running until its start
    # plus its request (the most it could run), then no longer -- not forever (it had been
    # for every later job of its user), nor never (that reads the log's future: s49 review).
    t0 = pd.Timestamp("2024-01-01")
    at = [t0, t0, t0 + pd.Timedelta(minutes=30), t0 + pd.Timedelta(hours=2)]
    table = pd.DataFrame({
        "job_id": ["1", "2", "3", "4"], "user": ["u"] * 4, "status": ["ok", pd.NA, "ok", "ok"],
        "state_raw": ["1 completed", "2 partial", "1 completed", "1 completed"],
        "runtime_s": [500.0, np.nan, 50.0, 50.0], "time_limit_s": [3600.0] * 4,
        "submit_time": at, "start_time": at,
        "end_time": [t0 + pd.Timedelta(seconds=500), pd.NaT,
                     at[2] + pd.Timedelta(seconds=50), at[3] + pd.Timedelta(seconds=50)]})
    feats = submit_features(table, in_flight=True)
    assert feats.loc[2, "user_running"] == 1
    assert np.expm1(feats.loc[2, "user_run_longest"]) == pytest.approx(1800)
    assert feats.loc[3, "user_running"] == 0 and np.isnan(feats.loc[3, "user_run_longest"])


def test_a_job_started_before_its_own_submission_is_not_running_at_it():
    # A record whose start precedes its submit time (clock skew) must not bound its own run.
    t0 = pd.Timestamp("2024-01-01")
    table = pd.DataFrame({
        "job_id": ["1"], "user": ["u"], "status": ["ok"], "runtime_s": [100.0],
        "time_limit_s": [600.0], "submit_time": [t0 + pd.Timedelta(seconds=30)],
        "start_time": [t0], "end_time": [t0 + pd.Timedelta(seconds=100)]})
    assert submit_features(table, in_flight=True).loc[0, "user_running"] == 0
