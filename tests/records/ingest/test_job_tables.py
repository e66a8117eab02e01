"""A job table ingest wrote, read back from CSV: every value under its own column."""

from __future__ import annotations

import pandas as pd
import pytest

from hpcds1mpi.errors import IngestError
from hpcds1mpi.records.ingest import ingest, read_job_log, write_job_table
from tests.records.ingest.captures import DATA


@pytest.fixture
def table_csv(tmp_path):
    first, _, _ = ingest([DATA / "sacct-energy-gpu.txt"])
    return first, write_job_table(first, tmp_path / "jobs.csv")


def test_a_first_row_longer_than_the_header_is_refused(table_csv):
    """pandas took the first column (job_id) as the index and put every value under the next
    column's name: workload held the user, runtime_s the CPU time, without a word."""
    _, path = table_csv
    lines = path.read_text().splitlines(keepends=True)
    lines[1] = lines[1].rstrip("\n") + ",7\n"
    path.write_text("".join(lines))
    with pytest.raises(IngestError, match="rows have more fields than the header") as info:
        read_job_log(path)
    assert "\n" not in str(info.value)


def test_a_comma_ending_every_row_reads_the_same(table_csv):
    first, path = table_csv
    lines = path.read_text().splitlines()
    path.write_text("\n".join([lines[0], *(line + "," for line in lines[1:])]) + "\n")
    back, report = read_job_log(path)
    assert report.jobs == len(first) and not report.dropped
    cols = ["job_id", "user", "status", "runtime_s", "nodes", "time_limit_s"]
    pd.testing.assert_frame_equal(back[cols], first[cols], check_dtype=False)


RESAVES = DATA / "spreadsheet-resaves"  # LibreOffice Calc re-saves (README there)


def test_a_german_spreadsheet_resave_with_semicolons_reads_the_same_jobs():
    """s36 tester L1: a job table re-saved by German Calc had its dotted dates moved by months
    or emptied and its decimal commas emptied, "0 malformed". Separated by ';', it is that
    locale's CSV: every number reads as written, every date day-first, the lost seconds said."""
    first, _ = read_job_log(RESAVES / "job-table.csv")
    back, report = read_job_log(RESAVES / "job-table-de-semicolon.csv")
    assert report.jobs == len(first) == 16 and not report.dropped
    numbers = ["cpu_s", "peak_rss_mb", "mem_req_gb", "runtime_s", "wait_s", "time_limit_s",
               "nodes", "exit_code"]
    pd.testing.assert_frame_equal(back[numbers], first[numbers], check_dtype=False)
    for column in ("submit_time", "start_time", "end_time"):
        pd.testing.assert_series_equal(back[column], first[column].dt.floor("min"))
    said = " ".join(report.facts)
    assert "day-first" in said and "to the minute" in said


def _semicolon_resave(path, rows_edit=None):
    """job-table.csv written again with ';' between fields and its '.' decimals kept, as many
    tools export (``rows_edit``: a function given the rows to change before)."""
    import csv

    with open(RESAVES / "job-table.csv", newline="") as fh:
        rows = list(csv.reader(fh))
    if rows_edit:
        rows_edit(rows)
    with open(path, "w", newline="") as fh:
        csv.writer(fh, delimiter=";").writerows(rows)
    return path


def test_a_semicolon_separated_table_with_decimal_points_reads_the_same_jobs(tmp_path):
    """s36 review 4: a ';'-separated job table with '.' decimals lost every job ("runtime_s
    not a number (e.g. '3.0')": 16 dropped): the decimal mark is decided per file."""
    first, _ = read_job_log(RESAVES / "job-table.csv")
    back, report = read_job_log(_semicolon_resave(tmp_path / "jobs.csv"))
    assert report.jobs == len(first) == 16 and not report.dropped, report.dropped
    pd.testing.assert_frame_equal(back, first, check_dtype=False)


