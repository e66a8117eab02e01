"""The sweep's one note on a --fom-regex that read no figure of merit (s40 tester A10)."""

from __future__ import annotations

import math

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
    assert said == ["note: --fom-regex 'GFLOP/s: ([0-9.]+)' matched nothing in a launch's output "
                    "(the line nearest it: 'GFLOP/s 12.5'): the runs' figure of merit is left "
                    "empty; fix --fom-regex (its first group the number) and sweep into a new "
                    "--out"]


def test_a_fom_regex_that_matches_no_number_is_said():
    said, _ = _notes(r"LIB Open MPI v(\S+),")
    assert said == ["note: --fom-regex 'LIB Open MPI v(\\S+),' matched '5.0.11', not a number: "
                    "the runs' figure of merit is left empty; fix --fom-regex (its first group "
                    "the number) and sweep into a new --out"]


def test_a_fom_read_or_not_asked_is_no_note():
    assert _notes(r"GFLOP/s ([0-9.]+)") == ([], _notes(r"GFLOP/s ([0-9.]+)")[1])
    assert _notes(r"GFLOP/s ([0-9.]+)")[1]["fom"] == 12.5
    said: list[str] = []
    readings = Readings.of(time_regex=r"TIME ([0-9.]+)")
    readings.say = said.append
    readings.note_once(readings.read(OUTPUT), "ok", "", 0.75, [])
    assert said == []
