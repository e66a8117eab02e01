"""The same job in several files, kept once (real exports of the test Slurm, s31 tester R2:
one export in UTC, one with TZ=America/New_York read without TZ, and --json)."""

from __future__ import annotations

import pandas as pd
import pytest

from hpcds1mpi.records.ingest.job_logs import ingest, write_job_table
from hpcds1mpi.records.ingest.same_jobs import ID_FORMS_NOT_TIED, REQUEUED_AGAIN_ELSEWHERE
from hpcds1mpi.records.ingest.slurm_fields import FIRST_SUBMIT

from .captures import EXPORTS, NEW_YORK_P, UTC_JSON, UTC_P
from .captures import zone_note as _zone_note


def test_the_same_jobs_read_in_two_zones_are_kept_once_and_the_zone_is_said():
    table, _, notes = ingest([UTC_P, NEW_YORK_P])
    assert sorted(table["job_id"]) == ["56472500", "56472501", "56472531"]  # was 6: each twice
    reason, n = _zone_note(notes)
    assert n == 3 and reason.startswith(f"same job in {UTC_P} and {NEW_YORK_P} with times 5 h "
                                        "apart: one of them was read in the wrong zone, which "
                                        "cannot be told (neither is sacct --json): times kept "
                                        "as read")
    assert "TZ=Area/City hpcds1mpi ingest" in reason
    # Kept: the first file's copy (of equal copies), its times: neither file is known right.
    kept = table.set_index("job_id").loc["56472531"]
    assert kept["submit_time"] == pd.Timestamp("2026-12-05 11:53:08")
    assert kept["source_file"] == str(UTC_P) and kept["ranks"] == 2


def test_a_job_table_and_a_log_of_the_same_jobs_in_another_zone(tmp_path):
    """`ingest jobs.parquet new.txt --out jobs.parquet`: the history's jobs are not added
    again (tester R2: recommend --history then learned each job twice)."""
    history, _, _ = ingest([UTC_P])
    path = write_job_table(history, tmp_path / "jobs.parquet")
    table, _, notes = ingest([path, NEW_YORK_P])
    assert len(table) == 3 and _zone_note(notes)[1] == 3


def test_the_same_zone_says_no_zone():
    table, _, notes = ingest([UTC_P, UTC_JSON])
    assert len(table) == 3 and not [r for r in notes if " h apart" in r]


def _other_jobs_under_the_same_ids(tmp_path, user: str, year: str):
    """The UTC export with another user and another year: the same ids for other jobs."""
    text = UTC_P.read_text().replace("2026-12-05", f"{year}-03-02")
    if user != "root":
        text = text.replace("|root|root|", f"|{user}|root|").replace("||root|", f"|{user}|root|")
    other = tmp_path / f"{user}-{year}.txt"
    other.write_text(text)
    return other


def test_another_clusters_jobs_under_the_same_ids_are_all_kept(tmp_path):
    """s31 verifier V1a: another user's jobs a year and a half earlier under the same ids were
    taken for forged copies, and every job of both files dropped."""
    other = _other_jobs_under_the_same_ids(tmp_path, "otheruser", "2025")
    table, _, notes = ingest([UTC_P, other])
    assert len(table) == 6 and sorted(set(table["user"])) == ["otheruser", "root"]
    assert [n for r, n in notes.items() if r.startswith("one Slurm id for different jobs in "
                                                         "several files")] == [3]
    assert not [r for r in notes if "dropped" in r or " h apart" in r]


def test_the_same_ids_and_names_a_year_apart_are_other_jobs_not_a_zone(tmp_path):
    """s31 verifier V1b: 15432 h apart was said as a file read in the wrong zone and the jobs
    merged; no zone is more than 26 h off, and a requeue is submitted by its end."""
    older = _other_jobs_under_the_same_ids(tmp_path, "root", "2025")
    for files in ([UTC_P, older], [older, UTC_P]):
        table, _, notes = ingest(files)
        assert len(table) == 6 and table["submit_time"].dt.year.value_counts().to_dict() == {
            2025: 3, 2026: 3}
        assert not [r for r in notes if " h apart" in r or "requeued" in r]


