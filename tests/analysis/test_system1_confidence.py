"""The confidence calibration keeps the input set that separates good picks better held out,
and reports every set it tried."""

from __future__ import annotations

import numpy as np
import pytest

from hpcds1mpi.analysis.system1_confidence import calibrate

pytest.importorskip("sklearn")


def _uninformative(n, rng):
    return rng.uniform(0.05, 0.5, n), rng.uniform(0.0, 0.3, n)


def test_noise_is_kept_when_it_tells_good_picks_from_bad():
    rng = np.random.default_rng(0)
    n = 80
    good = rng.random(n) < 0.5
    spread, margin = _uninformative(n, rng)
    noise = np.where(good, 0.1, 2.0) * rng.uniform(0.8, 1.2, n)
    res = calibrate(spread, margin, good, np.full(n, 0.5), noise)
    assert res["inputs"] == ["log_spread", "margin_ratio", "log_noise"]
    assert len(res["coef"]) == 4 and res["auroc_calibrated_crossfit"] > 0.9
    # Without a measured-best share offered, the sets that need it are not tried.
    assert set(res["feature_sets"]) == {"log_spread, margin_ratio",
                                        "log_spread, margin_ratio, log_noise", "uncalibrated_z"}
    # Without any noise recorded the sets that read it are not tried, and no set separates.
    res = calibrate(spread, margin, good, np.full(n, 0.5), np.full(n, np.nan))
    assert "log_noise" not in res["inputs"] and len(res["coef"]) == len(res["inputs"]) + 1
    assert set(res["feature_sets"]) == {"log_spread, margin_ratio", "uncalibrated_z"}
    assert 0.2 < res["auroc_calibrated_crossfit"] < 0.8
    assert 0.2 < res["auroc_nested_leave_pair_out"] < 0.8


def test_the_measured_best_share_is_kept_when_it_tells_good_picks_from_bad():
    rng = np.random.default_rng(1)
    n = 80
    good = rng.random(n) < 0.5
    spread, margin = _uninformative(n, rng)
    # Good picks were mostly the measured best around; bad ones rarely.
    share = np.where(good, rng.choice([0.5, 1.0], n), rng.choice([0.0, 0.0, 0.5], n))
    res = calibrate(spread, margin, good, np.full(n, 0.5), np.full(n, np.nan), share)
    assert "measured_best_share" in res["inputs"] and res["auroc_calibrated_crossfit"] > 0.8
    assert res["auroc_nested_crossfit"] > 0.8  # the choice of set made held out too
    assert len(res["coef"]) == len(res["inputs"]) + 1
    assert "log_margin, measured_best_share" in res["feature_sets"]
    assert res["crossfit_draws"] >= 5
    # The same share, shuffled (no information): the plain set is not beaten by much.
    res = calibrate(spread, margin, good, np.full(n, 0.5), np.full(n, np.nan),
                    rng.permutation(share))
    assert res["auroc_calibrated_crossfit"] < 0.75
    # Best of several sets scored on the picks that chose it flatters; held out it does not.
    assert res["auroc_nested_leave_pair_out"] < res["auroc_leave_pair_out"]


def test_leave_pair_out_reads_a_monotone_input_where_pooled_folds_do_not():
    """s41: 4 bad picks in 72 whose one input ranks them all last. Pooling five fold models'
    probabilities (each its own intercept) scrambled that order; leaving out one good and one
    bad pick at a time keeps it."""
    from hpcds1mpi.analysis.system1_confidence import leave_pair_out_auroc

    rng = np.random.default_rng(3)
    n = 72
    good = np.ones(n, bool)
    good[:4] = False
    x = np.where(good, rng.uniform(0.3, 3.0, n), rng.uniform(0.0, 0.25, n))[:, None]
    assert leave_pair_out_auroc(x, good) == 1.0
    assert leave_pair_out_auroc(rng.permutation(x), good) < 0.9  # no information, no order


def test_the_logistic_fit_is_sklearns_optimum():
    from sklearn.linear_model import LogisticRegression

    from hpcds1mpi.analysis.system1_confidence import _fit_logistic

    rng = np.random.default_rng(4)
    X = rng.normal(size=(60, 2)) * [2.0, 0.5]
    y = rng.random(60) < 0.8
    ours, theirs = _fit_logistic(X, y), LogisticRegression(C=1.0, tol=1e-10).fit(X, y)
    assert np.allclose(ours.coef_, theirs.coef_, atol=1e-4)
    assert np.allclose(ours.intercept_, theirs.intercept_, atol=1e-4)
    assert _fit_logistic(X, np.ones(60, bool)) is None
