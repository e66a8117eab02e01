"""A time printed in several units is read whole, never as its seconds part alone."""

from __future__ import annotations

import math

import pytest
import regex

from hpcds1mpi.measure.compound_time import compound_text, duration, last_part, whole_note
from hpcds1mpi.measure.readings import Readings

#: The end of a real pw.x 6.7 output (Debian's quantum-espresso, Si scf past three minutes),
#: captured from the s45 tester's run, its clock lines as printed: past a minute pw.x prints
#: its total as minutes and seconds, its other clocks in seconds.
PW_END = """\
     init_run     :     15.74s CPU     23.95s WALL (       1 calls)
     electrons    :     56.76s CPU    159.00s WALL (       1 calls)

     General routines
     calbec       :      3.94s CPU     19.07s WALL (    4536 calls)
     fftw         :     44.45s CPU    105.77s WALL (   45540 calls)

     Parallel routines

     PWSCF        :   1m12.61s CPU   3m 3.38s WALL


   This run was terminated on:   8: 1:52   7Dec2026

=------------------------------------------------------------------------------=
   JOB DONE.
=------------------------------------------------------------------------------=
"""
#: The launch's own wall time of that run, s.
PW_WALL_S = 183.87


@pytest.mark.parametrize("regex_text", [r"PWSCF\s*:.*?([0-9.]+)s WALL", r"([0-9.]+)s WALL"])
def test_pw_x_minutes_are_added_to_the_seconds_the_regex_took(tmp_path, regex_text):
    """Was (s45 tester A1): 3.38 s, ok, no word, for a launch of 183.87 s; a 175.6-s sweep run
    was stored at 54.91 s."""
    readings = Readings.of(time_regex=regex_text)
    found = readings.read(PW_END)
    assert found["time"] == pytest.approx(183.38) and found["time_text"] == "3m 3.38s"
    assert readings.time_problem(found, PW_WALL_S) == ""
    out, err = tmp_path / "out", tmp_path / "err"
    out.write_text(PW_END)
    err.write_text("")
    with open(out, "rb") as o, open(err, "rb") as e:  # the sweep's path: its streams scanned
        assert readings.scan([o, e])["time"] == pytest.approx(183.38)
    said = []
    readings.say = said.append
    readings.note_once(found, "ok", "", PW_WALL_S)
    readings.note_once(found, "ok", "", PW_WALL_S)
    whole = [note for note in said if "captured '3.38'" in note]
    assert whole == [f"note: --time-regex '{regex_text}' captured '3.38', a part of the "
                     "program's time '3m 3.38s': the whole time is read, 183.38 s (its larger "
                     "units added), not the part"]


def test_a_time_captured_whole_is_read_and_a_clock_time_of_day_is_still_refused():
    # pw.x past an hour prints no seconds (its format, I2,"h",I2,"m"): a group taking it whole
    hours = "     PWSCF        :      1h 1m CPU      1h 2m WALL\n"
    readings = Readings.of(time_regex=r"PWSCF.*CPU +(.+?) WALL")
    found = readings.read(hours)
    assert found["time"] == 3720.0 and readings.time_problem(found, 3725.0) == ""
    assert Readings.of(time_regex=r"PWSCF.*?(\d+)m WALL").read(hours)["time"] == 3720.0
    # read whole, a time of day is far over the launch: refused, not kept as 45.5 s
    stamp = Readings.of(time_regex=r"([0-9.]+) s")
    assert "x the launch's own wall time" in stamp.time_problem(
        stamp.read("done 2024-01-01 12:30:45.5 s\n"), 50.0)


@pytest.mark.parametrize("text, seconds", [
    ("2m54.91s", 174.91), ("3m 3.38s", 183.38), ("1h 2m", 3720.0), ("1h02m03s", 3723.0),
    ("1d 2h 3m", 93780.0), ("1 min 30 s", 90.0), ("1:02:03", 3723.0), ("0:02.35", 2.35),
    ("1-02:03:04", 93784.0), ("1:05:30h", 3930.0),
])
def test_a_time_in_several_units_is_its_seconds(text, seconds):
    assert duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["54.91", "3.38s", "2m 75s", "2 ms", "0.0001 h", "1h 61m",
                                  "1d 30h", "1:05hits", "", None])
