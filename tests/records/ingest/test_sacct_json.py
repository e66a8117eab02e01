"""`sacct --json`: the 22.05 layout and the newer ones."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from hpcds1mpi.records.ingest import read_job_log
from hpcds1mpi.records.ingest.slurm_fields import EARLIER_ATTEMPT, PENDING_ARRAY_TASKS
from tests.records.ingest.captures import CAPTURES, EXPORTS, by_id, needs_captures
from tests.scaling import assert_linear, best_seconds


@needs_captures
def test_sacct_json_2205_exit_codes_are_marked_unknown_not_zero():
    js, report = read_job_log(CAPTURES / "sacct.json")
    ps, _ = read_job_log(CAPTURES / "sacct-parsable2.txt")
    j, p = by_id(js), by_id(ps)
    assert set(j) == set(p)
    for jid in ("1", "3", "5", "9_2"):  # exit 1 / 3 in -P, SUCCESS/0 in 22.05 JSON
        assert pd.isna(j[jid]["exit_code"]) and p[jid]["exit_code"] > 0
    assert report.notes["22.05 --json exit code unreliable (set to missing; use sacct -P)"] == 4
    for jid in p:
        assert j[jid]["status"] == p[jid]["status"], jid
        for col in ("nodes", "ranks", "threads", "runtime_s", "mem_req_gb", "time_limit_s",
                    "peak_rss_mb"):
            a, b = j[jid][col], p[jid][col]
            assert (pd.isna(a) and pd.isna(b)) or a == b, (jid, col, a, b)
    # OverMemoryKill (README surprise 10): signal 9 at the 50M request, from the step's TRES
    # usage maximum, which is its MaxRSS (52584K); 365 days is backfill's "no limit".
    assert (j["7"]["status"], j["7"]["exit_signal"]) == ("oom", 9)
    assert j["7"]["peak_rss_mb"] == 52584 * 1024 / 2**20 and pd.isna(j["5"]["time_limit_s"])


def test_sacct_json_newer_layout(tmp_path):
    number = lambda n: {"set": True, "infinite": False, "number": n}  # noqa: E731
    doc = {
        "meta": {"plugin": {"type": "openapi/slurmdbd", "data_parser": "data_parser/v0.0.40"},
                 "slurm": {"version": {"major": "23", "minor": "11", "micro": "4"}}},
        "jobs": [{
            "job_id": 77, "name": "exit_three", "user": "carol", "partition": "cpu",
            "state": {"current": ["FAILED"], "reason": "NonZeroExitCode"},
            "exit_code": {"status": ["ERROR"], "return_code": number(3),
                          "signal": {"id": {"set": False, "number": 0}, "name": ""}},
            "allocation_nodes": 2, "array": {"job_id": 0, "task_id": {"set": False}},
            "time": {"elapsed": 40, "submission": 1700000000, "start": 1700000010,
                     "end": 1700000050, "limit": number(30)},
            "tres": {"allocated": [{"type": "cpu", "name": "", "count": 8},
                                   {"type": "node", "name": "", "count": 2},
                                   {"type": "gres", "name": "gpu", "count": 2}],
                     "requested": [{"type": "mem", "name": "", "count": 2000}]},
            "steps": [{"step": {"id": "77.0", "name": "a.out"}, "tasks": {"count": 4},
                       "state": ["FAILED"],
                       "tres": {"allocated": [{"type": "cpu", "count": 8}]},
                       "statistics": {"energy": {"consumed": number(4000)}}}],
        }, {"job_id": 78, "name": "queued", "state": {"current": ["PENDING"]}}],
    }
    path = tmp_path / "new.json"
    path.write_text(json.dumps(doc))
    df, report = read_job_log(path)
    (job,) = df.to_dict("records")
    assert (job["status"], job["exit_code"], job["exit_signal"]) == ("failed", 3, 0)
    assert (job["nodes"], job["ranks"], job["threads"], job["gpus"]) == (2, 4, 2, 2)
    assert job["energy_j"] == 4000 and job["avg_power_w"] == 100.0
    assert job["time_limit_s"] == 1800 and job["mem_req_gb"] == 2.0
    assert job["start_time"] == pd.Timestamp(1700000010, unit="s")
    assert not report.notes and report.dropped == {"not finished (pending/running)": 1}


@needs_captures
def test_a_byte_order_mark_before_the_json_reads_the_same(tmp_path):
    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf" + (CAPTURES / "sacct.json").read_bytes())
    a = read_job_log(path, kind="sacct-json")[0].drop(columns="source_file")
    b = read_job_log(CAPTURES / "sacct.json")[0].drop(columns="source_file")
    pd.testing.assert_frame_equal(a, b)


@needs_captures
def test_a_job_that_ends_before_it_starts_is_dropped(tmp_path):
    doc = json.loads((CAPTURES / "sacct.json").read_text())
    job = doc["jobs"][1]
    job["time"]["end"] = job["time"]["start"] - 600
    path = tmp_path / "order.json"
    path.write_text(json.dumps(doc))
    df, report = read_job_log(path)
    assert len(df) == 12 and str(job["job_id"]) not in set(df["job_id"])
    assert dict(report.dropped) == {"End before Start": 1}


def _job(jid, submission=1796402942, **extra):
    return {"job_id": jid, "name": "x", "state": {"current": "COMPLETED"},
            "time": {"elapsed": 2, "submission": submission, "start": 1796402943,
                     "end": 1796402945}, "allocation_nodes": 1, **extra}


def test_a_time_outside_1970_2261_is_dropped_and_counted_not_a_crash(tmp_path):
    """time.submission 32503680000 (year 3000) crashed the cast to nanoseconds."""
    path = tmp_path / "far.json"
    path.write_text(json.dumps({"jobs": [_job(1), _job(2, submission=32503680000)]}))
    df, report = read_job_log(path)
    assert list(df["job_id"]) == ["1"]
    assert dict(report.dropped) == {
        "submit_time outside 1970-2261 (a placeholder or corrupt date)": 1}


def test_heterogeneous_job_components_get_sacct_p_ids():
    """sacct -P's JobID writes a hetjob's components 15+0 and 15+1; JSON gave them their raw
    ids (15, 16), so the same jobs read from both files were not matched."""
    from hpcds1mpi.records.ingest.sacct_json import _job_id

    assert _job_id(_job(15, het={"job_id": 15, "job_offset": 0})) == "15+0"
    assert _job_id(_job(16, het={"job_id": 15, "job_offset": 1})) == "15+1"
    newer = {"job_id": {"set": True, "infinite": False, "number": 15},
             "job_offset": {"set": True, "infinite": False, "number": 1}}
    assert _job_id(_job(16, het=newer)) == "15+1"
    assert _job_id(_job(17, het={"job_id": 0, "job_offset": None})) == "17"
    assert _job_id(_job(18, array={"job_id": 9, "task_id": 2})) == "9_2"


def test_the_earlier_attempt_of_a_requeued_job_is_counted_as_such():
    """--json lists a requeued job's REQUEUED attempt and its COMPLETED one: the first was
    counted as 'not finished (pending/running)', which it is not."""
    df, report = read_job_log(EXPORTS / "requeued.json")
    assert list(df["job_id"]) == ["56435727"] and df.iloc[0]["runtime_s"] == 25.0
    # s32 tester S6: a note, not a drop: a clean export is not malformed
    assert not report.dropped and report.notes["earlier attempt of a requeued job (the last "
                                               "attempt kept)"] == 1
    assert report.lines()[0].endswith("2 records -> 1 jobs, 0 malformed/skipped")


def test_a_job_cancelled_while_held_never_started():
    """s31 tester R6, --json: start = end (the cancel), no steps, no allocation."""
    jobs = by_id(read_job_log(EXPORTS / "s31-held-cancelled.json")[0])
    assert pd.isna(jobs["56472535"]["start_time"]) and pd.isna(jobs["56472535"]["wait_s"])
    assert jobs["56472538"]["wait_s"] == 138  # cancelled after it ran: started


def test_a_cut_json_says_it_was_cut_short():
    """s31 tester R7: "not valid JSON (Expecting value at line 20631)"."""
    from hpcds1mpi.errors import IngestError

    path = EXPORTS / "s31-json-cut.json"
    with pytest.raises(IngestError) as caught:
        read_job_log(path)
    assert str(caught.value) == (f"{path}: the JSON ends before it is complete (the file was "
                                 "cut short); export it again with sacct --json")


def _job_of_many_steps(path, count: int):
    """The real --json export with job 56472531 only, its step 1 repeated ``count`` times,
    each with 5 J measured."""
    doc = json.loads((EXPORTS / "s31-utc.json").read_text())
    job = next(j for j in doc["jobs"] if j["job_id"] == 56472531)
    step = next(s for s in job["steps"] if s["step"]["id"] == 1)
    job["steps"] = [s for s in job["steps"] if s["step"]["name"] == "batch"]
    for i in range(count):
        copy = json.loads(json.dumps(step))
        copy["step"]["id"] = i
        copy["statistics"]["energy"]["consumed"] = 5
        job["steps"].append(copy)
    doc["jobs"] = [job]
    path.write_text(json.dumps(doc))
    return path


def test_reading_a_job_of_many_steps_takes_time_linear_in_its_steps(tmp_path):
    """s32 tester S1: each step's energy looked its step up in the list of numbered steps,
    comparing whole dicts: 3 jobs of 2,000 steps took 34 s, of 4,000 over 120 s."""
    from hpcds1mpi.records.ingest.sacct_json import read_sacct_json

    def seconds(count: int) -> float:
        path = _job_of_many_steps(tmp_path / f"{count}.json", count)
        rows = []
        took = best_seconds(lambda: rows.append(read_sacct_json(path)[0]))
        assert rows[0][0]["energy_j"] == 5.0 * count  # every srun step's energy, summed
        return took

    assert_linear(seconds, 300)


def test_a_heterogeneous_job_and_a_requeued_one_read_as_sacct_p_reads_them():
    """s33 tester A11 (sacct --json of a real Slurm 22.05): hetjob 56495597's components (raw
    ids 56495597 and 56495598) were two 1-node jobs, and requeued 56495602 kept its requeue's
    submission: one job of 2 nodes, and the first submission with the wait before the first
    start, as from the same jobs' sacct -D -P."""
    df, report = read_job_log(EXPORTS / "s33-het-requeue.json")
    jobs = by_id(df)
    assert sorted(jobs) == ["56495597", "56495602"] and not report.dropped
    het = jobs["56495597"]
    assert (het["nodes"], het["cores"], het["ranks"], het["runtime_s"]) == (2, 2, 2, 1.0)
    again = jobs["56495602"]
    assert (again["submit_time"], again["wait_s"]) == (pd.Timestamp("2026-12-05 18:21:20"), 17.0)
    text = by_id(read_job_log(EXPORTS / "s33-het-requeue-D-P.txt")[0])
    for jid in jobs:
        for column in ("nodes", "cores", "ranks", "runtime_s", "submit_time", "start_time",
                       "end_time", "wait_s", "status"):
            assert jobs[jid][column] == text[jid][column], (jid, column)


