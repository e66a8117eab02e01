"""sacct CSV exports (Cambridge CSD3's columns): parsed by the sacct -P code, bad rows counted."""

from __future__ import annotations

import csv

import pandas as pd
import pytest

from hpcds1mpi.errors import IngestError
from hpcds1mpi.records.ingest import detect_kind, read_job_log
from tests.records.ingest.captures import EXPORTS
from tests.records.ingest.joblogs import CSD3, needs_joblogs

pytestmark = needs_joblogs


def test_whole_sample_every_job_with_its_state():
    assert detect_kind(CSD3) == "sacct-csv"
    df, report = read_job_log(CSD3)
    assert len(df) == report.records == 2000 and sum(report.dropped.values()) == 0
    assert df["status"].value_counts().to_dict() == {"ok": 1515, "failed": 239,
                                                     "cancelled": 187, "timeout": 50, "oom": 9}
    # ,JobIDRaw,JobName,Partition,ElapsedRaw,Account,State,CPUTimeRAW,NodeList,User,AllocCPUS,
    # AllocNodes,QOS,Start,End,Timelimit,Suspended
    # 628641,23956658,job_0377,ampere,278,acct_0029,COMPLETED,8896,gpu-q-33,user_0221,32,1,gpu2,
    # 2023-07-17T11:46:42,2023-07-17T11:51:20,00:20:00,00:00:00
    row = df[df["job_id"] == "23956658"].iloc[0]
    assert (row["workload"], row["partition"], row["account"], row["user"], row["queue"]) == \
        ("job_0377", "ampere", "acct_0029", "user_0221", "gpu2")
    assert row["runtime_s"] == 278 and row["cores"] == 32 and row["nodes"] == 1
    assert row["time_limit_s"] == 1200 and row["start_time"] == pd.Timestamp("2023-07-17 11:46:42")
    assert pd.isna(row["gpus"]) and pd.isna(row["device"])  # no TRES column: not known
    assert "no Submit column: submit_time and wait_s unknown" in report.facts
    never_started = df[df["start_time"].isna()]
    # 130 with job 24060225: cancelled at its Start = End, NodeList "None assigned" (s31 R6).
    assert len(never_started) == 130 and never_started["nodes"].isna().all()


def _rows(n=30):
    with open(CSD3, newline="") as fh:
        return list(csv.reader(fh))[: n + 1]


def test_same_records_as_sacct_p_give_the_same_jobs(tmp_path):
    """One parser: the CSV rows rewritten as ``sacct -P`` text read to the same table."""
    rows = _rows()
    as_csv = tmp_path / "jobs.csv"
    with open(as_csv, "w", newline="") as fh:
        csv.writer(fh).writerows(rows)
    as_p = tmp_path / "jobs.txt"
    as_p.write_text("".join("|".join(r[1:]) + "\n" for r in rows))
    a, _ = read_job_log(as_csv)
    b, _ = read_job_log(as_p)
    assert len(a) == 30
    pd.testing.assert_frame_equal(a.drop(columns=["source_file", "source_kind"]),
                                  b.drop(columns=["source_file", "source_kind"]))


@pytest.mark.parametrize("column, value, reason", [
    ("ElapsedRaw", "-5", "runtime_s negative"),
    ("ElapsedRaw", "soon", "unparseable value (bad number)"),
    ("State", "", "no State column/value"),
    ("State", "RUNNING", "not finished (pending/running)"),
    ("Timelimit", "1:xx", "unparseable value (bad duration)"),
    ("Start", "2023-07-40T10:00:00", "unparseable value (bad time in Start)"),
    ("End", "2023-07-01T00:00:00", "End before Start"),
])
def test_bad_row_counted_never_used(tmp_path, column, value, reason):
    rows = _rows(10)
    rows[4][rows[0].index(column)] = value
    path = tmp_path / "bad.csv"
    with open(path, "w", newline="") as fh:
        csv.writer(fh).writerows(rows)
    df, report = read_job_log(path)
    assert dict(report.dropped) == {reason: 1}, report.lines()
    assert len(df) == 9


@pytest.mark.parametrize("missing, match", [("State", "needs the column.s. State"),
                                            ("JobIDRaw", "JobIDRaw or JobID")])
def test_missing_column_is_a_one_line_error(tmp_path, missing, match):
    rows = _rows(5)
    at = rows[0].index(missing)
    path = tmp_path / "cut.csv"
    with open(path, "w", newline="") as fh:
        csv.writer(fh).writerows([r[:at] + r[at + 1:] for r in rows])
    with pytest.raises(IngestError, match=match) as info:
        read_job_log(path, kind="sacct-csv")
    assert "\n" not in str(info.value)