def test_anything_else_is_no_time_in_several_units(text):
    # a part over its limit, a plain number or unit, a word that is no unit after a clock
    assert duration(text) is None


@pytest.mark.parametrize("text, seconds, last", [
    ("1.5h 30s", 5430.0, ("30", 1.0)), ("3d 4s", 259204.0, ("4", 1.0)),
    ("1h 3s", 3603.0, ("3", 1.0)), ("2 days 5 min", 173100.0, ("5", 60.0)),
])
def test_a_skipped_unit_or_a_larger_parts_decimals_are_read(text, seconds, last):
    """Was (s45): each None, so a regex taking its last part kept that part alone ("30" of
    "1.5h 30s": 30 s, ok, no word); a printer leaves a zero unit out."""
    assert duration(text) == pytest.approx(seconds)
    assert last_part(text) == last


@pytest.mark.parametrize("line, pattern, whole", [
    ("Run time: 1.5h 30s", r"([0-9.]+)s$", "1.5h 30s"),
    ("Run time: 3d 4s", r"(\d+)s$", "3d 4s"),
])
def test_a_captured_last_part_of_a_time_with_a_skipped_unit_is_read_whole(line, pattern,
                                                                          whole):
    found = Readings.of(time_regex=pattern).read(line + "\n")
    assert found["time_text"] == whole and found["time"] == duration(whole)


@pytest.mark.parametrize("line, pattern", [
    ("Run time: 1:05h", r"([0-9:]+)h"), ("Run time: 1:05h", r"(\d+)h"),
    ("Run time: 1:05 hours", r"([0-9:]+) hours"),
])
def test_an_hour_unit_after_a_clock_makes_it_hours_and_minutes(line, pattern):
    """Was (s45): 1:05h read as 1 min 5 s (65 s). Written after a clock an hour unit names its
    first field, as "1:05 min" is a minute and 5 s: 1 h 5 min, 3900 s."""
    found = Readings.of(time_regex=pattern).read(line + "\n")
    assert found["time"] == 3900.0
    assert last_part(found["time_text"]) == ("05", 60.0)


@pytest.mark.parametrize("pattern, line, whole", [
    (r"([0-9.]+)s WALL", "PWSCF : 1m12.61s CPU 2m54.91s WALL", "2m54.91s"),
    (r"(\d+)m", "took 2m54.91s", "2m54.91s"),
    (r"([0-9.]+)$", "Elapsed (wall clock) time (h:mm:ss or m:ss): 1:02.35", "1:02.35"),
    (r"([0-9.]+)s WALL", "electrons : 56.76s CPU 159.00s WALL (1 calls)", ""),
    (r"Elapsed: ([0-9.]+)", "Elapsed: 0.0001 h", ""),
    (r"time: ([0-9.]+) s", "step 2m time: 1.5 s", ""),
])
def test_the_whole_time_a_captured_number_is_part_of(pattern, line, whole):
    match = list(regex.compile(pattern).finditer(line))[-1]
    assert compound_text(match) == whole


def test_no_note_where_the_group_took_the_whole_time():
    assert whole_note("3m 3.38s", "3m 3.38s", "--time-regex 'x'") == ""
    assert whole_note("", "3m 3.38s", "--time-regex 'x'") == ""
    assert math.isnan(Readings.of(time_regex=r"T: (\S+)").read("T: 3h\n")["time"])


