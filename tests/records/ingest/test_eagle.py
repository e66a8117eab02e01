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


def test_array_tasks_of_two_overlapping_exports_are_matched_by_their_content(tmp_path):
    """s48 tester P16: tasks were numbered ID_0, ID_1 ... in each file's order, so two exports
    overlapping inside an array paired different tasks as copies (102 of 1000 jobs lost)."""
    from hpcds1mpi.records.ingest import ingest

    rows = _rows(1000)
    header, body = rows[0], rows[1:]
    at = [header.index(c) for c in ("job_id", "start_time", "run_time")]
    seen, tasks = set(), []
    for row in body:  # the array's tasks, each once (tasks alike to the second: no test here)
        key = tuple(row[i] for i in at)
        if row[at[0]] == "532939" and key not in seen:
            seen.add(key)
            tasks.append(row)
    assert len(tasks) == 411
    first = _write(tmp_path, [header, *tasks[:300]])
    second = tmp_path / "eagle-2.csv"
    with open(second, "w", newline="") as fh:
        csv.writer(fh).writerows([header, *tasks[250:]])
    table, _, notes = ingest([first, second])
    assert len(table) == 411 and table["job_id"].is_unique
    assert sum(n for note, n in notes.items() if "same job in several files" in note) == 50
    assert not any("disagree" in note for note in notes)


def test_array_task_ids_come_from_their_start_and_run_time(tmp_path):
    df, report = read_job_log(EAGLE)
    row = df[df["job_id"] == "532939_20190103T102810+14534s"]
    assert len(row) == 1 and row.iloc[0]["runtime_s"] == 14534
    alike = df["job_id"].str.contains("#", regex=False)
    assert alike.sum() == 41 and df["job_id"].is_unique
    assert any(note.startswith("array tasks alike to the second") and n == 41
               for note, n in report.notes.items())
    rows = _rows(1000)
    at, run, start, end = (rows[0].index(c) for c in ("job_id", "run_time", "start_time",
                                                      "end_time"))
    for row, seconds in zip(rows[1:3], (1234567, 1234568)):  # 'g' wrote 1.23457e+06
        row[at], row[run] = "7", f"{seconds}.0"
        row[end] = str(pd.Timestamp(row[start]) + pd.Timedelta(seconds=seconds))
    ids = set(read_job_log(_write(tmp_path, rows[:3]))[0]["job_id"])
    assert {i.split("+")[1] for i in ids} == {"1234567s", "1234568s"}
