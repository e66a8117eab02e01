"""``hpcds1mpi ingest``: the per-file report and one-line errors."""

from __future__ import annotations

import time

import pandas as pd

from tests.helpers import run_cli
from tests.records.ingest.captures import DATA, EXPORTS
from tests.records.ingest.joblogs import CURIE, EURORA, THETA, needs_joblogs


def test_cli_ingest(tmp_path):
    out = tmp_path / "jobs.parquet"
    res = run_cli(["ingest", str(DATA / "sacct-malformed.txt"), str(DATA / "sacct-energy-gpu.txt"),
                   "--out", str(out)], timeout=120)
    assert res.returncode == 0, res.stderr
    assert "dropped 1 x step rows without their job line" in res.stdout
    assert "wrote 3 jobs" in res.stdout
    assert len(pd.read_parquet(out)) == 3
    bad = tmp_path / "jobcomp.txt"
    bad.write_text("JobId=1 UserId=root(0) Name=x JobState=FAILED\n")
    res = run_cli(["ingest", str(bad), "--out", str(out)], timeout=120)
    assert res.returncode != 0
    assert "Traceback" not in res.stderr and len(res.stderr.strip().splitlines()) == 1


def test_cli_ingest_refuses_a_bad_out_before_reading(tmp_path, capsys):
    """A wrong --out suffix or a folder at --out: one line, exit 2, before any log is read."""
    import pytest

    from hpcds1mpi.cli import main

    folder = tmp_path / "jobs.parquet"
    folder.mkdir()
    for out, fragment in ((tmp_path / "jobs.txt", ".parquet or .csv"), (folder, "directory")):
        with pytest.raises(SystemExit) as exit_info:
            main(["ingest", str(tmp_path / "never_read.txt"), "--out", str(out)])
        err = capsys.readouterr().err
        assert exit_info.value.code == 2 and err.count("\n") == 1 and fragment in err, err
        assert "never_read" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["jobs.parquet"]


def test_kind_choices_are_the_readers_kinds():
    from hpcds1mpi.commands.ingest import KIND_CHOICES
    from hpcds1mpi.records.ingest import KINDS

    assert KIND_CHOICES == ("auto", *KINDS)
    res = run_cli(["ingest", "--help"], timeout=60)
    for kind in KINDS:
        assert kind in res.stdout


@needs_joblogs
def test_curie_313k_lines_in_30_seconds_through_the_cli(tmp_path):
    """The issue's speed goal, on the path users run: a fresh process, shipped defaults."""
    out = tmp_path / "curie.parquet"
    start = time.perf_counter()
    res = run_cli(["ingest", str(CURIE), "--out", str(out)], timeout=120)
    seconds = time.perf_counter() - start
    assert res.returncode == 0, res.stderr
    assert seconds <= 30, f"{seconds:.1f} s"
    assert "312826 records -> 312826 jobs, 0 malformed/skipped" in res.stdout
    assert "(cancelled 17486, failed 8621, ok 281337, timeout 5382)" in res.stdout
    assert len(pd.read_parquet(out, columns=["job_id"])) == 312_826


@needs_joblogs
def test_cli_prints_dropped_lines_and_unknown_statuses(tmp_path):
    log = tmp_path / "bad.swf"
    log.write_text("; UnixStartTime: 0\n; MaxProcs: 8\n"
                   "1 0 5 100 4 -1 -1 4 600 -1 1 3 4 -1 -1 2 -1 -1\n"
                   "2 0 5 100 16 -1 -1 16 600 -1 1 3 4 -1 -1 2 -1 -1\n"
                   "3 0 5 100 4 -1 -1 4 600 -1 -1 3 4 -1 -1 2 -1 -1\n"
                   "4 0 5 100 4 -1 -1\n")
    res = run_cli(["ingest", str(log), "--out", str(tmp_path / "t.csv")], timeout=120)
    assert res.returncode == 0, res.stderr
    assert "4 records -> 2 jobs, 2 malformed/skipped" in res.stdout
    assert "dropped 1 x processors above the header's MaxProcs (8)" in res.stdout
    assert "dropped 1 x truncated line (fewer than 18 fields)" in res.stdout
    assert "(ok 1, unknown 1)" in res.stdout


