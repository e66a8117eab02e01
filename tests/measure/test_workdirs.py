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


def test_a_refused_sweep_leaves_no_workdir_folders_behind(tmp_path):
    """s35 tester A5: the mb-mpi wrapper's refusal left runs/2000-1 ... (empty) behind; the
    folders --setup is to fill are removed again, their parents made with them, where a check
    refuses the sweep; a folder that was there, and anything in one, is kept."""
    from tests.helpers import run_cli

    wrapper = tmp_path / "mb-mpi"  # Debian's /usr/bin/mb-mpi, its last line
    wrapper.write_text("#!/bin/sh\nexec mpirun `echo $MPI_OPTIONS` /usr/lib/mrbayes-mpi/mb-mpi "
                       "$@\n")
    wrapper.chmod(0o755)
    (tmp_path / "kept").mkdir()
    (tmp_path / "kept" / "input.txt").write_text("the user's\n")
    for workdir in ("runs/{size}-{ranks}", "kept/{size}"):
        proc = run_cli(["sweep", "--command", f"{wrapper} run.nex", "--label", "mb", "--sizes",
                        "2000,4000", "--ranks-per-node", "1", "--threads", "1", "--workdir",
                        workdir, "--setup", "true", "--no-progress", "--out",
                        str(tmp_path / "mb.h5")], cwd=tmp_path, timeout=120)
        assert proc.returncode == 2 and "starts its own ranks" in proc.stderr, proc.stderr
        assert "created" not in proc.stderr  # said only of folders kept
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept", "mb-mpi"]
    assert [p.name for p in (tmp_path / "kept").iterdir()] == ["input.txt"]


def test_made_folders_keeps_what_was_put_in_them_and_says_the_ones_kept(tmp_path):
    from hpcds1mpi.measure.workdirs import made_folders

    runs, said = _runs([16, 24], [1]), []
    workdir = str(tmp_path / "a" / "b{size}")
    try:
        with made_folders(workdir, runs, True, said.append) as created:
            (tmp_path / "a" / "b16" / "restart.chk").write_text("x")  # the program's
            raise KeyboardInterrupt
    except KeyboardInterrupt:
        pass
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == ["b16"] and not said
    with made_folders(workdir, runs, True, said.append) as created:
        pass
    assert created == [workdir.replace("{size}", "24")] and said[0].startswith(
        "created 1 --workdir folder(s) for --setup to prepare: ")
