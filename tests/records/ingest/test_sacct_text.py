"""`sacct -P` text: real captures and made-up inputs."""

from __future__ import annotations

import pandas as pd
import pytest

from hpcds1mpi.errors import IngestError
from hpcds1mpi.records.ingest import read_job_log, read_sacct_parsable
from tests.records.ingest.captures import CAPTURES, DATA, EXPORTS, by_id, needs_captures
from tests.scaling import assert_linear, best_seconds


@needs_captures
def test_sacct_parsable_values_match_the_capture_readme():
    df, report = read_job_log(CAPTURES / "sacct-parsable2.txt")
    jobs = by_id(df)
    assert jobs["2"]["status"] == "ok" and jobs["2"]["runtime_s"] == 15.0
    assert jobs["2"]["peak_rss_mb"] == pytest.approx(76628 * 1024 / 2**20)  # MaxRSS in K
    assert jobs["2"]["cpu_s"] == pytest.approx(15.099)
    assert (jobs["5"]["status"], jobs["5"]["exit_code"]) == ("failed", 3)
    # Surprise 6: backfill records "no limit" as 365-00:00:00 (TimelimitRaw 525600).
    assert pd.isna(jobs["5"]["time_limit_s"])
    assert report.notes["time limit 365-00:00:00 (backfill's record of no limit): "
                        "time_limit_s NA"] == 1
    assert (jobs["6"]["status"], jobs["6"]["runtime_s"], jobs["6"]["time_limit_s"]) == (
        "timeout", 69.0, 60.0)
    assert jobs["8"]["status"] == "cancelled" and jobs["8"]["state_raw"] == "CANCELLED by 0"
    assert jobs["9_2"]["status"] == "failed" and jobs["9_2"]["exit_code"] == 1
    assert jobs["10"]["workload"] == "my `quoted` job, it's got spaces"
    assert jobs["10"]["peak_rss_mb"] == pytest.approx(4.50 * 1024**2 / 2**20)  # MaxRSS in M
    mpi = jobs["13"]
    assert (mpi["nodes"], mpi["ranks"], mpi["ranks_per_node"], mpi["threads"]) == (2, 2, 1, 1)
    assert mpi["mem_req_gb"] == pytest.approx(8.0) and mpi["gpus"] == 0
    assert pd.isna(jobs["1"]["ranks"]) and jobs["1"]["runtime_s"] == 0.0  # rejected at submit
    # OverMemoryKill: Slurm says FAILED / CANCELLED by 0 with signal 9 at the 50M request.
    assert (jobs["7"]["state_raw"], jobs["7"]["status"], jobs["7"]["exit_signal"]) == (
        "FAILED", "oom", 9)
    # no energy plugin: 0 J means "not measured", not a zero-energy job
    assert df["energy_j"].isna().all() and (df["energy_source"] == "").all()


@needs_captures
def test_format_all_multiline_records_equal_the_short_capture():
    short, _ = read_job_log(CAPTURES / "sacct-parsable2.txt")
    full, report = read_job_log(CAPTURES / "sacct-parsable2-all.txt")
    assert report.records == 30  # 54 physical lines: SubmitLine values hold newlines
    cols = ["job_id", "workload", "nodes", "ranks", "threads", "status", "exit_code",
            "runtime_s", "cpu_s", "peak_rss_mb", "mem_req_gb", "time_limit_s", "submit_time"]
    pd.testing.assert_frame_equal(short[cols], full[cols])
    assert set(full["user"]) == {"root"}


@needs_captures
def test_real_out_of_memory_under_cgroups():
    for name in ("oom-cgroup.sacct-parsable2.txt", "oom-cgroup.sacct.json"):
        jobs = by_id(read_job_log(CAPTURES / "extras" / name)[0])
        assert jobs["15"]["status"] == "oom" and jobs["15"]["exit_signal"] == 125
        # job 16 is FAILED 1:0 because srun returned 1; its step 16.0 is OUT_OF_MEMORY
        assert jobs["16"]["state_raw"] == "FAILED" and jobs["16"]["status"] == "oom"


def test_capture_from_our_own_test_slurm():
    df, report = read_job_log(DATA / "hpcds1mpi-slurm.sacct-all.txt")
    jobs = {r["workload"]: r for r in df.to_dict("records")}
    assert sum(report.dropped.values()) == 0
    assert (jobs["mpi_two_nodes"]["nodes"], jobs["mpi_two_nodes"]["ranks"]) == (2, 2)
    assert jobs["threads_two"]["threads"] == 2
    assert (jobs["exit_three"]["status"], jobs["exit_three"]["exit_code"]) == ("failed", 3)
    assert jobs["to_cancel"]["status"] == "cancelled"


def test_malformed_rows_are_counted_per_reason_never_dropped_silently():
    df, report = read_job_log(DATA / "sacct-malformed.txt")
    assert list(df["job_id"]) == ["2"]
    dropped = dict(report.dropped)
    assert dropped == {
        "more fields than the header ('|' inside a value; sacct does not escape it)": 1,
        "fewer fields than the header (truncated record)": 1,
        "not finished (pending/running)": 1,
        "step rows without their job line": 1,
        "unparseable value (bad exit code)": 1,
        "unparseable value (bad number)": 1,
        "unparseable value (unknown job state)": 1,
    }
    assert report.records == 9  # the 9 physical records after the header
    text = "\n".join(report.lines())
    assert "7 malformed/skipped" in text


def test_energy_gpus_and_older_reqmem_suffixes():
    jobs = by_id(read_job_log(DATA / "sacct-energy-gpu.txt")[0])
    gpu = jobs["100"]
    assert gpu["gpus"] == 8 and gpu["device"] == "gpu"  # untyped gres/gpu, not typed + untyped
    assert (gpu["ranks"], gpu["threads"], gpu["ranks_per_node"]) == (8, 2, 4)
    assert gpu["energy_j"] == 42000.0  # the srun steps summed (batch runs alongside them)
    assert gpu["avg_power_w"] == pytest.approx(420.0) and gpu["energy_source"] == "slurm"
    assert gpu["mem_req_gb"] == pytest.approx(64.0)  # 32000Mn x 2 nodes
    assert gpu["user"] == "alice" and gpu["time_limit_s"] == 3600
    cpu = jobs["101"]
    assert cpu["energy_j"] == 720000.0  # the extern step spans the whole allocation
    assert cpu["mem_req_gb"] == pytest.approx(16.0)  # 250Mc x 64 CPUs
    assert cpu["status"] == "timeout" and cpu["cpu_s"] == 2 * 86400


