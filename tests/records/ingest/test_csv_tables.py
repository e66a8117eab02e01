"""What the CSV readers share: the header, exact record splitting, rows dropped per reason."""

from __future__ import annotations

import pandas as pd
import pytest

from hpcds1mpi.errors import IngestError
from hpcds1mpi.records.ingest.csv_tables import (csv_header, drop_rows, empty, numbers,
                                                 read_csv_table, times)
from hpcds1mpi.records.ingest.schema import FileReport
from hpcds1mpi.records.ingest.wrong_exports import REPEATED_HEADER


def test_header_of_the_first_line():
    assert csv_header('\ufeffa,"b,c", d\n1,2,3\n') == ["a", "b,c", "d"]
    assert csv_header("") == []


def test_short_long_and_quoted_rows(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text('a,b,c\n1,"x, y",3\n4,5\n6,,\n7,8,9,10\n\n')
    df, report = read_csv_table(path, "test", ("a", "b"))
    assert df.to_dict("records") == [{"a": "1", "b": "x, y", "c": "3"},
                                     {"a": "6", "b": "", "c": ""}]
    assert report.records == 4
    assert dict(report.dropped) == {"fewer fields than the header (truncated row)": 1,
                                    "more fields than the header": 1}


@pytest.mark.parametrize("content, match", [("", "empty file"),
                                            ("a,c\n1,2\n", "needs the column.s. b "),
                                            ("a,b,a\n1,2,3\n", "names the column a twice")])
def test_unreadable_is_one_line(tmp_path, content, match):
    path = tmp_path / "t.csv"
    path.write_text(content)
    with pytest.raises(IngestError, match=match) as info:
        read_csv_table(path, "test", ("a", "b"))
    assert "\n" not in str(info.value)


def test_each_row_dropped_once_under_its_first_reason():
    df = pd.DataFrame({"n": ["1", "", "x", "2"], "t": ["2024-01-01 10:00", "", "soon", "?"]})
    checks = empty(df, ("n",))
    n = numbers(df["n"], "n", checks)
    t = times(df, {"t": "t"}, checks, "x.csv")["t"]
    assert n.tolist()[0] == 1 and t.iloc[0] == pd.Timestamp("2024-01-01 10:00")
    report = FileReport("x", "test")
    kept = drop_rows(df, checks, report)
    assert kept.index.tolist() == [0]
    assert dict(report.dropped) == {"empty n": 1, "n not a number": 1, "t not a time": 1}


def test_times_are_read_in_one_format_decided_for_the_whole_file():
    """format="mixed" guessed per value: 05/11/2026 became 11 May next to 13/11/2026."""
    df = pd.DataFrame({"a": ["13/11/2026 10:00", "05/11/2026 10:00"],
                       "b": ["05/11/2026 11:00", "2026-11-05 11:00"]})
    checks: list = []
    out = times(df, {"submit": "a", "end": "b"}, checks, "x.csv")
    assert out["submit"].tolist() == [pd.Timestamp("2026-11-13 10:00"),
                                      pd.Timestamp("2026-11-05 10:00")]
    assert out["end"].iloc[0] == pd.Timestamp("2026-11-05 11:00")
    assert pd.isna(out["end"].iloc[1]) and checks[1][0].tolist() == [False, True]
    ambiguous = pd.DataFrame({"a": ["04/12/2026 10:00", "05/11/2026 10:00"]})
    with pytest.raises(IngestError, match="no date in the file says which"):
        times(ambiguous, {"submit": "a"}, [], "x.csv")


def test_a_header_of_one_column_says_the_file_is_not_comma_separated(tmp_path):
    """Was: 'needs the column(s) State (has JobID;JobName;User;State...)', State listed."""
    path = tmp_path / "semi.txt"
    path.write_text("JobID;JobName;State\n1;a;COMPLETED\n")
    with pytest.raises(IngestError, match="separated by ';', not ','") as info:
        read_csv_table(path, "sacct-csv", ("State",))
    assert "needs the column" not in str(info.value)
    other = tmp_path / "other.txt"
    other.write_text("a;b;c\n1;2;3\n")
    with pytest.raises(IngestError, match="header is one column, so the file is not comma"):
        read_csv_table(other, "test", ("b",))


def test_a_last_row_without_its_newline_is_counted_not_read_with_its_cut_value(tmp_path):
    # s43 tester H3: "...,64" cut to "...,6" has every field, as sacct -P's reader refuses.
    path = tmp_path / "t.csv"
    path.write_text("a,b\n1,20\n2,6")
    cut: list = []
    df, report = read_csv_table(path, "test", ("a", "b"), cut_rows=cut)
    assert df.to_dict("records") == [{"a": "1", "b": "20"}]
    assert cut == [["2", "6"]] and report.records == 2
    assert [r for r in report.dropped if "no newline" in r]
    for whole in ('a,b\n1,20\n2,"6"', "a,b\n1,20\n2,6\r\n"):  # closed by a quote or a newline
        path.write_text(whole)
        df, report = read_csv_table(path, "test", ("a", "b"))
        assert len(df) == 2 and not report.dropped


def test_two_csv_exports_joined_are_refused_or_their_repeated_header_skipped(tmp_path):
    """s46 tester I1: a second header was read as a data row and the second export's rows
    under the first header's columns (user and account swapped, exit 0)."""
    path = tmp_path / "t.csv"
    path.write_text("a,user,account\n1,u1,p1\na,account,user\n2,p2,u2\n")
    with pytest.raises(IngestError, match="t.csv: a second header line with other columns "
                       r"\(two exports joined into one file\); give each export as its own "
                       "file"):
        read_csv_table(path, "test", ("a", "user"))
    path.write_text("a,user,account\n1,u1,p1\n\ufeffa, user,account\n2,u2,p2\n")
    df, report = read_csv_table(path, "test", ("a", "user"))
    assert list(df["user"]) == ["u1", "u2"] and not report.dropped
    assert report.records == 2 and report.notes[REPEATED_HEADER] == 1


def test_a_value_that_names_a_column_is_no_header(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("a,user,account,state\naccount,user,p1,COMPLETED\n")  # 2 of 4 named
    df, report = read_csv_table(path, "test", ("a",))
    assert len(df) == 1 and not report.notes