def _attempts_under_one_id(tmp_path, second: dict):
    """One cluster's job 500 (alice's 'sim', submitted at t) and a second entry of id 500,
    30 min later, with ``second``'s fields changed."""
    first = _job(500, user="alice", cluster="alpha")
    first["name"] = "sim"
    later = json.loads(json.dumps(first))
    for key in ("submission", "start", "end"):
        later["time"][key] += 1800
    later.update(second)
    path = tmp_path / "one-id.json"
    path.write_text(json.dumps({"jobs": [first, later, _job(501, user="bob", cluster="alpha")]}))
    return path


def test_two_clusters_jobs_of_one_id_are_both_kept_qualified_by_cluster(tmp_path):
    """s37 tester J1: sacct -M alpha,beta --json lists each cluster's jobs under its own id
    counter; beta's job 500 was read as a requeue of alpha's (alpha's job lost, beta's given
    its submit time, "0 malformed")."""
    df, report = read_job_log(_attempts_under_one_id(
        tmp_path, {"cluster": "beta", "user": "frank", "name": "train"}))
    jobs = by_id(df)
    assert sorted(jobs) == ["501", "alpha:500", "beta:500"] and not report.dropped
    assert jobs["beta:500"]["user"] == "frank"
    assert jobs["beta:500"]["submit_time"] == pd.Timestamp(1796402942 + 1800, unit="s")
    assert not report.notes.get("earlier attempt of a requeued job (the last attempt kept)")
    assert report.notes["id shared by two clusters' jobs (sacct -M: each cluster counts its "
                        "own ids): both kept, job_id written CLUSTER:ID"] == 2