def test_an_older_reqmem_per_cpu_or_node_takes_the_requests_counts_without_allocated_ones(
        tmp_path):
    """s48 tester P18: with no NCPUS / NNodes column (and NNodes 0 for a job that never
    started), `2Gc` and `4000Mn` had been multiplied by 1; ReqCPUS / ReqNodes say how many."""
    path = tmp_path / "old.txt"
    times = "2026-11-01T00:00:00|2026-11-01T00:00:00|2026-11-01T01:00:00|3600|02:00:00"
    path.write_text(
        "JobID|JobName|User|State|Submit|Start|End|ElapsedRaw|Timelimit|ReqNodes|ReqCPUS|ReqMem\n"
        f"2001|pc|alice|COMPLETED|{times}|2|8|2Gc\n"
        f"2002|pn|alice|COMPLETED|{times}|2|8|4000Mn\n"
        "2003|pn0|alice|CANCELLED by 0|2026-11-01T00:00:00|2026-11-01T00:05:00|"
        "2026-11-01T00:05:00|0|02:00:00|4|8|4000Mn\n")
    jobs = by_id(read_job_log(path)[0])
    assert jobs["2001"]["mem_req_gb"] == pytest.approx(8 * 2.048)
    assert jobs["2002"]["mem_req_gb"] == pytest.approx(2 * 4.0)
    assert jobs["2003"]["mem_req_gb"] == pytest.approx(4 * 4.0)
    no_counts = tmp_path / "no_counts.txt"
    no_counts.write_text(path.read_text().replace("|ReqNodes|ReqCPUS|", "|").replace(
        "|2|8|", "|").replace("|4|8|", "|"))
    df, report = read_job_log(no_counts)
    assert df["mem_req_gb"].isna().all()
    assert [n for r, n in report.notes.items() if r.startswith("ReqMem per node")] == [3]


@needs_captures
def test_lowercase_p_trailing_delimiter_reads_the_same(tmp_path):
    text = (CAPTURES / "sacct-parsable2.txt").read_text()
    path = tmp_path / "sacct-p-lower.txt"
    path.write_text("".join(line + "|\n" for line in text.splitlines()))
    a = read_job_log(path)[0].drop(columns="source_file")
    b = read_job_log(CAPTURES / "sacct-parsable2.txt")[0].drop(columns="source_file")
    pd.testing.assert_frame_equal(a, b)


@needs_captures
def test_a_byte_order_mark_before_the_header_reads_the_same(tmp_path):
    text = (CAPTURES / "sacct-parsable2.txt").read_bytes()
    path = tmp_path / "bom.txt"
    path.write_bytes(b"\xef\xbb\xbf" + text)
    a = read_job_log(path, kind="sacct-p")[0].drop(columns="source_file")
    b = read_job_log(CAPTURES / "sacct-parsable2.txt")[0].drop(columns="source_file")
    pd.testing.assert_frame_equal(a, b)


SHORT = "JobID|State|ElapsedRaw|Submit|Start|End\n"
GOOD = "9|COMPLETED|10|2026-11-30T08:00:00|2026-11-30T08:01:00|2026-11-30T08:01:10\n"


def test_bad_times_counted_per_kind_not_per_value(tmp_path):
    """pandas' messages hold the value: 'garbage' and '2026-13-45...' were two reasons."""
    path = tmp_path / "times.txt"
    path.write_text(SHORT + GOOD
                    + "1|COMPLETED|10|garbage|2026-11-30T08:01:00|2026-11-30T08:01:10\n"
                    + "2|COMPLETED|10|2026-13-45T99:99:99|2026-11-30T08:01:00|"
                      "2026-11-30T08:01:10\n"
                    + "3|COMPLETED|10|2026-11-30T08:00:00|2026-11-30T08:01:00|never\n")
    df, report = read_job_log(path)
    assert list(df["job_id"]) == ["9"]
    assert dict(report.dropped) == {"unparseable value (bad time in Submit)": 2,
                                    "unparseable value (bad time in End)": 1}


def test_a_job_that_ends_before_it_starts_is_dropped(tmp_path):
    path = tmp_path / "order.txt"
    path.write_text(SHORT + GOOD
                    + "1|CANCELLED by 0|9|2026-11-30T08:00:00|2026-11-30T08:17:43|"
                      "2026-11-30T08:10:00\n")
    df, report = read_job_log(path)
    assert list(df["job_id"]) == ["9"] and dict(report.dropped) == {"End before Start": 1}


def test_a_column_named_twice_is_a_one_line_error(tmp_path):
    path = tmp_path / "twice.txt"
    path.write_text("JobID|State|ElapsedRaw|State\n1|COMPLETED|10|FAILED\n")
    with pytest.raises(IngestError, match="names the column State twice") as info:
        read_job_log(path)
    assert "\n" not in str(info.value)


# -- times in SLURM_TIME_FORMAT's formats, and MaxRSS from sacct --noconvert (tester s25) ------

TIMES = "JobID|JobName|User|State|ElapsedRaw|TimelimitRaw|Submit|Start|End\n"


def _times_log(tmp_path, *lines: str):
    path = tmp_path / "times.txt"
    path.write_text(TIMES + "".join(lines))
    return path


def test_a_time_outside_1970_2261_is_dropped_and_counted_not_a_crash(tmp_path):
    path = _times_log(
        tmp_path, "1|a|u|COMPLETED|10|60|2026-11-30T08:00:00|2026-11-30T08:00:00|"
                  "2026-11-30T08:00:10\n",
        "2|b|u|COMPLETED|10|60|2999-01-01T00:00:00|2999-01-01T00:00:00|2999-01-01T00:00:10\n")
    df, report = read_job_log(path)
    assert list(df["job_id"]) == ["1"]
    assert dict(report.dropped) == {
        "unparseable value (time in Submit outside 1970-2261)": 1}


