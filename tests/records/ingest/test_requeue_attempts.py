"""A requeued job's attempts in one sacct file: ordered by their own times, each step the
attempt's whose run holds it, whatever the lines' order (s43 tester J1, J11)."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from hpcds1mpi.records.ingest import read_job_log

HEADER = "JobID|JobName|User|State|Submit|Start|End|ElapsedRaw|Timelimit|NNodes|NCPUS|MaxRSS|TotalCPU"
FIRST = "38|rq|root|{}|2026-12-07T01:49:59|2026-12-07T01:49:59|2026-12-07T01:50:02|3|01:00:00|1|1||00:02.000"
LAST = "38|rq|root|COMPLETED|2026-12-07T01:50:02|2026-12-07T01:52:11|2026-12-07T01:52:19|8|01:00:00|1|1||00:07.000"
FIRST_STEP = ("38.batch|batch||CANCELLED|2026-12-07T01:49:59|2026-12-07T01:49:59|"
              "2026-12-07T01:50:02|3||1|1|1024K|00:02.000")
LAST_STEP = ("38.batch|batch||COMPLETED|2026-12-07T01:52:11|2026-12-07T01:52:11|"
             "2026-12-07T01:52:19|8||1|1|51200K|00:07.000")


def _read(tmp_path, lines):
    path = tmp_path / "requeued.txt"
    path.write_text("\n".join([HEADER, *lines]) + "\n")
    return read_job_log(path)


@pytest.mark.parametrize("first_state", ["NODE_FAIL", "REQUEUED", "PREEMPTED", "FAILED"])
@pytest.mark.parametrize("newest_first", [False, True])
def test_the_last_attempt_by_its_times_is_the_job_whatever_the_order(tmp_path, first_state,
                                                                     newest_first):
    lines = [FIRST.format(first_state), LAST]
    table, report = _read(tmp_path, lines[::-1] if newest_first else lines)
    assert len(table) == 1
    assert (table.status[0], table.runtime_s[0]) == ("ok", 8.0)
    assert str(table.submit_time[0]) == "2026-12-07 01:49:59"  # the first submission
    assert report.notes["earlier attempt of a requeued job (the last attempt kept)"] == 1


@pytest.mark.parametrize("order", list(itertools.permutations(range(4))))
def test_each_step_is_its_own_attempts_in_any_order(tmp_path, order):
    lines = [FIRST.format("REQUEUED"), FIRST_STEP, LAST, LAST_STEP]
    table, report = _read(tmp_path, [lines[i] for i in order])
    assert table.peak_rss_mb[0] == 50.0
    assert not any("sacct -X" in fact for fact in report.facts)


def test_a_step_of_unknown_start_goes_with_the_job_line_before_it(tmp_path):
    unknown = lambda step: step.replace("|2026-12-07T01:49:59|2026-12-07T01:49:59|", "|Unknown|Unknown|").replace(  # noqa: E731
        "|2026-12-07T01:52:11|2026-12-07T01:52:11|", "|Unknown|Unknown|")
    table, _ = _read(tmp_path, [FIRST.format("REQUEUED"), unknown(FIRST_STEP), LAST,
                                unknown(LAST_STEP)])
    assert table.peak_rss_mb[0] == 50.0


#: Real: the test Slurm (22.05), `sbatch --requeue --wrap "sleep 30"`, `scontrol requeue` once
#: it ran, then `sacct -j ID --duplicates -P` while it ran again (s43 review R1).
RUNNING_AGAIN = Path(__file__).parent / "sacct_exports" / "s44-requeued-running-D-P.txt"
#: Another job of the same export's columns, ended, so that the file has a job to read.
ENDED = ("56620390|56620390|ok|root|root|debug|COMPLETED|00:00:05|5|00:05:00|5|"
         "2026-12-07T05:17:40|2026-12-07T05:17:41|2026-12-07T05:17:46|1||1|1|1|0:0||1000M|"
         "00:00.002")


@pytest.mark.parametrize("earlier_state", ["REQUEUED", "NODE_FAIL", "PREEMPTED", "FAILED"])
@pytest.mark.parametrize("newest", ["RUNNING", "PENDING"])
@pytest.mark.parametrize("reverse", [False, True])
def test_a_job_requeued_and_not_ended_again_is_not_its_ended_earlier_attempt(
        tmp_path, earlier_state, newest, reverse):
    """It had been stored as its earlier attempt (NODE_FAIL: failed, 10 s, ended at the
    requeue) under a note that the last attempt was kept; now it is a job not ended, counted
    so, as --json reads it."""
    from hpcds1mpi.records.ingest.slurm_fields import REQUEUED_AGAIN

    header, first, first_step, again, again_step = RUNNING_AGAIN.read_text().splitlines()
    first = first.replace("|REQUEUED|", f"|{earlier_state}|")
    again = again.replace("|RUNNING|", f"|{newest}|")
    lines = [first, first_step, again, again_step, ENDED]
    path = tmp_path / "export.txt"
    path.write_text("\n".join([header, *(lines[::-1] if reverse else lines)]) + "\n")
    table, report = read_job_log(path)
    assert list(table.job_id) == ["56620390"]
    assert report.dropped == {REQUEUED_AGAIN: 1}


#: Real (the test Slurm, sacct -D -P, s48 tester P): job 56663500's COMPLETED attempt, and its
#: earlier one made a NODE_FAIL of the same Submit second (a launch failure requeued at once).
SAME_SUBMIT_HEADER = ("JobID|JobName|User|State|ExitCode|Submit|Start|End|ElapsedRaw|"
                      "Timelimit|NNodes|NCPUS|MaxRSS|TotalCPU")
SAME_SUBMIT = [
    "56663500|requeueme|root|COMPLETED|0:0|2026-12-07T16:56:46|2026-12-07T16:59:12|"
    "2026-12-07T16:59:27|15|00:03:00|1|1||00:00.003",
    "56663500.batch|batch||COMPLETED|0:0|2026-12-07T16:59:12|2026-12-07T16:59:12|"
    "2026-12-07T16:59:27|15||1|1|3124K|00:00.003",
    "56663500|requeueme|root|NODE_FAIL|0:0|2026-12-07T16:56:46|2026-12-07T16:57:05|"
    "2026-12-07T16:57:10|5|00:03:00|1|1||00:00.002",
    "56663500.batch|batch||CANCELLED|0:15|2026-12-07T16:57:05|2026-12-07T16:57:05|"
    "2026-12-07T16:57:10|5||1|1|3220K|00:00.002",
]


@pytest.mark.parametrize("newest_first", [True, False])
def test_two_ended_attempts_of_one_submit_second_keep_the_later_run(tmp_path, newest_first):
    """s48 tester P17: the attempt listed last had been kept, called the same line again."""
    lines = SAME_SUBMIT if newest_first else SAME_SUBMIT[2:] + SAME_SUBMIT[:2]
    path = tmp_path / "same_submit.txt"
    path.write_text("\n".join([SAME_SUBMIT_HEADER, *lines]) + "\n")
    table, report = read_job_log(path)
    assert (table.status[0], table.runtime_s[0]) == ("ok", 15.0)
    assert table.peak_rss_mb[0] == pytest.approx(3124 / 1024)  # its own step's
    assert report.notes["earlier attempt of a requeued job (the last attempt kept)"] == 1
    assert not any(note.startswith("the same job line again") for note in report.notes)


def test_an_attempt_key_is_its_submit_unless_another_ended_run_holds_it():
    from hpcds1mpi.records.ingest.requeue_attempts import attempt_key

    header = SAME_SUBMIT_HEADER.split("|")
    done, _, node_fail, _ = (dict(zip(header, line.split("|"))) for line in SAME_SUBMIT)
    running = {**done, "State": "RUNNING", "End": "Unknown"}
    submit = done["Submit"]
    assert attempt_key({}, submit, done) == submit
    assert attempt_key({submit: (0, running)}, submit, done) == submit  # ended since
    assert attempt_key({submit: (0, done)}, submit, dict(done)) == submit  # given twice
    other = attempt_key({submit: (0, done)}, submit, node_fail)
    assert other != submit
    assert attempt_key({submit: (0, done), other: (2, node_fail)}, submit, node_fail) == other
