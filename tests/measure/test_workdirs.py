"""Where each configuration of a program sweep runs."""

from __future__ import annotations

import os

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


def _layouts(sizes, ranks, threads):
    return [RunSpec("w", size, Configuration(1, r, t, "cpu", "fp64"))
            for size in sizes for r in ranks for t in threads]


def test_the_note_adds_the_placeholders_that_tell_the_sharing_configurations_apart():
    # s28 tester Y6: --workdir 'runs/{size}-{ranks}' with threads 1,2 was told to give
    # --workdir 'runs/{size}-{ranks}', the one given.
    runs = _layouts([32, 64], [1, 2], [1, 2])
    note = shared_folder_note("runs/{size}-{ranks}", runs)
    assert note.endswith("to keep them apart add {threads}: --workdir "
                         "'runs/{size}-{ranks}-{threads}', each folder created first with the "
                         "program's input")
    assert shared_folder_note("runs/{size}-{ranks}-{threads}", runs) == ""
    assert "add {ranks} and {threads}: --workdir 'runs/{size}-{ranks}-{threads}'" in \
        shared_folder_note("runs/{size}", runs)
    assert "add {size}: --workdir 'runs/{size}'" in shared_folder_note("runs/", _layouts(
        [32, 64], [1], [1]))
    assert "e.g. --workdir 'runs/{size}-{ranks}-{threads}'" in shared_folder_note(None, runs)
    for here in (".", "./", os.getcwd()):  # the sweep's own folder: not '.-{size}-...' nor a
        # sibling of it (s30 tester K5, verifier V N5)
        assert "e.g. --workdir 'runs/{size}-{ranks}-{threads}'" in shared_folder_note(here, runs)
    same_twice = _layouts([32], [1], [1]) * 2
    assert "give --workdir placeholders that tell them apart" in \
        shared_folder_note("runs/{size}", same_twice)
