"""Reading job logs: kinds, every capture, several files into one table, writing the table,
the CLI, and sacct of jobs just run on the test Slurm."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pandas as pd
import pytest

from hpcds1mpi.errors import IngestError
from hpcds1mpi.records.ingest import (JOB_COLUMNS, detect_kind, ingest, read_job_log,
                                      write_job_table)
from hpcds1mpi.records.ingest.job_logs import read_job_table
from tests.records.ingest.captures import CAPTURE_FILES, CAPTURES, DATA, EXPORTS, needs_captures
from tests.records.ingest.joblogs import (CSD3, CURIE, EAGLE, EURORA, GAIA, MARCONI, THETA,
                                          needs_joblogs)


@needs_captures
@pytest.mark.parametrize("name", CAPTURE_FILES)
def test_every_capture_reads_without_loss(name):
    df, report = read_job_log(CAPTURES / name)
    assert list(df.columns) == [c for c, _ in JOB_COLUMNS]
    assert sum(report.dropped.values()) == 0, report.lines()
    assert report.jobs == len(df) == (2 if "oom-cgroup" in name else 13)
    assert set(df["source_kind"]) == {"sacct-json" if name.endswith(".json") else "sacct-p"}


@needs_captures
def test_json_and_parsable_of_the_same_jobs_are_kept_once_preferring_parsable():
    table, reports, notes = ingest([CAPTURES / "sacct.json", CAPTURES / "sacct-parsable2.txt"])
    assert len(table) == 13 and set(table["source_kind"]) == {"sacct-p"}
    assert sum(notes.values()) == 13


@pytest.mark.parametrize("content,match", [
    ("JobId=1 UserId=root(0) Name=x JobState=FAILED\n", "jobcomp"),
    ("ClusterName=x\nSlurmctldHost=localhost\n", "not a job log of a known kind"),
    ("1|a|debug|COMPLETED\n", "no JobID header"),
    ("", "empty file; export the job log again"),
    ('{"meta": {}, "errors": []}', "no 'jobs' list|JSON without"),
    ("{not json", "not valid JSON"),
])
def test_wrong_kind_is_a_one_line_error(tmp_path, content, match):
    path = tmp_path / "input.txt"
    path.write_text(content)
    with pytest.raises(IngestError, match=match) as info:
        read_job_log(path)
    assert "\n" not in str(info.value)


def test_wrong_kind_parquet_and_forced_kinds(tmp_path):
    path = tmp_path / "other.parquet"
    pd.DataFrame({"a": [1], "b": [2]}).to_parquet(path)
    with pytest.raises(IngestError, match="without PM100/Adastra job columns"):
        read_job_log(path)
    with pytest.raises(IngestError, match="not a parquet file"):
        read_job_log(DATA / "sacct-energy-gpu.txt", kind="pm100")
    js = tmp_path / "jobs.json"
    js.write_text('{"jobs": []}')
    with pytest.raises(IngestError, match="not sacct -P output"):
        read_job_log(js, kind="sacct-p")
    with pytest.raises(IngestError, match="not valid JSON"):
        read_job_log(DATA / "sacct-energy-gpu.txt", kind="sacct-json")


def test_file_with_only_malformed_rows_is_an_error(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_text("JobID|State|ElapsedRaw\n1|WHAT|3\n2|RUNNING|4\n")
    with pytest.raises(IngestError, match="no job could be read"):
        read_job_log(path)


def test_write_job_table_round_trip(tmp_path):
    df, _ = read_job_log(DATA / "sacct-energy-gpu.txt")
    back = pd.read_parquet(write_job_table(df, tmp_path / "jobs.parquet"))
    pd.testing.assert_frame_equal(df, back, check_dtype=False)
    with pytest.raises(IngestError, match=".parquet or .csv"):
        write_job_table(df, tmp_path / "jobs.xlsx")


@pytest.mark.slurm
def test_ingest_sacct_of_jobs_just_run(slurm, tmp_path):
    if not slurm.accounting:
        pytest.skip("the test Slurm runs without accounting (HPCDS1MPI_SLURM_ACCOUNTING=0)")
    ok = tmp_path / "ok.sh"
    ok.write_text(f"#!/bin/bash\nsrun --mpi=pmi2 --kill-on-bad-exit=1 {sys.executable} -c "
                  "'from mpi4py import MPI; MPI.COMM_WORLD.Barrier()'\n")
    bad = tmp_path / "bad.sh"
    bad.write_text("#!/bin/bash\nsleep 1\nexit 3\n")
    ok_log = tmp_path / "ok.out"
    bad_id = slurm.sbatch(bad, "-N1", "-n1", "-J", "ingest_bad", "-o", "/dev/null")
    ok_id, _, _ = slurm.run_job(lambda: slurm.sbatch(ok, "-N2", "--ntasks-per-node=1", "-J",
                                                     "ingest_ok", "-o", str(ok_log)),
                                ok_log, timeout=120)
    slurm.wait(bad_id, timeout=120)
    ids = [ok_id, bad_id]
    # slurmdbd gets the end records asynchronously: poll sacct (bounded) until both are final
    capture = tmp_path / "sacct.txt"
    for _ in range(40):
        res = slurm.cmd(["sacct", "-P", "--format=ALL", "-j", ",".join(map(str, ids))])
        capture.write_text(res.stdout)
        try:
            df, report = read_job_log(capture)
        except IngestError:
            df = pd.DataFrame()
        if len(df) == 2:
            break
        subprocess.run(["sleep", "0.5"], check=True)
    jobs = {r["workload"]: r for r in df.to_dict("records")}
    assert set(jobs) == {"ingest_ok", "ingest_bad"}, capture.read_text()
    assert (jobs["ingest_ok"]["status"], jobs["ingest_ok"]["nodes"], jobs["ingest_ok"]["ranks"]) \
        == ("ok", 2, 2)
    assert (jobs["ingest_bad"]["status"], jobs["ingest_bad"]["exit_code"]) == ("failed", 3)
    assert jobs["ingest_bad"]["partition"] == "debug" and jobs["ingest_ok"]["user"] == "root"


# ------------------------------------------------- out-of-range values (issue #14, schemas/jobs)

HEADER = "JobID|JobName|State|ElapsedRaw|Elapsed|NNodes|ConsumedEnergyRaw\n"
GOOD = "2|b|COMPLETED|10||1|\n"


@pytest.mark.parametrize("line, reason", [
    ("1|a|COMPLETED|-5||1|\n", "runtime_s negative"),  # issue #14: ElapsedRaw -5 was a runtime
    ("1|a|COMPLETED|99999999999||1|\n", "runtime_s absurd (> 3.15e+07)"),
    ("1|a|COMPLETED|10||-3|\n", "nodes negative"),
    ("1|a|COMPLETED|10||2000000|\n", "nodes absurd (> 1e+06)"),
    ("1|a|COMPLETED|10||1|inf\n", "energy_j not finite (inf)"),
    ("1|a|COMPLETED|inf||1|\n", "unparseable value (bad number)"),
    ("1|a|COMPLETED||nan|1|\n", "unparseable value (bad duration)"),
    ("1|a|COMPLETED|nan||1|\n", "unparseable value (bad number)"),
    ("1|a|COMPLETED||-5|1|\n", "unparseable value (bad duration)"),
])
def test_sacct_values_out_of_range_are_counted_as_malformed(tmp_path, line, reason):
    path = tmp_path / "s.txt"
    path.write_text(HEADER + line + GOOD)
    df, report = read_job_log(path)
    assert list(df["job_id"]) == ["2"] and report.jobs == 1
    assert dict(report.dropped) == {reason: 1}, report.lines()
    assert "1 malformed/skipped" in report.lines()[0]


def test_json_values_out_of_range_are_counted_as_malformed(tmp_path):
    def job(jid, elapsed):
        return {"job_id": jid, "name": "x", "state": {"current": "COMPLETED"},
                "time": {"elapsed": elapsed}, "allocation_nodes": 1}

    path = tmp_path / "s.json"
    path.write_text(json.dumps({"jobs": [job(1, -5), job(2, float("nan")), job(3, 7)]}))
    df, report = read_job_log(path)
    assert list(df["job_id"]) == ["3"] and df["runtime_s"].tolist() == [7.0]
    assert dict(report.dropped) == {"runtime_s negative": 1,
                                    "unparseable job entry (ValueError)": 1}


def test_parquet_power_out_of_range_is_counted(tmp_path):
    path = tmp_path / "a.parquet"
    pd.DataFrame({"job_id": [1, 2, 3], "num_nodes_alloc": [1, 1, 1], "run_time": [10, 10, 10],
                  "job_state": ["COMPLETED"] * 3,
                  "node_power_consumption": [100.0, -50.0, 1e12]}).to_parquet(path)
    df, report = read_job_log(path, "adastra")
    assert df["job_id"].tolist() == ["1"]
    assert dict(report.dropped) == {"energy_j negative": 1, "avg_power_w absurd (> 1e+08)": 1}


def test_a_log_of_only_malformed_jobs_is_refused_with_the_reasons(tmp_path):
    path = tmp_path / "s.txt"
    path.write_text(HEADER + "1|a|COMPLETED|-5||1|\n")
    with pytest.raises(IngestError, match=r"no job could be read as sacct-p \(1 x runtime_s negative"):
        read_job_log(path)


# -- the job table goes in whole or not at all (#14) -------------------------------------------

def test_write_job_table_replaces_whole_and_leaves_no_temporary(tmp_path):
    from tests.test_atomic import temporaries

    df, _ = read_job_log(DATA / "sacct-energy-gpu.txt")
    out = tmp_path / "deep" / "jobs.csv"  # missing parents are created, as before
    write_job_table(df, out)
    write_job_table(df.head(2), out)
    assert len(pd.read_csv(out)) == 2 and temporaries(tmp_path) == []


@pytest.mark.parametrize("case, message", [
    ("directory", "is a directory; give a file name"),
    ("parent is a file", "is a file, not a folder"),
])
def test_write_job_table_unusable_path_is_one_usage_line(tmp_path, case, message):
    from hpcds1mpi.errors import OutputError
    from tests.test_atomic import digests

    df, _ = read_job_log(DATA / "sacct-energy-gpu.txt")
    (tmp_path / "jobs.parquet").mkdir()
    (tmp_path / "f").write_text("keep")
    out = tmp_path / ("jobs.parquet" if case == "directory" else "f/jobs.parquet")
    before = digests(tmp_path)
    with pytest.raises(OutputError, match=message) as err:
        write_job_table(df, out)
    assert err.value.exit_code == 2 and digests(tmp_path) == before


def test_write_job_table_failing_half_way_keeps_the_old_table(tmp_path, monkeypatch):
    from tests.test_atomic import digests

    df, _ = read_job_log(DATA / "sacct-energy-gpu.txt")
    out = write_job_table(df, tmp_path / "jobs.parquet")
    before = digests(tmp_path)

    def dies(self, path, *a, **k):
        with open(path, "wb") as fh:
            fh.write(b"PAR1 half")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(pd.DataFrame, "to_parquet", dies)
    from hpcds1mpi.errors import WriteError

    with pytest.raises(WriteError, match="disk is full") as err:
        write_job_table(df, out)
    assert err.value.exit_code == 1 and digests(tmp_path) == before


@needs_joblogs
@pytest.mark.parametrize("path, kind", [(CURIE, "swf"), (GAIA, "swf"), (THETA, "swf"),
                                        (EAGLE, "eagle"), (CSD3, "sacct-csv"),
                                        (EURORA, "eurora"), (MARCONI, "pm100")])
def test_every_shared_log_is_detected(path, kind):
    assert detect_kind(path) == kind


@needs_joblogs
def test_files_of_several_kinds_into_one_table_without_false_duplicates():
    """Rows of one file are never merged by ``ingest`` (Eagle's array tasks, CSD3's missing
    submit times): only a copy from another file is a duplicate."""
    table, reports, notes = ingest([EAGLE, CSD3, EURORA])
    assert len(table) == 1000 + 2000 + 5930 and not notes
    assert [r.kind for r in reports] == ["eagle", "sacct-csv", "eurora"]
    again, _, notes = ingest([EAGLE, EAGLE])
    assert len(again) == 1000 and sum(notes.values()) == 1000


def test_a_key_column_without_any_value_is_said_once(tmp_path):
    """A renamed User column gave every job an empty user with nothing said; a column a
    reader's note names already (no Submit: "submit_time and wait_s unknown") is not said
    twice."""
    head = "JobIDRaw,JobName,Partition,ElapsedRaw,Account,State,{user},AllocNodes,Start,End\n"
    row = "{i},j,p,60,a,COMPLETED,alice,1,2023-07-01T00:00:00,2023-07-01T00:01:00\n"
    for name, says in (("User", False), ("Username", True)):
        path = tmp_path / f"{name}.csv"
        path.write_text(head.format(user=name) + "".join(row.format(i=i) for i in range(1, 4)))
        _, report = read_job_log(path, kind="sacct-csv")
        said = [f for f in report.facts if f.startswith("no job has a value for user")]
        assert len(said) == int(says), report.lines()
    no_elapsed = tmp_path / "noel.csv"
    no_elapsed.write_text("JobIDRaw,JobName,Partition,Account,State,User,AllocNodes\n"
                          "1,j,p,a,COMPLETED,alice,1\n")
    _, report = read_job_log(no_elapsed, kind="sacct-csv")
    said = " ".join([*report.notes, *report.facts])
    assert said.count("submit_time") == 1, report.lines()
    assert "no job has a value for runtime_s" in said


@pytest.mark.parametrize("header, kind, missing", [
    ("job_id,user,wallclock_req,nodes_req,processors_req,state\n", "eagle", "run_time"),
    ("job_id,queue,used_nodes,req_walltime_s,run_time_s\n", "eurora", "pred_power_W"),
    ("JobIDRaw,JobName,Partition,ElapsedRaw\n", "sacct-csv", "State"),
])
def test_a_csv_log_missing_one_needed_column_is_named_by_auto(tmp_path, header, kind, missing):
    """With --kind auto, a known CSV with one column removed was 'not a job log of a known
    kind'; the column it lacks is named, in one line, as with --kind."""
    path = tmp_path / "cut.csv"
    path.write_text(header + ",".join(["1"] * header.count(",")) + ",x\n")
    assert detect_kind(path) == kind
    with pytest.raises(IngestError, match=f"CSV needs the column\\(s\\) [^(]*{missing}") as info:
        read_job_log(path)
    assert "\n" not in str(info.value)
    other = tmp_path / "other.csv"
    other.write_text("a,b,run_time\n1,2,3\n")
    with pytest.raises(IngestError, match="not a job log of a known kind"):
        detect_kind(other)