def test_two_users_jobs_of_one_id_in_one_cluster_are_dropped_and_named(tmp_path):
    """s37 tester J1: a forged or corrupt entry (another user and name, one cluster) replaced
    the job as its 'last attempt' and took its submit time; the -P reader drops both."""
    df, report = read_job_log(_attempts_under_one_id(
        tmp_path, {"user": "mallory", "name": "forged"}))
    assert list(df["job_id"]) == ["501"] and "mallory" not in set(df["user"])
    assert report.dropped == {"entry of two different jobs under one id of one cluster (user "
                              "or name differ: an id reused after a reset, or a corrupt or "
                              "edited export)": 2}
    assert any("jobs 500;" in fact for fact in report.facts)


def test_a_requeue_whose_attempts_agree_is_still_one_job_with_a_cluster(tmp_path):
    df, report = read_job_log(_attempts_under_one_id(tmp_path, {}))
    assert sorted(df["job_id"]) == ["500", "501"]
    assert report.notes["earlier attempt of a requeued job (the last attempt kept)"] == 1


def test_two_json_exports_joined_say_to_give_each_as_its_own_file(tmp_path):
    """s46 tester I3: "not valid JSON (Extra data at line 5516)", nothing on what to do."""
    from hpcds1mpi.errors import IngestError

    doc = json.dumps({"jobs": []}, indent=2) + "\n"
    path = tmp_path / "cat.json"
    path.write_text(doc + doc)
    with pytest.raises(IngestError, match=r"cat.json: a second JSON document at line 4 \(two "
                       r"sacct --json exports joined into one file\); give each export as its "
                       "own file"):
        read_job_log(path, kind="sacct-json")