@pytest.mark.parametrize("stamp", ["12/04-16:49:02", "Fri 04 Dec 16:49", "16:49:02"])
def test_a_file_whose_times_have_no_year_is_refused_in_one_line(tmp_path, stamp):
    """SLURM_TIME_FORMAT="%m/%d-%H:%M:%S" (or relative) crashed: pandas read year 1."""
    path = _times_log(tmp_path, f"1|a|u|COMPLETED|2|60|{stamp}|{stamp}|{stamp}\n")
    with pytest.raises(IngestError, match="the times have no year") as info:
        read_job_log(path)
    assert "SLURM_TIME_FORMAT=standard" in str(info.value) and "\n" not in str(info.value)


def test_day_first_dates_are_read_day_first_for_every_row(tmp_path):
    """Was: 05/11/26 read as 11 May (month-first) beside 13/11/26 read as 13 Nov, and job
    101 dropped as 'End before Start'."""
    path = _times_log(
        tmp_path, "101|a|u|COMPLETED|660|60|12/11/26 23:50:00|12/11/26 23:59:00|"
                  "13/11/26 00:10:00\n",
        "102|b|u|COMPLETED|600|60|13/11/26 10:00:00|13/11/26 10:00:00|13/11/26 10:10:00\n",
        "103|c|u|COMPLETED|600|60|05/11/26 10:00:00|05/11/26 10:00:00|05/11/26 10:10:00\n")
    df, report = read_job_log(path)
    jobs = by_id(df)
    assert not report.dropped and len(df) == 3
    assert jobs["101"]["end_time"] == pd.Timestamp("2026-11-13 00:10:00")
    assert jobs["103"]["submit_time"] == pd.Timestamp("2026-11-05 10:00:00")
    assert any("day-first" in fact for fact in report.facts)


def test_dates_whose_order_the_file_does_not_settle_are_refused(tmp_path):
    """SLURM_TIME_FORMAT="%d/%m/%y %H:%M:%S" on 4 Dec gave 12 April, silently."""
    path = _times_log(tmp_path, "1|a|u|COMPLETED|2|60|04/12/26 16:49:02|04/12/26 16:49:03|"
                                "04/12/26 16:49:05\n")
    with pytest.raises(IngestError, match="read day-first or month-first alike") as info:
        read_job_log(path)
    assert "SLURM_TIME_FORMAT=standard" in str(info.value)


NOCONVERT = ("JobID|JobName|User|State|ExitCode|ElapsedRaw|ReqMem|MaxRSS|NNodes|NCPUS\n"
             "7|small|u|CANCELLED by 0|0:9|20|1000M||1|1\n"
             "7.batch|batch||CANCELLED|0:9|20||3379200|1|1\n")


def test_noconvert_maxrss_is_bytes_and_a_small_killed_job_is_not_oom(tmp_path):
    """sacct --noconvert prints MaxRSS in bytes without a unit (3379200 = 3300K on Slurm
    22.05): it was read as MiB (3.5 TB), and a SIGKILLed 3 MB job relabelled oom."""
    path = tmp_path / "noconvert.txt"
    path.write_text(NOCONVERT)
    df, report = read_job_log(path)
    job = df.iloc[0]
    assert job["peak_rss_mb"] == pytest.approx(3379200 / 2**20) and job["mem_req_gb"] == 1.0
    assert job["status"] == "cancelled" and not report.notes


def test_reqmem_without_a_unit_is_not_guessed(tmp_path):
    """sacct writes ReqMem with its unit (1000M), --noconvert too: a bare number (a hand-made
    export) could be MiB or bytes, so mem_req_gb is NA, and said."""
    path = tmp_path / "bare.txt"
    path.write_text(NOCONVERT.replace("|1000M|", "|1000|"))
    df, report = read_job_log(path)
    assert pd.isna(df.iloc[0]["mem_req_gb"]) and df.iloc[0]["peak_rss_mb"] > 0
    assert [r for r in report.notes if r.startswith("ReqMem without a unit")]


@pytest.mark.parametrize("text, message", [
    ("JobID           JobName      State\n------------ ---------- ----------\n"
     "1                    a  COMPLETED\n", "sacct's fixed-width output.*re-run sacct with -p"),
    ("JobID;JobName;State\n1;a;COMPLETED\n", "separated by ';', not '|'"),
    ("", "empty file"),
])
def test_a_wrong_export_forced_as_sacct_p_says_what_it_is(tmp_path, text, message):
    path = tmp_path / "wrong.txt"
    path.write_text(text)
    with pytest.raises(IngestError, match=message) as info:
        read_job_log(path, kind="sacct-p")
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("kind", ["auto", "sacct-p"])
def test_an_export_behind_saccts_own_error_line_is_refused_saying_so(tmp_path, kind):
    """s48 tester P8: `sacct ... &> jobs.txt` had been "not a job log of a known kind"."""
    path = tmp_path / "err_top.txt"
    path.write_text("sacct: error: slurmdbd: Getting response to message type: "
                    "DBD_GET_JOBS_COND\n" + SHORT + GOOD)
    with pytest.raises(IngestError, match="begins with sacct's own message .'sacct: error: "
                       "slurmdbd.*not its output.*2> sacct-errors.txt") as info:
        read_job_log(path, kind=kind)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("kind", ["auto", "sacct-p"])
def test_blank_lines_before_the_header_are_skipped_as_after_it(tmp_path, kind):
    """s48 tester P8: a blank first line (a terminal copy) had been "first line is not a
    header"; --kind auto had already taken the file for sacct -P."""
    path = tmp_path / "lead_blank.txt"
    path.write_text("\n  \n" + SHORT + GOOD)
    df, report = read_job_log(path, kind=kind)
    assert list(df["job_id"]) == ["9"] and not report.dropped


# -- real exports of the test Slurm (tester W): sacct -D, -X, --units, default columns, '|' ------