@needs_joblogs
def test_procs_are_option_and_a_wrong_kind(tmp_path):
    out = tmp_path / "theta.parquet"
    res = run_cli(["ingest", str(THETA), "--out", str(out)], timeout=120)
    assert res.returncode == 0 and "processor fields read as nodes" in res.stdout
    assert pd.read_parquet(out, columns=["nodes"])["nodes"].min() == 128
    res = run_cli(["ingest", str(THETA), "--procs-are", "processors", "--out", str(out),
                   "--force"], timeout=120)  # the table read again, differently: replaced
    assert res.returncode == 0 and "read as nodes" not in res.stdout
    table = pd.read_parquet(out, columns=["nodes", "cores"])
    assert table["nodes"].isna().all() and table["cores"].min() == 128
    res = run_cli(["ingest", str(EURORA), "--kind", "swf", "--out", str(out), "--force"],
                  timeout=120)
    assert res.returncode != 0 and "not a Standard Workload Format log" in res.stderr
    assert "Traceback" not in res.stderr and len(res.stderr.strip().splitlines()) == 1


def test_the_input_log_is_never_the_output(tmp_path):
    """--out naming the log itself (or a link to it) would replace the log by its table."""
    log = tmp_path / "sacct.csv"
    log.write_text("JobIDRaw,JobName,Partition,ElapsedRaw,Account,State,AllocNodes,AllocCPUS,"
                   "Start,End\n1,j,p,60,a,COMPLETED,1,4,2023-07-01T00:00:00,"
                   "2023-07-01T00:01:00\n")
    before = log.read_bytes()
    (tmp_path / "link.csv").symlink_to(log)
    for out in (log, tmp_path / "link.csv"):
        proc = run_cli(["ingest", str(log), "--out", str(out)])
        assert proc.returncode == 2 and "is the input log" in proc.stderr, proc.stderr
        assert proc.stderr.count("\n") == 1
    assert log.read_bytes() == before


def test_out_replaces_a_table_ingest_wrote_but_not_another_file_without_force(tmp_path):
    """ingest --out overwrote any file (a colleague's table, a results CSV) without a word."""
    log = DATA / "sacct-energy-gpu.txt"
    for name in ("results.csv", "other.parquet"):
        theirs = tmp_path / name
        if name.endswith(".csv"):
            theirs.write_text("config,runtime\na,1.0\n")
        else:
            pd.DataFrame({"job_id": ["1"], "runtime": [1.0]}).to_parquet(theirs)
        before = theirs.read_bytes()
        proc = run_cli(["ingest", str(log), "--out", str(theirs)], timeout=120)
        assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
        assert "is not a job table hpcds1mpi wrote; pass --force" in proc.stderr
        assert theirs.read_bytes() == before
        proc = run_cli(["ingest", str(log), "--out", str(theirs), "--force"], timeout=120)
        assert proc.returncode == 0, proc.stderr
        # now it is one of ours: a rerun that lists it as an input writes it again
        proc = run_cli(["ingest", str(theirs), str(log), "--out", str(theirs)], timeout=120)
        assert proc.returncode == 0, proc.stderr


