"""The NREL Eagle CSV: requested resources, array tasks kept apart, bad rows counted."""

from __future__ import annotations

import csv

import pandas as pd
import pytest

from hpcds1mpi.errors import IngestError
from hpcds1mpi.records.ingest import detect_kind, read_job_log
from tests.records.ingest.joblogs import EAGLE, needs_joblogs

pytestmark = needs_joblogs


def test_whole_sample():
    assert detect_kind(EAGLE) == "eagle"
    df, report = read_job_log(EAGLE)
    assert len(df) == report.records == 1000 and sum(report.dropped.values()) == 0
    assert df["status"].value_counts().to_dict() == {"ok": 985, "timeout": 15}
    assert df["job_id"].is_unique
    array = df[df["job_id"].str.startswith("532939_")]
    assert len(array) == 452 and set(array["user"]) == {"user0025"}
    # 532209,user0014,account0003,partition001,normal,172800.0,10,10,0,0.0,2019-01-01 08:55:55,
    # 2019-01-01 08:55:56,2019-01-02 12:39:41,99825.0,COMPLETED,name00005115,...
    row = df[df["job_id"] == "532209"].iloc[0]
    assert (row["user"], row["account"], row["partition"], row["queue"], row["workload"]) == \
        ("user0014", "account0003", "partition001", "normal", "name00005115")
    assert (row["req_nodes"], row["req_procs"], row["req_gpus"]) == (10, 10, 0)
    assert row["time_limit_s"] == 172800 and row["runtime_s"] == 99825 and row["wait_s"] == 1
    assert pd.isna(row["mem_req_gb"])  # 0.0: no request
    assert df["mem_req_gb"].max() == 20160.0  # 28 nodes x 720,000 MB


def _write(tmp_path, rows):
    path = tmp_path / "eagle.csv"
    with open(path, "w", newline="") as fh:
        csv.writer(fh).writerows(rows)
    return path


def _rows(n=10):
    with open(EAGLE, newline="") as fh:
        return list(csv.reader(fh))[: n + 1]


@pytest.mark.parametrize("column, value, reason", [
    ("run_time", "-3.0", "runtime_s negative"),
    ("run_time", "", "empty run_time"),
    ("start_time", "2019-01-01 08:00:00", "wait_s negative"),
    ("end_time", "2018-01-01 08:00:00", "end_time before start_time"),
    ("submit_time", "when", "submit_time not a time"),
    ("state", "PENDING", "not finished (pending/running)"),
    ("state", "WEIRD", "unknown job state"),
])
def test_bad_row_counted_never_used(tmp_path, column, value, reason):
    rows = _rows()
    rows[3][rows[0].index(column)] = value
    df, report = read_job_log(_write(tmp_path, rows))
    assert dict(report.dropped) == {reason: 1}, report.lines()
    assert len(df) == 9


def test_missing_column_is_a_one_line_error(tmp_path):
    rows = _rows()
    at = rows[0].index("wallclock_req")
    path = _write(tmp_path, [r[:at] + r[at + 1:] for r in rows])
    with pytest.raises(IngestError, match="needs the column.s. wallclock_req") as info:
        read_job_log(path, kind="eagle")
    assert "\n" not in str(info.value)


def test_a_column_named_twice_is_a_one_line_error(tmp_path):
    rows = _rows()
    path = _write(tmp_path, [r + [r[0]] for r in rows])  # job_id again at the end
    with pytest.raises(IngestError, match="names the column job_id twice") as info:
        read_job_log(path, kind="eagle")
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("value", ["0001-01-01 08:55:55", "2999-01-01 08:55:55"])
def test_a_time_outside_1970_2261_is_counted_not_a_crash(tmp_path, value):
    rows = _rows()
    for column in ("submit_time", "start_time"):
        rows[3][rows[0].index(column)] = value
    df, report = read_job_log(_write(tmp_path, rows))
    assert len(df) == 9 and sum(report.dropped.values()) == 1, report.lines()