def test_sacct_d_keeps_the_last_attempt_of_a_requeued_job_with_its_steps():
    """sacct -D lists a requeued job's REQUEUED attempt, then its COMPLETED one: the first was
    kept and dropped as 'not finished', the second as 'duplicate job line' (job lost)."""
    df, report = read_job_log(EXPORTS / "requeued-D.txt")
    job = by_id(df)["56435727"]
    assert (job["state_raw"], job["runtime_s"]) == ("COMPLETED", 25.0)
    assert job["peak_rss_mb"] == pytest.approx(3248 * 1024 / 2**20)  # its own batch step's
    # s32 tester S6: counted in a note, not as malformed: a clean export is not corrupt
    assert not report.dropped and report.notes["earlier attempt of a requeued job (the last "
                                               "attempt kept)"] == 1
    assert "0 malformed/skipped" in report.lines()[0]
    without_d, plain = read_job_log(EXPORTS / "requeued.txt")
    # s33 tester A11: -D keeps the first submission and the wait before the first start;
    # without -D only the requeue's Submit is there, and that is said, not guessed around
    assert (job["submit_time"], job["wait_s"]) == (pd.Timestamp("2026-12-05 01:39:42"), 67.0)
    assert by_id(without_d)["56435727"]["submit_time"] == pd.Timestamp("2026-12-05 01:40:54")
    assert any("sacct ran without -D" in fact for fact in plain.facts)
    assert not any("without -D" in fact for fact in report.facts)
    same = ["submit_time", "wait_s", "source_file"]
    pd.testing.assert_frame_equal(df.drop(columns=same), without_d.drop(columns=same))


def test_sacct_x_cpu_time_is_unknown_not_zero():
    """sacct -X prints TotalCPU 00:00:00 on every job line: cpu_s was 0.0 for every job."""
    df, report = read_job_log(EXPORTS / "no-steps-X.txt")
    assert df["cpu_s"].isna().all() and df["ranks"].isna().all()
    assert any(fact.startswith("no step lines (sacct -X)") for fact in report.facts)
    with_steps = by_id(read_job_log(EXPORTS / "requeued.txt")[0])
    assert with_steps["56435714"]["cpu_s"] == pytest.approx(0.044)


def test_an_export_in_which_no_job_ran_is_not_called_sacct_x(tmp_path):
    """s46 tester I9: a cancelled pending job (no steps: it never ran) was told "no step lines
    (sacct -X): ... export without -X for them" of an export made without -X."""
    path = tmp_path / "pending.txt"
    path.write_text("JobID|User|State|Submit|Start|End|ElapsedRaw|TotalCPU\n"
                    "56642315|root|CANCELLED by 0|2026-12-07T11:08:29|None|"
                    "2026-12-07T11:08:34|0|00:00:00\n")
    df, report = read_job_log(path)
    assert list(df["status"]) == ["cancelled"]
    assert not any("sacct -X" in fact for fact in report.facts)


def test_sacct_default_columns_are_refused_naming_the_format_to_use():
    """sacct -P without --format (no Elapsed, Submit, User, Timelimit): 70 jobs were written
    with five notes, and recommend --history then found no user."""
    with pytest.raises(IngestError) as info:
        read_job_log(EXPORTS / "default-format.txt")
    message = str(info.value)
    assert "no ElapsedRaw or Elapsed column" in message and "\n" not in message
    assert "sacct -a -p --format=JobID,JobName,User," in message


def test_sacct_units_g_counts_and_rounded_memory_are_unknown_and_said():
    """--units=G writes ReqNodes 1 as 0.00G (no job could be read) and a 3 MB MaxRSS as 0.00G
    (peak_rss_mb 0.0, silently)."""
    df, report = read_job_log(EXPORTS / "units-G.txt")
    jobs = by_id(df)
    assert len(df) == 2 and df["req_nodes"].isna().all() and not report.dropped
    assert pd.isna(jobs["56435727"]["peak_rss_mb"])  # 0.00G: under 5 MB, not 0
    assert jobs["56435714"]["peak_rss_mb"] == pytest.approx(0.01 * 1024**3 / 2**20)  # 0.01G
    assert report.notes["ReqNodes written as a size (sacct --units converts it too): read as "
                        "unknown; export without --units"] == 2
    rounded = [n for reason, n in report.notes.items() if reason.startswith("MaxRSS 0.00")]
    assert rounded == [2]
    df2, report2 = read_job_log(EXPORTS / "units-G-no-reqnodes.txt")
    assert pd.isna(by_id(df2)["56435727"]["peak_rss_mb"]) and report2.notes


def test_a_pipe_in_the_job_name_is_joined_back_when_it_is_the_only_free_text_column():
    """A job named w|pipe|name was dropped as 'more fields than the header', unnamed."""
    df, report = read_job_log(EXPORTS / "pipe-name.txt")
    job = by_id(df)["56435716"]
    assert job["workload"] == "w|pipe|name" and job["runtime_s"] == 3.0
    assert job["peak_rss_mb"] == pytest.approx(3200 * 1024 / 2**20) and not report.dropped


def test_a_pipe_that_cannot_be_placed_is_dropped_naming_the_job():
    """--format=ALL has ten free-text columns (the name is in SubmitLine too): which holds a
    '|' cannot be told, so the record is dropped, and now its job id is said."""
    _, report = read_sacct_parsable(EXPORTS / "pipe-name-all.txt")
    assert report.dropped["more fields than the header ('|' inside a value; sacct does not "
                          "escape it)"] == 1
    assert any("jobs 56435716" in fact and "--json" in fact for fact in report.facts)


def test_a_last_line_without_its_newline_is_cut_short_not_read():
    """s31 tester R3: a -P file cut inside its last number ('...|1|1|1|8' of 84) read job
    56472528 as TIMEOUT after 8 s."""
    from hpcds1mpi.records.ingest.sacct_records import CUT_AT_END

    path = EXPORTS / "s31-cut-in-number.txt"
    assert not path.read_text().endswith("\n")
    df, report = read_job_log(path)
    assert sorted(df["job_id"]) == ["56472526", "56472527"]
    assert report.dropped == {CUT_AT_END: 1}
    # The same file whole (its newline back) reads the job: the newline alone decides.
    whole = path.read_text() + "\n"
    assert whole.splitlines()[-1].startswith("56472528")