def test_a_job_table_not_among_the_inputs_is_kept_without_force(tmp_path):
    """`ingest new.log --out jobs.parquet` had replaced a table of 2000 jobs by the 998 of the
    new log (exit 0), while the help says listing the table as an input adds to it."""
    old_log, new_log = DATA / "sacct-energy-gpu.txt", DATA / "sacct-malformed.txt"
    for name in ("jobs.parquet", "jobs.csv"):
        table = tmp_path / name
        res = run_cli(["ingest", str(old_log), "--out", str(table)], timeout=120)
        assert res.returncode == 0, res.stderr
        before = table.read_bytes()
        res = run_cli(["ingest", str(new_log), "--out", str(table)], timeout=120)
        assert res.returncode == 2 and res.stderr.count("\n") == 1, res.stderr
        assert (f"{table} already holds 2 jobs (from {old_log}); to add the new jobs to it, "
                f"list it as an input (hpcds1mpi ingest {table} {new_log} --out {table}), or "
                "pass --force to replace it") in res.stderr
        assert table.read_bytes() == before and "wrote" not in res.stdout
        res = run_cli(["ingest", str(table), str(new_log), "--out", str(table)], timeout=120)
        assert res.returncode == 0, res.stderr
        assert "wrote 3 jobs" in res.stdout and "1 new, 2 it held already" in res.stdout
        res = run_cli(["ingest", str(new_log), "--out", str(table), "--force"], timeout=120)
        assert res.returncode == 0 and "wrote 1 jobs" in res.stdout, res.stderr


def test_a_job_table_takes_new_jobs_in_place(tmp_path):
    """`ingest table.parquet new.txt --out table.parquet` merges histories: the table ingest
    wrote is an input (it was 'not a job log of a known kind'), and may be the --out; a log
    given as --out is still refused."""
    table = tmp_path / "jobs.parquet"
    res = run_cli(["ingest", str(DATA / "sacct-energy-gpu.txt"), "--out", str(table)],
                  timeout=120)
    assert res.returncode == 0, res.stderr
    res = run_cli(["ingest", str(table), str(DATA / "sacct-energy-gpu.txt"),
                   str(DATA / "sacct-malformed.txt"), "--out", str(table)], timeout=120)
    assert res.returncode == 0, res.stderr
    assert "job-table, 2 records -> 2 jobs" in res.stdout
    assert "note: 2 x same job in several files" in res.stdout
    assert "wrote 3 jobs" in res.stdout and len(pd.read_parquet(table)) == 3


def test_an_empty_file_says_so_at_once(tmp_path):
    empty = tmp_path / "jobs.txt"
    empty.write_text("")
    res = run_cli(["ingest", str(empty), "--out", str(tmp_path / "t.parquet")], timeout=120)
    assert res.returncode == 2 and res.stderr.count("\n") == 1, res.stderr
    assert "empty file; export the job log again" in res.stderr


def test_a_long_first_swf_line_and_a_bzip2_log_in_a_real_process(tmp_path):
    """The tester's cases: a 19-field first line was kept one field off and the good line
    after it dropped as truncated; a .bz2 log was "not a job log of a known kind"."""
    import bz2

    text = ("; UnixStartTime: 1400749079\n1 0 10 100 4 -1 -1 4 200 -1 1 1 1 1 1 1 -1 -1 5\n"
            "2 50 10 300 8 -1 -1 8 600 -1 1 1 1 1 1 1 -1 -1\n")
    log = tmp_path / "f19.swf.bz2"
    log.write_bytes(bz2.compress(text.encode()))
    out = tmp_path / "t.parquet"
    res = run_cli(["ingest", str(log), "--out", str(out)], timeout=120)
    assert res.returncode == 0, res.stderr
    assert "2 records -> 1 jobs, 1 malformed/skipped" in res.stdout
    assert "dropped 1 x more than 18 fields" in res.stdout
    job = pd.read_parquet(out).iloc[0]
    assert (job["job_id"], job["runtime_s"], job["req_procs"], job["time_limit_s"]) == \
        ("2", 300, 8, 600)


def _run_bytes(argv, timeout=60, env=None):
    """run_cli, its output decoded as Python decodes names (a byte that is not UTF-8 kept)."""
    import os
    import subprocess

    from tests.helpers import hpcds1mpi_exe

    return subprocess.run([hpcds1mpi_exe(), *argv], capture_output=True, text=True,
                          errors="surrogateescape", timeout=timeout,
                          env={**os.environ, **(env or {})})