@needs_joblogs
def test_the_same_jobs_in_two_files_that_disagree_are_said_apart(tmp_path):
    from tests.records.ingest.joblogs import swf_lines, swf_slice

    first = swf_slice(GAIA, tmp_path / "a.swf", jobs=50)
    header, body = swf_lines(GAIA)
    changed = []
    for line in body[:50]:  # every run time 7 s longer (field 4)
        fields = line.split()
        fields[3] = str(int(fields[3]) + 7) if int(fields[3]) >= 0 else fields[3]
        changed.append(" ".join(fields) + "\n")
    second = tmp_path / "b.swf"
    second.write_text("".join(header + changed))
    table, _, notes = ingest([first, second])
    assert len(table) == 50
    disagree = [n for reason, n in notes.items() if "disagree" in reason]
    assert disagree and disagree[0] >= 45  # was: only "kept once", the conflict unseen
    same, _, notes = ingest([first, swf_slice(GAIA, tmp_path / "c.swf", jobs=50)])
    assert not [reason for reason in notes if "disagree" in reason]


@needs_captures
@pytest.mark.parametrize("name,kind", [("sacct-parsable2.txt", "sacct-p"),
                                       ("sacct.json", "sacct-json")])
def test_a_byte_order_mark_does_not_hide_the_kind(tmp_path, name, kind):
    # Was: "no JobID header" for a sacct -P export saved with a BOM, read by --kind only.
    path = tmp_path / name
    path.write_bytes(b"\xef\xbb\xbf" + (CAPTURES / name).read_bytes())
    assert detect_kind(path) == kind
    assert len(read_job_log(path)[0]) == len(read_job_log(CAPTURES / name)[0])