def test_a_job_whose_step_lines_were_cut_keeps_no_step_values(tmp_path):
    """s31 tester R3: a cut inside job 56472557's steps kept ranks 2 (of 4) and a quarter of its
    peak memory, read from the steps left."""
    path = EXPORTS / "s31-cut-in-steps.txt"
    df, report = read_job_log(path)
    job = by_id(df)["56472557"]
    assert pd.isna(job["ranks"]) and pd.isna(job["peak_rss_mb"]) and pd.isna(job["threads"])
    assert job["runtime_s"] == 72.0 and job["status"] == "ok"  # the job line is whole
    assert report.dropped == {"fewer fields than the header (truncated record)": 1}
    assert any(f.startswith("1 job(s) with step lines cut short (jobs 56472557)")
               for f in report.facts)
    whole = tmp_path / "whole.txt"  # without the cut step: its steps are read
    whole.write_text("\n".join(path.read_text().splitlines()[:-1]) + "\n")
    assert by_id(read_job_log(whole)[0])["56472557"]["ranks"] == 2


def test_two_exports_joined_with_both_headers():
    """s31 tester R4: a second header line glued to the record before it lost job 56472531;
    a -X export followed by a full one read every job as a requeue's earlier attempt."""
    from hpcds1mpi.records.ingest.sacct_records import REPEATED_HEADER
    from hpcds1mpi.records.ingest.sacct_text import SAME_JOB_AGAIN

    df, report = read_job_log(EXPORTS / "s31-two-halves.txt")
    assert sorted(df["job_id"]) == ["56472500", "56472501", "56472530", "56472531",
                                    "56472532", "56472533"]
    assert not report.dropped and report.notes[REPEATED_HEADER] == 1
    df, report = read_job_log(EXPORTS / "s31-x-then-full.txt")
    assert sorted(df["job_id"]) == ["56472500", "56472501"] and not report.dropped
    assert report.notes[REPEATED_HEADER] == 1 and report.notes[SAME_JOB_AGAIN] == 2
    assert by_id(df)["56472501"]["ranks"] == 1  # the full export's steps kept


def test_a_second_header_of_other_columns_is_refused(tmp_path):
    text = (EXPORTS / "s31-two-halves.txt").read_text().splitlines()
    text[5] = text[5].replace("|ExitCode|", "|")  # a second export with another --format
    path = tmp_path / "joined.txt"
    path.write_text("\n".join(text) + "\n")
    with pytest.raises(IngestError, match="a second header line with other columns, or -p "
                       "after -P .* give each export as its own file"):
        read_job_log(path)


def test_two_exports_joined_with_both_headers_in_lowercase(tmp_path):
    """s46 review RW4: a lowercase header is read as sacct's, but its repeat was not known
    (compared in sacct's case): job 101 was dropped as a forged record."""
    from hpcds1mpi.records.ingest.sacct_records import REPEATED_HEADER

    header = ("jobid|jobname|user|account|partition|submit|start|end|elapsedraw|timelimit|"
              "alloccpus|nnodes|state|exitcode")
    job = ("{}|a|alice|proj|batch|2026-12-01T10:00:00|2026-12-01T10:01:00|2026-12-01T10:11:00|"
           "600|00:20:00|2|1|COMPLETED|0:0")
    path = tmp_path / "joined.txt"
    path.write_text("\n".join([header, job.format(101), header, job.format(102)]) + "\n")
    df, report = read_job_log(path)
    assert sorted(df["job_id"]) == ["101", "102"] and not report.dropped
    assert report.notes[REPEATED_HEADER] == 1


def test_a_deadline_job_that_never_started_is_cancelled_not_a_timeout(tmp_path):
    """s48 tester P6: sacct -X of a real job whose --deadline passed while it was held (the
    test Slurm, 2026-12-07) had read as a timeout of 0 s; one killed at its deadline after
    running stays a timeout."""
    path = tmp_path / "deadline.txt"
    path.write_text(
        "JobID|JobName|User|Account|Partition|QOS|State|ExitCode|Submit|Start|End|Elapsed|"
        "ElapsedRaw|Timelimit|TimelimitRaw|NNodes|NCPUS|NTasks|ReqNodes|ReqCPUS|ReqMem|ReqTRES|"
        "AllocTRES|MaxRSS|TotalCPU\n"
        "56663603|dl|root|root|debug|normal|DEADLINE|1:0|2026-12-07T17:21:40|None|"
        "2026-12-07T17:22:27|00:00:00|0|00:01:00|1|1|1||1|1|100M|"
        "billing=1,cpu=1,mem=100M,node=1|||00:00:00\n"
        "56663604|dl|root|root|debug|normal|DEADLINE|0:15|2026-12-07T17:21:40|"
        "2026-12-07T17:21:41|2026-12-07T17:22:21|00:00:40|40|00:01:00|1|1|1||1|1|100M|"
        "billing=1,cpu=1,mem=100M,node=1|billing=1,cpu=1,mem=100M,node=1||00:00:00\n")
    df, report = read_job_log(path)
    jobs = by_id(df)
    never = jobs["56663603"]
    assert (never["status"], never["state_raw"], never["runtime_s"]) == (
        "cancelled", "DEADLINE", 0.0)
    assert pd.isna(never["start_time"]) and pd.isna(never["wait_s"])
    assert (jobs["56663604"]["status"], jobs["56663604"]["runtime_s"]) == ("timeout", 40.0)
    assert [n for r, n in report.notes.items() if r.startswith("DEADLINE job that never")] == [1]


