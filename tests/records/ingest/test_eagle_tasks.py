"""Eagle array tasks keep one id across inputs: an older table's ``ID_N`` and a lone task."""

from __future__ import annotations

import csv
from collections import Counter

import pandas as pd
import pytest

from hpcds1mpi.records.ingest import ingest, read_job_log, write_job_table
from hpcds1mpi.records.ingest.eagle_tasks import LONE_TASKS, OLD_TASK_IDS, renamed_old_tasks
from tests.records.ingest.joblogs import EAGLE, needs_joblogs


def _old_jobs():
    """The Eagle sample's jobs as ingest wrote them before session 48: tasks ``ID_0, ID_1
    ...`` in file order."""
    table, _, _ = ingest([EAGLE])
    tasks = table["job_id"].str.contains("_", regex=False)
    raw = table.loc[tasks, "job_id"].str.split("_").str[0]
    table.loc[tasks, "job_id"] = raw + "_" + raw.groupby(raw).cumcount().astype(str)
    assert table.loc[tasks, "job_id"].iloc[0] == "532939_0"
    return table


@needs_joblogs
@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_an_older_tables_eagle_tasks_given_their_csv_again_are_each_one_job(tmp_path, suffix):
    """s48 review RY1: 1000 jobs and the CSV again made 1452, each array task twice."""
    old = write_job_table(_old_jobs(), tmp_path / f"jobs{suffix}")
    table, reports, notes = ingest([old, EAGLE])
    assert len(table) == 1000 and table["job_id"].is_unique
    assert reports[0].notes[OLD_TASK_IDS] == 452
    assert sum(n for note, n in notes.items() if "same job in several files" in note) == 1000


@needs_joblogs
def test_a_table_holding_each_task_under_both_ids_reads_each_task_once(tmp_path):
    """The table the RY1 merge wrote (1452 jobs) reads back as its 1000."""
    new, _, _ = ingest([EAGLE])
    write_job_table(pd.concat([_old_jobs(), new], ignore_index=True), tmp_path / "both.parquet")
    table, report = read_job_log(tmp_path / "both.parquet")
    assert len(table) == 1000 and report.notes[OLD_TASK_IDS] == 452


def test_only_eagle_rows_of_the_old_form_are_renamed():
    """A Slurm array task ``123_4`` is Slurm's own id; an Eagle id in the new form stays."""
    when = pd.Timestamp("2019-01-03 10:28:10")
    table = pd.DataFrame({"job_id": ["123_4", "123_4", "9_20190103T102810+5s", "77"],
                          "source_kind": ["sacct-p", "eagle", "eagle", "eagle"],
                          "source_file": ["a", "b", "b", "b"], "start_time": [when] * 4,
                          "runtime_s": [5.0, 60.0, 5.0, 5.0]})
    notes = Counter()
    out = renamed_old_tasks(table, notes)
    assert list(out["job_id"]) == ["123_4", "123_20190103T102810+60s",
                                   "9_20190103T102810+5s", "77"]
    assert notes[OLD_TASK_IDS] == 1


def _rows():
    with open(EAGLE, newline="") as fh:
        return list(csv.reader(fh))


def _write(path, rows):
    with open(path, "w", newline="") as fh:
        csv.writer(fh).writerows(rows)
    return path


@needs_joblogs
@pytest.mark.parametrize("lone_first", [True, False])
def test_an_export_holding_one_task_of_an_array_counts_it_once(tmp_path, lone_first):
    """s48 review RY4: 100 jobs and one task of 532939, with the whole sample: 1001 jobs."""
    header, *body = _rows()
    plain = [r for r in body if r[0] != "532939"][:100]
    task = next(r for r in body if r[0] == "532939")
    one = _write(tmp_path / "one.csv", [header, *plain, task])
    table, _, notes = ingest([one, EAGLE] if lone_first else [EAGLE, one])
    assert len(table) == 1000 and table["job_id"].is_unique
    assert notes[LONE_TASKS] == 1
    assert not table["job_id"].eq("532939").any()


@needs_joblogs
def test_two_exports_each_holding_another_task_of_one_array_keep_both(tmp_path):
    header, *body = _rows()
    tasks = [r for r in body if r[0] == "532939"]
    at = [header.index(c) for c in ("start_time", "run_time")]
    second = next(r for r in tasks if [r[i] for i in at] != [tasks[0][i] for i in at])
    a = _write(tmp_path / "a.csv", [header, tasks[0]])
    b = _write(tmp_path / "b.csv", [header, second])
    table, _, notes = ingest([a, b])
    assert len(table) == 2 and table["job_id"].str.startswith("532939_2019").all()
    assert notes[LONE_TASKS] == 2


@needs_joblogs
def test_a_job_in_two_overlapping_exports_keeps_its_bare_id(tmp_path):
    header, *body = _rows()
    plain = [r for r in body if r[0] != "532939"]
    a = _write(tmp_path / "a.csv", [header, *plain[:5]])
    b = _write(tmp_path / "b.csv", [header, *plain[3:8]])
    table, _, notes = ingest([a, b])
    assert len(table) == 8 and not table["job_id"].str.contains("_", regex=False).any()
    assert LONE_TASKS not in notes
