"""Which paths of a program's command the job checks (s38 tester A1): those there before the
sweep's first launch, filled for the new size; not those the sweep wrote."""

from __future__ import annotations

import os

from hpcds1mpi.launch.program_inputs import input_paths

RUNS = [{"size": s, "nodes": 1, "ranks_per_node": 1, "ranks": 1, "threads": 1,
         "device": "cpu", "precision": "fp64"} for s in (100, 200)]
NEW = {**RUNS[0], "size": 300}


def _files(folder, start: float):
    for name, when in (("m2_100.grf", start - 60), ("m2_200.grf", start - 60),
                       ("out.ord", start + 5), ("old.txt", start - 60)):
        (folder / name).write_text("x")
        os.utime(folder / name, (when, when))


def test_an_input_is_checked_filled_for_the_new_size_and_an_output_never(tmp_path):
    _files(tmp_path, 1e9)
    got = input_paths("dgord m2_{size}.grf out.ord -vt", NEW, str(tmp_path), 1e9, RUNS)
    assert got == ["m2_300.grf"]
    # a file of a fixed name there before the sweep is an input; a "/" path nothing tells of
    got = input_paths("./app old.txt cases/{size}.in --in=m2_{size}.grf", NEW, str(tmp_path),
                      1e9, RUNS)
    assert got == ["./app", "old.txt", "cases/300.in", "m2_300.grf"]


def test_with_a_setup_a_new_sizes_input_not_there_yet_is_left_to_it(tmp_path):
    _files(tmp_path, 1e9)
    assert input_paths("dgord m2_{size}.grf out.ord", NEW, str(tmp_path), 1e9, RUNS,
                       setup=True) == []


def test_without_the_first_launchs_time_what_exists_counts_as_before(tmp_path):
    _files(tmp_path, 1e9)
    assert input_paths("dgord m2_{size}.grf out.ord", NEW, str(tmp_path), None, RUNS) == \
        ["out.ord"]


def test_a_settings_absolute_value_is_no_input_and_a_relative_one_is_its_value(tmp_path):
    """s44 tester P1: ``env LD_LIBRARY_PATH=/abs/lib`` before the program had been checked by
    the job as the missing input ``LD_LIBRARY_PATH=/abs/lib`` (a "/" in it), so the job stopped
    at once; a ``key=case/a.in`` argument names the input ``case/a.in``."""
    _files(tmp_path, 1e9)
    for start in (1e9, None):  # with the first launch's time and without it
        got = input_paths("env LD_LIBRARY_PATH=/opt/t/lib OMP_PLACES=cores ./app "
                          "input=cases/{size}.in", NEW, str(tmp_path), start, RUNS)
        assert got == ["./app", "cases/300.in"], got
