"""Job names holding newlines and '|' (Slurm accepts both; sacct -P escapes neither): real
exports of the test Slurm (tester Z, session 28) where such a name forged another job."""

from __future__ import annotations

import pandas as pd
import pytest

from hpcds1mpi.records.ingest.job_logs import ingest, read_job_log
from hpcds1mpi.records.ingest.slurm_fields import FIRST_SUBMIT

from .captures import EXPORTS, by_id
from tests.scaling import assert_linear, best_seconds

FORGED_LAST = EXPORTS / "forged-name-last.txt"  # JobID,User,...,JobName: name last
FORGED_FIRST = EXPORTS / "forged-name-first.txt"  # the tool's own SACCT_FORMAT order


def test_a_name_forging_a_record_in_the_middle_is_dropped_never_read_as_a_job():
    """Job 56435905 named 'x\\n56435899|forged': its second line replaced real job 56435899
    (sh, 0 s, 2 CPUs) with a forged one (forged, 4 s, limit 420 s)."""
    df, report = read_job_log(FORGED_FIRST)
    assert list(df["job_id"]) == ["56435899"]
    real = by_id(df)["56435899"]
    assert (real["workload"], real["runtime_s"], real["cores"]) == ("sh", 0.0, 2)
    assert not report.notes.get("earlier attempt of a requeued job (the last attempt kept)")
    assert any("56435905 with 56435899" in fact and "--json" in fact for fact in report.facts)


def test_two_different_jobs_under_one_id_are_both_dropped_and_named():
    """Job 56435903 named 'x\\n56435898|alice|debug|TIMEOUT|1440|86400|y' (the name last, so
    its second line is a whole record): job 56435898 became alice's 86400 s timeout, the real
    COMPLETED root job dropped as an 'earlier attempt'."""
    df, report = read_job_log(FORGED_LAST)
    assert "56435898" not in set(df["job_id"]) and "alice" not in set(df["user"])
    assert report.dropped["line of two different jobs under one id (user or name differ: a "
                          "forged or corrupt export; use sacct --json)"] == 3  # 2 jobs, a step
    assert any("jobs 56435898" in fact for fact in report.facts)


def test_a_requeued_job_whose_attempts_agree_is_still_one_job():
    df, report = read_job_log(EXPORTS / "requeued-D.txt")
    assert by_id(df)["56435727"]["runtime_s"] == 25.0 and not report.dropped
    assert report.notes["earlier attempt of a requeued job (the last attempt kept)"] == 1


def test_two_different_jobs_under_one_id_in_two_files_are_both_dropped(tmp_path):
    """The real line in one file, the forged one in another: the first file's was kept and
    the disagreement only counted."""
    lines = FORGED_LAST.read_text().splitlines()
    real, forged = tmp_path / "real.txt", tmp_path / "forged.txt"
    real.write_text("\n".join(lines[:3]) + "\n")
    forged.write_text("\n".join([lines[0], lines[4]]) + "\n")
    table, _, notes = ingest([real, forged])
    assert "56435898" not in set(table["job_id"])
    assert any("jobs 56435898" in note for note in notes)
    same, _, _ = ingest([real, real])  # one job twice: kept once, as before
    assert list(same["job_id"]) == ["56435898"]


def test_a_newline_in_the_last_column_continues_the_record(tmp_path):
    """A name 'a\\nb' (no '|') with JobName last: the 'b' line was counted as a record of its
    own, 'fewer fields than the header'."""
    path = tmp_path / "nl.txt"
    lines = FORGED_LAST.read_text().splitlines()
    path.write_text("\n".join([lines[0], lines[3] + "\nb", lines[5]]) + "\n")
    df, report = read_job_log(path)
    assert by_id(df)["56435903"]["workload"] == "x\nb" and not report.dropped