def test_names_with_bytes_that_are_not_utf8(tmp_path):
    """pyarrow takes UTF-8 names only and the table records each log's name: ingest had died
    with a UnicodeEncodeError traceback. A log or a .parquet --out with such a name is refused
    in one line before anything is read; a .csv --out takes it."""
    import os
    import shutil

    log = tmp_path / os.fsdecode(b"s\xff.txt")
    shutil.copy(DATA / "sacct-energy-gpu.txt", log)
    for argv in ([str(log), "--out", str(tmp_path / "j.parquet")],
                 [str(DATA / "sacct-energy-gpu.txt"), "--out",
                  str(tmp_path / os.fsdecode(b"j\xff.parquet"))]):
        res = _run_bytes(["ingest", *argv], timeout=120)
        assert res.returncode == 2 and "Traceback" not in res.stderr, res.stderr
        assert len(res.stderr.strip().splitlines()) == 1 and "\\xff" in res.stderr
        assert "not UTF-8" in res.stderr and "wrote" not in res.stdout
    assert os.listdir(tmp_path) == [log.name]
    csv = tmp_path / os.fsdecode(b"j\xff.csv")
    res = _run_bytes(["ingest", str(DATA / "sacct-energy-gpu.txt"), "--out", str(csv)],
                     timeout=120)
    assert res.returncode == 0 and "wrote 2 jobs" in res.stdout, res.stderr
    assert len(pd.read_csv(csv)) == 2


def _ingest_with_stdout(tmp_path, name: str, stdout=None, redirect: str = ""):
    """``ingest sacct-energy-gpu.txt --out NAME`` with its stdout as given (a descriptor, or a
    shell redirection): its status, stderr and table path."""
    import shlex
    import subprocess

    from tests.helpers import hpcds1mpi_exe

    out = tmp_path / name
    argv = [hpcds1mpi_exe(), "ingest", str(DATA / "sacct-energy-gpu.txt"), "--out", str(out)]
    if redirect:
        argv = ["bash", "-c", shlex.join(argv) + " " + redirect]
    proc = subprocess.run(argv, stdout=stdout, stderr=subprocess.PIPE, text=True, timeout=120)
    return proc, out


def test_the_table_is_written_before_a_word_is_printed(tmp_path):
    """s32 tester T6, T7: the per-file report was printed before the table was written, so a
    full stdout (rc 1, traceback) or a reader that had left (`| head -1`, 141) lost the table;
    a closed stdout (T5) wrote it and reported failure. Now the table is always written:
    exit 0 as if to /dev/null, 141 without a word, or the disk-full line and exit 1."""
    import os

    proc, out = _ingest_with_stdout(tmp_path, "closed.parquet", redirect=">&-")
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    assert len(pd.read_parquet(out)) == 2
    proc, out = _ingest_with_stdout(tmp_path, "full.parquet", redirect="> /dev/full")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.startswith("hpcds1mpi: error: standard output not written, the disk is "
                                  "full") and len(proc.stderr.splitlines()) == 1
    assert len(pd.read_parquet(out)) == 2
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the first line: `| head -1` at its worst
    proc, out = _ingest_with_stdout(tmp_path, "piped.parquet", stdout=write)
    os.close(write)
    assert proc.returncode == 141 and proc.stderr == "", proc.stderr
    assert len(pd.read_parquet(out)) == 2