def test_a_requeue_after_a_long_run_is_still_one_job(tmp_path):
    """A job that ran two days and was requeued (NODE_FAIL): the later attempt's Submit is two
    days on, past the 26 h of a zone, yet after the first attempt started and by its end."""
    head = "JobID|User|State|Submit|Start|End|TimelimitRaw|ElapsedRaw|JobName"
    first, second = tmp_path / "a.txt", tmp_path / "b.txt"
    first.write_text(f"{head}\n7|root|NODE_FAIL|2024-01-01T00:00:00|2024-01-01T01:00:00|"
                     "2024-01-03T01:00:00|4000|172800|sim\n")
    second.write_text(f"{head}\n7|root|COMPLETED|2024-01-03T01:00:05|2024-01-03T02:00:00|"
                      "2024-01-03T03:00:00|4000|3600|sim\n")
    table, _, notes = ingest([first, second])
    assert table["runtime_s"].tolist() == [3600.0]
    assert "earlier attempt of a requeued job in another file (the last attempt kept)" in notes


HEAD = "JobID|User|State|Submit|Start|End|TimelimitRaw|ElapsedRaw|JobName"


def _copies(tmp_path, lines: list[str]) -> list:
    """One -P file of job 7 per line (``submit|start|end|elapsed``, COMPLETED, user root)."""
    paths = []
    for i, line in enumerate(lines):
        submit, start, end, elapsed = line.split("|")
        path = tmp_path / f"{i}.txt"
        path.write_text(f"{HEAD}\n7|root|COMPLETED|{submit}|{start}|{end}|2880|{elapsed}|sim\n")
        paths.append(path)
    return paths


def test_copies_20_h_apart_do_not_chain_into_one_job_40_h_long(tmp_path):
    """s31 reviewer: each copy was compared with the one before it only, so copies at t,
    t+20 h and t+40 h were one job though the first and last are 40 h apart (no zone is)."""
    paths = _copies(tmp_path, ["2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T00:01:00|60",
                               "2024-01-01T20:00:00|2024-01-01T20:00:00|2024-01-01T20:01:00|60",
                               "2024-01-02T16:00:00|2024-01-02T16:00:00|2024-01-02T16:01:00|60"])
    for files in (paths, paths[::-1]):
        table, _, notes = ingest(files)
        # The first two may be one job read 20 h apart (a zone cannot be ruled out); the last
        # is 40 h from the first: another job under the same id, kept.
        assert sorted(table["submit_time"].dt.day) == [1, 2], notes
        assert [n for r, n in notes.items() if r.startswith("one Slurm id for different jobs")
                ] == [1]


def test_a_job_requeued_twice_after_a_short_and_a_long_run_is_still_one_job(tmp_path):
    """The first attempt failed in a minute, the second ran 30 h: the third is submitted 30 h
    after the first (past a zone's 26 h) yet after the second started and by its end."""
    paths = _copies(tmp_path, ["2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T00:01:00|60",
                               "2024-01-01T00:01:05|2024-01-01T00:01:05|2024-01-02T06:01:05|108000",
                               "2024-01-02T06:01:10|2024-01-02T06:01:10|2024-01-02T07:01:10|3600"])
    table, _, notes = ingest(paths)
    assert table["runtime_s"].tolist() == [3600.0]
    assert notes["earlier attempt of a requeued job in another file (the last attempt kept)"] == 2


