"""propose_walltime heeds the user's jobs killed at their limit (TIMEOUT), says why a thin
history cannot teach run times, and names the request it calls new (s28 tester W: W1, W4,
W9, W12): a synthetic sacct-like history, as the tester's Slurm history had it."""

from __future__ import annotations

import re

import pandas as pd

from hpcds1mpi.decide.walltime import WalltimeProposal, propose_walltime
from tests.decide.test_walltime_same_name import SMALL, _history


def _with_kills(runs=(84.0, 79.0), limit=60.0) -> pd.DataFrame:
    """The 63 finished jobs of ``_history`` and two ``w_timeout`` jobs killed at ``limit``."""
    history = _history()
    last = history["end_time"].max()
    kills = [{"job_id": f"9{k}", "workload": "w_timeout", "user": "alice", "account": "alice",
              "partition": "debug", "req_procs": 1, "req_nodes": 1, "nodes": 1,
              "time_limit_s": limit, "runtime_s": run, "status": "timeout",
              "state_raw": "TIMEOUT", "submit_time": last,
              "start_time": last + pd.Timedelta(seconds=5),
              "end_time": last + pd.Timedelta(seconds=5 + run)} for k, run in enumerate(runs)]
    return pd.concat([history, pd.DataFrame(kills)], ignore_index=True)


def test_a_request_that_killed_the_users_jobs_of_that_name_is_not_proposed_unsaid():
    """Was: "--time 00:01:00 (28 s, under the request of 60 s; tight ...)" for a job whose two
    earlier runs of that name were killed at their 60-s limit after 84 s and 79 s."""
    p = propose_walltime(_with_kills(), "alice", workload="w_timeout", partition="debug",
                         procs=1, nodes=1, time_limit_s=60.0, predictor_args=SMALL)
    assert p.time_s == 60.0 and not p.tight  # not under the request: that only kills sooner
    assert p.killed is not None and p.killed.n == 2 and p.killed.run_s == 84.0
    lines = p.lines()
    assert "kept your request, though your 2 jobs named 'w_timeout' were killed at 60 s" \
        in lines[0] and "tight" not in lines[0]
    assert "(0 with this name; 2 more killed at their limit)" in lines[1]
    assert lines[-1].startswith("warning: your 2 jobs named 'w_timeout' were killed at 60 s")
    assert "ask for more, about 168 s (--time-limit 00:03:00)" in lines[-1]


def test_each_warning_asks_for_a_time_limit_that_time_limit_reads_as_meant():
    """s35 tester T5: "ask for about 88990 s (--time-limit)", and --time-limit reads a bare
    number as minutes: following it wrote --time=61-19:10:00. Each warning now gives the value
    in Slurm's form, whole minutes rounded up, which --time-limit reads as that time."""
    import re

    from hpcds1mpi.commands.recommend import _time_limit_s

    short = WalltimeProposal(5400.0, 0.95, point_s=84869.0, request_s=5400.0, n_history=100,
                             n_train=200, uncapped_s=88990.0)
    killed = propose_walltime(_with_kills(runs=(50000.0,), limit=43200.0), "alice",
                              workload="w_timeout", partition="debug", procs=1, nodes=1,
                              time_limit_s=43200.0, predictor_args=SMALL)
    lines = [short.lines()[-1], killed.lines()[-1]]
    assert lines[0].endswith("ask for about 88990 s (--time-limit 1-00:44:00)")
    for line, wanted in zip(lines, (88990.0, killed.killed.above())):
        given = re.search(r"about (\d+) s \(--time-limit (\S+)\)$", line)
        assert given, line
        asked = _time_limit_s(given.group(2))
        assert wanted <= asked < wanted + 60 and asked % 60 == 0, (line, asked)


def test_without_a_request_the_proposal_goes_above_the_longest_kill():
    # Kills longer than anything the model learned from (the user's runs take at most 4 s):
    # its own walltime stays under them. Within ten times those runs (R4: a kill with no
    # completed run like it is judged by all of the user's), so obeyed.
    p = propose_walltime(_with_kills(runs=(18.0, 16.0), limit=15.0), "alice",
                         workload="w_timeout", partition="debug", procs=1, nodes=1,
                         predictor_args=SMALL)
    assert p.killed is not None and p.time_s == 36.0 > p.killed_from_s
    assert "above the 15 s limit that killed your 2 jobs named 'w_timeout'" in p.lines()[0]
    assert not any(line.startswith("warning") for line in p.lines())