#: s48 tester P4: real test-Slurm exports (-P without JobIDRaw, and --json) of arrays held and
#: cancelled before any task ran (``-a 1-5%2``, ``-a 0-9:3``), and of one held array cancelled
#: (``-a 1-5``) beside one whose task 2 ran while 1, 3 and 4 still pend.
HELD, HELD_P, HELD_PENDING, HELD_PENDING_P = (
    EXPORTS / f"s48-{name}" for name in ("held-arrays.json", "held-arrays-P.txt",
                                         "held-and-pending-arrays.json",
                                         "held-and-pending-arrays-P.txt"))


def test_an_array_entry_of_tasks_never_run_is_named_as_sacct_p_names_it():
    """s48 tester P4: --json names the array's one entry by its bare id (56663615) where -P
    writes 56663615_[1-5%2], so the same array read from both was two jobs. ``array.task`` is
    Slurm's bitmap in hex (0x3E: tasks 1-5), with the limit of tasks run at once."""
    assert sorted(read_job_log(HELD)[0]["job_id"]) == sorted(
        read_job_log(HELD_P)[0]["job_id"]) == ["56663615_[1-5%2]", "56663616_[0,3,6,9]"]
    df, report = read_job_log(HELD_PENDING)
    assert sorted(df["job_id"]) == ["56663562_[1-5]", "56663563_2"]
    # The pending array's entry (0x1A: tasks 1, 3 and 4) counts its tasks, as -P's line does.
    assert report.notes[PENDING_ARRAY_TASKS] == 3
    assert read_job_log(HELD_PENDING_P)[1].notes[PENDING_ARRAY_TASKS] == 3


