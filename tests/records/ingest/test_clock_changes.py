"""Local times in the hour the autumn clock change repeats, read by the job line's Elapsed
(s35 tester T1: a real sacct -P export of Berlin jobs across both clock changes, beside the
same jobs' --json)."""

from __future__ import annotations

import time
from collections import Counter

import pandas as pd
import pytest

from hpcds1mpi.records.ingest import read_job_log
from hpcds1mpi.records.ingest.clock_changes import (CHOSEN_BY_ELAPSED, FIRST_PASS,
                                                    NO_READING_FITS, choose_times)

from .captures import EXPORTS

DST_P = EXPORTS / "dst-berlin.txt"
DST_JSON = EXPORTS / "dst-berlin.json"


@pytest.fixture
def berlin(monkeypatch):
    """This process in Berlin time, where the export was made."""
    monkeypatch.setenv("TZ", "Europe/Berlin")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def _times(path):
    df, report = read_job_log(path)
    return df.set_index("job_id")[["submit_time", "start_time", "end_time", "runtime_s"]], report


def test_repeated_hour_times_are_read_as_elapsed_says_and_equal_the_json_times(berlin):
    local, report = _times(DST_P)
    utc, _ = _times(DST_JSON)
    # 70001 ended "before it started" (02:30 CEST -> 02:10 CET), 70003 ran 30 min of its 90,
    # 70004 started an hour early: each now as --json has it.
    for job in ("70001", "70003", "70004", "70005", "70006"):
        assert local.loc[job].to_dict() == utc.loc[job].to_dict(), job
    assert local.loc["70003", "end_time"] == pd.Timestamp("2026-10-25 01:20")
    assert "End before Start" not in report.dropped
    assert report.notes[CHOSEN_BY_ELAPSED] == 3
    # 70002 submitted at 02:20 on the spring night, a time that never was: still dropped.
    assert report.dropped["unparseable value (bad time in Submit (skipped by daylight "
                          "saving))"] == 1


def test_a_repeated_hour_time_no_reading_fits_is_dropped_naming_the_fix(berlin, tmp_path):
    lines = DST_P.read_text().splitlines()
    # 70001 with Elapsed 3000 s: 02:30 -> 02:10 is 40 min or 100 min, never 50.
    path = tmp_path / "wrong.txt"
    path.write_text("\n".join([lines[0]] + [
        line.replace("|00:40:00|2400|", "|00:50:00|3000|") for line in lines[1:3]]
                             + lines[11:13]) + "\n")
    df, report = read_job_log(path)
    assert list(df["job_id"]) == ["70006"] and dict(report.dropped) == {NO_READING_FITS: 1}
    assert "--json" in NO_READING_FITS and "SLURM_TIME_FORMAT=%s" in NO_READING_FITS


def test_choose_times_takes_the_readings_that_fit():
    first, second = pd.Timestamp("2026-10-25 00:30"), pd.Timestamp("2026-10-25 01:30")
    notes = Counter()
    # One reading each: returned as they are, whatever they are.
    assert choose_times((second,), (first,), (), None, notes) == (second, first, None)
    # Start and End in the repeated hour, 10 min apart either way: nothing tells, the first.
    end = (first + pd.Timedelta(minutes=10), second + pd.Timedelta(minutes=10))
    assert choose_times((), (first, second), end, 600, notes) == (None, first, end[0])
    assert notes == Counter({FIRST_PASS: 1})
    # No Elapsed: Start before End still settles the pair.
    assert choose_times((), (first, second), (second - pd.Timedelta(minutes=20),), None,
                        notes)[1] == first
    assert choose_times((), (first, second), (end[0],), 7200, notes) is None