def test_two_clusters_exports_with_one_id_range_give_every_job(tmp_path):
    """s32 verifier V2: two clusters' -P exports whose ids clash (another user and UID, 5 s
    apart) exited 0 with "wrote 0 jobs to jnAB.parquet ()", an empty table: each job is kept,
    from its own file, said in one note."""
    head = "JobID|JobIDRaw|JobName|User|UID|State|ExitCode|ElapsedRaw|Submit|Start|End"
    files = []
    for name, user, uid, second in (("a.txt", "alice", 1001, "00"), ("b.txt", "bob", 1002, "05")):
        lines = [head]
        for j in range(30):
            at = f"2024-01-01T00:{j:02d}:{second}"
            done = f"2024-01-01T00:{j + 1:02d}:{second}"
            lines += [f"{100000 + j}|{100000 + j}|app|{user}|{uid}|COMPLETED|0:0|60|{at}|{at}|"
                      f"{done}", f"{100000 + j}.batch|{100000 + j}.batch|batch|||COMPLETED|0:0|"
                      f"60|{at}|{at}|{done}"]
        files.append(tmp_path / name)
        files[-1].write_text("\n".join(lines) + "\n")
    out = tmp_path / "ab.parquet"
    res = run_cli(["ingest", *map(str, files), "--out", str(out)], timeout=120)
    assert res.returncode == 0, res.stderr
    assert "note: 30 x id with different jobs in different files" in res.stdout
    assert "wrote 60 jobs" in res.stdout and "()" not in res.stdout, res.stdout
    table = pd.read_parquet(out)
    assert table.groupby("source_file")["user"].unique().map(list).to_dict() == {
        str(files[0]): ["alice"], str(files[1]): ["bob"]}


def test_several_files_that_leave_no_job_exit_2_and_write_nothing(tmp_path):
    """s32 verifier V2: files whose every job went (here a real job and a record forged by a
    job name, in two files: which is real cannot be told) wrote an empty table with exit 0;
    refused in one line, as one file giving no job is."""
    lines = (EXPORTS / "forged-name-last.txt").read_text().splitlines()
    real, forged = tmp_path / "real.txt", tmp_path / "forged.txt"
    real.write_text("\n".join(lines[:3]) + "\n")
    forged.write_text("\n".join([lines[0], lines[4]]) + "\n")
    out = tmp_path / "t.parquet"
    res = run_cli(["ingest", str(real), str(forged), "--out", str(out)], timeout=120)
    assert res.returncode == 2 and res.stderr.count("\n") == 1, (res.stdout, res.stderr)
    assert "no job left of the 2 read" in res.stderr and "jobs 56435898" in res.stderr
    assert "nothing written" in res.stderr and not out.exists()


def test_o_is_short_for_out(tmp_path):
    """s37 tester J10: recommend writes with -o; ingest -o was 'No such option'."""
    out = tmp_path / "jobs.csv"
    res = run_cli(["ingest", str(DATA / "sacct-energy-gpu.txt"), "-o", str(out)], timeout=120)
    assert res.returncode == 0, res.stderr
    assert len(pd.read_csv(out)) > 0


def test_the_wrote_line_shows_a_newline_in_out_escaped(tmp_path, capsys):
    """"wrote 3 jobs to j" / "x.parquet ..." had split the line (s39 tester D11)."""
    from tests.badinput.harness import invoke

    out = tmp_path / "j\nx.parquet"
    res = invoke(capsys, ["ingest", str(DATA / "sacct-energy-gpu.txt"), "--out", str(out)])
    assert res.code == 0, res.err
    assert any(line.startswith(f"wrote 2 jobs to {tmp_path}/j\\nx.parquet")
               for line in res.out.splitlines()), res.out


def test_a_second_ingest_into_one_table_is_refused_and_the_first_keeps_it(tmp_path, capsys):
    """Two ingests into one table at once both said "wrote" and one's jobs were gone: the
    table is now checked and replaced under the output lock (s47 tester M6)."""
    from tests.badinput.harness import assert_runtime, invoke
    from tests.helpers import lock_held_elsewhere

    out = tmp_path / "jobs.parquet"
    res = invoke(capsys, ["ingest", DATA / "sacct-energy-gpu.txt", "--out", out])
    assert res.code == 0, res.err
    before = out.read_bytes()
    with lock_held_elsewhere(out) as lock:
        res = invoke(capsys, ["ingest", out, DATA / "sacct-malformed.txt", "--out", out])
        assert_runtime(res, "being written by another process", str(lock))
    assert out.read_bytes() == before
    assert not res.out