def test_a_semicolon_separated_table_with_both_decimal_marks_is_refused(tmp_path):
    """s36 review 4: '0,024' beside '3.0' in one ';' file cannot be told apart: one line."""
    def one_comma(rows):
        rows[1][rows[0].index("cpu_s")] = "0,024"

    with pytest.raises(IngestError) as refused:
        read_job_log(_semicolon_resave(tmp_path / "jobs.csv", one_comma))
    assert str(refused.value) == (
        f"{tmp_path / 'jobs.csv'}: numbers are written with a decimal comma ('0,024' in cpu_s) "
        "and with a decimal point ('3.0' in runtime_s); save it again with one decimal mark, "
        "or ingest the logs again")


def test_dotted_dates_no_day_above_12_settles_read_day_first(tmp_path):
    """s36 tester L1, L5: '06.12.2026 03:39' was read as 12 June (pandas, value by value), and
    by the other CSV readers refused as day/month ambiguous: dotted dates are day-first
    wherever they are written, so read so, and said."""
    lines = (RESAVES / "job-table-de-semicolon.csv").read_text().splitlines(keepends=True)
    path = tmp_path / "jobs.csv"
    path.write_text("".join(lines[:11]))  # the test Slurm's 10 jobs: all on 06.12.2026
    back, report = read_job_log(path)
    assert report.jobs == 10
    assert (back["submit_time"].dt.strftime("%Y-%m-%d") == "2026-12-06").all()
    assert any("dotted" in fact and "2026-12-06" in fact for fact in report.facts)


def test_decimal_commas_in_a_comma_separated_resave_are_refused(tmp_path):
    """s36 tester L1: '0,024' in a ','-separated file became NaN silently; refused in one line
    naming the column, the value and what to do."""
    with pytest.raises(IngestError, match=r"cpu_s has numbers with a decimal comma \('0,024'\)"
                       ) as info:
        read_job_log(RESAVES / "job-table-de-comma.csv")
    assert "\n" not in str(info.value) and "';'" in str(info.value)


def test_a_value_that_is_no_number_or_time_drops_its_job_counted(tmp_path):
    """s36 tester L1: a value that did not parse became NaN / NaT silently (the schema's
    errors="coerce"); now its job is dropped, counted under its column."""
    lines = (RESAVES / "job-table.csv").read_text().splitlines(keepends=True)
    header = lines[0].rstrip("\n").split(",")
    row = lines[1].split(",")
    row[header.index("cpu_s")] = "lots"
    row2 = lines[2].split(",")
    row2[header.index("start_time")] = "yesterday"
    path = tmp_path / "jobs.csv"
    path.write_text("".join([lines[0], ",".join(row), ",".join(row2), *lines[3:]]))
    back, report = read_job_log(path)
    assert report.jobs == 14
    assert report.dropped == {"cpu_s not a number (e.g. 'lots')": 1,
                              "start_time not a time": 1}


def test_a_table_as_ingest_wrote_it_reads_the_same_by_the_quick_path(monkeypatch, tmp_path):
    """ingest's own CSV skips the value-by-value read (2.7x slower on Curie's 313k jobs) only
    where that read would give the same table."""
    from hpcds1mpi.records.ingest import job_tables
    from tests.records.ingest.joblogs import GAIA, needs_joblogs, swf_slice

    if not GAIA.is_file():
        pytest.skip(needs_joblogs.kwargs["reason"])
    table, _ = read_job_log(swf_slice(GAIA, tmp_path / "gaia.swf", jobs=500))
    path = write_job_table(table, tmp_path / "jobs.csv")
    quick, report = read_job_log(path)
    monkeypatch.setattr(job_tables, "_as_ingest_wrote_it", lambda *a: None)
    careful, careful_report = read_job_log(path)
    pd.testing.assert_frame_equal(quick, careful)
    assert report.jobs == careful_report.jobs == 500 and not report.dropped
    monkeypatch.undo()
    lines = path.read_text().splitlines(keepends=True)  # one value no number: the careful read
    header = lines[0].rstrip("\n").split(",")
    row = lines[1].split(",")
    row[header.index("runtime_s")] = "lots"
    path.write_text("".join([lines[0], ",".join(row), *lines[2:]]))
    assert read_job_log(path)[1].dropped == {"runtime_s not a number (e.g. 'lots')": 1}


