"""Submission features: nothing a job could not have known at its submit time (real Gaia slice)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from hpcds1mpi.records.ingest import read_job_log
from hpcds1mpi.surrogates.submit_features import (CATEGORICAL, completed_mask, gap_before,
                                                  numeric_columns, submit_features,
                                                  submit_order, unnamed_users)
from tests.records.ingest.joblogs import GAIA, needs_joblogs, swf_slice

@pytest.fixture(scope="module")
def gaia(tmp_path_factory):
    """The first 3,000 jobs of the real UniLu Gaia log, through the shipped SWF reader."""
    if not GAIA.is_file():
        pytest.skip(needs_joblogs.kwargs["reason"])
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
    # and some never get an end at all (SWF's "partial" jobs): whether a job's end is ever
    # logged is not known at an earlier submission either (s49 review)
    blank = late.copy()
    blank[late] = rng.random(late.sum()) < 0.2
    future.loc[blank, ["runtime_s", "end_time", "status"]] = [np.nan, pd.NaT, pd.NA]
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


@pytest.mark.parametrize("in_flight", [False, True])
def test_no_feature_uses_a_job_unfinished_at_submission(gaia, in_flight):
    # With the jobs in flight too: their starts are known at submission, their ends are not.
    def build(table):
        return submit_features(table, in_flight=in_flight)

    for q in (0.3, 0.6, 0.9):
        cut = gaia["submit_time"].quantile(q)
        assert past_rows_unchanged(build, gaia, cut), f"a leak at {cut}"


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


def test_gap_before_ignores_ties_and_row_order():
    codes = np.array([0, 0, 0, 0, 1, 1])
    times = np.array([10.0, 10.0, 13.0, 20.0, 5.0, 9.0])
    gap = gap_before(codes, times)
    # The first time of a code has no previous; a tie shares its value (both first here).
    assert np.isnan(gap[0]) and np.isnan(gap[1]) and np.isnan(gap[4])
    assert list(gap[[2, 3, 5]]) == [3.0, 7.0, 4.0]
    perm = np.random.default_rng(0).permutation(len(codes))
    assert np.array_equal(gap_before(codes[perm], times[perm]), gap[perm], equal_nan=True)


def _workflow(cycles: int = 12) -> pd.DataFrame:
    """One user's workflow: step A (4 s) then, 1 s after it, step B (300 s), same request;
    the next cycle 10 minutes later. Each job ends before the next cycle."""
    t0, rows = pd.Timestamp("2024-01-01"), []
    for i in range(cycles):
        for step, (lag, run) in enumerate(((0, 4.0), (1, 300.0))):
            sub = t0 + pd.Timedelta(seconds=600 * i + lag)
            rows.append({"job_id": f"{i}{'ab'[step]}", "user": "u", "status": "ok",
                         "runtime_s": run, "time_limit_s": 3600.0, "req_procs": 1,
                         "submit_time": sub, "start_time": sub,
                         "end_time": sub + pd.Timedelta(seconds=run)})
    return pd.DataFrame(rows)


def test_the_pace_group_tells_the_steps_of_a_workflow_apart():
    table = _workflow()
    feats = submit_features(table)
    late = table.index[-4:]  # the last two cycles: history of both steps exists
    a = late[table.loc[late, "job_id"].str.endswith("a")]
    b = late[table.loc[late, "job_id"].str.endswith("b")]
    assert np.allclose(np.exp(feats.loc[a, "pace_med5"]), 4.0)
    assert np.allclose(np.exp(feats.loc[b, "pace_med5"]), 300.0)
    # The same request without the pace mixes the two steps: A's last like run is a B.
    assert np.allclose(np.exp(feats.loc[a, "pace_last1"]), 4.0)
    assert np.allclose(np.exp(feats.loc[a, "request_last1"]), 300.0)
    # The second A is the first 10 minutes after a job (the first A followed nothing): no
    # finished job at that pace yet, so it borrows its request's history (the first B).
    new = table.index[table["job_id"] == "1a"][0]
    assert feats.loc[new, "pace_n"] == 0 and feats.loc[new, "request_n"] == 2
    assert feats.loc[new, "pace_last1"] == feats.loc[new, "request_last1"] == np.log(300.0)


def test_pace_values_match_a_plain_loop(gaia):
    feats = submit_features(gaia)
    done = completed_mask(gaia)
    sub = gaia["submit_time"]
    rng = np.random.default_rng(2)

    def gap_bin(j):
        same = gaia[(gaia["user"] == gaia["user"].iloc[j]) & (sub < sub.iloc[j])]
        if not len(same):
            return -1
        return int(np.floor(np.log2(1 + (sub.iloc[j] - same["submit_time"].max())
                                    .total_seconds())))

    for i in rng.choice(np.flatnonzero(feats["pace_n"].to_numpy() > 0), 15, replace=False):
        row = gaia.iloc[i]
        like = np.flatnonzero(((gaia["user"] == row["user"]) & done &
                               (gaia["time_limit_s"] == row["time_limit_s"]) &
                               (gaia["req_procs"] == row["req_procs"]) &
                               (gaia["partition"].astype(str) == str(row["partition"])) &
                               (gaia["end_time"].dt.ceil("s") <= row["submit_time"].floor("s"))
                               ).to_numpy())
        mine = [j for j in like if gap_bin(j) == gap_bin(i)]
        assert feats["pace_n"].iloc[i] == len(mine)
        last = gaia.iloc[mine].sort_values("end_time", kind="stable")
        runs = np.log(np.maximum(last["runtime_s"].to_numpy(), 1.0))
        assert feats["pace_med5"].iloc[i] == pytest.approx(np.median(runs[-5:]))


def _new_job(table: pd.DataFrame, user: str, submit, **request) -> pd.DataFrame:
    """A job to submit (no end, no run time), as ``recommend --history`` appends it."""
    row = {c: pd.NA for c in table.columns}
    row.update(user=user, submit_time=pd.Timestamp(submit), status=pd.NA,
               state_raw="to submit", runtime_s=np.nan, start_time=pd.NaT, end_time=pd.NaT,
               **request)
    return pd.DataFrame([row])


@pytest.mark.parametrize("at", [0.5, 0.9, 1.0])
def test_a_new_jobs_row_needs_only_its_users_rows(gaia, at):
    """s36: ``recommend --history`` computes the new job's features from its user's rows and
    the history's only for a fit; both must be what the whole table gives (all columns
    equal, for three users, submitted mid-history and after it, with a name the log lacks)."""
    from hpcds1mpi.surrogates.submit_features import GROUPS, feature_groups

    ends = pd.to_datetime(gaia["end_time"])
    submit = ends.quantile(at) if at < 1 else ends.max() + pd.Timedelta(seconds=1)
    for user in gaia["user"].astype(str).value_counts().index[:3]:
        job = _new_job(gaia, user, submit, workload="never-seen", time_limit_s=3600.0,
                       req_procs=12)
        whole = submit_features(pd.concat([gaia, job], ignore_index=True))
        either = set(feature_groups(gaia)) | set(feature_groups(job))
        groups = tuple(g for g in GROUPS if g in either)
        own = (gaia["user"].astype("string").fillna("") == user).to_numpy()
        alone = submit_features(pd.concat([gaia[own], job], ignore_index=True), groups)
        pd.testing.assert_frame_equal(alone.iloc[[-1]].reset_index(drop=True),
                                      whole.iloc[[-1]].reset_index(drop=True))
        # the finished jobs a fit learns from: unchanged by the new job
        done = completed_mask(gaia) & (ends <= submit).to_numpy()
        history = submit_features(gaia, groups)
        pd.testing.assert_frame_equal(history[done], whole.iloc[:len(gaia)][done])


def test_a_group_the_history_lacks_is_computed_when_asked():
    """The groups given, not the table's own, make the columns: the new job's row and the
    history's rows of a fit line up even where only the new job has a name."""
    table = pd.DataFrame({"user": ["a", "a"], "runtime_s": [5.0, 6.0],
                          "submit_time": pd.to_datetime(["2024-01-01", "2024-01-02"]),
                          "end_time": pd.to_datetime(["2024-01-01 00:01", "2024-01-02 00:01"]),
                          "status": ["ok", "ok"]})
    from hpcds1mpi.surrogates.submit_features import feature_groups

    assert "name" not in feature_groups(table)
    assert "name_n" not in submit_features(table)
    assert "name_n" in submit_features(table, ("user", "name", "pace"))
    with pytest.raises(ValueError, match="user group"):
        submit_features(table, ("name",))


