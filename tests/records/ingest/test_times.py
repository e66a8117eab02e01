"""Time stamps in job logs: one format per file, the years a time may fall in, local to UTC."""

from __future__ import annotations

import time

import pandas as pd
import pytest

from hpcds1mpi.errors import IngestError
from hpcds1mpi.records.ingest.schema import FileReport
from hpcds1mpi.records.ingest.times import (STANDARD, decide_format, local_to_utc,
                                            sacct_time_reader)


@pytest.fixture
def paris(monkeypatch):
    """This process in Paris time (CET/CEST), as a sacct export made there is."""
    monkeypatch.setenv("TZ", "Europe/Paris")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def reader(values, path="x.txt"):
    report = FileReport(path, "sacct-p")
    return sacct_time_reader(values, report), report


@pytest.mark.parametrize("text", ["garbage", "2026-13-45T99:99:99", "2023-07-40T00:00:00"])
def test_a_bad_time_names_its_column_and_only_quotes_the_value(text):
    read, _ = reader(["2026-11-30T08:00:00", text])
    with pytest.raises(ValueError) as info:
        read(text, "Start")
    assert str(info.value) == f"bad time in Start {text!r}"


def test_iso_and_epoch_times_are_read_and_blanks_are_none():
    read, report = reader(["2026-11-30T08:00:00", "Unknown", ""])
    assert read("2026-11-30T08:00:00", "Submit") == pd.Timestamp("2026-11-30 08:00:00")
    assert read("Unknown", "End") is None and read(None, "End") is None
    epoch, report = reader(["1796402942", "1796402943"])
    assert epoch("1796402942", "Submit") == pd.Timestamp(1796402942, unit="s")
    assert not any("local" in f for f in report.facts)  # epoch seconds have no zone


@pytest.mark.parametrize("value", ["12/04-16:49:02", "Fri 04 Dec 16:49", "16:49:02",
                                   "Ystday 16:49", "Tue 16:49"])
def test_times_without_a_year_refuse_the_file_in_one_line(value):
    """A yearless SLURM_TIME_FORMAT (or relative) was read as year 1 (a crash) or stamped with
    the day of the ingest."""
    with pytest.raises(IngestError) as info:
        reader([value, value])
    message = str(info.value)
    assert "no year" in message and STANDARD in message and "\n" not in message


@pytest.mark.parametrize("values, message", [
    (["04/12/26 16:49:02", "05/11/26 10:00:00"], "no date in the file says which"),
    (["13/11/26 10:00:00", "11/13/26 10:00:00"], "dates in both orders"),
    (["Fri 04 Dec 2026 16:49"], "format not read here"),
])
def test_dates_whose_order_or_format_cannot_be_told_are_refused(values, message):
    with pytest.raises(IngestError, match=message) as info:
        decide_format(values, "x.txt", STANDARD)
    assert "SLURM_TIME_FORMAT=standard" in str(info.value)


def test_a_day_above_12_settles_the_order_for_every_row():
    """Was: 05/11/26 read month-first (11 May) next to 13/11/26 read day-first."""
    read, report = reader(["12/11/26 23:50:00", "13/11/26 00:10:00", "05/11/26 10:00:00"])
    assert read("05/11/26 10:00:00", "Submit") == pd.Timestamp("2026-11-05 10:00:00")
    assert read("12/11/26 23:50:00", "Start") == pd.Timestamp("2026-11-12 23:50:00")
    assert any(f.startswith("dates are written day-first") for f in report.facts)
    month_first, _ = reader(["11/13/2026 10:00", "11/05/2026 10:00"])
    assert month_first("11/05/2026 10:00", "Submit") == pd.Timestamp("2026-11-05 10:00")


@pytest.mark.parametrize("text", ["2999-01-01T00:00:00", "0001-12-04T16:49:02",
                                  "1969-12-31T23:00:00"])
def test_a_time_outside_1970_2261_is_a_counted_value_not_a_crash(text):
    read, _ = reader(["2026-11-30T08:00:00", text])
    with pytest.raises(ValueError, match="time in Submit outside 1970-2261"):
        read(text, "Submit")


def test_local_times_are_stored_in_utc(paris):
    """sacct -P prints local time, --json epoch seconds: the same job must get one time."""
    read, report = reader(["2026-12-04T17:49:02", "2026-07-01T12:00:00"])
    assert read("2026-12-04T17:49:02", "Submit") == pd.Timestamp("2026-12-04 16:49:02")
    assert read("2026-07-01T12:00:00", "Submit") == pd.Timestamp("2026-07-01 10:00:00")
    assert any("Europe/Paris" in f and "UTC" in f for f in report.facts)


