"""Targets of a runs table and the Bayesian bootstrap over problems."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from hpcds1mpi.surrogates.targets import (bootstrap_weights, failure_labels, problem_groups,
                                          target_values)
from tests.surrogates.test_bundle import make_runs


def test_failure_labels_and_log_targets():
    status = pd.Series(["ok", "oom", "failed", "unsupported", "wrong", "crashed"])
    assert np.array_equal(failure_labels(status), [0, 1, 1, np.nan, 1, 1], equal_nan=True)
    frame = pd.DataFrame({"status": ["ok", "oom", "ok"], "runtime_s": [2.0, np.nan, 0.0]})
    y = target_values(frame, "runtime_s")
    assert y[0] == pytest.approx(np.log(2.0)) and np.isnan(y[1]) and np.isnan(y[2])


def test_a_timeout_is_no_failure_label():
    """A run the sweep's --timeout cut short ran longer than the limit: the classifier learns
    nothing from it (NaN), as the measured failure evidence counts no timeout (s40 tester B12)."""
    labels = failure_labels(pd.Series(["ok", "timeout", "oom", "timeout"]))
    assert np.array_equal(labels, [0, np.nan, 1, np.nan], equal_nan=True)
    from hpcds1mpi.config import FAILED_TO_RUN, FAILURE_STATUSES

    assert FAILED_TO_RUN == FAILURE_STATUSES - {"timeout"}
    frame = pd.DataFrame({"status": ["timeout", "ok"], "runtime_s": [2.0, 1.5]})
    assert np.isnan(target_values(frame, "failed")[0])  # nor a runtime: decide.timed_out bounds it
    assert np.isnan(target_values(frame, "runtime_s")[0])


def test_bayesian_bootstrap_weights_whole_problems_and_keeps_every_one():
    frame = make_runs()
    groups = problem_groups(frame)
    w = bootstrap_weights(groups, np.random.default_rng(0))
    assert w.shape == (len(frame),) and (w > 0).all()  # no problem left out
    assert w.mean() == pytest.approx(1.0)
    for g in np.unique(groups):  # one weight per problem
        assert np.ptp(w[groups == g]) == 0
    assert len(np.unique(np.round(w, 12))) > 1  # problems re-weighted differently