@needs_captures
def test_an_export_without_its_meta_block_reads_failed_jobs_exit_codes_as_with_it(tmp_path):
    """s48 tester P9: a jq-filtered export ({jobs: [...]}, no meta) had no Slurm version, so
    22.05's SUCCESS/0 was read as written: FAILED jobs with exit code 0."""
    from hpcds1mpi.records.ingest.sacct_json import NO_VERSION_EXIT_CODES

    doc = json.loads((CAPTURES / "sacct.json").read_text())
    path = tmp_path / "jq.json"
    path.write_text(json.dumps({"jobs": doc["jobs"]}))
    bare, report = read_job_log(path)
    whole = read_job_log(CAPTURES / "sacct.json")[0]
    pd.testing.assert_series_equal(bare["exit_code"], whole["exit_code"])
    assert report.notes[NO_VERSION_EXIT_CODES] == 4
    assert "keep meta in a filtered export" in NO_VERSION_EXIT_CODES


def test_a_failed_job_without_meta_has_no_exit_code_0(tmp_path):
    path = tmp_path / "bare.json"
    failed = _job(1, state={"current": "FAILED"}, exit_code={"status": "SUCCESS",
                                                            "return_code": 0})
    path.write_text(json.dumps({"jobs": [failed, _job(2, exit_code={"status": "SUCCESS",
                                                                   "return_code": 0})]}))
    jobs = by_id(read_job_log(path)[0])
    assert pd.isna(jobs["1"]["exit_code"]) and jobs["2"]["exit_code"] == 0


@pytest.mark.parametrize("order", [[1, 0], [0, 1, 0], [1, 0, 1], [1, 1, 0, 0]])
def test_a_requeued_jobs_attempts_in_any_order_keep_the_newest_by_its_times(tmp_path, order):
    """s48 tester P14: exports merged with jq (newest first), or sorted, list a requeued job's
    REQUEUED attempt after its COMPLETED one; the entry listed last was taken for the job,
    which was dropped as "requeued and not finished yet", and a repeated entry was counted as
    an earlier attempt. Real test-Slurm export of job 56620548 (s44 tester O5): REQUEUED
    after 3 s, then COMPLETED in 6 s."""
    from hpcds1mpi.records.ingest.sacct_json import SAME_ENTRY_AGAIN

    export = EXPORTS / "s44-requeued-completed-D.json"
    doc = json.loads(export.read_text())
    alone = read_job_log(export)[0].drop(columns="source_file")
    doc["jobs"] = [doc["jobs"][i] for i in order]
    path = tmp_path / "merged.json"
    path.write_text(json.dumps(doc))
    df, report = read_job_log(path)
    pd.testing.assert_frame_equal(df.drop(columns="source_file"), alone)
    assert (df.iloc[0]["status"], df.iloc[0]["runtime_s"], df.iloc[0]["wait_s"]) == ("ok", 6, 0)
    assert not report.dropped and report.notes[EARLIER_ATTEMPT] == 1
    assert report.notes.get(SAME_ENTRY_AGAIN, 0) == len(order) - 2


def test_a_deadline_job_that_never_started_is_cancelled_as_in_a_p_export():
    """s48 tester P6 (left by fixer L for --json): the test Slurm's `sacct --json` of a job
    whose --deadline passed while it was held (2026-12-07) read as a timeout of 0 s, where its
    `-P` export reads as cancelled before it started."""
    df, report = read_job_log(EXPORTS / "s48-deadline-held.json")
    (job,) = df.to_dict("records")
    assert (job["status"], job["state_raw"], job["runtime_s"]) == ("cancelled", "DEADLINE", 0.0)
    assert pd.isna(job["start_time"])
    assert [n for r, n in report.notes.items() if r.startswith("DEADLINE job that never")] == [1]
