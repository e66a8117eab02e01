"""A requeued job's attempts in one sacct file: ordered by their own times, each step the
attempt's whose run holds it, whatever the lines' order (s43 tester J1, J11)."""

from __future__ import annotations

import itertools

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
