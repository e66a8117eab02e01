"""The notes one launch's readings give, each said once (measure/reading_notes.py)."""

from __future__ import annotations

from hpcds1mpi.measure.readings import Readings


def test_a_zero_is_said_once_for_each_configuration():
    """s47 tester K1: of five configurations whose timer read 0, one was said."""
    said = []
    readings = Readings.of(time_regex=r"run: ([0-9.]+) seconds")
    readings.say = said.append
    for label in ("mpb size 16 N1xR1xT1", "mpb size 16 N1xR1xT1", "mpb size 16 N1xR1xT2"):
        found = readings.read("run: 0 seconds\n")
        assert readings.time_problem(found, 1.4) == ""
        readings.note_once(found, "ok", "", 1.4, [], (label, True))
    assert [line.split(": ")[1] for line in said] == ["mpb size 16 N1xR1xT1",
                                                      "mpb size 16 N1xR1xT2"], said
