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
                                        "log_spread, margin_ratio, log_noise"}
    # Without any noise recorded only spread and margin are fitted.
    res = calibrate(spread, margin, good, np.full(n, 0.5), np.full(n, np.nan))
    assert res["inputs"] == ["log_spread", "margin_ratio"] and len(res["coef"]) == 3
    assert 0.2 < res["auroc_calibrated_crossfit"] < 0.8


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
    assert res["auroc_nested_crossfit"] < res["auroc_calibrated_crossfit"]
