"""Tree regions: one row per region scores exactly like every row."""

from __future__ import annotations

import numpy as np

from hpcds1mpi.surrogates.estimators import make_regressor
from hpcds1mpi.surrogates.regions import merge_thresholds, tree_regions
from hpcds1mpi.surrogates.xgboost_scorer import XGBoostScorer, to_scorer


def test_tree_regions_scoring_is_exact():
    """Scoring one row per tree region gives the same numbers as scoring every row, including
    values equal to a split threshold and missing values; a model with unknown thresholds
    takes the plain path."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(400, 5))
    X[:, 3] = rng.integers(0, 4, 400)  # a knob with few values
    y = X[:, 0] + np.sin(X[:, 1]) + 0.3 * X[:, 3]
    a = to_scorer(make_regressor("xgboost", threads=1, n_estimators=15).fit(X, y), False)
    b = to_scorer(make_regressor("xgboost", threads=1, n_estimators=7, seed=3).fit(X, -y),
                  False)
    thr = merge_thresholds([a.thresholds, b.thresholds])
    assert set(thr) <= set(range(5)) and all(np.all(np.diff(t) > 0) for t in thr.values())
    # A grid like System 1's: knobs on a coarse lattice, plus exact thresholds and NaN.
    grid = np.repeat(X[:50], 40, axis=0)
    grid[:, 3] = np.tile(np.arange(40), 50)  # mostly outside the trained range 0..3
    f0 = next(iter(thr))
    grid[::7, f0] = thr[f0][0]  # exactly on a threshold
    grid[::11, 2] = np.nan
    first, inverse = tree_regions(grid, thr)
    assert len(first) < len(grid) / 4  # the grid collapses
    assert np.array_equal(first, np.sort(first)) and np.array_equal(inverse[first],
                                                                    np.arange(len(first)))
    for scorer in (a, b):
        assert np.array_equal(scorer.predict(grid[first])[inverse], scorer.predict(grid))
    # Fault injection: a threshold left out merges rows the trees tell apart.
    broken = dict(thr)
    broken[f0] = thr[f0][1:]
    f_b, inv_b = tree_regions(grid, broken)
    assert not all(np.array_equal(s.predict(grid[f_b])[inv_b], s.predict(grid)) for s in (a, b))
    # Without thresholds (older bundles) the model scores every row.
    assert XGBoostScorer(a.raw, False).thresholds is None
