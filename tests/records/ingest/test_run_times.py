"""A job's run time checked against its end - start: longer is dropped and counted, shorter
(a suspended job) kept and noted, and a file whose run times are mostly end - start in another
unit refused, naming the column and the unit."""

from __future__ import annotations

import pandas as pd
import pytest

from hpcds1mpi.errors import IngestError
from hpcds1mpi.records.ingest import read_job_log, write_job_table
from hpcds1mpi.records.ingest.run_times import (LONGER, MIN_JUDGED, SHORTER, _unit_note,
                                                check_run_times)
from hpcds1mpi.records.ingest.schema import FileReport
from hpcds1mpi.records.ingest.table_rows import frame_history


def _jobs(n: int, span_s: float = 1506.0) -> pd.DataFrame:
    """``n`` completed jobs of ``span_s`` between start and end, their run time that span."""
    t0 = pd.Timestamp("2026-03-01 08:00")
    start = pd.Series([t0 + pd.Timedelta(minutes=30 * i) for i in range(n)])
    return pd.DataFrame({
        "job_id": [str(1000 + i) for i in range(n)], "user": "alice", "workload": "sim",
        "status": "ok", "runtime_s": span_s, "time_limit_s": 3600.0,
        "source_kind": "sacct-p", "source_file": "s1.txt", "submit_time": start,
        "start_time": start, "end_time": start + pd.Timedelta(seconds=span_s)})


def test_a_table_with_its_run_times_in_minutes_is_refused_naming_the_column(tmp_path):
    """s45 tester C4: runtime_s edited into minutes (25.1 beside 08:05:19-08:30:25) was read
    without a word, and a 25-minute job was proposed a 60-s walltime."""
    table = _jobs(MIN_JUDGED)
    table["runtime_s"] = (table["runtime_s"] / 60).round(1)
    path = write_job_table(table, tmp_path / "jt_min.csv")
    with pytest.raises(IngestError, match=r"jt_min.csv: 20 of 20 jobs have a run time 60x "
                                          r"shorter than the time between their start_time "
                                          r"and end_time, so runtime_s looks like minutes, "
                                          r"not the seconds .*; convert it to seconds"):
        read_job_log(path)
    with pytest.raises(IngestError, match="runtime_s looks like minutes"):
        frame_history(table)


@pytest.mark.parametrize("seconds, unit, way", [(3600.0, "hours", "shorter"),
                                                (0.001, "milliseconds", "longer")])
def test_run_times_in_hours_or_milliseconds_are_refused(seconds, unit, way):
    jobs = _jobs(MIN_JUDGED, span_s=4 * 3600.0)
    jobs["runtime_s"] = jobs["runtime_s"] / seconds
    with pytest.raises(IngestError, match=rf"{1 / seconds if seconds < 1 else seconds:g}x "
                                          rf"{way} .* ElapsedRaw or Elapsed looks like {unit}"):
        check_run_times(jobs, "x.txt", "sacct-p", FileReport("x.txt", "sacct-p"))


def test_a_longer_run_time_is_dropped_a_shorter_kept_and_both_counted():
    """A job cannot run longer than it was between start and end; a suspended one ran shorter
    (sacct's Elapsed leaves the suspended time out)."""
    jobs = _jobs(30)
    jobs.loc[1, "runtime_s"] = 2730.0  # longer than its 1506 s
    jobs.loc[2, "runtime_s"] = 330.0  # suspended, or wrong: kept
    jobs.loc[3, "runtime_s"] = 1506.0 / 60  # one job in minutes: not most, kept and noted
    jobs.loc[4, "runtime_s"] = 1507.5  # rounding
    report = FileReport("x.txt", "sacct-p")
    out = check_run_times(jobs, "x.txt", "sacct-p", report)
    assert len(out) == 29 and "1001" not in set(out["job_id"])
    assert dict(report.dropped) == {LONGER: 1}
    assert dict(report.notes) == {SHORTER: 1, _unit_note("minutes"): 1}


def test_real_logs_shapes_pass_untouched():
    """Jobs without a start or end, and whole-second times beside a rounded run time."""
    jobs = _jobs(MIN_JUDGED)
    jobs["runtime_s"] = jobs["runtime_s"] - 0.4
    jobs.loc[0, "end_time"] = pd.NaT
    jobs.loc[1, "runtime_s"] = float("nan")
    report = FileReport("x.txt", "sacct-p")
    assert len(check_run_times(jobs, "x.txt", "sacct-p", report)) == len(jobs)
    assert not report.dropped and not report.notes


def test_times_to_the_minute_allow_a_minute_of_rounding():
    """A spreadsheet re-save drops the seconds (test_job_tables.py): no job is wrong for it."""
    jobs = _jobs(MIN_JUDGED)
    for column in ("start_time", "end_time"):
        jobs[column] = jobs[column].dt.floor("min")
    report = FileReport("x.csv", "job-table")
    assert len(check_run_times(jobs, "x.csv", "job-table", report)) == len(jobs)
    assert not report.dropped and not report.notes