def test_daylight_saving_hours_repeated_or_skipped(paris):
    seconds, twice = local_to_utc((2026, 10, 25, 2, 30, 0))  # the repeated hour
    assert twice and pd.Timestamp(seconds, unit="s") == pd.Timestamp("2026-10-25 00:30:00")
    with pytest.raises(ValueError):
        local_to_utc((2026, 3, 29, 2, 30, 0))  # the hour the clock skips
    read, report = reader(["2026-10-25T02:30:00", "2026-03-29T02:30:00"])
    assert read("2026-10-25T02:30:00", "Start") == pd.Timestamp("2026-10-25 00:30:00")
    assert sum(report.notes.values()) == 1
    with pytest.raises(ValueError, match="bad time in Start"):
        read("2026-03-29T02:30:00", "Start")


@pytest.mark.parametrize("zone", ["Europe/Berln", "Nowhere", ":Europe/Berln", "berlin"])
def test_a_tz_the_zone_database_does_not_know_is_refused_naming_it(monkeypatch, zone):
    """s35 tester T4: glibc reads an unknown TZ as UTC, and the report said the zone."""
    monkeypatch.setenv("TZ", zone)
    time.tzset()
    try:
        with pytest.raises(IngestError) as info:
            reader(["2026-12-04T17:49:02"])
        # Epoch seconds are no local times: no zone is needed to read them.
        reader(["1796403600"])
    finally:
        monkeypatch.undo()
        time.tzset()
    message = str(info.value)
    assert f"TZ={zone!r}" in message and "timedatectl list-timezones" in message
    assert "unset it" in message and "\n" not in message


@pytest.mark.parametrize("zone", ["UTC-14", "CET-1CEST,M3.5.0,M10.5.0/3", ":Europe/Berlin",
                                  "Europe/Berlin", "UTC", "/usr/share/zoneinfo/Asia/Tokyo"])
def test_a_zone_name_path_or_posix_rule_is_read(monkeypatch, zone):
    monkeypatch.setenv("TZ", zone)
    time.tzset()
    try:
        read, report = reader(["2026-12-04T17:49:02"])
        expected = pd.Timestamp(time.mktime((2026, 12, 4, 17, 49, 2, 0, 0, -1)), unit="s")
        assert read("2026-12-04T17:49:02") == expected
    finally:
        monkeypatch.undo()
        time.tzset()


def test_dotted_dates_are_day_first_without_a_day_above_12():
    """s36 tester L5: '01.01.2019 08:55' (a German spreadsheet's) was refused as ambiguous;
    dotted dates are day-first in every locale that writes them. Slashes stay ambiguous."""
    fmt = decide_format(["01.02.2019 08:55", "03.01.2019 10:00"], "f", "advice")
    assert fmt.day_first and fmt.dotted and fmt.fields("01.02.2019 08:55")[:3] == (2019, 2, 1)
    with pytest.raises(IngestError, match="day-first or month-first alike"):
        decide_format(["01/02/2019 08:55", "03/01/2019 10:00"], "f", "advice")


def test_times_without_seconds_are_said():
    """s36 tester L5: a spreadsheet's re-save drops the seconds; a note says so, once."""
    from hpcds1mpi.records.ingest.times import minutes_fact

    assert "to the minute" in minutes_fact(decide_format(["17.07.2023 11:46"], "f", "a"))
    assert minutes_fact(decide_format(["2023-07-17 11:46:42"], "f", "a")) is None


@pytest.mark.parametrize("sep", ["-", "/"])
def test_a_two_digit_year_first_is_no_proof_of_day_first(sep):
    """s46 tester I4: SLURM_TIME_FORMAT=%y-%m-%d wrote 2026-12-07 as 26-12-07, read day-first
    as 2007-12-26 (26 > 12) in every job, exit 0."""
    day = f"26{sep}12{sep}07 11:03:21"
    with pytest.raises(IngestError, match=f"'{day}' read day-first \\(2007-12-26\\) or "
                       f"year-first \\(2026-12-07, as SLURM_TIME_FORMAT=%y{sep}%m{sep}%d "
                       "writes it\\) alike") as info:
        decide_format([day, f"26{sep}12{sep}07 11:03:24"], "x.txt", STANDARD)
    assert STANDARD in str(info.value) and "\n" not in str(info.value)
    # A month of them: year-first dates 2026-11-30..12-19, day-first 2019..2030.
    read, report = reader([day, f"26{sep}12{sep}19 10:00:00", f"26{sep}11{sep}30 09:00:00"])
    assert read(day, "Submit") == pd.Timestamp("2026-12-07 11:03:21")
    assert any(f.startswith("dates are written year-first") for f in report.facts)
    # One value that is no day-first date (45) does not turn a day-first month year-first.
    fmt = decide_format(["13/11/26 10:00:00", "01/12/26 10:00:00", "45/11/26 10:00:00"], "x",
                        STANDARD)
    assert fmt.day_first and not fmt.year_first
    # A first field above 31 is no day: year-first however few the dates.
    assert decide_format([f"45{sep}12{sep}07 10:00:00"], "x", STANDARD).fields(
        f"45{sep}12{sep}07 10:00:00")[:3] == (2045, 12, 7)