def test_a_job_cancelled_while_held_never_started():
    """s31 tester R6: held with --hold, then scancel: Slurm writes Start = End, and it read as
    started after a 2 s wait."""
    jobs = by_id(read_job_log(EXPORTS / "s31-held-cancelled.txt")[0])
    held = jobs["56472535"]
    assert pd.isna(held["start_time"]) and pd.isna(held["wait_s"])
    assert held["end_time"] == pd.Timestamp("2026-12-05 11:53:10")
    assert pd.isna(jobs["56472543"]["start_time"])  # pending, cancelled: as before
    ran = jobs["56472538"]  # cancelled after it ran 6 s: started
    assert ran["start_time"] == pd.Timestamp("2026-12-05 11:55:26") and ran["wait_s"] == 138


def _job_of_many_steps(path, count: int):
    """Job 56472531 of the real UTC export with ``count`` srun steps like its step .1."""
    lines = (EXPORTS / "s31-utc-P.txt").read_text().splitlines()
    header, job = lines[0], next(x for x in lines if x.startswith("56472531|"))
    step = next(x for x in lines if x.startswith("56472531.1|"))
    steps = (step.replace("56472531.1|", f"56472531.{i}|", 1) for i in range(count))
    path.write_text("\n".join([header, job, *steps]) + "\n")
    return path


def test_reading_a_job_of_many_steps_takes_time_linear_in_its_steps(tmp_path):
    """s31 reviewer: each step line rebuilt its job's whole step list, so 3 jobs of 20,000
    steps took 147 s (6 s before). Four times the steps must take about four times as long,
    not sixteen (the best of a few runs, so a loaded machine's pauses do not count)."""
    import time

    def seconds(count: int) -> float:
        path = _job_of_many_steps(tmp_path / f"{count}.txt", count)
        best = float("inf")
        for _ in range(3):
            start = time.perf_counter()
            rows, _ = read_sacct_parsable(path)
            best = min(best, time.perf_counter() - start)
        assert rows[0]["ranks"] == 2 and rows[0]["peak_rss_mb"] == 1680 * 1024 / 2**20
        return best

    small, large = seconds(2000), seconds(8000)
    assert large < 8 * small + 0.05, (small, large)  # linear: ~4x; quadratic: ~16x


def test_a_step_line_given_twice_is_kept_once(tmp_path):
    path = _job_of_many_steps(tmp_path / "twice.txt", 3)
    lines = path.read_text().splitlines()
    path.write_text("\n".join([*lines, lines[-1].replace("|1680K|", "|4000K|")]) + "\n")
    rows, report = read_sacct_parsable(path)
    assert len(rows) == 1 and rows[0]["peak_rss_mb"] == 4000 * 1024 / 2**20  # the last copy
    assert not report.dropped


def test_a_malformed_line_is_still_counted_so_beside_a_requeued_job(tmp_path):
    """s32 tester S6: earlier attempts left the malformed count; a truncated line stays in it."""
    path = tmp_path / "requeued-cut.txt"
    lines = (EXPORTS / "requeued-D.txt").read_text().splitlines()
    path.write_text("\n".join([*lines, "56435799|56435799|cut"]) + "\n")
    _, report = read_sacct_parsable(path)
    assert report.lines()[0].endswith("1 malformed/skipped")
    assert report.lines()[1:3] == [
        "  dropped 1 x fewer fields than the header (truncated record)",
        "  note: 1 x earlier attempt of a requeued job (the last attempt kept)"]


def _records_of_many_jobs(lines: list[str], first_id: str, count: int) -> list[list[str]]:
    """The records of ``lines`` (a real export's job ``first_id`` and its steps) repeated for
    ``count`` jobs, each under its own id, as :func:`split_records` gives them."""
    fields = [line.split("|") for line in lines]
    return [[value.replace(first_id, str(60_000_000 + k)) for value in record]
            for k in range(count) for record in fields]


def _seconds_to_read(header: list[str], records: list[list[str]]):
    """The best time of :func:`rows_from_records` over ``records``, and its report."""
    from hpcds1mpi.records.ingest.sacct_text import rows_from_records
    from hpcds1mpi.records.ingest.schema import FileReport

    reports = [FileReport("export.txt", "sacct-p") for _ in range(3)]
    runs = iter(reports)
    return best_seconds(lambda: rows_from_records(header, records, next(runs))), reports[0]


def test_reading_many_requeued_jobs_takes_time_linear_in_their_count():
    """s32 tester S2: each requeue moved its job to the end of a list by a scan of it: 40,000
    jobs of two attempts (sacct -D) took 24 s. Here sacct -D ran while each job, requeued,
    waited to run again (a pending job is read quickly, so a scan's cost would show)."""
    from hpcds1mpi.records.ingest.slurm_fields import REQUEUED_AGAIN

    lines = (EXPORTS / "requeued-D.txt").read_text().splitlines()
    requeued, step, last = [x for x in lines if x.startswith("56435727")][:3]
    pending = last.replace("|COMPLETED|00:00:25|25|", "|PENDING|00:00:00|0|").replace(
        "|2026-12-05T01:42:58|2026-12-05T01:43:23|", "|Unknown|Unknown|")

    def seconds(count: int) -> float:
        records = _records_of_many_jobs([requeued, step, pending], "56435727", count)
        took, report = _seconds_to_read(lines[0].split("|"), records)
        assert report.dropped == {REQUEUED_AGAIN: count}  # s43 review R1: said as requeued
        assert report.notes["earlier attempt of a requeued job (the last attempt kept)"] == count
        return took

    assert_linear(seconds, 5000)


def test_reading_many_ids_of_two_jobs_takes_time_linear_in_their_count():
    """s32 tester S3: each line looked its id up in a list of the clashing ids: two clusters'
    exports of 40,000 jobs each, joined into one file, took 39 s."""
    lines = (EXPORTS / "requeued-D.txt").read_text().splitlines()
    job = [x for x in lines if x.startswith("56435714")]  # a job line and 5 step lines
    other = [x.replace("|w_steps|root|", "|w_steps|bob|") for x in job]  # another user's

    def seconds(count: int) -> float:
        took, report = _seconds_to_read(lines[0].split("|"),
                                        _records_of_many_jobs(job + other, "56435714", count))
        assert report.jobs == 0 and report.dropped == {
            "line of two different jobs under one id (user or name differ: a forged or "
            "corrupt export; use sacct --json)": 12 * count}
        assert report.facts[0].startswith(f"{count} id(s) with two different jobs (user or "
                                          "name differ) dropped, every line of them: jobs "
                                          "60000000, 60000001, 60000002, 60000003, 60000004 ...")
        return took

    assert_linear(seconds, 1000)