# -- one time zone for -P and --json, wrong exports, a job table as an input (tester s25) ----

@needs_captures
def test_parsable_in_local_time_and_json_in_epoch_match_in_any_time_zone(tmp_path,
                                                                        monkeypatch):
    """sacct -P prints local time, --json epoch seconds: in Paris every job was read twice,
    an hour apart. The captures were made in UTC; sacct in Paris prints each time an hour
    later, which is what the copy below holds."""
    import re
    import time

    text = (CAPTURES / "sacct-parsable2.txt").read_text()
    shifted = re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d",
                     lambda m: (pd.Timestamp(m.group(0)) + pd.Timedelta(hours=1)).isoformat(),
                     text)
    paris = tmp_path / "paris.txt"
    paris.write_text(shifted)
    monkeypatch.setenv("TZ", "Europe/Paris")
    time.tzset()
    try:
        table, reports, notes = ingest([paris, CAPTURES / "sacct.json"])
    finally:
        monkeypatch.undo()
        time.tzset()
    assert len(table) == 13 and set(table["source_kind"]) == {"sacct-p"}
    assert sum(notes.values()) == 13
    assert any("Europe/Paris" in fact for fact in reports[0].facts)


@pytest.mark.parametrize("text, message", [
    ("JobID           JobName  Partition      State\n"
     "------------ ---------- ---------- ----------\n"
     "56403896            ok1      debug  COMPLETED\n", "sacct's fixed-width output"),
    # A header that does not make the delimiter certain (a name with a space: not sacct's);
    # one that does is read (s43 tester H8, test_sacct_text.py).
    ("JobID;Job Name;State\n1;a;COMPLETED\n", "separated by ';'"),
    ("\n\n", "empty file"),
])
@pytest.mark.parametrize("kind", ["auto", "sacct-csv", "sacct-p"])
def test_common_wrong_exports_say_what_to_do_under_any_kind(tmp_path, text, message, kind):
    """Was: 'not a job log ... --kind KIND reads it' (no kind does), and with --kind
    sacct-csv 'needs the column(s) State (has JobID ... State ...)'."""
    path = tmp_path / "wrong.txt"
    path.write_text(text)
    with pytest.raises(IngestError, match=message) as info:
        read_job_log(path, kind=kind)
    assert "\n" not in str(info.value) and "--kind KIND" not in str(info.value)


