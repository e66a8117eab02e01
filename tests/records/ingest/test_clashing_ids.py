"""Two job lines under one id: a forged or corrupt export, or a spreadsheet's numbered step."""

from __future__ import annotations

from hpcds1mpi.records.ingest import read_job_log
from hpcds1mpi.records.ingest.clashing_ids import NUMBERED_STEP
from hpcds1mpi.records.ingest.slurm_fields import TWO_JOBS_ONE_ID

HEADER = "JobID,JobName,User,State,Submit,Start,End,ElapsedRaw,NCPUS"
OK = ("56642289,ok_job,root,COMPLETED,2026-12-07T11:03:21,2026-12-07T11:03:22,"
      "2026-12-07T11:03:24,2,1")
JOB = ("56642295,steps_job,root,COMPLETED,2026-12-07T11:03:21,2026-12-07T11:03:32,"
       "2026-12-07T11:03:34,2,2")
BATCH = ("56642295.batch,batch,,COMPLETED,2026-12-07T11:03:32,2026-12-07T11:03:32,"
         "2026-12-07T11:03:34,2,1")
STEP0 = ("56642295{},hostname,,COMPLETED,2026-12-07T11:03:32,2026-12-07T11:03:32,"
         "2026-12-07T11:03:32,0,2")


def test_a_step_id_a_spreadsheet_made_a_number_is_said_not_called_forged(tmp_path):
    """s46 tester I6: a re-saved export's 56642295.0 became 56642295; the job was dropped as
    "a forged or corrupt export; use sacct --json"."""
    path = tmp_path / "excel.csv"
    path.write_text("\n".join([HEADER, OK, JOB, BATCH, STEP0.format("")]) + "\n")
    df, report = read_job_log(path)
    assert list(df["job_id"]) == ["56642289"]
    assert dict(report.dropped) == {NUMBERED_STEP: 3}
    said = [f for f in report.facts if "spreadsheet" in f]
    assert said and "jobs 56642295" in said[0] and "JobID column imported as text" in said[0]
    assert not any("forged" in f for f in report.facts)


def test_another_users_line_under_a_jobs_id_is_still_a_forged_one(tmp_path):
    path = tmp_path / "forged.csv"
    other = JOB.replace(",root,", ",mallory,")
    path.write_text("\n".join([HEADER, OK, JOB, BATCH, STEP0.format(".0"), other]) + "\n")
    df, report = read_job_log(path)
    assert dict(report.dropped) == {TWO_JOBS_ONE_ID: 4}
    assert any("a forged or corrupt export" in f for f in report.facts)
    # A line without a User under a job's id, while other steps keep their .0: not a
    # spreadsheet's (it would have made them all numbers).
    path.write_text("\n".join([HEADER, OK, JOB, STEP0.format(""),
                               STEP0.format(".0").replace("56642295", "56642289")]) + "\n")
    assert TWO_JOBS_ONE_ID in read_job_log(path)[1].dropped