def test_a_heterogeneous_job_and_a_requeued_one_of_a_real_sacct_d_export():
    """s33 tester A11 (sacct -D -P of a real Slurm 22.05): hetjob 56495597's components +0 and
    +1 were two unrelated 1-node jobs, and requeued 56495602 kept its requeue's Submit
    (18:21:39, wait_s 156 s with the requeue's hold); it was submitted at 18:21:20."""
    df, report = read_job_log(EXPORTS / "s33-het-requeue-D-P.txt")
    jobs = by_id(df)
    assert not [jid for jid in jobs if "+" in jid]
    het = jobs["56495597"]
    assert (het["nodes"], het["cores"], het["ranks"], het["runtime_s"]) == (2, 2, 2, 1.0)
    assert (het["status"], het["submit_time"], het["wait_s"]) == (
        "ok", pd.Timestamp("2026-12-05 18:21:20"), 10.0)
    assert report.notes["heterogeneous job's components joined into one job (nodes, CPUs, "
                        "ranks, GPUs, memory, energy and CPU time summed; its run from the "
                        "first start to the last end)"] == 1
    again = jobs["56495602"]
    assert again["submit_time"] == pd.Timestamp("2026-12-05 18:21:20")
    assert again["wait_s"] == 17.0  # to its first start at 18:21:37, not its last (18:24:15)
    assert (again["start_time"], again["runtime_s"]) == (pd.Timestamp("2026-12-05 18:24:15"),
                                                         25.0)
    assert len(df) == 15 and not report.dropped


def test_a_cluster_column_keeps_two_clusters_jobs_of_one_id(tmp_path):
    """s37 tester J2: sacct -M alpha,beta -P with Cluster in --format: alpha's and beta's job
    8100 were dropped as 'two different jobs under one id ... forged', pointing to --json."""
    path = tmp_path / "clusters.txt"
    path.write_text(
        "Cluster|JobID|JobName|User|UID|Submit|Start|End|ElapsedRaw|Timelimit|State|ExitCode\n"
        "alpha|8100|sim|erin|2001|2024-05-01T10:00:00|2024-05-01T10:00:05|2024-05-01T10:20:05"
        "|1200|01:00:00|COMPLETED|0:0\n"
        "alpha|8100.batch|batch|||2024-05-01T10:00:05|2024-05-01T10:00:05|2024-05-01T10:20:05"
        "|1200||COMPLETED|0:0\n"
        "beta|8100|train|frank|3005|2024-05-01T10:30:00|2024-05-01T10:30:05|2024-05-01T12:30:05"
        "|7200|04:00:00|COMPLETED|0:0\n"
        "alpha|8101|sim|erin|2001|2024-05-01T11:00:00|2024-05-01T11:00:05|2024-05-01T11:20:05"
        "|1200|01:00:00|COMPLETED|0:0\n"
        # one cluster's id of two users is still dropped (a forged line)
        "beta|8102|a|frank|3005|2024-05-01T11:00:00|2024-05-01T11:00:05|2024-05-01T11:20:05"
        "|1200|01:00:00|COMPLETED|0:0\n"
        "beta|8102|b|mallory|3007|2024-05-01T11:10:00|2024-05-01T11:10:05|2024-05-01T11:20:05"
        "|600|01:00:00|COMPLETED|0:0\n")
    df, report = read_job_log(path)
    jobs = by_id(df)
    assert sorted(jobs) == ["8101", "alpha:8100", "beta:8100"]
    assert (jobs["alpha:8100"]["user"], jobs["beta:8100"]["runtime_s"]) == ("erin", 7200.0)
    assert report.dropped == {"line of two different jobs under one id (user or name differ: a "
                              "forged or corrupt export; use sacct --json)": 2}
    assert report.notes["id shared by two clusters' jobs (sacct -M: each cluster counts its "
                        "own ids): both kept, job_id written CLUSTER:ID"] == 2


def test_a_bare_number_timelimit_is_minutes_as_in_slurms_time_syntax(tmp_path):
    """s37 tester J8: Timelimit 60 was read as 60 s, and the job, 600 s, passed unremarked."""
    path = tmp_path / "bare.txt"
    path.write_text("JobID|JobName|User|Submit|Start|End|Elapsed|Timelimit|State|ExitCode\n"
                    "7010|mins|dan|2024-05-01T00:00:00|2024-05-01T00:00:10|2024-05-01T00:10:10"
                    "|00:10:00|60|COMPLETED|0:0\n")
    df, report = read_job_log(path)
    assert df.iloc[0]["time_limit_s"] == 3600.0
    assert report.notes["Timelimit written as a bare number: read as minutes, as Slurm's time "
                        "syntax takes it (sbatch -t 60 is one hour); sacct writes [D-]HH:MM:SS, "
                        "or TimelimitRaw in minutes"] == 1


def test_a_requeued_job_still_waiting_in_a_d_export_is_said_as_such():
    """s37 tester J6 (a real sacct -a -D -p of Slurm 22.05, job 56540264 requeued by scontrol
    and pending again; sacct lists no pending attempt): its REQUEUED line was 'not finished
    (pending/running)', and the note said no job was listed with an earlier attempt (advising
    -D, which the export had)."""
    df, report = read_job_log(EXPORTS / "s37-requeued-waiting-D-p.txt")
    assert "56540264" not in set(df["job_id"]) and len(df) == 12
    assert report.dropped == {"requeued and not finished yet (its last attempt listed is "
                              "REQUEUED; the next one has not ended)": 1}
    assert not any("no job is listed with an earlier attempt" in fact for fact in report.facts)