@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_a_job_table_ingest_wrote_is_read_back_and_merges(tmp_path, suffix):
    """ingest refused its own output ('not a job log of a known kind'), so histories could
    not be merged. Read back, each job keeps its source, so the log read again dedups."""
    log = DATA / "sacct-energy-gpu.txt"
    first, _, _ = ingest([log])
    out = write_job_table(first, tmp_path / f"jobs{suffix}")
    assert detect_kind(out) == "job-table"
    table, reports, notes = ingest([out, log, DATA / "sacct-malformed.txt"])
    assert reports[0].kind == "job-table" and reports[0].jobs == len(first)
    assert sum(notes.values()) == len(first)  # the same jobs, kept once
    assert len(table) == len(first) + 1
    assert set(table["source_file"]) == {str(log), str(DATA / "sacct-malformed.txt")}
    back = table[table["source_file"] == str(log)].reset_index(drop=True)
    cols = ["job_id", "status", "runtime_s", "submit_time", "nodes", "mem_req_gb",
            "peak_rss_mb", "source_kind"]  # (CSV keeps no difference between "" and NA)
    pd.testing.assert_frame_equal(back[cols], first[cols], check_dtype=False)
    with pytest.raises(IngestError, match="a job table hpcds1mpi ingest wrote"):
        read_job_log(out, kind="pm100" if suffix == ".parquet" else "sacct-csv")