def _garbled(table: pd.DataFrame, keep: tuple[str, ...], seed: int = 0) -> pd.DataFrame:
    """``table`` with every column not in ``keep`` holding other values of its kind."""
    rng = np.random.default_rng(seed)
    out = table.copy()
    for name in out.columns:
        if name in keep:
            continue
        column = out[name]
        if pd.api.types.is_datetime64_any_dtype(column):
            out[name] = pd.Timestamp("2001-02-03") + pd.to_timedelta(
                rng.integers(0, 10**8, len(out)), unit="s")
        elif pd.api.types.is_numeric_dtype(column):
            out[name] = pd.array(rng.integers(1, 10**6, len(out)), dtype=column.dtype) \
                if pd.api.types.is_integer_dtype(column) else rng.uniform(-1e6, 1e6, len(out))
        else:
            out[name] = pd.array([f"garbage{i}" for i in rng.integers(0, 10**6, len(out))],
                                 dtype="string")
    return out


def _same_features_without_other_columns(table: pd.DataFrame) -> None:
    """:func:`submit_features` of ``table`` equals that of ``table`` with every column not in
    ``INPUT_COLUMNS`` garbled or dropped — also where any one input column, or all of them,
    are empty, so that a column read only as a fallback (``ranks`` where ``req_procs`` is
    missing) is caught — and differs where an input it reads is garbled."""
    from hpcds1mpi.records.ingest.schema import JOB_COLUMNS
    from hpcds1mpi.surrogates.submit_features import INPUT_COLUMNS

    assert {name for name, _ in JOB_COLUMNS} <= set(table.columns)
    assert set(INPUT_COLUMNS) <= {name for name, _ in JOB_COLUMNS}
    every = pd.Series(True, index=table.index)
    variants = {"as read": table, "every input empty": table.assign(
        **{name: table[name].mask(every) for name in INPUT_COLUMNS if name != "user"})}
    variants.update({f"{name} empty": table.assign(**{name: table[name].mask(every)})
                     for name in INPUT_COLUMNS})
    for label, variant in variants.items():
        features = submit_features(variant)
        pd.testing.assert_frame_equal(submit_features(_garbled(variant, INPUT_COLUMNS)),
                                      features, obj=f"{label}, other columns garbled")
        kept = variant[[c for c in variant.columns if c in INPUT_COLUMNS]]
        pd.testing.assert_frame_equal(submit_features(kept), features,
                                      obj=f"{label}, other columns dropped")
    features = submit_features(table)
    for name in ("runtime_s", "end_time", "time_limit_s"):  # the check has teeth
        garbled = _garbled(table, tuple(c for c in table.columns if c != name))
        assert not submit_features(garbled).equals(features), name


