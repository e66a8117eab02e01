"""The members' families with the paper's hyper-parameters."""

from __future__ import annotations

import pytest

from hpcds1mpi.errors import ModelError
from hpcds1mpi.surrogates.estimators import make_classifier, make_regressor, member_budget


def test_paper_hyperparameters():
    rf = make_regressor("rf")
    assert (rf.n_estimators, rf.max_depth) == (100, 10)
    for family in ("xgboost", "lightgbm"):
        m = make_regressor(family)
        assert (m.n_estimators, m.max_depth, m.learning_rate) == (100, 6, 0.1)
        assert make_classifier(family).n_estimators == 100
    with pytest.raises(ModelError, match="unknown model family"):
        make_regressor("svm")


def test_member_budget_keeps_the_total_step_unless_told_a_rate():
    assert member_budget(5) == (20, 0.5)  # 100 trees in all, the step capped at 0.5
    assert member_budget(5, 40) == (40, 0.25)
    assert member_budget(1) == (100, 0.1)
    assert member_budget(5, None, 0.25) == (20, 0.25)
    assert member_budget(5, 40, 0.1) == (40, 0.1)