@pytest.mark.parametrize("suffix, sep", [(".parquet", None), (".csv", ","), (".csv", ";")])
def test_a_table_under_a_folder_named_tilde_is_read_there(tmp_path, monkeypatch, suffix, sep):
    """``recommend --history=~/j.csv`` (bash leaves the ``~``) is the table in folder ``./~``:
    pandas had read $HOME's file of that name instead (s39 tester D4)."""
    from hpcds1mpi.records.ingest.job_tables import read_job_table_file

    first, _, _ = ingest([DATA / "sacct-energy-gpu.txt"])
    home = tmp_path / "home"
    home.mkdir()
    (tmp_path / "~").mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(tmp_path)
    write_job_table(first, tmp_path / "~" / f"j{suffix}")
    write_job_table(first.head(1), home / f"j{suffix}")  # what pandas would read
    if sep == ";":
        text = (tmp_path / "~" / "j.csv").read_text()
        (tmp_path / "~" / "j.csv").write_text(text.replace(",", ";"))
    table, _ = read_job_table_file(f"~/j{suffix}")
    assert len(table) == len(first) > 1


def test_a_table_cut_inside_its_last_rows_end_time_says_it_was_cut(table_csv):
    """s44 tester N3: the cut row was dropped as 'End before Start', a reason that sent the
    user to the wrong place."""
    first, path = table_csv
    from hpcds1mpi.records.ingest.cut_at_end import CUT_AT_END

    text = path.read_text().rstrip("\n")
    end = str(first["end_time"].iloc[-1])
    path.write_text(text[:text.rindex(end) + len(end) - 4])  # "... 11:00:00" cut to "... 11:0"
    back, report = read_job_log(path)
    assert dict(report.dropped) == {CUT_AT_END: 1}
    assert list(back["job_id"]) == list(first["job_id"].iloc[:-1])


def test_two_tables_joined_with_cat(table_csv, tmp_path):
    """s46 tester I1: the second table's header was read as a row ("nodes not a number") and
    its rows under the first header's columns."""
    from hpcds1mpi.records.ingest.wrong_exports import REPEATED_HEADER

    first, path = table_csv
    lines = path.read_text().splitlines(keepends=True)
    joined = tmp_path / "joined.csv"
    joined.write_text("".join(lines + lines))
    df, report = read_job_log(joined)
    assert len(df) == len(first) and report.records == 2 * len(first)
    assert report.notes[REPEATED_HEADER] == 1
    swapped = lines[0].replace(",user,account,", ",account,user,")
    assert swapped != lines[0]
    joined.write_text("".join(lines + [swapped] + lines[1:]))
    with pytest.raises(IngestError, match="a second header line with other columns"):
        read_job_log(joined)


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_a_table_without_run_times_is_refused_as_a_job_table(tmp_path, suffix):
    """s48 tester P7: --kind job-table read any CSV or parquet (2 "jobs" with job_id NA from
    a table of names and scores; the PM100 table's 1994 jobs without a status)."""
    path = tmp_path / f"people{suffix}"
    frame = pd.DataFrame({"name": ["alice", "bob"], "score": [3, 4]})
    frame.to_csv(path, index=False) if suffix == ".csv" else frame.to_parquet(path)
    with pytest.raises(IngestError, match="not a job table hpcds1mpi ingest wrote .it has no "
                                          "runtime_s.; its columns are name, score") as info:
        read_job_log(path, "job-table")
    assert "\n" not in str(info.value)


def test_a_job_log_given_as_a_job_table_is_named_with_its_kind(tmp_path):
    from tests.records.ingest.test_parquet_tables import _pm100_frame

    path = tmp_path / "pm100.parquet"
    _pm100_frame("new").to_parquet(path)
    with pytest.raises(IngestError, match="it has no runtime_s.; it reads as kind pm100: "
                                          "give --kind pm100, or auto"):
        read_job_log(path, "job-table")