@needs_joblogs
@pytest.mark.parametrize("packer", ["gzip", "bz2", "lzma"])
@pytest.mark.parametrize("kind", ["auto", "eagle"])
def test_a_compressed_csv_log_says_to_decompress_it(tmp_path, packer, kind):
    import importlib

    path = tmp_path / "eagle.csv.z"
    path.write_bytes(importlib.import_module(packer).compress(EAGLE.read_bytes()))
    with pytest.raises(IngestError, match="-compressed.*: only SWF logs are read compressed; "
                                          "decompress it first") as info:
        read_job_log(path, kind=kind)
    assert "\n" not in str(info.value)


def test_of_two_copies_of_a_job_the_one_with_step_data_is_kept():
    """sacct -X given first, the full export second: the -X copy (no ranks, RSS or CPU time)
    was kept, the first file winning, under a note that said 'sacct -P preferred'."""
    x_first = [EXPORTS / "no-steps-X.txt", EXPORTS / "requeued.txt"]
    for files in (x_first, x_first[::-1]):
        table, _, notes = ingest(files)
        assert set(table["source_file"]) == {str(EXPORTS / "requeued.txt")}
        job = table[table["job_id"] == "56435714"].iloc[0]
        assert (job["ranks"], job["cpu_s"]) == (2, pytest.approx(0.044))
        assert sum(notes.values()) == 2


