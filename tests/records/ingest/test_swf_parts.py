"""An SWF job's partial-execution lines (status 2-4) folded into one job; a job number used
again far apart or by another user kept as another job (s38 tester C7)."""

from __future__ import annotations

import pandas as pd

from hpcds1mpi.records.ingest import read_job_log

HEAD = "; UnixStartTime: 1400000000\n; MaxProcs: 64\n"


def _line(job, submit, wait, run, status, user, procs=4, req=3600):
    return (f"{job} {submit} {wait} {run} {procs} -1 -1 {procs} {req} -1 {status} {user} 1 -1 1 1"
            " -1 -1\n")


def _read(tmp_path, *lines):
    path = tmp_path / "log.swf"
    path.write_text(HEAD + "".join(lines))
    return read_job_log(path)


def test_parts_fold_into_the_summary_line_wherever_it_comes(tmp_path):
    parts = [_line(1, 0, 10, 400, 2, 1), _line(1, 0, 500, 600, 3, 1)]
    summary = _line(1, 0, 10, 1000, 1, 1)
    other = _line(2, 50, 10, 300, 1, 2)
    for lines in ([summary, *parts, other], [*parts, summary, other]):
        df, report = _read(tmp_path, *lines)
        assert sum(report.dropped.values()) == 0, report.lines()
        assert report.notes["partial-execution line (status 2-4) of a job with a summary "
                            "line: folded into that job"] == 2
        one = df[df["job_id"] == "1"]
        assert len(one) == 1 and len(df) == 2
        assert one["runtime_s"].item() == 1000 and one["status"].item() == "ok"
        assert one["state_raw"].item() == "1 completed"


def test_a_job_of_parts_only_is_one_job_their_sum_and_last_status(tmp_path):
    for last, status in ((3, "ok"), (4, "failed"), (2, None)):
        df, report = _read(tmp_path, _line(7, 0, 500, 600, last, 1),
                           _line(7, 0, 10, 400, 2, 1), _line(8, 5, 1, 50, 1, 1))
        assert sum(report.dropped.values()) == 0, report.lines()
        job = df[df["job_id"] == "7"]
        assert len(job) == 1 and job["runtime_s"].item() == 1000
        assert job["wait_s"].item() == 10  # its first part's start
        if status:
            assert job["status"].item() == status
        else:  # "to be continued" as its last line: how it ended is not known
            assert job["status"].isna().all()
            assert job["state_raw"].item() == "2 partial execution, to be continued"
        assert any("without a summary line" in n for n in report.notes), report.lines()


def test_a_second_summary_line_is_still_a_duplicate(tmp_path):
    df, report = _read(tmp_path, _line(1, 0, 10, 100, 1, 1), _line(1, 20, 10, 90, 0, 1))
    assert dict(report.dropped) == {"duplicate job number": 1}
    assert list(df["runtime_s"]) == [100]


def test_a_number_reused_far_apart_or_by_another_user_is_another_job(tmp_path):
    df, report = _read(tmp_path, _line(1, 0, 10, 1000, 1, 1), _line(2, 50, 10, 300, 1, 2),
                       _line(1, 900000, 10, 50, 1, 3, procs=8, req=600),
                       _line(2, 900100, 10, 70, 0, 4, procs=8, req=600))
    assert sum(report.dropped.values()) == 0, report.lines()
    assert len(df) == 4 and list(df["user"]) == ["1", "2", "3", "4"]
    assert list(df["runtime_s"]) == [1000, 300, 50, 70]
    assert report.notes["job number used again by another job (another user, or submitted "
                        "more than 26 h apart): kept as a job of its own"] == 2


def test_two_jobs_of_parts_only_keep_their_own_sums(tmp_path):
    # s38 read-through: the parts' sums came out in job order while the kept lines were in
    # start order, so job 20 (started first) took job 10's sum and status, and job 10 job 20's.
    df, _ = _read(tmp_path, _line(10, 100, 10, 100, 2, 1), _line(10, 100, 200, 50, 3, 1),
                  _line(20, 0, 1, 7, 2, 2), _line(20, 0, 20, 8, 4, 2))
    ten, twenty = (df[df["job_id"] == j].iloc[0] for j in ("10", "20"))
    assert (ten["runtime_s"], ten["status"]) == (150, "ok")
    assert (twenty["runtime_s"], twenty["status"]) == (15, "failed")


def test_a_job_of_parts_only_ends_when_its_last_part_ends(tmp_path):
    # s48 tester P15: the folded job ended at its first start + the summed run (t = 605), so a
    # job submitted at t = 700 saw it finished; its last part ran from 500 to 800.
    df, report = _read(tmp_path, _line(7, 100, 5, 200, 2, 1), _line(7, 100, 400, 300, 3, 1))
    job = df.iloc[0]
    origin = pd.Timestamp(1400000000, unit="s")
    assert job["runtime_s"] == 500  # the sum of the parts, as before
    assert job["start_time"] == origin + pd.Timedelta(seconds=105)
    assert job["end_time"] == origin + pd.Timedelta(seconds=800)
    assert any("end and status from the last" in n for n in report.notes), report.lines()


def test_a_job_of_parts_with_an_unknown_time_or_overlapping_parts_ends_at_start_plus_run(
        tmp_path):
    # A part without a run time leaves the last end unknown; overlapping parts (a garbled log)
    # would end the job before it had run its summed time: both keep start + summed run.
    origin = pd.Timestamp(1400000000, unit="s")
    for second, end in ((_line(7, 100, 400, -1, 3, 1), 305),
                        (_line(7, 100, 50, 100, 3, 1), 405)):
        df, _ = _read(tmp_path, _line(7, 100, 5, 200, 2, 1), second)
        assert df.iloc[0]["end_time"] == origin + pd.Timedelta(seconds=end)