def test_a_request_above_the_kills_is_kept_and_no_kill_is_claimed():
    p = propose_walltime(_with_kills(), "alice", workload="w_timeout", partition="debug",
                         procs=1, nodes=1, time_limit_s=600.0, predictor_args=SMALL)
    assert p.time_s > 84.0 and "killed" not in " ".join(p.lines()[:1])


def test_a_history_too_thin_to_learn_from_says_why_and_is_no_error():
    """Was: DataError "the history has 0 finished jobs" for 1,200 COMPLETED jobs without start
    or end times, aborting the whole recommendation."""
    history = _history().head(26)
    timeless = _history().assign(start_time=pd.NaT, end_time=pd.NaT)
    p = propose_walltime(history, "alice", predictor_args=SMALL)
    assert p.time_s is None and "has 26 completed jobs with a known end, need at least 30" \
        in p.reason and "give a longer history" in p.reason
    q = propose_walltime(timeless, "alice", predictor_args=SMALL)
    assert q.time_s is None and "63 completed jobs have no start or end time" in q.reason
    assert q.lines() == [f"walltime: {q.reason}"]


def test_a_job_naming_no_partition_is_described_by_where_the_users_jobs_ran():
    """Was: recommend passed the machine's label 'local': every request looked new, "none of
    your finished jobs asked for this time, processors and partition" for 24 that had."""
    p = propose_walltime(_history(), "alice", workload="stencil", procs=1, nodes=1,
                         time_limit_s=120.0, predictor_args=SMALL)
    assert p.partition_guess == "debug" and not p.novel
    assert "partition taken as 'debug'" in p.lines()[1]
    new = propose_walltime(_history(), "alice", workload="stencil", procs=8, nodes=1,
                           time_limit_s=120.0, predictor_args=SMALL)
    if new.novel:  # the request named as it was asked, not a partition never given
        assert "asked for 120 s, 8 processors and partition 'debug'" in new.lines()[0]


def test_a_coverage_percentage_keeps_its_decimal():
    p = WalltimeProposal(3600.0, 0.999, None, 0, 10, 5, 1800.0, None, 1000, tight=True)
    assert "meant to cover about 99.9 % of such jobs" in p.lines()[0]
    assert "about 95 %" in WalltimeProposal(3600.0, 0.95, None, 0, 10, 5, 1800.0,
                                            None, 1000).lines()[0]


def test_kills_the_proposal_is_already_above_are_said_with_what_they_would_need():
    """s37 tester J11: with no request the same job got 637 s and no word of the user's 3
    jobs killed after 630 s (given its 600-s request: "ask for about 1260 s"). A proposal
    above such kills now says them, how far above it is, and the walltime above every kill."""
    p = propose_walltime(_with_kills(), "alice", workload="w_timeout", partition="debug",
                         procs=1, nodes=1, time_limit_s=600.0, predictor_args=SMALL)
    assert p.time_s > 84.0 and p.killed is None and p.killed_below is not None
    lines = p.lines()
    said = [line for line in lines if "killed at 60 s (TIMEOUT, after up to 84 s)" in line]
    assert len(said) == 1 and said[0].startswith("walltime: your 2 jobs named 'w_timeout' "
                                                 "were killed")
    assert said[0].endswith(f"{p.time_s - 84.0:.0f} s above, and above every kill is about "
                            "168 s (--time 00:03:00)")
    assert "2 more killed at their limit" in lines[1]


