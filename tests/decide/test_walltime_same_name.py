"""propose_walltime measured on the user's own jobs of the same name: a synthetic sacct-like
history (no real job log needed), as a tester's Slurm history had it."""

from __future__ import annotations

import numpy as np
import pandas as pd

from hpcds1mpi.decide.walltime import propose_walltime

SMALL = {"n_estimators": 40}


def _history() -> pd.DataFrame:
    """63 finished jobs of one user on partition ``debug``: 40 named ``stencil`` (1 CPU, a
    120-s limit) that ran 1-4 s (23 of them longer than 2 s), 23 short ones of other names."""
    start = pd.Timestamp("2026-01-05 09:00:00")
    stencil = [1, 2, 3, 4, 3, 4, 2, 3] * 5
    rows = []
    for k, (name, run, limit) in enumerate(
            [("stencil", r, 120.0) for r in stencil] +
            [(f"other{k % 3}", 1 + k % 2, 180.0) for k in range(23)]):
        submit = start + pd.Timedelta(seconds=30 * k)
        rows.append({"job_id": str(1000 + k), "workload": name, "user": "alice",
                     "account": "alice", "partition": "debug", "req_procs": 1, "req_nodes": 1,
                     "nodes": 1, "time_limit_s": limit, "runtime_s": float(run),
                     "status": "ok", "state_raw": "COMPLETED", "submit_time": submit,
                     "start_time": submit + pd.Timedelta(seconds=1),
                     "end_time": submit + pd.Timedelta(seconds=1 + run)})
    return pd.DataFrame(rows)


def test_the_proposal_covers_what_it_says_of_the_users_jobs_of_that_name():
    """Was: recommend --history proposed 2 s "meant to cover about 95 % of such jobs" for a job
    whose 40 same-name jobs ran 1-4 s (23 longer than 2 s): the CLI described the job by the
    recommended layout and partition label, a request the history never saw."""
    history = _history()
    runs = history.loc[history["workload"] == "stencil", "runtime_s"].to_numpy()
    # The job as recommend describes it: a layout and a partition new to the history.
    p = propose_walltime(history, "alice", workload="stencil", partition="local", nodes=1,
                         procs=2, predictor_args=SMALL)
    assert p.time_s is not None and p.n_same_name == 40
    within = int(np.sum(runs <= p.time_s))
    assert within >= 0.95 * len(runs), (p.time_s, within)
    assert p.n_name_within == within
    line = p.lines()[0]
    assert f"{within} of your 40 finished jobs named 'stencil' ran within it" in line
    if p.model_s is not None:  # raised: the line says from what, and why
        assert f"raised from the model's {p.model_s:.0f} s" in line
        assert p.model_s < p.time_s


def test_a_request_shorter_than_the_users_jobs_is_kept_and_said_so():
    history = _history()
    p = propose_walltime(history, "alice", workload="stencil", partition="local", nodes=1,
                         procs=2, time_limit_s=2.0, predictor_args=SMALL)
    assert p.time_s <= 2.0
    assert p.n_name_within == int(np.sum(history.loc[history["workload"] == "stencil",
                                                     "runtime_s"] <= p.time_s))
    assert "tight: meant to cover about 95 %" not in p.lines()[0]


def test_no_job_of_that_name_makes_no_claim_about_one():
    p = propose_walltime(_history(), "alice", workload="never-ran", predictor_args=SMALL)
    assert p.time_s is not None and p.n_same_name == 0 and p.n_name_within is None
    assert "finished jobs named" not in p.lines()[0]


def test_a_request_most_named_jobs_ran_within_is_not_likely_killed():
    # s39 tester C4: "the job will likely be killed" beside "70 of your 75 finished jobs named
    # 'job_0209' ran within it": the model's word where the user's own jobs said otherwise.
    from hpcds1mpi.decide.walltime import WalltimeProposal

    p = WalltimeProposal(180.0, 0.95, 0.987, 152, 299, 75, 239.0, 180.0, 1515, uncapped_s=1027.0,
                         name="job_0209", n_name_within=70)
    assert p.lines()[-1] == (
        "warning: 5 of your 75 finished jobs named 'job_0209' ran longer than your request of "
        "180 s, and such a run is killed; the model, from the history's jobs like it, would ask "
        "for about 1027 s (--time-limit 00:18:00)")
    few = WalltimeProposal(180.0, 0.95, 0.987, 152, 299, 75, 239.0, 180.0, 1515,
                           uncapped_s=1027.0, name="job_0209", n_name_within=30)
    assert "the job will likely be killed" in few.lines()[-1]
