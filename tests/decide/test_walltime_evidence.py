"""The user's own jobs as a walltime proposal's evidence (``decide/walltime_evidence.py``), on
a made-up history that needs no real job log."""

from __future__ import annotations

import random

import pytest

from hpcds1mpi.decide.walltime import NOVEL, propose_walltime
from hpcds1mpi.records.ingest import read_job_log

SMALL = {"n_estimators": 40}


@pytest.fixture(scope="module")
def history(tmp_path_factory):
    """300 jobs: user 1's jobs named '3' all ask 7200 s, those named '5' 14400 s, each on
    partition 1 with 16, 32 or 64 processors (the s37 tester's P9 log)."""
    rng = random.Random(1)
    lines = ["; Version: 2.2", "; UnixStartTime: 1700000000", "; MaxNodes: 16",
             "; MaxProcs: 256"]
    t = 0
    for i in range(1, 301):
        t += rng.randint(100, 2000)
        user, exe = rng.choice([1, 1, 2, 3]), rng.choice([3, 3, 5])
        run = int(rng.lognormvariate(7, 0.4) if exe == 3 else rng.lognormvariate(8, 0.3))
        req, procs = (7200 if exe == 3 else 14400), rng.choice([16, 32, 64])
        lines.append(f"{i} {t} {rng.randint(0, 600)} {run} {procs} -1 -1 {procs} {req} -1 1 "
                     f"{user} 1 {exe} 1 1 -1 -1")
    path = tmp_path_factory.mktemp("swf") / "hist.swf"
    path.write_text("\n".join(lines) + "\n")
    return read_job_log(path)[0]


@pytest.mark.parametrize("name, request_s", [("3", 7200.0), ("5", 14400.0)])
def test_a_request_new_only_in_what_it_left_out_says_so_and_keeps_the_request_exactly(
        history, name, request_s):
    """s37 tester P9: without procs, "none of your finished jobs asked for 7200 s and
    partition '1'" where all 105 had, and time_s 7199.999999999996 for the kept request."""
    p = propose_walltime(history, "1", workload=name, time_limit_s=request_s, partition="1",
                         predictor_args=SMALL)
    assert p.novel and not p.tight  # the case this test is about: the request kept
    assert p.time_s == request_s
    assert NOVEL.format(what=f"{request_s:.0f} s and partition '1' with no processor count "
                             "(give the job's processor count to compare it with your jobs)"
                        ) in p.lines()[0]
    given = propose_walltime(history, "1", workload=name, time_limit_s=request_s,
                             partition="1", procs=16, predictor_args=SMALL)
    assert not given.novel and given.time_s < request_s


def test_a_few_runs_past_a_walltime_show_it_short_only_where_too_many():
    from hpcds1mpi.decide.walltime_evidence import shown_short

    assert shown_short(8, 11, 0.95) and shown_short(2, 2, 0.95)  # s39 tester C2's 58 s
    assert not shown_short(1, 11, 0.95) and not shown_short(0, 3, 0.95)
    assert not shown_short(1, 2, 0.95)  # one of two over is not yet proof