def test_a_table_without_run_times_says_so(tmp_path):
    path = tmp_path / "states.csv"
    path.write_text("JobID,State\n1,COMPLETED\n2,FAILED\n")
    df, report = read_job_log(path)
    assert len(df) == 2 and df["runtime_s"].isna().all()
    assert any(f.startswith("no ElapsedRaw or Elapsed column") for f in report.facts)
    _, report = read_job_log(_csd3_copy(tmp_path))
    assert not any("Elapsed" in f for f in report.facts)


def _csd3_copy(tmp_path):
    path = tmp_path / "csd3.csv"
    with open(path, "w", newline="") as fh:
        csv.writer(fh).writerows(_rows(5))
    return path


def test_a_column_named_twice_is_a_one_line_error(tmp_path):
    """Account twice read as 2000 x 'unknown job state': the columns after it shifted."""
    rows = _rows(5)
    at = rows[0].index("Account")
    path = tmp_path / "twice.csv"
    with open(path, "w", newline="") as fh:
        csv.writer(fh).writerows([r[:at + 1] + r[at:] for r in rows])
    with pytest.raises(IngestError, match="names the column Account twice") as info:
        read_job_log(path)
    assert "\n" not in str(info.value)


def test_sacct_d_saved_as_csv_keeps_the_last_attempt(tmp_path):
    """The -P code the CSV reader shares kept a requeued job's first attempt, then dropped it."""
    path = tmp_path / "requeued.csv"
    path.write_text((EXPORTS / "requeued-D.txt").read_text().replace("|", ","))
    df, report = read_job_log(path)
    job = df[df["job_id"] == "56435727"].iloc[0]
    assert (job["state_raw"], job["runtime_s"]) == ("COMPLETED", 25.0)
    assert not report.dropped  # s32 tester S6: a note, not malformed
    assert report.notes["earlier attempt of a requeued job (the last attempt kept)"] == 1


def test_a_comma_delimited_sacct_export_says_the_tres_commas_and_the_export_to_use():
    """s31 tester R1: `sacct -P --delimiter=,` (and docs' old `tr '|' ,` recipe) with ReqTRES /
    AllocTRES: "193 x more fields than the header", no word on why or what to do."""
    path = EXPORTS / "s31-comma-delimiter.txt"
    assert detect_kind(path) == "sacct-csv"
    with pytest.raises(IngestError) as caught:
        read_job_log(path)
    assert str(caught.value) == (
        f"{path}: no job could be read as sacct-csv (4 x more fields than the header: the ',' "
        "inside ReqTRES, AllocTRES, Partition, JobName (sacct quotes nothing; which field is "
        "whose cannot be told); export with sacct -P, not --delimiter=, or tr '|' ,)")
    # Not mended: the two lists stand side by side, either may be empty, so where one ends
    # cannot be told.
    header = path.read_text().splitlines()[0].split(",")
    assert header.index("ReqTRES") + 1 == header.index("AllocTRES")


def test_a_comma_in_the_job_name_of_a_comma_delimited_export_is_joined_back(tmp_path):
    """s36 tester L7: `sacct -P --delimiter=,` of a job named "run,x=1" dropped the job
    unnamed ("more fields than the header") and counted its steps as having no job line.
    With JobName the only column that can hold a ',' the fields are joined back."""
    head = "JobID,JobName,State,Submit,Start,End,ElapsedRaw,Timelimit,User,Account"
    times = "2026-12-01T11:00:00,2026-12-01T11:00:05,2026-12-01T11:20:05,1200"
    path = tmp_path / "comma-name.csv"
    path.write_text(f"{head}\n102,run,x=1,COMPLETED,{times},01:00:00,alice,proj\n"
                    f"102.batch,batch,COMPLETED,{times},,,proj\n")
    df, report = read_job_log(path)
    job = df.iloc[0]
    assert (len(df), job["job_id"], job["workload"], job["user"], job["runtime_s"]) == (
        1, "102", "run,x=1", "alice", 1200.0)
    assert not report.dropped
    assert report.notes["',' inside JobName (sacct does not quote it): joined back, the only "
                        "column that can hold one"] == 1


