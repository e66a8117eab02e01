"""Where each configuration of a program sweep runs."""

from __future__ import annotations

from hpcds1mpi.config import Configuration
from hpcds1mpi.measure.plan import RunSpec
from hpcds1mpi.measure.workdirs import shared_folder_note, workdir_of


def _runs(sizes, ranks):
    return [RunSpec("w", size, Configuration(1, r, 1, "cpu", "fp64"))
            for size in sizes for r in ranks]


def test_placeholders_are_filled_in_the_folder():
    (spec,) = _runs([16], [2])
    assert workdir_of("wd/{size}-{ranks}-{threads}", spec) == "wd/16-2-1"
    assert workdir_of(None, spec) is None and workdir_of("", spec) is None


def test_a_note_names_how_many_configurations_share_a_folder():
    runs = _runs([16, 24], [1, 2])
    assert shared_folder_note(None, runs).startswith(
        "note: all 4 configurations run in one folder (the current folder)")
    assert shared_folder_note("wd/{size}", runs).startswith(
        "note: 4 of the 4 configurations share a folder with another (--workdir 'wd/16' holds 2)")
    assert shared_folder_note("wd/{ranks}", _runs([16], [1, 2]) + _runs([24], [1])).startswith(
        "note: 2 of the 3 configurations share a folder with another (--workdir 'wd/1' holds 2)")
    assert shared_folder_note("wd/{size}-{ranks}", runs) == ""
    assert shared_folder_note(None, runs[:1]) == "" and shared_folder_note(None, []) == ""
