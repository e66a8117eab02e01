"""The notes one launch's readings give, each said once (measure/reading_notes.py)."""

from __future__ import annotations

from hpcds1mpi.measure.reading_notes import launch_notes
from hpcds1mpi.measure.readings import Readings

#: MPB's output: one gap line per band pair, of each polarisation's run.
MPB = ("Gap from band 3 (0.42) to band 4 (0.42), 0.000866%\n"
       "Gap from band 5 (0.58) to band 6 (0.61), 5.01%\n"
       "Gap from band 8 (0.80) to band 9 (0.82), 1.82%\n"
       "total elapsed time for run: 6 seconds\n"
       "Gap from band 1 (0.28) to band 2 (0.45), 47.460521%\n"
       "total elapsed time for run: 1 seconds\n")


def test_a_fom_regex_matching_several_numbers_is_said_as_the_time_regexs_are():
    """s47 tester K5: the time regex got its note, the fom regex kept the last of four gaps
    in silence."""
    readings = Readings.of(time_regex=r"total elapsed time for run: ([0-9.]+) seconds",
                           fom_regex=r"Gap from band \d+ .*, ([0-9.eE+-]+)%")
    found = readings.read(MPB)
    assert found["fom"] == 47.460521
    notes = launch_notes(readings, found, "ok", "", 8.0, [], ("mpb size 96", True))
    assert notes["fom several"] == (
        "note: --fom-regex 'Gap from band \\d+ .*, ([0-9.eE+-]+)%' matched 4 different numbers "
        "in one launch's output ('0.000866', '5.01', '1.82', '47.460521'); the last match, "
        "'47.460521', is recorded: if it is not the number you mean, add the words around that "
        "one to the regex")
    assert "matched 2 different times" in notes["several"]
    one = readings.read("Gap from band 1 (0.28) to band 2 (0.45), 47.46%\n"
                        "total elapsed time for run: 1 seconds\n")
    assert not launch_notes(readings, one, "ok", "", 1.0, [], ("mpb", True)).get("fom several")


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