def _cluster_export(path, user: str, uid: int, jobs: int, shift_s: int = 0, running: int = 0,
                    elapsed: int = 60, user_column: bool = True):
    """A -P export of jobs 100000.. (job line and batch step, as sacct writes them), each
    submitted 30 s after the one before, plus ``shift_s``: one cluster's, or a copy of it;
    the first ``running`` jobs still RUNNING."""
    import datetime as dt

    def at(s):
        return (dt.datetime(2024, 1, 1) + dt.timedelta(seconds=s)).strftime("%Y-%m-%dT%H:%M:%S")

    head = "JobID|JobIDRaw|JobName|User|UID|State|ExitCode|ElapsedRaw|NNodes|Submit|Start|End"
    if not user_column:
        head = head.replace("|User|UID", "")
    lines = [head]
    for j in range(jobs):
        state = "RUNNING" if j < running else "COMPLETED"
        submit = j * 30 + shift_s
        start, jid = submit + 10, 100000 + j
        who = f"|{user}|{uid}" if user_column else ""
        lines += [f"{jid}|{jid}|app{who}|{state}|0:0|{elapsed}|1|{at(submit)}|{at(start)}|"
                  f"{at(start + elapsed) if state != 'RUNNING' else 'Unknown'}",
                  f"{jid}.batch|{jid}.batch|batch{'||' if user_column else ''}|{state}|0:0|"
                  f"{elapsed}|1|{at(start)}|{at(start)}|"
                  f"{at(start + elapsed) if state != 'RUNNING' else 'Unknown'}"]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_two_clusters_jobs_under_the_same_ids_5_s_apart_are_each_kept(tmp_path):
    """s32 verifier V2: two clusters' exports of one id range (another user and UID, submitted
    5 s apart) were taken for forged copies and every one of 4000 jobs dropped: "wrote 0
    jobs". They cannot be one job: each is kept, with its own file, and said in one note."""
    a = _cluster_export(tmp_path / "a.txt", "alice", 1001, 40)
    b = _cluster_export(tmp_path / "b.txt", "bob", 1002, 40, shift_s=5)
    again = _cluster_export(tmp_path / "a-again.txt", "alice", 1001, 40)  # a true copy
    table, _, notes = ingest([a, b, again])
    assert len(table) == 80 and table["job_id"].nunique() == 40
    assert {user: set(files) for user, files in table.groupby("user")["source_file"]} == {
        "alice": {str(a)}, "bob": {str(b)}}
    said = [(r, n) for r, n in notes.items() if r.startswith("id with different jobs")]
    assert len(said) == 1 and said[0][1] == 40, notes
    assert "each job kept with its own source_file" in said[0][0]
    assert "name no cluster" in said[0][0] and "sacct -M CLUSTER" in said[0][0]
    assert notes["same job in several files, kept once (sacct -P preferred, then the copy "
                 "with the most fields known)"] == 40  # the copy of a.txt, still once
    assert not [r for r in notes if "dropped" in r or " h apart" in r or "requeued" in r]


def test_one_job_seen_running_then_completed_is_kept_once(tmp_path):
    """A state that moved on (RUNNING in one export, COMPLETED in a later one) is one job:
    same user, UID and name; the finished jobs of both exports are kept once."""
    early = _cluster_export(tmp_path / "r.txt", "alice", 1001, 5, running=2, elapsed=20)
    done = _cluster_export(tmp_path / "d.txt", "alice", 1001, 5)
    table, reports, notes = ingest([early, done])
    assert len(table) == 5 and not [r for r in notes if r.startswith("id with different")]
    assert reports[0].dropped["not finished (pending/running)"] == 2
    assert notes["same job in several files, kept once (sacct -P preferred, then the copy "
                 "with the most fields known)"] == 3


def test_a_copy_without_a_user_column_is_the_same_job_not_another(tmp_path):
    """An empty user (a -P export without User) is no other identity: the copy is the job
    whose user is known, kept once, not split off as a third job."""
    a = _cluster_export(tmp_path / "a.txt", "alice", 1001, 5)
    b = _cluster_export(tmp_path / "b.txt", "bob", 1002, 5, shift_s=5)
    bare = _cluster_export(tmp_path / "bare.txt", "", 0, 5, user_column=False)
    table, _, notes = ingest([a, b, bare])
    assert len(table) == 10 and sorted(set(table["user"])) == ["alice", "bob"], notes


def test_a_requeued_job_keeps_its_first_submission_from_another_file(tmp_path):
    """s33 tester A11: a requeue resets Submit; the earlier attempt in one file and the last in
    another kept the requeue's Submit and a wait that held the first run and the hold."""
    first, second = tmp_path / "a.txt", tmp_path / "b.txt"
    first.write_text(f"{HEAD}\n7|root|NODE_FAIL|2024-01-01T00:00:00|2024-01-01T00:00:17|"
                     "2024-01-01T00:00:19|4000|2|sim\n")
    second.write_text(f"{HEAD}\n7|root|COMPLETED|2024-01-01T00:00:19|2024-01-01T00:02:55|"
                      "2024-01-01T00:03:20|4000|25|sim\n")
    for files in ([first, second], [second, first]):
        table, _, notes = ingest(files)
        job = table.iloc[0]
        assert len(table) == 1 and job["runtime_s"] == 25.0
        assert (job["submit_time"], job["wait_s"]) == (pd.Timestamp("2024-01-01"), 17.0)
        assert notes[FIRST_SUBMIT] == 1


