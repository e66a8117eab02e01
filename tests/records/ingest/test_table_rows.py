"""A job table's rows checked as a log's are: out-of-order times and copies of a job dropped
and counted, read from a file or given as a DataFrame."""

from __future__ import annotations

import pandas as pd
import pytest

from hpcds1mpi.errors import DataError
from hpcds1mpi.records.ingest import read_job_log, write_job_table
from hpcds1mpi.records.ingest.table_rows import COPY, frame_history


def _table(n: int = 6) -> pd.DataFrame:
    """``n`` finished jobs of two users, one a minute, as ingest writes a table."""
    t0 = pd.Timestamp("2024-05-01 08:00")
    table = pd.DataFrame({
        "job_id": [str(100 + i) for i in range(n)], "user": ["a", "b"] * (n // 2),
        "workload": "app", "status": "ok", "runtime_s": [60.0 * (i + 1) for i in range(n)],
        "time_limit_s": 3600.0, "source_kind": "sacct-p", "source_file": "jobs.txt",
        "submit_time": [t0 + pd.Timedelta(minutes=i) for i in range(n)]})
    table["start_time"] = table["submit_time"] + pd.Timedelta(seconds=5)
    table["end_time"] = table["start_time"] + pd.to_timedelta(table["runtime_s"], unit="s")
    return table


@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_a_table_with_every_job_twice_keeps_each_once(tmp_path, suffix):
    """Two overlapping tables joined were read as twice the jobs (s39 tester C7: the walltime
    halved, 1274 s -> 669 s, nothing said)."""
    table = _table()
    path = write_job_table(pd.concat([table, table]), tmp_path / f"twice{suffix}")
    back, report = read_job_log(path)
    assert len(back) == len(table) == report.jobs
    assert report.dropped[COPY] == len(table)
    assert sorted(back["job_id"]) == sorted(table["job_id"])


def test_the_copy_with_more_fields_known_is_kept():
    table = _table()
    poor = table.iloc[[0]].assign(time_limit_s=float("nan"))
    back, report = frame_history(pd.concat([poor, table]))
    assert len(back) == len(table) and report.dropped[COPY] == 1
    assert back.loc[back["job_id"] == "100", "time_limit_s"].iloc[0] == 3600.0


def test_distinct_jobs_under_one_id_and_jobs_without_id_are_kept():
    table = _table()
    other_user = table.iloc[[0]].assign(user="c")  # another cluster's job, one id
    later = table.iloc[[1]].assign(submit_time=table["submit_time"].iloc[1]
                                   + pd.Timedelta(days=30))  # an id reused
    later = later.assign(start_time=later["submit_time"], end_time=later["submit_time"]
                         + pd.Timedelta(minutes=2))  # its run time, 120 s (run_times.py)
    no_id = table.iloc[[2, 2]].assign(job_id=pd.NA)
    back, report = frame_history(pd.concat([table, other_user, later, no_id]))
    assert len(back) == len(table) + 4 and not report.dropped


@pytest.mark.parametrize("column, shift, reason", [
    ("end_time", "-5h", "End before Start"),  # s39 tester C8: 5 h before the submission
    ("start_time", "-1h", "wait_s negative"),  # start - submit, as the SWF reader counts it
])
def test_times_out_of_order_are_dropped_and_counted(tmp_path, column, shift, reason):
    table = _table()
    table.loc[[1, 3], column] = table.loc[[1, 3], "submit_time"] + pd.Timedelta(shift)
    back, report = read_job_log(write_job_table(table, tmp_path / "jobs.parquet"))
    assert len(back) == len(table) - 2 and report.dropped[reason] == 2
    framed, framed_report = frame_history(table)
    assert framed_report.dropped == report.dropped
    pd.testing.assert_frame_equal(framed.drop(columns="source_file"),
                                  back.drop(columns="source_file"))


def test_a_frame_gets_the_range_checks_of_a_file_in_one_error_type():
    """A run time of 10^12 s in a frame was pandas' OutOfBoundsTimedelta (s39 tester C8)."""
    table = _table().assign(end_time=pd.NaT)
    table.loc[0, "runtime_s"] = 1e12
    table.loc[1, "runtime_s"] = -5.0
    back, report = frame_history(table)
    assert len(back) == len(table) - 2
    assert sum(report.dropped.values()) == 2 and report.dropped["runtime_s negative"] == 1
    with pytest.raises(DataError, match="lacks runtime_s"):
        frame_history(table.drop(columns="runtime_s"))
    with pytest.raises(DataError, match="names its user"):
        frame_history(table.assign(user=""))
    with pytest.raises(DataError, match="no job of the 2 rows"):
        frame_history(table.iloc[:2])


def test_a_history_that_names_no_user_is_refused_alike_from_a_file_or_a_frame(tmp_path):
    """The one refusal of a history whose jobs name no user, read from a file
    (``read_job_table``) or given as a frame (``frame_history``)."""
    from hpcds1mpi.records.ingest.job_logs import read_job_table

    nameless = _table().assign(user="")
    path = write_job_table(nameless, tmp_path / "jobs.parquet")
    said = "no job in it names its user, so no job is anyone's history; give a log that " \
        "names users"
    with pytest.raises(DataError) as from_file:
        read_job_table(path, what="--history")
    with pytest.raises(DataError) as from_frame:
        frame_history(nameless)
    assert str(from_file.value) == f"--history {path}: {said}"
    assert str(from_frame.value) == f"history: {said}"
