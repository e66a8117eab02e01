"""A request the model calls short is checked on the user's own jobs first (s28 tester W5:
"your request is shorter than the 95 % walltime of 9912 s" for a Gaia user 2,790 of whose
2,802 jobs ran within it)."""

from __future__ import annotations

import numpy as np
import pytest

from hpcds1mpi.decide.walltime import propose_walltime
from tests.decide.test_walltime import SMALL, history  # noqa: F401 (fixture: a Gaia slice)
from tests.records.ingest.joblogs import needs_joblogs

pytestmark = needs_joblogs


def test_a_request_the_users_like_jobs_finished_within_is_not_called_short(history):  # noqa: F811
    # User 7 of the slice: 188 finished jobs asked 960 s; the model alone asks far more.
    ok = history[(history["user"] == "7") & (history["status"] == "ok")]
    like = ok.loc[ok["time_limit_s"] == 960.0, "runtime_s"].to_numpy()
    assert len(like) >= 20
    p = propose_walltime(history, "7", time_limit_s=960.0, predictor_args=SMALL)
    assert p.short_request() and p.uncapped_s > 960.0  # the case this test is about
    within = int(np.sum(like <= 960.0 * (1 + 1e-9)))
    assert within >= 0.95 * len(like)
    assert (p.n_user_within, p.n_like) == (within, len(like))
    line = p.lines()[0]
    assert "your request is shorter than" not in line
    assert f"{within} of your {len(like)} finished jobs with this request ran within it" in line
    assert not any(ln.startswith("warning: your request of") for ln in p.lines())


def test_a_request_the_users_jobs_outran_is_still_called_short(history):  # noqa: F811
    free = propose_walltime(history, "7", predictor_args=SMALL)
    short = free.point_s / 4
    p = propose_walltime(history, "7", time_limit_s=short, predictor_args=SMALL)
    if p.tight and p.short_request() and not p.own_jobs_fit():
        assert "your request is shorter than the 95 % walltime" in p.lines()[0]
    assert not p.own_jobs_fit() or p.n_user_within >= 0.95 * p.n_like
    assert pytest.approx(short) == p.time_s