def test_units_t_coarse_reqmem_is_said():
    """--units=T writes ReqMem 8000M as 0.01T (10.5 GB): read silently."""
    df, report = read_job_log(EXPORTS / "units-T-reqmem.txt")
    assert by_id(df)["56435910"]["mem_req_gb"] == pytest.approx(10.48576)  # MiB / 1000
    assert any(reason.startswith("ReqMem rounded by sacct --units") and n == 1
               for reason, n in report.notes.items())
    assert pd.isna(by_id(df)["56435910"]["peak_rss_mb"])  # its step's 0.00T


# Real exports (reviewer R2, session 28): job 56440766 named
# 'x\n56440765|root|debug|TIMEOUT|1440|86400|sim\n999|alice|debug|FAILED|1440|86400|fake' and
# job 56440767 named 'y|\n56440765|root|debug|TIMEOUT|1440|86400|sim', JobName last.
FORGED_LAST_P = EXPORTS / "forged-name-last-p.txt"  # sacct -p: each record ends in '|'
FORGED_LAST_TWO = EXPORTS / "forged-name-last-two.txt"  # the same jobs under sacct -P


def test_a_p_export_ends_a_record_only_at_a_line_ending_in_the_delimiter():
    """Under -p the line '999|alice|...|fake|' ends job 56440766's record (its name's last
    line): it was read as alice's job 999, failed after 86400 s."""
    df, report = read_job_log(FORGED_LAST_P)
    assert "999" not in set(df["job_id"]) and "alice" not in set(df["user"])
    assert any("56440766 with 56440765 with 999" in fact for fact in report.facts)


def test_a_free_text_column_last_is_read_with_a_note_on_the_forgery_it_allows():
    """Under -P (and under -p, for a name holding '|' then a newline) a whole record inside
    the last column cannot be told from a real one: read, but said, with the export to use."""
    _, report = read_job_log(FORGED_LAST_TWO)
    risk = [fact for fact in report.facts if fact.startswith("JobName is the last column")]
    assert len(risk) == 1 and "bare newline" in risk[0]
    assert "-p (sacct -a -p --format=JobID,JobName," in risk[0] and "--json" in risk[0]
    _, report = read_job_log(FORGED_LAST_P)
    assert any(fact.startswith("JobName is the last column: a '|' then a newline")
               for fact in report.facts)
    _, report = read_job_log(FORGED_FIRST)  # the name not last: nothing to say
    assert not any("is the last column" in fact for fact in report.facts)


def test_the_recommended_export_is_p_with_the_name_not_last(tmp_path):
    """The messages recommended 'sacct -a -P --format=ALL', whose last column (WorkDir, set by
    sbatch -D) is free text: the forgeable layout."""
    from hpcds1mpi.errors import IngestError

    empty = tmp_path / "empty.txt"
    empty.write_text("")
    with pytest.raises(IngestError, match=r"sacct -a -p --format=JobID,JobName,.*,"
                                          r"ConsumedEnergyRaw -S"):
        read_job_log(empty)


def test_a_forged_copy_with_another_submit_time_in_another_file_is_dropped(tmp_path):
    """Two files, one id, another Submit and user: both were kept (the check grouped copies
    by id and submit time), so the forged alice TIMEOUT stood beside root's job."""
    head = "JobID|User|State|Submit|TimelimitRaw|ElapsedRaw|JobName"
    real, forged = tmp_path / "r.txt", tmp_path / "f.txt"
    real.write_text(f"{head}\n100|root|COMPLETED|2024-01-01T00:00:00|5|10|sim\n")
    forged.write_text(f"{head}\n100|alice|TIMEOUT|2024-01-01T00:00:01|1440|86400|fake\n")
    table, _, notes = ingest([real, forged])
    assert "100" not in set(table["job_id"])
    assert any("jobs 100" in note for note in notes)


