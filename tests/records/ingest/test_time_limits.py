"""The time limits of every kind of log: 0 is no limit (NA, noted), and a file whose completed
jobs mostly ran far past their limits is refused as being in another unit."""

from __future__ import annotations

import csv

import pandas as pd
import pytest

from hpcds1mpi.errors import IngestError
from hpcds1mpi.records.ingest import read_job_log
from hpcds1mpi.records.ingest.schema import FileReport
from hpcds1mpi.records.ingest.time_limits import MIN_JUDGED, check_time_limits
from tests.records.ingest.joblogs import EAGLE, needs_joblogs


def _jobs(n: int, runtime: float, limit: float, status: str = "ok") -> pd.DataFrame:
    return pd.DataFrame({"status": pd.array([status] * n, dtype="string"),
                         "runtime_s": [runtime] * n, "time_limit_s": [limit] * n})


def test_a_zero_limit_is_no_limit_noted_under_the_files_field():
    report = FileReport("x.parquet", "pm100")
    df = check_time_limits(_jobs(3, 50.0, 0.0), "x.parquet", "pm100", report)
    assert df["time_limit_s"].isna().all()
    assert dict(report.notes) == {"time_limit 0 (no limit): time_limit_s NA": 3}


@pytest.mark.parametrize("jobs, refused", [
    (_jobs(MIN_JUDGED, 60 * 100.0, 100.0), True),  # minutes read as seconds
    (_jobs(MIN_JUDGED - 1, 60 * 100.0, 100.0), False),  # too few to judge a unit on
    (_jobs(100, 1.5 * 100.0, 100.0), False),  # past the limit, as Theta's jobs (a grace time)
    (pd.concat([_jobs(10, 6000.0, 100.0), _jobs(10, 50.0, 100.0)]), False),  # half: not most
    (_jobs(100, 6000.0, 100.0, "timeout"), False),  # only completed jobs are judged
    (_jobs(100, 6000.0, float("nan")), False),
])
def test_most_completed_jobs_far_past_their_limit_is_refused(jobs, refused):
    report = FileReport("x.csv", "eagle")
    if not refused:
        assert len(check_time_limits(jobs, "x.csv", "eagle", report)) == len(jobs)
        return
    with pytest.raises(IngestError, match=r"x.csv: 20 of 20 completed jobs ran more than 2x "
                                          "their time limit, so wallclock_req cannot be in "
                                          "seconds, the unit this reader takes; convert it"):
        check_time_limits(jobs, "x.csv", "eagle", report)


@needs_joblogs
def test_eagle_with_its_wallclock_in_minutes_is_refused(tmp_path):
    """Read as seconds, 900 of its 985 completed jobs ran past twice their limit; it was read
    without a word, and every walltime baseline built on it was wrong."""
    with open(EAGLE, newline="") as fh:
        rows = list(csv.reader(fh))
    at = rows[0].index("wallclock_req")
    for row in rows[1:]:
        row[at] = str(int(float(row[at]) / 60))
    path = tmp_path / "eagle_minutes.csv"
    with open(path, "w", newline="") as fh:
        csv.writer(fh).writerows(rows)
    with pytest.raises(IngestError, match="900 of 985 completed jobs ran more than 2x their "
                                          "time limit, so wallclock_req cannot be in seconds"):
        read_job_log(path)
    df, _ = read_job_log(EAGLE)  # the file as published is read
    assert len(df) == 1000


def test_one_completed_job_far_past_its_limit_is_noted_not_refused():
    """s37 tester J8: a COMPLETED job at 10x its limit passed unremarked."""
    report = FileReport("x.txt", "sacct-p")
    jobs = pd.concat([_jobs(1, 600.0, 60.0), _jobs(30, 50.0, 100.0)], ignore_index=True)
    assert len(check_time_limits(jobs, "x.txt", "sacct-p", report)) == 31
    assert dict(report.notes) == {"completed job that ran more than 2x its time limit (the "
                                  "scheduler ends a job at its limit): its TimelimitRaw or "
                                  "Timelimit or run time is wrong": 1}
