"""Model families, targets, bootstrap over problems and the ensemble's spread."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from hpcds1mpi.errors import ModelError
from hpcds1mpi.surrogates.models import (FAMILIES, SurrogateModel, failure_labels,
                                         make_classifier, make_regressor, problem_groups,
                                         target_values)
from tests.surrogates.test_bundle import SMALL_TABNET, make_runs


def test_paper_hyperparameters():
    rf = make_regressor("rf")
    assert (rf.n_estimators, rf.max_depth) == (100, 10)
    for family in ("xgboost", "lightgbm"):
        m = make_regressor(family)
        assert (m.n_estimators, m.max_depth, m.learning_rate) == (100, 6, 0.1)
        assert make_classifier(family).n_estimators == 100
    with pytest.raises(ModelError, match="unknown model family"):
        make_regressor("svm")


def test_failure_labels_and_log_targets():
    status = pd.Series(["ok", "oom", "timeout", "failed", "unsupported", "wrong"])
    assert np.array_equal(failure_labels(status), [0, 1, 1, 1, np.nan, 1], equal_nan=True)
    frame = pd.DataFrame({"status": ["ok", "oom", "ok"], "runtime_s": [2.0, np.nan, 0.0]})
    y = target_values(frame, "runtime_s")
    assert y[0] == pytest.approx(np.log(2.0)) and np.isnan(y[1]) and np.isnan(y[2])


@pytest.mark.parametrize("family", FAMILIES)
def test_each_family_fits_an_ensemble_with_spread(family):
    frame = make_runs()
    model = SurrogateModel(family=family, n_members=3, use_embedding=family == "lightgbm",
                           embedding_params=SMALL_TABNET, threads=1).fit(frame)
    preds = model.predict_members(frame)
    assert preds["runtime_s"].shape == (3, len(frame))
    assert preds["failed"].shape == (3, len(frame))
    assert (preds["runtime_s"].std(axis=0) > 0).any()  # members differ
    ok = frame["status"] == "ok"
    truth = np.log(frame.loc[ok, "runtime_s"].to_numpy())
    guess = np.median(preds["runtime_s"], axis=0)[ok.to_numpy()]
    assert np.corrcoef(truth, guess)[0, 1] > 0.9


def test_capi_scorer_equals_xgboost_exactly():
    import pickle

    from hpcds1mpi.surrogates.models import XGBoostScorer, to_scorer

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 6))
    y = X[:, 0] + rng.normal(0, 0.1, 300)
    reg = make_regressor("xgboost", threads=1, n_estimators=10).fit(X, y)
    clf = make_classifier("xgboost", threads=1, n_estimators=10).fit(X, (y > 0).astype(int))
    Xt = rng.normal(size=(200, 6))
    Xt[5, 2] = np.nan  # missing values follow the trees' default direction, as in xgboost
    scorer = to_scorer(reg, classify=False)
    assert isinstance(scorer, XGBoostScorer)
    assert np.array_equal(scorer.predict(Xt), reg.predict(Xt).astype(np.float64))
    # a classifier: libxgboost's margins bit for bit, then forest.logistic (xgboost's own
    # vectorised expf differs from it in the last float32 bit now and then)
    from hpcds1mpi.surrogates.forest import logistic

    margins = clf.get_booster().inplace_predict(Xt, predict_type="margin")
    assert np.array_equal(to_scorer(clf, classify=True).predict(Xt), logistic(margins))
    assert np.abs(logistic(margins) - clf.predict_proba(Xt)[:, 1]).max() <= 6e-8
    again = pickle.loads(pickle.dumps(scorer))
    assert np.array_equal(again.predict(Xt), scorer.predict(Xt))


def test_bayesian_bootstrap_weights_whole_problems_and_keeps_every_one():
    from hpcds1mpi.surrogates.models import bootstrap_weights

    frame = make_runs()
    groups = problem_groups(frame)
    w = bootstrap_weights(groups, np.random.default_rng(0))
    assert w.shape == (len(frame),) and (w > 0).all()  # no problem left out
    assert w.mean() == pytest.approx(1.0)
    for g in np.unique(groups):  # one weight per problem
        assert np.ptp(w[groups == g]) == 0
    assert len(np.unique(np.round(w, 12))) > 1  # problems re-weighted differently


def test_tree_regions_scoring_is_exact():
    """Scoring one row per tree region gives the same numbers as scoring every row, including
    values equal to a split threshold and missing values; a model with unknown thresholds
    takes the plain path."""
    from hpcds1mpi.surrogates.models import (XGBoostScorer, merge_thresholds, to_scorer,
                                             tree_regions)

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


def test_knob_member_features_collapse_a_grid_and_match_plain_scoring():
    from hpcds1mpi.surrogates.models import KNOB_FEATURES

    frame = make_runs()
    model = SurrogateModel(family="xgboost", n_members=3, use_embedding=False, threads=1,
                           member_features=list(KNOB_FEATURES)).fit(frame)
    big = pd.concat([frame] * 30, ignore_index=True)
    big["ranks_per_node"] = np.resize(np.arange(1, 65), len(big))
    Z = model.design_matrix(big)
    preds, inverse, baseline = model.predict_regions(Z)
    assert inverse is not None and preds["runtime_s"].shape[1] < len(big) / 4
    grouped = model.predict_design(Z)
    model._thresholds_cache = None  # force the plain path
    plain = model.predict_design(Z)
    for target in plain:
        assert np.array_equal(grouped[target], plain[target])


def test_scorer_loads_on_one_global_thread_and_restores_the_setting():
    from hpcds1mpi.surrogates.models import XGBoostScorer, to_scorer

    rng = np.random.default_rng(0)
    X = rng.normal(size=(100, 3))
    scorer = to_scorer(make_regressor("xgboost", threads=1, n_estimators=5).fit(X, X[:, 0]),
                       False)
    before = XGBoostScorer._global_threads(None)
    XGBoostScorer._global_threads(3)
    try:
        again = XGBoostScorer(scorer.raw, False, scorer.thresholds)
        assert XGBoostScorer._global_threads(None) == 3  # the caller's setting is back
        assert np.array_equal(again.predict(X), scorer.predict(X))
    finally:
        XGBoostScorer._global_threads(before)