def test_a_few_kills_beside_many_runs_within_the_request_keep_it_said_not_doubled():
    """s45 tester C1: 3 kills at 7,200 s beside 2,790 of the user's runs within it (the
    README's Gaia ``recommend --history`` example), and 1 of 195, were "a limit of 7200 s will
    likely be killed too; ask for more, about 15122 s". The share killed now decides: within
    what a 95 % walltime may miss, the request stands and the kills are said; most held, how
    many did not; most killed, the old warning."""
    from hpcds1mpi.decide.walltime_evidence import Kills

    def lines(done, within):
        kills = Kills(3, 7200.0, 7561.0, "with this time limit", n_done=done,
                      longest_done_s=7199.0, n_within=within)
        return WalltimeProposal(7200.0, 0.95, request_s=7200.0, point_s=6608.0,
                                n_history=2802, n_train=41267, uncapped_s=9912.0, tight=False,
                                killed=kills).lines()

    few = lines(2790, 2790)
    assert "kept your request: 2790 of your 2793 jobs with this time limit ran within it, 3 " \
        "killed at 7200 s (TIMEOUT)" in few[0]
    assert few[-1] == ("walltime: 3 of your 2793 jobs with this time limit were killed at "
                       "7200 s (TIMEOUT, after up to 7561 s); 2790 ran within it (99.9 %), at "
                       "least the 95 % a walltime is meant to cover, so the request stands")
    assert not any(line.startswith("warning") or "about 15122 s" in line for line in few)
    some = lines(20, 17)  # 6 of 23 past it: more than 5 %, most within
    assert some[-1] == ("warning: 6 of your 23 jobs with this time limit did not finish within "
                        "7200 s (3 killed at 7200 s (TIMEOUT, after up to 7561 s)), more than "
                        "the 5 % a 95 % walltime may miss; ask for more, about 15122 s "
                        "(--time-limit 04:13:00)")
    for done, within in ((2, 2), (2790, None)):  # most killed; or no request to measure on
        assert lines(done, within)[-1].startswith(
            "warning: your 3 jobs with this time limit were killed at 7200 s (TIMEOUT, after "
            "up to 7561 s): a limit of 7200 s will likely be killed too; ask for more")
    # 19 jobs are too few to see a 95 % share at all
    assert lines(16, 16)[-1].startswith("warning: 3 of your 19 jobs with this time limit did "
                                        "not finish within 7200 s")


def test_the_kills_are_weighed_on_the_users_completed_runs_within_the_request():
    """s45 tester C1, end to end: 1 kill beside 30 runs of that name within the 60-s request
    is said, not doubled; ``Kills.n_within`` counts the runs within the request."""
    history = _within_then_killed(kills=(61.0,), n_done=30)
    p = propose_walltime(history, "alice", workload="w_timeout", partition="debug", procs=1,
                         nodes=1, time_limit_s=60.0, predictor_args=SMALL)
    assert p.time_s == 60.0 and p.killed is not None
    assert (p.killed.n, p.killed.n_done, p.killed.n_within) == (1, 30, 30)
    assert p.lines()[-1].startswith("walltime: 1 of your 31 jobs named 'w_timeout' was killed "
                                    "at 60 s (TIMEOUT, after up to 61 s); 30 ran within it")


def _within_then_killed(kills=(61.0, 62.0, 63.0), n_done=60) -> pd.DataFrame:
    """``_with_kills``'s kills at 60 s (the user's newest jobs named 'w_timeout') after
    ``n_done`` runs of that name within the 60-s request."""
    history = _with_kills(runs=kills, limit=60.0)
    kill = history.iloc[-1]
    done = []
    for k in range(n_done):  # ended, one after another, before the kills were submitted
        end = kill["submit_time"] - pd.Timedelta(seconds=60 * (n_done - k))
        run = 40.0 + k % 15
        done.append(kill.to_dict() | {
            "job_id": f"8{k}", "runtime_s": run, "status": "ok", "state_raw": "COMPLETED",
            "end_time": end, "start_time": end - pd.Timedelta(seconds=run),
            "submit_time": end - pd.Timedelta(seconds=run + 1)})
    return pd.concat([history, pd.DataFrame(done)], ignore_index=True)


