"""The confidence calibration keeps the feature set that separates good picks better held out,
and reports both."""

from __future__ import annotations

import numpy as np
import pytest

from hpcds1mpi.analysis.system1_confidence import calibrate

pytest.importorskip("sklearn")


def test_noise_is_kept_when_it_tells_good_picks_from_bad():
    rng = np.random.default_rng(0)
    n = 80
    good = rng.random(n) < 0.5
    spread, margin = rng.uniform(0.05, 0.5, n), rng.uniform(0.0, 0.3, n)  # uninformative
    noise = np.where(good, 0.1, 2.0) * rng.uniform(0.8, 1.2, n)
    res = calibrate(spread, margin, good, np.full(n, 0.5), noise)
    assert res["features"].endswith("log workload noise") and len(res["coef"]) == 4
    assert res["auroc_calibrated_crossfit"] > 0.9
    assert set(res["feature_sets"]) == {"log spread, margin / spread",
                                        "log spread, margin / spread, log workload noise"}
    # Without any noise recorded only spread and margin are fitted.
    res = calibrate(spread, margin, good, np.full(n, 0.5), np.full(n, np.nan))
    assert res["features"] == "log spread, margin / spread" and len(res["coef"]) == 3
    assert 0.2 < res["auroc_calibrated_crossfit"] < 0.8