def test_a_p_and_a_json_export_across_the_autumn_clock_change_are_one_job_each(monkeypatch):
    """s35 tester T2: -P's repeated-hour times had made 70004 "an earlier attempt of a
    requeued job" and kept 70003's wrong end; read by their Elapsed they are the --json's."""
    import time

    from .test_clock_changes import DST_JSON, DST_P

    monkeypatch.setenv("TZ", "Europe/Berlin")
    time.tzset()
    try:
        table, _, notes = ingest([DST_P, DST_JSON])
    finally:
        monkeypatch.undo()
        time.tzset()
    assert not any("earlier attempt" in n or n == FIRST_SUBMIT for n in notes)
    jobs = table.set_index("job_id")
    assert sorted(jobs.index) == ["70001", "70003", "70004", "70005", "70006"]
    assert jobs.loc["70003", "end_time"] == pd.Timestamp("2026-10-25 01:20")
    assert jobs.loc["70004", "submit_time"] == pd.Timestamp("2026-10-25 01:40")
    assert jobs.loc["70004", "wait_s"] == 600


#: Real lines of this Slurm's array 56608822 (3 tasks) and heterogeneous job 56608825 (s43
#: tester H7): keyed by JobID (with JobIDRaw) and by JobIDRaw alone.
_BY_ID = """JobID|JobIDRaw|JobName|User|State|Submit|Start|End|ElapsedRaw|NNodes|NCPUS
56608825+0|56608825|h_het|root|COMPLETED|2026-12-07T01:46:36|2026-12-07T01:47:06|2026-12-07T01:47:08|2|1|1
56608825+1|56608826|h_het|root|COMPLETED|2026-12-07T01:46:36|2026-12-07T01:47:06|2026-12-07T01:47:08|2|1|1
56608822_1|56608828|h_array|root|COMPLETED|2026-12-07T01:46:36|2026-12-07T01:46:40|2026-12-07T01:46:42|2|1|1
56608822_2|56608829|h_array|root|FAILED|2026-12-07T01:46:36|2026-12-07T01:46:40|2026-12-07T01:46:42|2|1|1
56608822_3|56608822|h_array|root|COMPLETED|2026-12-07T01:46:36|2026-12-07T01:46:43|2026-12-07T01:46:45|2|1|1
"""


def _by_raw(text: str) -> str:
    """The same export keyed by JobIDRaw alone, as CSD3 and many site scripts export it."""
    return "".join("|".join(line.split("|")[1:]) + "\n" for line in text.splitlines())


def test_array_tasks_and_het_jobs_keyed_by_jobid_and_by_jobidraw_are_one_job_each(tmp_path):
    (tmp_path / "id.txt").write_text(_BY_ID)
    (tmp_path / "raw.txt").write_text(_by_raw(_BY_ID))
    for files in (["id.txt", "raw.txt"], ["raw.txt", "id.txt"]):
        table, _, notes = ingest([tmp_path / f for f in files])
        assert sorted(table["job_id"]) == ["56608822_1", "56608822_2", "56608822_3",
                                           "56608825"]
        assert (table["status"] == "failed").sum() == 1
        assert table.set_index("job_id").loc["56608825", "nodes"] == 2  # both components
        assert any("heterogeneous job's component" in n for n in notes)


def test_a_jobid_export_without_jobidraw_is_tied_through_a_third_that_has_both(tmp_path):
    (tmp_path / "id.txt").write_text(_BY_ID)
    (tmp_path / "raw.txt").write_text(_by_raw(_BY_ID))
    only_id = "".join("|".join(line.split("|")[:1] + line.split("|")[2:]) + "\n"
                      for line in _BY_ID.splitlines())
    (tmp_path / "only_id.txt").write_text(only_id)
    table, _, _ = ingest([tmp_path / "only_id.txt", tmp_path / "raw.txt", tmp_path / "id.txt"])
    assert len(table) == 4