def test_utf16_text_is_said_with_the_conversion():
    """s31 tester R7: PowerShell's `>` writes UTF-16; it read as "no JobID header"."""
    path = EXPORTS / "s31-utf16.txt"
    said = (f"{path}: UTF-16 text (as PowerShell's > writes it), not UTF-8; convert it first: "
            f"iconv -f UTF-16 -t UTF-8 {path} > jobs.txt (or in PowerShell: Out-File -Encoding "
            "utf8)")
    for kind in ("auto", "sacct-p", "sacct-csv"):
        with pytest.raises(IngestError) as caught:
            read_job_log(path, kind)
        assert str(caught.value) == said


def test_several_files_leaving_no_job_are_refused_not_written_empty(tmp_path):
    """s32 verifier V2: two files whose jobs all went as clashes wrote an empty table with exit
    0; several files leaving no job are refused in one line, as one file giving none is."""
    from collections import Counter

    from hpcds1mpi.records.ingest.job_logs import refuse_no_jobs

    table, reports, _ = ingest([EXPORTS / "s31-utc-P.txt", EXPORTS / "s31-new-york-P.txt"])
    refuse_no_jobs(table, ["a.txt", "b.txt"], reports, Counter())  # jobs left: no error
    notes = Counter({"two different jobs under one id, every copy dropped": 6})
    with pytest.raises(IngestError) as said:
        refuse_no_jobs(table.iloc[:0], ["a.txt", "b.txt"], reports, notes)
    message = str(said.value)
    assert message.startswith("a.txt, b.txt: no job left of the 6 read (6 x two different jobs "
                              "under one id, every copy dropped); nothing written: ingest each "
                              "file on its own") and "\n" not in message


@needs_joblogs
@pytest.mark.parametrize("log", [EAGLE, EURORA])
def test_a_semicolon_separated_csv_log_is_told_to_use_commas(tmp_path, log):
    """s36 tester L8: an Eagle or Eurora CSV saved with ';' got "not a job log of a known kind"
    in auto mode; the fix ("save it as CSV with ','") came only with --kind."""
    path = tmp_path / "log.csv"
    path.write_text("\n".join(line.replace(",", ";")
                              for line in log.read_text().splitlines()[:20]) + "\n")
    with pytest.raises(IngestError, match="not comma-separated; save it as CSV with ','"):
        read_job_log(path)


def test_a_file_of_only_running_jobs_is_skipped_among_others_not_failing_them(tmp_path):
    # s43 tester H6: an export taken while its jobs ran failed the whole ingest.
    head = "JobID|JobName|User|State|Submit|Start|End|ElapsedRaw|Timelimit|NNodes|NCPUS\n"
    done, running = tmp_path / "done.txt", tmp_path / "running.txt"
    done.write_text(head + "1|a|u|COMPLETED|2026-12-07T01:46:36|2026-12-07T01:46:36|"
                    "2026-12-07T01:46:38|2|00:10:00|1|1\n")
    running.write_text(head + "2|b|u|RUNNING|2026-12-07T01:46:36|2026-12-07T01:46:36|Unknown|"
                       "30|00:10:00|1|1\n")
    table, reports, _ = ingest([done, running])
    assert table.job_id.tolist() == ["1"]
    assert reports[1].jobs == 0 and any("skipped" in f for f in reports[1].facts)
    with pytest.raises(IngestError, match="ended"):
        ingest([running, running])


@pytest.mark.timeout(20)
def test_a_fifo_or_device_is_said_to_be_one_not_missing(tmp_path):
    """Was: ingest and recommend --history called a FIFO or /dev/null "no such file", which
    sends the user looking for a typo (s47 tester M3)."""
    os.mkfifo(tmp_path / "fifo")
    for path, kind in ((tmp_path / "fifo", "a FIFO"), ("/dev/null", "a character device")):
        with pytest.raises(IngestError, match=f"{path}: {kind}, not a regular file; give the"):
            read_job_log(path)
        with pytest.raises(IngestError,
                           match=f"--history {path}: {kind}, not a regular file; give the"):
            read_job_table(path, what="--history")
