"""The compiled forest scores exactly as libxgboost, and the bundle uses it for big tables."""

from __future__ import annotations

import numpy as np
import pytest

from hpcds1mpi.runtime import jit
from hpcds1mpi.surrogates.estimators import make_classifier, make_regressor
from hpcds1mpi.surrogates.xgboost_scorer import to_scorer

pytest.importorskip("numba")


def _models():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 7))
    X[:, 4] = rng.integers(0, 3, 600)
    X[rng.random(600) < 0.1, 2] = np.nan  # trained with missing values: learned directions
    y = X[:, 0] + np.sin(3 * X[:, 1]) + np.nan_to_num(X[:, 2]) * X[:, 4]
    # max depth 6, but most trees end some branches early (leaves at several depths)
    reg = to_scorer(make_regressor("xgboost", threads=1, n_estimators=12).fit(X, y), False)
    clf = to_scorer(make_classifier("xgboost", threads=1, n_estimators=9).fit(
        X, (y > 0.5).astype(int)), True)
    Xt = rng.normal(size=(3000, 7))
    Xt[:, 4] = rng.integers(0, 3, 3000)
    return reg, clf, Xt


@pytest.fixture(scope="module")
def models():
    return _models()


def test_forest_equals_libxgboost(models):
    from hpcds1mpi.surrogates.forest import Forest

    reg, clf, Xt = models
    forest = Forest([reg.json_model(), clf.json_model()])
    leaves_per_tree = (np.diff(forest.leaf, axis=1) != 0).sum(axis=1) + 1
    assert forest.depth == 6 and leaves_per_tree.min() < 2 ** 6  # padded leaves exist
    on_split = forest.threshold[forest.feature == 0]
    on_split = on_split[np.isfinite(on_split)]
    for missing in (False, True):
        X = Xt.copy()
        X[::3, 0] = on_split[np.arange(len(X[::3])) % len(on_split)]  # exactly on a split
        if missing:
            X[::5, 2] = np.nan
            X[::7, 0] = np.nan
        X32 = np.ascontiguousarray(X, dtype=np.float32)
        got = forest.finish(forest.margins(X32))
        assert np.array_equal(got[0], reg.predict(X))  # regression: bit for bit
        assert np.array_equal(got[1], clf.predict(X))
        # a block of rows scored alone gives the same numbers as inside the whole
        part = forest.finish(forest.margins(X32, 100, 1100))
        assert np.array_equal(part, got[:, 100:1100])


def test_forest_follows_the_default_direction_of_missing_values(models):
    """Fault injection: every default direction flipped changes the rows with NaN only."""
    from hpcds1mpi.surrogates.forest import Forest

    reg, _, Xt = models
    X = Xt.copy()
    X[::5, 2] = np.nan
    X32 = np.ascontiguousarray(X, dtype=np.float32)
    forest = Forest([reg.json_model()])
    flipped = Forest([reg.json_model()])
    flipped.default_left = 1 - flipped.default_left
    a, b = forest.margins(X32)[0], flipped.margins(X32)[0]
    nan_rows = np.isnan(X[:, 2])
    assert np.array_equal(a[~nan_rows], b[~nan_rows]) and not np.array_equal(a, b)
    assert np.array_equal(a, reg.predict(X).astype(np.float32))


def test_forest_refuses_what_it_does_not_reproduce(models):
    from hpcds1mpi.surrogates.forest import Forest

    reg, _, _ = models
    model = reg.json_model()
    model["learner"]["objective"]["name"] = "reg:pseudohubererror"
    with pytest.raises(ValueError, match="objective"):
        Forest([model])


def test_bundle_scores_big_tables_through_the_forest_with_the_same_numbers(monkeypatch):
    from hpcds1mpi.surrogates import models as M
    from tests.surrogates.test_models import make_runs

    frame = make_runs()
    model = M.SurrogateModel(family="xgboost", n_members=3, use_embedding=False,
                             threads=1).fit(frame)
    big = frame.sample(M.FOREST_MIN_ROWS + 500, replace=True, random_state=0)
    big = big.assign(size=big["size"] * np.random.default_rng(0).uniform(0.5, 2, len(big)))
    Z = model.design_matrix(big)
    model._thresholds_cache = None  # every row scored (no region grouping)
    calls = []
    real = M.forest_predict
    monkeypatch.setattr(M, "forest_predict", lambda *a: calls.append(1) or real(*a))
    fast = model.predict_design(Z)
    assert calls, "the compiled forest was not used"
    monkeypatch.setenv(jit.NO_JIT_ENV, "1")
    model.__dict__.pop("_forest_cache", None)
    plain = model.predict_design(Z)
    assert len(calls) == 1  # libxgboost this time
    for target in plain:
        assert np.array_equal(fast[target], plain[target]), target


def test_small_tables_go_through_the_forest_only_once_it_is_warm(monkeypatch):
    """A cold process scores a few rows through libxgboost (no numba import); once the forest
    is laid out and compiled (``warm_forest``, as the service does at start) every table goes
    through it, with the same numbers."""
    from hpcds1mpi.surrogates import models as M
    from tests.surrogates.test_models import make_runs

    frame = make_runs()
    model = M.SurrogateModel(family="xgboost", n_members=3, use_embedding=False,
                             threads=1).fit(frame)
    Z = model.design_matrix(frame.head(18))
    calls = []
    real = M.forest_predict
    monkeypatch.setattr(M, "forest_predict", lambda *a: calls.append(1) or real(*a))
    cold = model.predict_design(Z)
    assert not calls, "a cold model paid for the forest on 18 rows"
    assert model.warm_forest()
    warm = model.predict_design(Z)
    assert calls, "a warm model did not score through the forest"
    for target in cold:
        assert np.array_equal(cold[target], warm[target]), target
    monkeypatch.setenv(jit.NO_JIT_ENV, "1")
    other = M.SurrogateModel(family="xgboost", n_members=3, use_embedding=False,
                             threads=1).fit(frame)
    assert not other.warm_forest()  # no numba: nothing to warm, libxgboost as before