def _requeued_pair(tmp_path, earlier_state: str, newest: str = "RUNNING"):
    """FY1's real export of a requeued job running again (s44), as two files: its earlier
    attempt (State ``earlier_state``) alone, as an export taken before the requeue, and its
    newest attempt (``newest``; COMPLETED: ended at 05:21:16, 3 min on)."""
    lines = (EXPORTS / "s44-requeued-running-D-P.txt").read_text().splitlines(keepends=True)
    old, new = tmp_path / "old.txt", tmp_path / "new.txt"
    old.write_text(lines[0] + lines[1].replace("|REQUEUED|", f"|{earlier_state}|") + lines[2])
    if newest != "RUNNING":
        lines[3:5] = [line.replace("|RUNNING|00:00:11|11|", "|COMPLETED|00:03:00|180|")
                      .replace("|Unknown|", "|2026-12-07T05:23:16|") for line in lines[3:5]]
    new.write_text(lines[0] + lines[3] + lines[4])
    return old, new


@pytest.mark.parametrize("earlier_state", ["NODE_FAIL", "PREEMPTED", "FAILED"])
@pytest.mark.parametrize("newest_first", [False, True])
def test_a_job_running_again_in_a_newer_export_is_not_its_ended_attempt_in_an_older(
        tmp_path, earlier_state, newest_first):
    """FY1 (s44): the newer file's RUNNING line was dropped by its reader before the files were
    merged, so the older file's NODE_FAIL attempt was written as the job (failed, 10 s)."""
    old, new = _requeued_pair(tmp_path, earlier_state)
    files = [new, old, UTC_P] if newest_first else [old, new, UTC_P]
    table, _, notes = ingest(files)
    assert "56620377" not in set(table["job_id"])
    assert sorted(table["job_id"]) == ["56472500", "56472501", "56472531"]
    assert notes[REQUEUED_AGAIN_ELSEWHERE] == 1


def test_a_job_seen_running_in_an_older_export_and_ended_in_a_newer_is_read_ended(tmp_path):
    (tmp_path / "then").mkdir()
    _, running = _requeued_pair(tmp_path / "then", "NODE_FAIL")
    old, new = _requeued_pair(tmp_path, "NODE_FAIL", newest="COMPLETED")
    table, _, notes = ingest([old, running, new])
    job = table.set_index("job_id").loc["56620377"]
    assert job["status"] == "ok" and job["runtime_s"] == 180
    assert REQUEUED_AGAIN_ELSEWHERE not in notes
    assert not any(k.startswith("same job in several files") for k in notes)


def test_a_jobid_only_export_beside_a_jobidraw_only_one_says_it_may_count_jobs_twice():
    """README's left item (s43 H7): a JobID-only and a JobIDRaw-only export of one array (3
    tasks), one plain job and one heterogeneous job (2 components) gave 9 jobs for 5, without a
    word. A task's JobIDRaw is a job id of its own (real test Slurm: 56620488_0 is 56620491,
    _2 is 56620488), so the ids cannot be tied; it is said. Real exports of the test Slurm."""
    jobid, raw, both = (EXPORTS / f"s44-array-het-{form}-P.txt"
                        for form in ("JobID", "JobIDRaw", "both"))
    table, _, notes = ingest([jobid, raw])
    assert len(table) == 9 and notes[ID_FORMS_NOT_TIED] == 4  # 3 tasks, 1 component
    # The plain job submitted in the same second under the same name is tied by its id.
    assert "56620489" in set(table["job_id"])
    # An export giving both ids ties them: 5 jobs, nothing to say.
    table, _, notes = ingest([jobid, raw, both])
    assert len(table) == 5 and ID_FORMS_NOT_TIED not in notes


#: s44 tester O5's real test-Slurm exports of one requeued job (56620548, ``sbatch --requeue``,
#: ``scontrol requeue`` 3 s in), ``sacct -D -X -P`` while its re-run pended, then ``sacct -D
#: -X -P`` and ``sacct -D -X --json`` after it completed (6 s); kept from /tmp/s44/O/ing.
PENDING_D, COMPLETED_D, COMPLETED_D_JSON = (
    EXPORTS / f"s44-requeued-{name}" for name in ("pending-D-P.txt", "completed-D-P.txt",
                                                  "completed-D.json"))


