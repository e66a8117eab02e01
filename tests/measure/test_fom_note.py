"""The sweep's notes on a --fom-regex that read no figure of merit (s40 tester A10, s43 tester
G3)."""

from __future__ import annotations

import math

from hpcds1mpi.measure.fom_note import fom_summary
from hpcds1mpi.measure.readings import Readings

OUTPUT = "LIB Open MPI v5.0.11, package: Open MPI\nRANKS 2 THREADS 1\nGFLOP/s 12.5\nTIME 0.712345\n"


def _notes(fom_regex: str, launches: int = 2) -> tuple[list[str], dict]:
    said: list[str] = []
    readings = Readings.of(time_regex=r"TIME ([0-9.]+)", fom_regex=fom_regex)
    readings.say = said.append
    for _ in range(launches):
        found = readings.read(OUTPUT)
        readings.note_once(found, "ok", "", 0.75, [])
    return said, found


def test_a_fom_regex_that_matches_nothing_is_said_once_with_the_nearest_line():
    """Was: `--fom-regex 'NOPE ([0-9.]+)'` left every run's fom empty without a word."""
    said, found = _notes(r"GFLOP/s: ([0-9.]+)")
    assert math.isnan(found["fom"]) and found["time"] == 0.712345
    assert said == ["note: --fom-regex 'GFLOP/s: ([0-9.]+)' matched nothing in the output of a "
                    "launch (the line nearest it: 'GFLOP/s 12.5'): that launch has no figure of "
                    "merit; if no launch prints a match, fix --fom-regex (its first group the "
                    "number) and sweep into a new --out (the sweep's end says how many launches "
                    "printed none)"]


def test_a_fom_regex_that_matches_no_number_is_said():
    said, _ = _notes(r"LIB Open MPI v(\S+),")
    assert said == ["note: --fom-regex 'LIB Open MPI v(\\S+),' matched '5.0.11', not a number, "
                    "in a launch: that launch has no figure of merit; fix --fom-regex (its first "
                    "group the number) and sweep into a new --out"]


def test_a_fom_read_or_not_asked_is_no_note():
    assert _notes(r"GFLOP/s ([0-9.]+)") == ([], _notes(r"GFLOP/s ([0-9.]+)")[1])
    assert _notes(r"GFLOP/s ([0-9.]+)")[1]["fom"] == 12.5
    said: list[str] = []
    readings = Readings.of(time_regex=r"TIME ([0-9.]+)")
    readings.say = said.append
    readings.note_once(readings.read(OUTPUT), "ok", "", 0.75, [])
    assert said == []


def _sweep(outputs: dict[str, list[str]], warmup: int = 0) -> tuple[list[str], Readings]:
    """Each run's launches (their outputs) read as the program sweep reads them."""
    said: list[str] = []
    readings = Readings.of(time_regex=r"TIME ([0-9.]+)", fom_regex=r"([0-9.]+) node.timestep/s")
    readings.say = said.append
    for run, texts in outputs.items():
        for n, text in enumerate(texts):
            readings.note_once(readings.read(text), "ok", "", 0.75, [], (run, n >= warmup))
    return said, readings


TIMING = "Timing summary: 10 timesteps 409600 node.timestep/s\nTIME 0.712345\n"
SILENT = "step 10\nTIME 0.712345\n"


def test_a_figure_printed_in_only_some_launches_is_no_regex_to_fix():
    """Was: Gerris printed its timing line in some launches only; the sweep said the runs'
    figure of merit "is left empty; fix --fom-regex" and to sweep again, while every row had
    its figure from the run's other launches."""
    said, readings = _sweep({"gerris size 5 1 rank": [TIMING, SILENT, TIMING],
                             "gerris size 6 1 rank": [TIMING, TIMING, TIMING]})
    assert said == []  # an earlier launch read it: no regex in doubt
    assert fom_summary(readings.fom, readings.fom_launches) == (
        "note: --fom-regex '([0-9.]+) node.timestep/s' read no number in 1 of the sweep's 6 "
        "launches (gerris size 5 1 rank: 1 of 3): a run's figure of merit is the median of its "
        "launches that printed one, so every run has one; the regex reads the others, so the "
        "program did not print it every time")


def test_runs_left_without_a_figure_are_named():
    said, readings = _sweep({"a size 5": [SILENT, TIMING], "a size 6": [SILENT, SILENT],
                             "a size 7": [TIMING, SILENT]})
    assert len(said) == 1 and "that launch has no figure of merit" in said[0]
    summary = fom_summary(readings.fom, readings.fom_launches)
    assert summary.startswith("note: --fom-regex '([0-9.]+) node.timestep/s' read no number in 4 "
                              "of the sweep's 6 launches (a size 5: 1 of 2; a size 6: 2 of 2; "
                              "a size 7: 1 of 2): a run's figure of merit is the median")
    assert "; 1 run printed none and has no figure of merit (a size 6);" in summary
    assert "fix --fom-regex" not in summary


def test_a_regex_that_read_no_launch_is_to_be_fixed():
    _, readings = _sweep({"a size 5": [SILENT, SILENT], "a size 6": [SILENT]}, warmup=1)
    assert fom_summary(readings.fom, readings.fom_launches) == (
        "note: --fom-regex '([0-9.]+) node.timestep/s' read a number in none of the sweep's 3 "
        "launches: every run's figure of merit is left empty; fix --fom-regex (its first group "
        "the number) and sweep into a new --out")
    _, readings = _sweep({"a size 5": [TIMING, TIMING]})
    assert fom_summary(readings.fom, readings.fom_launches) == ""


def test_a_regex_that_matched_a_text_no_number_is_the_regex_to_fix_not_the_program():
    """Was (s43 review R9): a launch whose --fom-regex matched "v1.2.3" was counted as one that
    printed nothing, and the closing note said the program "did not print it every time"
    though it printed the line in every launch."""
    said: list[str] = []
    readings = Readings.of(time_regex=r"TIME ([0-9.]+)", fom_regex=r"fom (\S+)")
    readings.say = said.append
    for n, fom in enumerate(["12.5", "v1.2.3", "13.0", "v1.2.3"]):
        text = f"fom {fom}\nTIME 0.7\n"
        readings.note_once(readings.read(text), "ok", "", 0.75, [], ("app size 5", True))
    summary = fom_summary(readings.fom, readings.fom_launches)
    assert "did not print it" not in summary
    assert summary.endswith("2 of them matched a text that is no number: fix --fom-regex's "
                            "first group (the number alone)")