def test_input_columns_list_every_column_the_features_read():
    """s36 review (guard): the walltime cache is keyed on ``INPUT_COLUMNS``; a column
    ``submit_features`` read but the list missed would leave the key unchanged where the
    features change. A job table with every column (sacct and CSD3 jobs)."""
    from tests.records.ingest.captures import DATA

    _same_features_without_other_columns(
        read_job_log(DATA / "spreadsheet-resaves" / "job-table.csv")[0])


def test_input_columns_list_every_column_the_features_read_on_gaia(gaia):
    """The same guard on 3,000 real Gaia jobs (SWF: many users, limits, statuses)."""
    _same_features_without_other_columns(gaia)


def test_jobs_without_a_user_in_a_log_with_users_are_nobodys_history():
    # s38 tester C3: SWF user -1 on some lines was one user "" whose runs fed every such
    # job's history (and the walltime's training), however many people were behind them.
    t0 = pd.Timestamp("2024-01-01")
    table = pd.DataFrame({
        "user": ["a", pd.NA, pd.NA, "a", pd.NA], "status": ["ok"] * 5,
        "runtime_s": [10.0, 20.0, 30.0, 40.0, 50.0], "time_limit_s": [100.0] * 5,
        "submit_time": [t0 + pd.Timedelta(seconds=100 * i) for i in range(5)]})
    table["end_time"] = table["submit_time"] + pd.to_timedelta(table["runtime_s"], unit="s")
    assert list(unnamed_users(table)) == [False, True, True, False, True]
    feats = submit_features(table)
    assert list(feats["user_n"]) == [0, 0, 0, 1, 0]  # user a's second job: its first only
    assert feats["user_last1"].iloc[[1, 2, 4]].isna().all()
    assert np.isnan(feats["user_gap"].iloc[4])
    # A log that names no user at all is still one anonymous user (the machine's history).
    nobody = table.assign(user=pd.NA)
    assert list(submit_features(nobody)["user_n"]) == [0, 1, 2, 3, 4]
    assert not unnamed_users(nobody).any()


