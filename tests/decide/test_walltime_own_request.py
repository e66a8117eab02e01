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


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    from tests.decide.walltime_synthetic import history as write

    return write(tmp_path_factory.mktemp("log") / "base.swf")


@pytest.mark.parametrize("user, model_s, procs, like", [
    ("1", 550.0, 2, "with this request"), ("3", 58.0, 2, "with this request"),
    ("3", 58.0, 4, "with this time limit")])  # a request new to the user: its time limit
def test_a_tight_proposal_under_the_request_is_checked_on_the_users_jobs_with_it(
        synthetic, monkeypatch, user, model_s, procs, like):
    # s39 tester C2: "--time 00:24:00 (1425 s, under the request of 86400 s; tight: about 95 %
    # of such jobs finished within it ...)" where 994 of the user's 1,309 jobs with that request
    # had run within it (and 118 of the next 147); user 375's 58 s, where 8 of their 11 jobs
    # with that request had run longer. Whatever the model says, the user's jobs check it.
    from hpcds1mpi.surrogates.job_runtime import RuntimePredictor

    monkeypatch.setattr(RuntimePredictor, "walltime_tight", lambda self, f: (
        np.full(len(f), model_s), np.ones(len(f), bool)))
    ok = synthetic[(synthetic["user"] == user) & (synthetic["status"] == "ok")]
    runs = ok["runtime_s"].to_numpy()
    p = propose_walltime(synthetic, user, procs=procs, time_limit_s=3600.0,
                         predictor_args=SMALL)
    assert p.tight and p.model_s == model_s and p.time_s < 3600.0
    assert p.time_s == float(np.quantile(runs, 0.95, method="higher"))
    within = int(np.sum(runs <= p.time_s))
    assert (p.n_user_within, p.n_like) == (within, len(runs)) and within >= 0.95 * len(runs)
    line = p.lines()[0]
    assert "tight: about 95 % of such jobs finished within it" not in line
    assert (f"raised from the model's {model_s:.0f} s to cover 95 % of your {len(runs)} "
            f"finished jobs {like}") in line
    assert f"; {within} of your {len(runs)} finished jobs {like} ran within it" in line


def test_a_tight_proposal_the_users_jobs_hold_says_how_many(synthetic):
    p = propose_walltime(synthetic, "1", procs=2, time_limit_s=3600.0, predictor_args=SMALL)
    runs = synthetic.loc[(synthetic["user"] == "1") & (synthetic["status"] == "ok"), "runtime_s"]
    assert p.tight and p.time_s < 3600.0 and p.model_s is None
    within = int(np.sum(runs.to_numpy() <= p.time_s))
    assert f"{within} of your {len(runs)} finished jobs with this request ran within it" \
        in p.lines()[0]