def test_a_comma_where_two_columns_could_hold_it_drops_the_job_named_and_its_steps_so(
        tmp_path):
    """With JobName and AllocTRES both able to hold the ',' the job is dropped, named, and its
    steps are counted as a dropped job's (not as steps whose job the export lacks)."""
    head = "JobID,JobName,State,Submit,Start,End,ElapsedRaw,Timelimit,User,AllocTRES"
    times = "2026-12-01T11:00:00,2026-12-01T11:00:05,2026-12-01T11:20:05,1200"
    path = tmp_path / "comma-two.csv"
    path.write_text(f"{head}\n101,a,b,COMPLETED,{times},01:00:00,alice,cpu=2\n"
                    f"101.batch,batch,COMPLETED,{times},,,cpu=2\n"
                    f"102,ok,COMPLETED,{times},01:00:00,alice,cpu=2\n")
    df, report = read_job_log(path)
    assert list(df["job_id"]) == ["102"]
    assert report.dropped["step rows of a job whose own line was dropped (named above)"] == 1
    assert "step rows without their job line" not in report.dropped
    assert "1 row(s) with a ',' inside a value dropped: jobs 101" in report.facts


def test_flags_and_partition_can_hold_a_comma_so_a_name_beside_them_is_not_mended(tmp_path):
    """s37 reviewer R1: Slurm 22.05's `--delimiter=,` export writes Flags as
    `SchedMain,StartRecieved`; the mend joined that into JobName, every column after it
    shifted (workload 'jok,root', user 'debug'), "joined back" said. Columns that can hold a
    ',' besides the name (Flags, Partition) leave the row unmendable: dropped and named."""
    head = "JobID,JobName,User,Partition,Flags,State,ElapsedRaw,NNodes,NCPUS,Timelimit"
    path = tmp_path / "flags.csv"
    path.write_text(f"{head}\n56540252,jok,root,debug,SchedMain,StartRecieved,COMPLETED,4,1,1,"
                    "01:00:00\n56540253,ok,root,debug,SchedMain,COMPLETED,3,1,1,01:00:00\n")
    df, report = read_job_log(path)
    assert list(df["job_id"]) == ["56540253"] and list(df["user"]) == ["root"]
    assert "1 row(s) with a ',' inside a value dropped: jobs 56540252" in report.facts
    assert not report.notes.get("',' inside JobName (sacct does not quote it): joined back, "
                                "the only column that can hold one")


def test_a_mended_row_whose_state_does_not_read_is_dropped(tmp_path):
    """A row mended at the one column that can hold a ',' is kept only where its State then
    reads as sacct writes one: a ',' elsewhere (an id range of a pending array) shifts it."""
    head = "JobID,JobName,State,ElapsedRaw,Timelimit,User"
    path = tmp_path / "pending.csv"
    path.write_text(f"{head}\n7007_[1,3],job,PENDING,0,01:00:00,alice\n"
                    "7008,ok,COMPLETED,3,01:00:00,alice\n")
    df, report = read_job_log(path)
    assert list(df["job_id"]) == ["7008"]
    assert any(k.startswith("more fields than the header") for k in report.dropped)


def test_a_sacct_csv_cut_inside_its_last_value_drops_that_job_not_reads_it_cut(tmp_path):
    # s43 tester H3: ElapsedRaw 64 cut to 6 was stored as a 6 s run of a TIMEOUT job.
    path = tmp_path / "cut.csv"
    path.write_text("JobID,JobName,User,State,Submit,Start,End,Timelimit,NNodes,NCPUS,"
                    "ElapsedRaw\n"
                    "7,ok,root,COMPLETED,2026-12-07T01:46:36,2026-12-07T01:46:36,"
                    "2026-12-07T01:46:38,00:10:00,1,1,2\n"
                    "8,late,root,TIMEOUT,2026-12-07T01:46:36,2026-12-07T01:46:36,"
                    "2026-12-07T01:47:40,00:01:00,1,1,6")
    table, report = read_job_log(path)
    assert table.job_id.tolist() == ["7"]
    assert sum(n for r, n in report.dropped.items() if "no newline" in r) == 1


def test_a_newline_inside_a_job_name_sacct_left_unquoted_is_joined_back(tmp_path):
    """s46 tester I9: sbatch -J $'new\\nline' exported with --delimiter=, lost the job as "2 x
    fewer fields than the header (truncated row)" and "step rows without their job line"."""
    path = tmp_path / "nl.csv"
    path.write_text(
        "JobID,JobName,User,State,Submit,Start,End,ElapsedRaw,Timelimit,NCPUS\n"
        "56642337,new\nline,root,COMPLETED,2026-12-07T11:14:33,2026-12-07T11:14:34,"
        "2026-12-07T11:14:35,1,UNLIMITED,1\n"
        "56642337.batch,batch,,COMPLETED,2026-12-07T11:14:34,2026-12-07T11:14:34,"
        "2026-12-07T11:14:35,1,,1\n")
    df, report = read_job_log(path)
    assert list(df["workload"]) == ["new\nline"] and not report.dropped
    assert report.notes["newline inside JobName (not quoted): joined back"] == 1