def _one_second_burst() -> pd.DataFrame:
    """A user's sacct history (s39 tester C10, this machine's Slurm): a few jobs, then 24 of
    one name, 8 of another, 3 killed and 3 failed, all submitted in one second, then a few."""
    early = [("app1", 0, 0, 60, "ok", 1), ("ffpoisson", 72, 4, 60, "ok", 1),
             ("interactive", 104, 24, 300, "ok", 2), ("interactive", 147, 2, 300, "failed", 2),
             ("ffpoisson", 152, 3, 60, "ok", 2), ("lab", 152, 1, 60, "ok", 2),
             ("long", 152, 1, 60, "ok", 2), ("cancel", 173, 2, 180, "cancelled", 1),
             ("timelimit", 184, 62, 60, "failed", 1), ("wd", 233, 0, 60, "ok", 1),
             ("wrap", 246, 1, 180, "cancelled", 1), ("mumps2d", 304, 2, 60, "ok", 1),
             ("job.sh", 318, 2, 180, "ok", 2), ("cancel", 453, 1, 180, "cancelled", 1)]
    runs = [100, 60, 300, 120, 500, 180, 700, 240, 900, 300, 1100, 360, 1300, 420, 1500, 480,
            1700, 540, 1900, 600, 2100, 660, 2300, 720]
    burst = ([("tC_a", 456, r, 3600, "ok", 1) for r in runs]
             + [("tC_b", 456, 8, 120, "ok", 1)] * 8 + [("tC_kill", 456, 88, 60, "timeout", 1)] * 3
             + [("tC_fail", 456, 1, 120, "failed", 1)] * 3)
    late = [("timelimit", 461, 62, 60, "failed", 1), ("deep", 508, 0, 60, "ok", 1),
            ("phyml", 509, 2, 60, "ok", 2), ("wrap", 567, 0, 180, "cancelled", 1)]
    table = pd.DataFrame(early + burst + late, columns=["workload", "after_s", "runtime_s",
                                                        "time_limit_s", "status", "req_procs"])
    table["job_id"] = [str(5000 + i) for i in range(len(table))]
    table["user"], table["partition"] = "root", "debug"
    table["submit_time"] = pd.Timestamp("2024-03-01 12:00") + pd.to_timedelta(
        table.pop("after_s"), unit="s")
    table["start_time"] = table["submit_time"] + pd.to_timedelta(np.arange(len(table)) % 7,
                                                                 unit="s")
    table["end_time"] = table["start_time"] + pd.to_timedelta(table["runtime_s"], unit="s")
    return table.astype({"runtime_s": float, "time_limit_s": float})


def test_submit_order_is_the_same_whatever_the_row_order():
    table = _one_second_burst()
    # Ids not in submit order, and one written 999 beside 1000: a number, not text, order.
    table.loc[3, "job_id"], table.loc[20, "job_id"] = "999", "10000"
    first = table["job_id"].iloc[submit_order(table)].tolist()
    for seed in range(3):
        shuffled = table.iloc[np.random.default_rng(seed).permutation(len(table))]
        assert shuffled["job_id"].iloc[submit_order(shuffled)].tolist() == first
    sub = table["submit_time"].iloc[submit_order(table)]
    assert sub.is_monotonic_increasing
    burst = table.iloc[submit_order(table)]
    burst = burst[burst["submit_time"] == burst["submit_time"].iloc[20]]
    assert burst["job_id"].astype(int).is_monotonic_increasing  # then by job id
    # Part of the rows, in the same order as they come in the whole.
    rows = np.arange(0, len(table), 3)
    assert [p for p in submit_order(table) if p in set(rows)] == list(submit_order(table, rows))


def test_a_walltime_is_the_same_whatever_the_order_of_jobs_submitted_in_one_second():
    """A reversed sacct export gave --time 6-05:05:00 where the file gave 01:43:00 (s39
    tester C10): which of the tied jobs were the newest, the calibration slice, followed the
    file's line order."""
    from hpcds1mpi.decide.walltime import propose_walltime

    table = _one_second_burst()
    answers = set()
    for seed in range(4):
        shuffled = table.iloc[np.random.default_rng(seed).permutation(len(table))]
        p = propose_walltime(shuffled, "root", workload="tC_a", procs=2, partition="debug",
                             predictor_args={"n_estimators": 20})
        answers.add((p.time_s, p.point_s, p.coverage))
    assert len(answers) == 1