@pytest.mark.parametrize("completed", [COMPLETED_D, COMPLETED_D_JSON])
@pytest.mark.parametrize("pending_first", [True, False])
@pytest.mark.parametrize("others", [False, True])
def test_a_requeued_job_seen_pending_in_an_older_D_export_is_read_completed_from_a_newer(
        completed, pending_first, others):
    """O5 (s44): the -D reader moves the kept attempt's submit_time back to the job's first
    submission, so the older export's PENDING line of that very attempt sorted as the newest:
    the completed job was dropped ("no job left", or beside other jobs silently, under a note
    that it runs or pends again). Attempts are now ordered by their own Submit."""
    files = [PENDING_D, completed] if pending_first else [completed, PENDING_D]
    table, _, notes = ingest([*files, UTC_P] if others else files)
    assert len(table) == (4 if others else 1)
    job = table.set_index("job_id").loc["56620548"]
    assert job["status"] == "ok" and job["runtime_s"] == 6
    # Still the job's first submission and the wait before its first start, as -D alone.
    assert job["submit_time"] == pd.Timestamp("2026-12-07 06:03:01") and job["wait_s"] == 0
    assert REQUEUED_AGAIN_ELSEWHERE not in notes
    assert not any(k.startswith("same job in several files") for k in notes)


#: FY4's real test-Slurm exports (s45): job 56630706 (``sbatch --requeue``, ``scontrol
#: requeue`` 3 s in, re-run held 2 min) as ``sacct -D -X -P`` and ``--json`` while its re-run
#: pended, then ``sacct -X -P`` (no -D: the newest attempt only) and ``sacct -D -X -P`` once it
#: completed; job 56630625 the same, its -D exports taken 1 s after the requeue, before sacct
#: listed the re-run's PENDING line (its REQUEUED line alone).
S45 = {name: EXPORTS / f"s45-requeued-{name}" for name in (
    "pending-D-P.txt", "pending-D.json", "completed-P.txt", "completed-D-P.txt",
    "waiting-D-P.txt", "waiting-D.json", "waiting-completed-P.txt")}


@pytest.mark.parametrize("older", ["pending-D-P.txt", "pending-D.json"])
@pytest.mark.parametrize("older_first", [True, False])
@pytest.mark.parametrize("others", [False, True])
def test_a_requeued_job_pending_in_an_older_D_export_keeps_its_first_submission(
        older, older_first, others):
    """J1 (s45): the older -D export's PENDING line was dropped as a copy of the plain
    export's COMPLETED line of that attempt, and the job kept the re-run's Submit (07:58:07)
    and wait (125 s, the hold). It keeps the first submission and wait, as -D alone gives."""
    alone = ingest([S45["completed-D-P.txt"]])[0].iloc[0]
    files = [S45[older], S45["completed-P.txt"]]
    table, _, notes = ingest([*(files if older_first else files[::-1]), *([UTC_P] * others)])
    job = table.set_index("job_id").loc["56630706"]
    assert len(table) == (4 if others else 1)
    assert (job["status"], job["runtime_s"], job["end_time"]) == (
        "ok", 7, pd.Timestamp("2026-12-07 08:00:19"))  # the newest attempt's
    assert (job["submit_time"], job["wait_s"]) == (alone["submit_time"], alone["wait_s"]) == (
        pd.Timestamp("2026-12-07 07:58:03"), 1)
    assert notes[FIRST_SUBMIT] == 1 and REQUEUED_AGAIN_ELSEWHERE not in notes


@pytest.mark.parametrize("older", ["waiting-D-P.txt", "waiting-D.json"])
def test_a_requeued_job_waiting_in_an_older_D_export_keeps_its_first_wait(older):
    """J1 (s45): a -D export taken before sacct listed the re-run (its REQUEUED line alone)
    gave the job its first submission but no wait (NaN): a line not ended had none."""
    table, _, notes = ingest([S45[older], S45["waiting-completed-P.txt"]])
    job = table.iloc[0]
    assert (len(table), job["status"], job["runtime_s"]) == (1, "ok", 6)
    assert (job["submit_time"], job["wait_s"]) == (pd.Timestamp("2026-12-07 07:55:36"), 0)
    assert notes[FIRST_SUBMIT] == 1


