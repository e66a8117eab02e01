"""Intelligent sampling: hits the requested rate and keeps hard samples more often."""

from __future__ import annotations

import numpy as np
import pytest

from hpcds1mpi.surrogates.sampling import intelligent_sample, keep_probabilities


def hard_and_easy(n=3000, seed=0):
    """Half the samples have a noiseless target (easy), half a very noisy one (hard)."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 1, size=(n, 4))
    hard = X[:, 0] > 0.5
    y = 2.0 * X[:, 1] + np.where(hard, rng.normal(0, 1.0, n), 0.0)
    fail = (rng.uniform(size=n) < np.where(hard, 0.5, 0.0)).astype(float)
    return X, y, fail, hard


@pytest.mark.parametrize("rate", [0.5, 0.75])
def test_rate_within_two_percent_and_recorded(rate):
    X, y, fail, _ = hard_and_easy()
    keep, rec = intelligent_sample(X, {"runtime": (y, "regression"),
                                       "failed": (fail, "classification")}, rate, seed=3)
    assert abs(keep.mean() - rate) <= 0.02
    assert rec.achieved_rate == pytest.approx(keep.mean())
    assert abs(rec.expected_rate - rate) < 1e-6
    assert rec.seed == 3 and rec.n_total == len(X) and rec.n_kept == keep.sum()


def test_hard_samples_kept_more_often_than_easy():
    X, y, fail, hard = hard_and_easy()
    keep, _ = intelligent_sample(X, {"runtime": (y, "regression")}, 0.5, seed=1)
    assert keep[hard].mean() > keep[~hard].mean() + 0.2


def test_classification_difficulty_drives_keeps():
    X, _, fail, hard = hard_and_easy()
    keep, _ = intelligent_sample(X, {"failed": (fail, "classification")}, 0.5, seed=2)
    assert keep[hard].mean() > keep[~hard].mean() + 0.2


def test_full_rate_keeps_everything_and_same_seed_same_draw():
    X, y, _, _ = hard_and_easy(500)
    keep, rec = intelligent_sample(X, {"runtime": (y, "regression")}, 1.0)
    assert keep.all() and rec.achieved_rate == 1.0
    a, _ = intelligent_sample(X, {"runtime": (y, "regression")}, 0.75, seed=5)
    b, _ = intelligent_sample(X, {"runtime": (y, "regression")}, 0.75, seed=5)
    assert (a == b).all()


def test_keep_probability_is_linear_clipped_with_floor():
    d = np.array([0.0, 0.1, 1.0, 5.0, 100.0])
    p, scale, _ = keep_probabilities(d, 0.5, floor=0.05)
    assert p.mean() == pytest.approx(0.5, abs=1e-6)
    assert p[0] == 0.05 and p[-1] == 1.0
    mid = (p > 0.05) & (p < 1.0)
    assert np.allclose(p[mid], scale * d[mid])


def test_light_predictor_on_a_subset_still_scores_every_row_and_finds_the_hard_ones():
    """Each fold's light predictor fits at most ``max_rows`` rows (big job tables); every row
    still gets an out-of-fold difficulty, and hard rows still score higher."""
    from hpcds1mpi.surrogates.sampling import difficulty

    X, y, fail, hard = hard_and_easy()
    for target, kind in ((y, "regression"), (fail, "classification")):
        d = difficulty(X, target, kind, seed=0, max_rows=300)
        assert np.isfinite(d).all()
        assert d[hard].mean() > 2 * d[~hard].mean()
    # the subset is really smaller: a predictor on 300 rows misses more than on 2000
    full = difficulty(X, y, "regression", seed=0)
    small = difficulty(X, y, "regression", seed=0, max_rows=300)
    assert not np.allclose(full, small) and small[~hard].mean() > full[~hard].mean()