def test_gnu_time_s_default_line_is_read_whole(tmp_path):
    """Was (s45 tester F1): ``1:01.00elapsed`` of a 61-s run stored ok at 1.0 s, no word: a
    clock with a word right after it was no clock."""
    line = ("0.00user 0.00system 1:01.00elapsed 0%CPU (0avgtext+0avgdata 1920maxresident)k\n"
            "0inputs+0outputs (0major+87minor)pagefaults 0swaps\n")
    readings = Readings.of(time_regex=r"([0-9.]+)elapsed")
    found = readings.read(line)
    assert found["time"] == pytest.approx(61.0) and found["time_text"] == "1:01.00"
    assert readings.time_problem(found, 61.13) == ""
    said = []
    readings.say = said.append
    readings.note_once(found, "ok", "", 61.13)
    assert any("captured '01.00', a part of the program's time '1:01.00'" in note
               for note in said)


@pytest.mark.parametrize("pattern, line, whole, seconds", [
    # a time ending a sentence
    (r"finished in .*?([0-9.]+)s\.", "Run finished in 1m1.01s.", "1m1.01s", 61.01),
    (r"(\d+) s", "Time elapsed 1 m 5 s.", "1 m 5 s", 65.0),
    (r"(\d+)m\.", "Run took 1h 2m.", "1h 2m", 3720.0),
    # parts parted by commas, "and", or a colon with no blank
    (r"([0-9.]+) seconds", "Total wall time: 1 minutes, 1.01 seconds", "1 minutes, 1.01 seconds",
     61.01),
    (r"([0-9.]+) sec", "Elapsed: 1 min, 5.2 sec", "1 min, 5.2 sec", 65.2),
    (r"([0-9]+) seconds", "Total time: 0 hours 1 minutes and 5 seconds",
     "0 hours 1 minutes and 5 seconds", 65.0),
    (r"([0-9.]+) seconds", "Wall: 1 hour, 2 minutes, and 3.50 seconds",
     "1 hour, 2 minutes, and 3.50 seconds", 3723.5),
    (r"(\d+)s", "Wall clock: 1h:02m:03s", "1h:02m:03s", 3723.0),
    # a clock right after a word's colon, or with a unit right after it
    (r"Elapsed:.*?([0-9.]+)$", "Elapsed:0:01:01.01", "0:01:01.01", 61.01),
    (r"([0-9]+)$", "walltime:00:01:05", "00:01:05", 65.0),
    (r"(\d+)s", "ELAPSED 1:05s", "1:05", 65.0),
])
def test_a_time_ending_a_sentence_or_parted_by_words_is_read_whole(pattern, line, whole,
                                                                   seconds):
    """Was (s45 tester F2): each read as its seconds part alone, ok, no word, for a launch
    past a minute."""
    match = list(regex.compile(pattern).finditer(line))[-1]
    assert compound_text(match) == whole
    assert duration(whole) == pytest.approx(seconds)


@pytest.mark.parametrize("pattern, line", [
    (r"([0-9.]+) s", "Step 2h: 3.5 s"),  # a label's colon and blank
    (r"took (\d+) s", "at 12:30:45 took 5 s"),  # a time of day beside the time
    (r"(\d+)$", "2026-12-07T08:15:00"),  # a date's time after its T
    (r"(\d+)$", "stamp 12:30:45:67"),  # no clock has four fields
    (r":(\d+):67", "stamp 12:30:45:67"),
    (r"(\d+) m", "length 3 m, 5 apples"),  # one part is no compound time
])
def test_a_time_of_day_or_a_label_is_not_joined_to_the_number(pattern, line):
    match = list(regex.compile(pattern).finditer(line))[-1]
    assert compound_text(match) == ""


@pytest.mark.parametrize("line", ["done 12:30:45\n", "done 2026-12-07 08:15:00\n",
                                  "done 08:15:00.123\n", "done at 12:30:45pm\n"])
def test_a_time_of_day_read_whole_is_refused_by_the_wall_time(line):
    # read whole, a time of day is far over a small launch: fails loudly, never a small
    # number made into a large one quietly kept
    readings = Readings.of(time_regex=r"done.*?([0-9.]+)(?:pm)?$")
    assert "x the launch's own wall time" in readings.time_problem(readings.read(line), 50.0)