def test_a_pending_line_without_a_wait_leaves_the_wait_column_numbers(tmp_path):
    """A line not ended carries its job's wait (J1, s45); where no such line knows one (every
    one pending its first run) the column stays float, not object, in the merged table."""
    pending = tmp_path / "pending.txt"
    head = S45["completed-P.txt"].read_text().splitlines()[0]
    pending.write_text(f"{head}\n9|9|root|x|debug|2026-12-07T07:58:07|Unknown|Unknown|PENDING"
                       "|1|1|00:01:00|0\n")
    table, _, _ = ingest([pending, S45["completed-P.txt"]])
    assert table["wait_s"].dtype == float and table["wait_s"].tolist() == [125]


def test_an_array_cancelled_before_any_task_ran_is_one_job_in_a_p_and_a_json_export():
    """s48 tester P4: -P wrote the array 56663562_[1-5], --json 56663562: one array counted as
    two cancelled jobs when both exports were given."""
    from .test_sacct_json import HELD, HELD_P, HELD_PENDING, HELD_PENDING_P

    for files in ([HELD_PENDING_P, HELD_PENDING], [HELD_PENDING, HELD_PENDING_P]):
        table, _, notes = ingest(files)
        assert sorted(table["job_id"]) == ["56663562_[1-5]", "56663563_2"]
        assert sorted(table["status"]) == ["cancelled", "ok"]
        assert ID_FORMS_NOT_TIED not in notes
    table, _, _ = ingest([HELD_P, HELD])
    assert sorted(table["job_id"]) == ["56663615_[1-5%2]", "56663616_[0,3,6,9]"]


#: The note on copies of one job in several files, kept once.
SAME_JOB = ("same job in several files, kept once (sacct -P preferred, then the copy with the "
            "most fields known)")


def _columns_of(path, out, columns: list[str]):
    """``path``'s -P export with only ``columns``, as sacct --format=... writes them."""
    lines = path.read_text().splitlines()
    at = [lines[0].split("|").index(c) for c in columns]
    out.write_text("".join("|".join(line.split("|")[i] for i in at) + "\n" for line in lines))
    return out


@pytest.mark.parametrize("columns", [["JobID", "State", "ElapsedRaw"],
                                     ["JobID", "State", "Submit", "Start", "End", "ElapsedRaw",
                                      "TimelimitRaw", "NNodes"]])
@pytest.mark.parametrize("narrow_first", [False, True])
def test_an_export_of_fewer_columns_holds_the_same_jobs_not_requeues_or_other_values(
        tmp_path, columns, narrow_first):
    """s48 tester P12: beside the full export, one without Submit made every job "an earlier
    attempt of a requeued job", and one without User every job "copies that disagree ...
    check which file is right": a value a copy lacks was compared as another value."""
    narrow = _columns_of(UTC_P, tmp_path / "narrow.txt", columns)
    alone = ingest([UTC_P])[0].drop(columns="source_file")
    table, _, notes = ingest([narrow, UTC_P] if narrow_first else [UTC_P, narrow])
    pd.testing.assert_frame_equal(table.drop(columns="source_file").reset_index(drop=True),
                                  alone.reset_index(drop=True))
    assert dict(notes) == {SAME_JOB: 3}


def test_a_requeued_jobs_last_attempt_in_a_D_and_a_plain_export_is_one_copy_not_two():
    """s48 tester P12: the -D export's copy (submit_time moved back to the first submission)
    and the plain export's (the requeue's Submit) of one attempt were "an earlier attempt of a
    requeued job": copies are matched by the attempt's own Submit."""
    table, _, notes = ingest([S45["completed-D-P.txt"], S45["completed-P.txt"]])
    alone = ingest([S45["completed-D-P.txt"]])[0]
    pd.testing.assert_frame_equal(table.drop(columns="source_file"),
                                  alone.drop(columns="source_file"))
    assert dict(notes) == {SAME_JOB: 1}
