"""Why no walltime is proposed for a user, said from what their history holds (s39 tester C1,
C3, C5: "no history for this user/job" for a user whose jobs were all killed at their limit,
all failed, or who is named in another form than the log's)."""

from __future__ import annotations

import pandas as pd
import pytest

from hpcds1mpi.decide.walltime import propose_walltime
from hpcds1mpi.decide.walltime_unproposed import no_user
from tests.decide.walltime_synthetic import history as synthetic

SMALL = {"n_estimators": 40}


@pytest.fixture(scope="module")
def history(tmp_path_factory):
    return synthetic(tmp_path_factory.mktemp("log") / "base.swf")


def test_a_user_killed_at_the_limit_every_time_is_warned_not_told_no_history(history):
    # Was: "no history for this user/job: cannot propose", and the script kept the 1,800-s
    # limit that had killed all 20 of the user's jobs.
    p = propose_walltime(history, "4", procs=2, time_limit_s=1800.0, predictor_args=SMALL)
    assert p.time_s is None and p.killed is not None and p.killed.n == 20
    reason, warning = p.lines()
    assert reason == ("walltime: the history has 20 jobs of user '4', none completed: 20 killed "
                      "at their time limit (TIMEOUT) after up to 1805 s; cannot propose from "
                      "runs that did not finish")
    assert warning == ("warning: your 20 jobs with this request were killed at 1800 s (TIMEOUT, "
                       "after up to 1805 s): a limit of 1800 s will likely be killed too; ask "
                       "for more, about 3610 s (--time-limit 01:01:00)")


def test_without_a_request_the_kills_of_jobs_like_it_are_said(history):
    p = propose_walltime(history, "4", procs=2, predictor_args=SMALL)
    assert p.lines()[-1] == ("warning: your 20 jobs with 2 processors were killed at 1800 s "
                             "(TIMEOUT, after up to 1805 s): a job like them needs more than "
                             "that; ask for about 3610 s (--time-limit 01:01:00)")
    # A request above the kills: said, not warned.
    above = propose_walltime(history, "4", procs=2, time_limit_s=7200.0, predictor_args=SMALL)
    assert above.killed is None and len(above.lines()) == 1


def test_a_user_whose_jobs_all_failed_is_told_so(history):
    p = propose_walltime(history, "5", time_limit_s=3600.0, predictor_args=SMALL)
    assert p.lines() == ["walltime: the history has 20 jobs of user '5', none completed: 20 "
                         "failed; cannot propose from runs that did not finish"]


def test_one_finished_job_and_kills_are_both_said(history):
    kills = history[history["user"] == "4"].head(2)
    extra = kills.assign(user="2", job_id=[f"{j}0000" for j in kills["job_id"]])
    p = propose_walltime(pd.concat([history, extra]), "2", predictor_args=SMALL)
    longest = kills["runtime_s"].max()
    assert p.reason == ("only 1 finished job of this user in the history by the submit time "
                        "(need at least 2): cannot propose; the user's other jobs: 2 killed at "
                        f"their time limit (TIMEOUT) after up to {longest:.0f} s")


def test_a_user_in_another_form_is_shown_the_logs_form(history):
    p = propose_walltime(history, "root", predictor_args=SMALL)
    assert p.reason.startswith("no user 'root' in this history: cannot propose; its 15 users "
                               "are named like '1'")
    assert "(numbers, as in SWF logs)" in p.reason and "give the user (--user)" in p.reason
    # A stray space is no other user.
    assert propose_walltime(history, " 1 ", predictor_args=SMALL).time_s is not None


def test_the_nearest_name_is_offered():
    table = pd.DataFrame({"user": ["user_0003"] * 3 + ["user_0171", "user_0037"]})
    assert "nearest: 'user_0171'" in no_user(table, "171")
    assert "nearest: 'user_0171'" in no_user(table, "User_0171")
    assert "(numbers" not in no_user(table, "171")