def test_a_requeued_job_in_two_files_is_no_clash(tmp_path):
    """Attempts of one requeued job agree on user and name, not on Submit: no clash, and the
    last attempt kept, as within a file (s31 tester R2: README's rule, the code had kept both).
    A quarter-hour apart with another run time: a requeue, not a time zone."""
    head = "JobID|User|State|Submit|TimelimitRaw|ElapsedRaw|JobName"
    first, second = tmp_path / "a.txt", tmp_path / "b.txt"
    first.write_text(f"{head}\n100|root|NODE_FAIL|2024-01-01T00:00:00|5|3|sim\n")
    second.write_text(f"{head}\n100|root|COMPLETED|2024-01-01T00:15:00|5|10|sim\n")
    for files in ([first, second], [second, first]):
        table, _, notes = ingest(files)
        assert list(table["job_id"]) == ["100"] and table["runtime_s"].tolist() == [10.0]
        # s33 tester A11: with the first attempt's submission, said
        assert table["submit_time"].tolist() == [pd.Timestamp("2024-01-01")]
        assert dict(notes) == {"earlier attempt of a requeued job in another file (the last "
                               "attempt kept)": 1, FIRST_SUBMIT: 1}


def test_a_value_of_many_lines_is_read_in_time_linear_in_its_lines(tmp_path):
    """s32 tester S4: the record's '|'s were counted again after each of its lines: a job name
    (or --wrap SubmitLine) of 40,000 lines, 0.9 MB, took 7 s."""
    from hpcds1mpi.records.ingest.sacct_text import read_sacct_parsable

    lines = (EXPORTS / "s31-utc-P.txt").read_text().splitlines()
    job = next(x for x in lines if x.startswith("56472531|"))
    others = [x for x in lines[1:] if not x.startswith("56472531")]

    def seconds(count: int) -> float:
        name = "\n".join(f"line {i} of the name" for i in range(count))
        path = tmp_path / f"{count}.txt"
        path.write_text("\n".join([lines[0], job.replace("|steps_e|", f"|{name}|"), *others])
                        + "\n")
        rows = []
        took = best_seconds(lambda: rows.append(read_sacct_parsable(path)[0]))
        assert by_id(pd.DataFrame(rows[0]))["56472531"]["workload"] == name
        return took

    assert_linear(seconds, 8000)


def test_a_value_with_many_blank_lines_in_the_last_column_is_read_in_linear_time(tmp_path):
    """Each blank line of a value in the last column scanned every blank line after it for
    the next line of text (found with s32 tester S4)."""
    from hpcds1mpi.records.ingest.sacct_text import read_sacct_parsable

    lines = FORGED_LAST.read_text().splitlines()

    def seconds(count: int) -> float:
        path = tmp_path / f"{count}.txt"
        path.write_text("\n".join([lines[0], lines[3] + "\n" * count + "\nb", lines[5]]) + "\n")
        rows = []
        took = best_seconds(lambda: rows.append(read_sacct_parsable(path)[0]))
        assert by_id(pd.DataFrame(rows[0]))["56435903"]["workload"] == "x" + "\n" * count + "\nb"
        return took

    assert_linear(seconds, 2000)


# -- s48 tester P2: lines after a whole record are no part of it where its last column is no
# free text (another log joined to the export, a trailer, sacct's own error message) ---------

#: The start of an SWF log (a user joining two logs with cat).
SWF_LINES = ("; Version: 2.2\n; MaxJobs: 2\n"
             "1 0 5 60 1 -1 -1 1 120 -1 1 1 1 -1 1 -1 -1 -1\n"
             "2 10 5 60 1 -1 -1 1 120 -1 1 1 1 -1 1 -1 -1 -1\n")
TRAILER = "\n# exported by admin\ntotal 61 jobs\n"
#: Real (the test Slurm, sacct -X -P with ReqMem last, s48 tester P): its last record is job
#: 56663507_2's, a TIMEOUT, which the lines after it had spoilt ("bad memory").
REQMEM_LAST = "s48-X-reqmem-last-P.txt"