def test_a_pending_array_line_says_how_many_tasks_it_stands_for(tmp_path):
    """s37 tester J7: 7007_[1-5%2] (5 tasks) counted as one dropped job, unsaid."""
    path = tmp_path / "array.txt"
    path.write_text("JobID|JobName|User|Submit|Start|End|Elapsed|Timelimit|State|ExitCode\n"
                    "7007_[1-5%2]|arr|dan|2024-05-01T00:00:00|Unknown|Unknown|00:00:00|01:00:00"
                    "|PENDING|0:0\n"
                    "7008|ok|dan|2024-05-01T00:00:00|2024-05-01T00:00:10|2024-05-01T00:10:10"
                    "|00:10:00|01:00:00|COMPLETED|0:0\n")
    df, report = read_job_log(path)
    assert list(df["job_id"]) == ["7008"]
    assert report.dropped == {"not finished (pending/running)": 1}
    assert report.notes["array task not run yet, in a pending job array's one line (sacct "
                        "writes e.g. 7007_[1-5%2] for 5 tasks; counted above as one line)"] == 5


_H6 = "JobID|JobName|User|State|Submit|Start|End|ElapsedRaw|Timelimit|NNodes|NCPUS"
_H6_ENDED = ("20|late|root|TIMEOUT|2026-12-07T01:46:36|2026-12-07T01:46:36|2026-12-07T01:47:40|"
             "64|00:01:00|1|1")
_H6_RUNNING = "20|late|root|RUNNING|2026-12-07T01:46:36|2026-12-07T01:46:36|Unknown|30|00:01:00|1|1"


@pytest.mark.parametrize("lines", [(_H6_ENDED, _H6_RUNNING), (_H6_RUNNING, _H6_ENDED)])
def test_of_two_copies_of_one_job_the_ended_one_is_kept_in_either_order(tmp_path, lines):
    # s43 tester H6: exports joined newest first kept the older RUNNING line, the job lost.
    path = tmp_path / "p.txt"
    path.write_text("\n".join([_H6, *lines]) + "\n")
    table, _ = read_job_log(path)
    assert table.status.tolist() == ["timeout"] and table.runtime_s.tolist() == [64]


def test_a_requeued_jobs_attempts_in_any_order_keep_the_ended_one(tmp_path):
    # s43 tester H6/H7: sort -u put the REQUEUED attempt after the COMPLETED one.
    path = tmp_path / "p.txt"
    path.write_text(
        "JobID|JobName|User|State|Submit|Start|End|ElapsedRaw|Timelimit|NNodes|NCPUS\n"
        "38|rq|root|COMPLETED|2026-12-07T01:50:02|2026-12-07T01:52:11|2026-12-07T01:52:19|8|"
        "01:00:00|1|1\n"
        "38|rq|root|REQUEUED|2026-12-07T01:49:59|2026-12-07T01:49:59|2026-12-07T01:50:02|3|"
        "01:00:00|1|1\n")
    table, _ = read_job_log(path)
    assert table.status.tolist() == ["ok"] and table.runtime_s.tolist() == [8]
    assert str(table.submit_time[0]).endswith("01:49:59")  # its first submission


def test_a_semicolon_or_tab_export_whose_header_makes_its_delimiter_certain_is_read(tmp_path):
    """s43 tester H8: sacct -P --delimiter=';' (or a tab) had been refused."""
    from hpcds1mpi.records.ingest.job_logs import ingest

    head = ["JobID", "JobName", "User", "State", "Submit", "Start", "End", "ElapsedRaw"]
    row = ["7", "a|b;c", "u", "COMPLETED", "2026-12-07T01:46:36", "2026-12-07T01:46:36",
           "2026-12-07T01:46:38", "2"]
    for sep in ("\t", ";"):
        name = row if sep == "\t" else [*row[:1], "a|b", *row[2:]]
        path = tmp_path / "sep.txt"
        path.write_text(sep.join(head) + "\n" + sep.join(name) + "\n")
        table, reports, _ = ingest([path])
        assert list(table["workload"]) == [name[1]] and table["runtime_s"].iloc[0] == 2
        assert any("sacct --delimiter" in f for f in reports[0].facts)


@pytest.mark.parametrize("sep", [";", "\t"])
def test_a_job_name_holding_the_files_own_delimiter_is_joined_back_with_it(tmp_path, sep):
    """s46 tester I7: 'semi;colon' of a --delimiter=';' export was stored as 'semi|colon'."""
    head = ["JobID", "JobName", "User", "State", "Submit", "Start", "End", "ElapsedRaw"]
    row = ["7", f"semi{sep}colon|pipe", "u", "COMPLETED", "2026-12-07T01:46:36",
           "2026-12-07T01:46:36", "2026-12-07T01:46:38", "2"]
    path = tmp_path / "sep.txt"
    path.write_text(sep.join(head) + "\n" + sep.join(row) + "\n")
    df, report = read_job_log(path)
    assert list(df["workload"]) == [f"semi{sep}colon|pipe"] and not report.dropped
    assert report.notes[f"{sep!r} inside JobName (sacct does not escape it): joined back, the "
                        "only free-text column"] == 1


@pytest.mark.parametrize("index_name", ["", "Unnamed: 0"])
def test_a_semicolon_export_with_an_index_column_reads_as_its_comma_version(tmp_path,
                                                                             index_name):
    """s45 tester C7: CSD3's layout (a first column with no name, or pandas' "Unnamed: 0")
    saved with ';' was refused as "separated by ';', not '|' or ','", while with ',' it was
    read."""
    head = [index_name, "JobIDRaw", "JobName", "User", "State", "Start", "End", "ElapsedRaw"]
    rows = [[str(i), str(700 + i), "app", "u", "COMPLETED", f"2023-07-17T11:4{i}:00",
             f"2023-07-17T11:4{i}:30", "30"] for i in range(3)]
    tables = []
    for sep in (",", ";"):
        path = tmp_path / f"csd3{sep}.csv"
        path.write_text("\n".join(sep.join(r) for r in [head, *rows]) + "\n")
        table, report = read_job_log(path)
        assert report.jobs == 3 and not report.dropped
        tables.append(table.drop(columns=["source_file", "source_kind"]))
    pd.testing.assert_frame_equal(*tables)