def test_an_ingest_into_a_new_folder_holds_the_lock_a_second_one_is_refused(tmp_path, capsys,
                                                                          monkeypatch):
    """The lock lies in --out's folder: an ingest into a folder that did not exist yet took
    none, and a second ingest into the same new table, started while the first read its
    logs, also said "wrote" (s47 left). The folder is made first now, and the lock taken."""
    import hpcds1mpi.records.ingest as readers
    from tests.badinput.harness import invoke

    out = tmp_path / "new" / "sub" / "jobs.parquet"
    second = []
    reading = readers.ingest

    def meanwhile(*args, **kwargs):  # the second ingest, in its own process, mid-read
        second.append(run_cli(["ingest", str(DATA / "sacct-malformed.txt"), "--out", str(out)],
                              timeout=120))
        return reading(*args, **kwargs)

    monkeypatch.setattr(readers, "ingest", meanwhile)
    res = invoke(capsys, ["ingest", DATA / "sacct-energy-gpu.txt", "--out", out])
    assert res.code == 0 and "wrote 2 jobs" in res.out, res.err
    assert second[0].returncode == 1, (second[0].stdout, second[0].stderr)
    assert "being written by another process" in second[0].stderr
    assert "wrote" not in second[0].stdout and len(pd.read_parquet(out)) == 2


def test_an_out_inside_a_bundle_is_refused_and_nothing_is_written(tmp_path, capsys):
    """ingest --out MODEL/jobs.parquet wrote into the bundle, which learn and train then
    refused (s47 left, as tester M11 for the commands that take --model)."""
    import shutil

    from tests.badinput.harness import assert_usage, invoke, snapshot
    from tests.helpers import REPO

    model = tmp_path / "bm"
    model.mkdir()
    shutil.copy(REPO / "hpcds1mpi" / "data" / "default_model" / "manifest.json", model)
    before = snapshot(tmp_path)
    for out in (model / "jobs.parquet", model / "new" / "jobs.csv"):
        res = invoke(capsys, ["ingest", DATA / "sacct-energy-gpu.txt", "--out", out])
        assert_usage(res, f"--out {out} is inside the model bundle {model}",
                     "choose a path outside it")
    assert snapshot(tmp_path) == before


def test_a_refused_ingest_into_a_new_folder_leaves_no_folder_behind(tmp_path, capsys):
    """The folder of a new --out is made before the lock is taken (above): an ingest that
    then writes no table (a log of no known kind) removes what it made, and nothing else."""
    from tests.badinput.harness import assert_usage, invoke

    bad = tmp_path / "bad.txt"
    bad.write_text("garbage\n")
    (tmp_path / "kept").mkdir()
    for out in (tmp_path / "new" / "sub" / "jobs.parquet", tmp_path / "kept" / "t" / "j.csv"):
        assert_usage(invoke(capsys, ["ingest", bad, "--out", out]), "not a job log")
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["bad.txt", "kept"]


def test_an_out_name_too_long_leaves_no_folder_behind(tmp_path, capsys):
    """--out new/folder/<a name the file system cannot hold>: the folder made for the lock is
    removed again and the refusal is the name's own line (the clean-up's stat had raised
    "File name too long" over it and left the folder behind, s48 left by fixer C)."""
    from tests.badinput.harness import assert_usage, invoke

    bad = tmp_path / "bad.txt"
    bad.write_text("garbage\n")
    out = tmp_path / "new" / "folder" / ("x" * 300 + ".csv")
    assert_usage(invoke(capsys, ["ingest", bad, "--out", out]), "file name too long",
                 "give a shorter path for the job table")
    deep = tmp_path / "deep"  # folders that fit PATH_MAX, with the file's whole path beyond it
    while len(str(deep)) < 3900:
        deep /= "d" * 200
    out = deep / ("j" * 250 + ".parquet")
    assert_usage(invoke(capsys, ["ingest", bad, "--out", out]), "file name too long")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.txt"]
