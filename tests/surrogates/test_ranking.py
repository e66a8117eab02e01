"""Problem-centred targets: the members learn the order within a problem, ProblemLevels puts
each problem's level back (interpolated in log size, flat beyond the ends, a fallback for an
unknown workload), and centring is skipped where problems have too few rows."""

from __future__ import annotations

import numpy as np
import pytest

from hpcds1mpi.surrogates.bundle import train_bundle
from hpcds1mpi.surrogates.ranking import ProblemLevels, centred_targets, problem_means
from tests.surrogates.test_bundle import make_runs


def test_problem_means_are_per_problem_and_skip_missing_values():
    y = np.array([1.0, 3.0, np.nan, 10.0, 20.0])
    groups = np.array([0, 0, 0, 1, 1])
    assert problem_means(y, groups).tolist() == [2.0, 2.0, 2.0, 15.0, 15.0]


def test_levels_interpolate_in_log_size_flat_beyond_the_ends_and_fall_back():
    codes = np.array([0, 0, 0, 1])
    sizes = np.log(np.array([10.0, 100.0, 100.0, 50.0]))
    levels = ProblemLevels.fit(codes, sizes, np.array([1.0, 3.0, 3.0, 7.0]))
    got = levels.predict(np.array([0, 0, 0, 0, 5]), np.log([10.0, np.sqrt(1000), 100.0,
                                                          1e6, 10.0]))
    assert got[:4] == pytest.approx([1.0, 2.0, 3.0, 3.0])
    assert got[4] == levels.fallback == pytest.approx(np.median([1.0, 3.0, 7.0]))
    # One problem (a System 1 grid) answers with the same value on every row.
    want = np.interp(np.log(50.0), np.log([10.0, 100.0]), [1.0, 3.0])
    assert levels.predict(np.zeros(5), np.full(5, np.log(50.0))) == pytest.approx([want] * 5)
    again = ProblemLevels.from_dict(levels.as_dict())
    assert again.predict(codes, sizes).tolist() == levels.predict(codes, sizes).tolist()


def test_centring_needs_several_rows_per_problem():
    groups = np.repeat(np.arange(10), 6)
    y = np.ones(60)
    assert centred_targets("auto", groups, {"runtime_s": y, "energy_j": y}) == [
        "runtime_s", "energy_j"]
    # A job log: every problem one row -> nothing centred (the members would learn zeros).
    assert centred_targets("auto", np.arange(60), {"runtime_s": y}) == []
    assert centred_targets((), groups, {"runtime_s": y}) == []


def test_a_centred_bundle_predicts_the_same_order_and_a_runtime_near_the_truth():
    runs = make_runs()
    centred = train_bundle(runs, n_members=3, use_embedding=False, threads=1, seed=0,
                           centre="auto")
    absolute = train_bundle(runs, n_members=3, use_embedding=False, threads=1, seed=0)
    assert set(centred.model.levels_) == {"runtime_s", "energy_j"} and not absolute.model.levels_
    assert centred.manifest["metrics"]["ranking"]["centred_targets"] == ["energy_j", "runtime_s"]
    ok = runs[runs["status"] == "ok"].reset_index(drop=True)
    pred = centred.predict(ok)
    # In sample, the runtime printed is a runtime (level + within-problem part), not a
    # centred score: within 25 % of the measured one on the median row.
    err = np.abs(pred["runtime_s"] / ok["runtime_s"] - 1)
    assert np.median(err) < 0.25
    # And each problem's best configuration is ranked first.
    for _, sub in ok.groupby(["workload", "size"]):
        p = centred.predict(sub.reset_index(drop=True))["runtime_s"].to_numpy()
        assert sub["runtime_s"].to_numpy()[np.argmin(p)] <= 1.15 * sub["runtime_s"].min()


def test_levels_go_with_the_row_not_the_table():
    """A table mixing problems gets each row's own level (not the first row's)."""
    runs = make_runs()
    b = train_bundle(runs, n_members=2, use_embedding=False, threads=1, centre="auto")
    ok = runs[runs["status"] == "ok"].reset_index(drop=True)
    together = b.predict(ok)["runtime_s"].to_numpy()
    alone = np.concatenate([b.predict(g.reset_index(drop=True))["runtime_s"].to_numpy()
                            for _, g in ok.groupby(["workload", "size"], sort=False)])
    order = np.concatenate([g.index.to_numpy() for _, g in ok.groupby(["workload", "size"],
                                                                        sort=False)])
    assert np.allclose(together[order], alone)


def test_each_workloads_noise_is_recorded_and_predicted_per_row(tmp_path):
    from hpcds1mpi.surrogates.bundle import load_bundle

    runs = make_runs()
    runs["noise"] = np.where(runs["workload"] == "gemm", 0.9, 0.1)
    b = train_bundle(runs, n_members=2, use_embedding=False, threads=1, centre="auto")
    assert b.model.noise_ == {"gemm": pytest.approx(0.9), "stencil": pytest.approx(0.1)}
    rows = runs.iloc[[0, len(runs) - 1]].reset_index(drop=True)
    again = load_bundle(b.save(tmp_path / "m"))
    # The centred targets' problem levels come back: the same runtimes as before the save.
    assert set(again.model.levels_) == set(b.model.levels_) == {"runtime_s", "energy_j"}
    assert np.array_equal(again.predict(rows)["runtime_s"], b.predict(rows)["runtime_s"])
    for bundle in (b, again):
        got = bundle.predict(rows)["runtime_noise"].to_numpy()
        want = [0.1 if w == "stencil" else 0.9 for w in rows["workload"]]
        assert got == pytest.approx(want)
    unknown = rows.assign(workload="never_seen")
    assert np.isnan(b.predict(unknown)["runtime_noise"]).all()


def test_near_best_rows_weigh_more_and_noisy_rows_less():
    from hpcds1mpi.surrogates.ranking import near_best_weights, noise_weights

    y = np.log(np.array([1.0, 10.0, 1000.0, np.nan, 2.0, 2.0]))
    w = near_best_weights(y, np.array([0, 0, 0, 0, 1, 1]), focus=1.0)
    assert w[0] == 1.0 and w[1] == pytest.approx(0.1) and w[2] == 0.05  # floored
    assert w[3] == 0.05 and w[4] == w[5] == 1.0
    frame = make_runs().head(3).assign(noise=[0.0, 1.0, np.nan])
    assert noise_weights(frame).tolist() == [1.0, 0.5, 1.0]


def test_focus_and_denoise_change_the_members_and_are_recorded():
    runs = make_runs()
    runs["noise"] = np.linspace(0, 3, len(runs))
    plain = train_bundle(runs, n_members=2, use_embedding=False, threads=1, centre="auto")
    both = train_bundle(runs, n_members=2, use_embedding=False, threads=1, focus=1.0,
                        denoise=True, centre="auto")
    assert both.manifest["metrics"]["ranking"] == {
        "centred_targets": ["energy_j", "runtime_s"], "focus": 1.0, "denoise": True,
        "size_neighbours": None}
    ok = runs[runs["status"] == "ok"].reset_index(drop=True)
    assert not np.allclose(plain.predict(ok)["runtime_s"], both.predict(ok)["runtime_s"])
