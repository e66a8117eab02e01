"""XGBoost members scored through libxgboost's C API equal xgboost's own predictions."""

from __future__ import annotations

import numpy as np

from hpcds1mpi.surrogates.estimators import make_classifier, make_regressor
from hpcds1mpi.surrogates.xgboost_scorer import XGBoostScorer, to_scorer


def test_capi_scorer_equals_xgboost_exactly():
    import pickle

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


def test_scorer_loads_on_one_global_thread_and_restores_the_setting():
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