def test_a_request_the_users_newest_jobs_were_killed_at_is_warned_of_not_said_to_stand():
    """s45 tester F5: 100 runs within the request, then the user's 5 newest jobs all killed
    at it, were "95.2 %, at least the 95 % a walltime is meant to cover, so the request
    stands" (and "100.0 % of the newest 10 history jobs were covered": the model's check
    counts completed jobs alone). The newest kills now weigh: the warning, with the ask."""
    p = propose_walltime(_within_then_killed(), "alice", workload="w_timeout",
                         partition="debug", procs=1, nodes=1, time_limit_s=60.0,
                         predictor_args=SMALL)
    assert p.time_s == 60.0 and p.killed is not None
    assert (p.killed.n, p.killed.n_within) == (3, 60)
    lines = p.lines()
    assert "kept your request, though your 3 jobs named 'w_timeout' were killed" in lines[0]
    assert re.search(r"% of the newest \d+ completed history jobs: [\d.]+ % of them were",
                     lines[0])
    assert lines[-1] == ("warning: your 3 newest jobs named 'w_timeout' were killed at 60 s "
                         "(TIMEOUT, after up to 63 s), too many of the newest for the few a "
                         "95 % walltime may miss (60 of your 63 ran within it): a limit of "
                         "60 s will likely be killed too; ask for more, about 126 s "
                         "(--time-limit 00:03:00)")
    assert not any("request stands" in line for line in lines)
    assert p.killed.kill_ranks == (0, 1, 2)  # the newest three


def test_kills_among_the_newest_weigh_only_where_so_many_are_unlikely_by_chance():
    """s45 tester F5, by the kills' places among the user's jobs (0: the newest): kills spread
    out, or one newest alone (the 5 % a 95 % walltime misses), leave the request standing; 5
    of the newest 20, or the 2 newest, do not. The model's check says what it counted."""
    from hpcds1mpi.decide.walltime_evidence import Kills

    def last(ranks):
        kills = Kills(len(ranks), 3600.0, 3630.0, "named 'sim'", n_done=100,
                      longest_done_s=3300.0, n_within=100, kill_ranks=ranks)
        return WalltimeProposal(3600.0, 0.95, request_s=3600.0, point_s=2914.0,
                                n_history=100, n_train=100, uncapped_s=3400.0, tight=False,
                                coverage=1.0, n_checked=10, killed=kills).lines()

    for ranks in ((0, 30, 50, 70, 90), (3, 25, 47, 60, 99), (0,)):
        assert last(ranks)[-1].endswith("so the request stands"), ranks
    assert last((1, 4, 9, 13, 19))[-1].startswith(
        "warning: 5 of your 20 newest jobs named 'sim' were killed at 3600 s")
    assert last((0, 1, 40, 60, 80))[-1].startswith(
        "warning: your 2 newest jobs named 'sim' were killed at 3600 s")
    assert "100.0 % of the newest 10 completed history jobs were covered" in last((0,))[0]


def test_without_a_request_a_few_kills_beside_many_runs_within_the_proposal_keep_it():
    """s46 (s45's left list): given no request, 1 kill beside 60 runs of that name within the
    proposal raised it to twice the kill (122 s), whatever the share killed; a request is kept
    so (s45 tester C1). The share now weighs the same way: said, not doubled."""
    history = _within_then_killed(kills=(61.0,), n_done=60)
    p = propose_walltime(history, "alice", workload="w_timeout", partition="debug", procs=1,
                         nodes=1, predictor_args=SMALL)
    assert p.killed is not None and p.killed_from_s is None and p.time_s < 61.0
    assert (p.killed.n, p.killed.n_done, p.killed.n_within) == (1, 60, 60)
    lines = p.lines()
    assert "not raised for kills: 60 of your 61 jobs named 'w_timeout' ran within it, 1 " \
        "killed at 60 s (TIMEOUT)" in lines[0]
    assert lines[-1].startswith("walltime: 1 of your 61 jobs named 'w_timeout' was killed at "
                                "60 s (TIMEOUT, after up to 61 s); 60 ran within it")
    assert lines[-1].endswith("so it is not raised above them")
    # the newest killed too often still raise it, as for a request (s45 tester F5)
    p = propose_walltime(_within_then_killed(), "alice", workload="w_timeout",
                         partition="debug", procs=1, nodes=1, predictor_args=SMALL)
    assert p.killed_from_s is not None and p.time_s == 126.0