def _joined(tmp_path, export: str, after: str = ""):
    path = tmp_path / "joined.txt"
    path.write_text((EXPORTS / export).read_text() + after)
    # the kind named: a short export's first 4 KiB hold the SWF header, which --kind auto takes
    return read_job_log(path, kind="sacct-p")


def _same_jobs(a: pd.DataFrame, b: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(a.drop(columns="source_file"), b.drop(columns="source_file"))


@pytest.mark.parametrize("export", ["requeued.txt", "s37-requeued-waiting-D-p.txt", REQMEM_LAST])
@pytest.mark.parametrize("tail", [SWF_LINES, TRAILER])
def test_lines_after_the_last_record_are_counted_never_glued_into_it(tmp_path, export, tail):
    from hpcds1mpi.records.ingest.sacct_records import NOT_A_RECORD

    alone, report_alone = read_job_log(EXPORTS / export)
    joined, report = _joined(tmp_path, export, after=tail)
    _same_jobs(joined, alone)
    assert report.dropped[NOT_A_RECORD] == len([line for line in tail.splitlines() if line])
    assert sum(report.dropped.values()) == sum(report_alone.dropped.values()) + \
        report.dropped[NOT_A_RECORD]
    said = [fact for fact in report.facts if "not sacct output" in fact]
    assert len(said) == 1 and repr(tail.split("\n")[0] or tail.split("\n")[1]) in said[0]


def test_the_job_a_joined_log_followed_is_kept_not_dropped_as_bad_memory(tmp_path):
    joined, report = _joined(tmp_path, REQMEM_LAST, after=SWF_LINES)
    job = by_id(joined)["56663507_2"]
    assert (job["status"], job["mem_req_gb"]) == ("timeout", pytest.approx(0.1))
    assert not [reason for reason in report.dropped if "unparseable" in reason]


@pytest.mark.parametrize("export", ["requeued.txt", "s37-requeued-waiting-D-p.txt"])
def test_a_stray_line_between_records_spoils_neither(tmp_path, export):
    """A garbage line after a .batch step had been glued into its TotalCPU (the job dropped
    as 'bad duration'); under -p, with the record after it too (a line not ending in '|')."""
    from hpcds1mpi.records.ingest.sacct_records import NOT_A_RECORD

    lines = (EXPORTS / export).read_text().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if ".batch|" in line) + 1
    path = tmp_path / "middle.txt"
    path.write_text("".join(lines[:at]) + "garbage from the terminal\n" + "".join(lines[at:]))
    joined, report = read_job_log(path)
    alone, report_alone = read_job_log(EXPORTS / export)
    _same_jobs(joined, alone)
    assert report.dropped == {**report_alone.dropped, NOT_A_RECORD: 1}


def test_saccts_own_error_after_its_output_is_counted_and_said(tmp_path):
    """`sacct ... > jobs.txt 2>&1` with sacct's complaint at the end: it had vanished."""
    from hpcds1mpi.records.ingest.sacct_records import SACCT_MESSAGE

    error = "sacct: error: Problem talking to the database: Connection refused\n"
    joined, report = _joined(tmp_path, "requeued.txt", after=error)
    _same_jobs(joined, read_job_log(EXPORTS / "requeued.txt")[0])
    assert report.dropped == {SACCT_MESSAGE: 1}
    said = [fact for fact in report.facts if fact.startswith("sacct's own message in the file")]
    assert len(said) == 1 and "Connection refused" in said[0] and "may be missing" in said[0]


def test_a_pipe_in_the_one_free_text_column_is_still_joined_back_before_a_stray_line(tmp_path):
    lines = (EXPORTS / "pipe-name.txt").read_text().splitlines(keepends=True)
    path = tmp_path / "pipe.txt"
    path.write_text(lines[0] + lines[1] + "total 1 jobs\n")
    table, report = read_job_log(path)
    assert list(table["workload"]) == ["w|pipe|name"]
    assert report.dropped == {"a line that begins no record (its JobID field is not a job id)": 1}
