"""What the sweep reads of a program's libraries: the note on threads it cannot use
(:func:`hpcds1mpi.measure.program_mpi.threading_note`)."""

from __future__ import annotations

import os

from hpcds1mpi.measure.program_mpi import threading_note
from tests.launch.test_elf_libraries import _linked_app


def test_threads_swept_for_an_mpi_binary_without_openmp_are_noted(tmp_path):
    app = _linked_app(tmp_path, {"libmpi.so.40": "libmpi.so.40"})
    env = dict(os.environ)
    note = threading_note([app, "-i", "in"], env, [1, 2])
    assert note == ("note: app links no OpenMP runtime nor threaded BLAS: --threads above 1 "
                    "only gives each rank idle cores (unless the program starts threads of "
                    "its own)")
    assert threading_note([app], env, [1]) == ""  # no threads above 1 swept


def test_no_note_for_openmp_a_wrapper_or_a_script(tmp_path):
    env = dict(os.environ)
    omp = _linked_app(tmp_path, {"libmpi.so.40": "libmpi.so.40",
                                 "libgomp.so.1": "libgomp.so.1"})
    assert threading_note([omp], env, [2]) == ""
    assert threading_note(["/bin/sh", "-c", "pw.x"], env, [2]) == ""  # the program is unknown
    script = tmp_path / "run.sh"
    script.write_text("#!/bin/sh\nexec pw.x\n")
    script.chmod(0o755)
    assert threading_note([str(script)], env, [2]) == ""
    assert threading_note(["no-such-program-here"], env, [2]) == ""


def test_a_command_that_takes_its_thread_count_gets_no_note(tmp_path):
    """Was: the note said "--threads above 1 only gives each rank idle cores" of a command
    with {threads} (the program is told its count), which tune and recommend already offered
    threads for: the rule is launch/program_threads.unthreaded_program's, one for all."""
    app = _linked_app(tmp_path, {"libmpi.so.40": "libmpi.so.40"})
    env = dict(os.environ)
    assert threading_note([app, "--nthreads", "{threads}"], env, [2]) == ""
    assert threading_note(f"{app} --nthreads {{threads}} -i in-{{size}}", env, [2]) == ""
    assert threading_note(f"{app} -i in-{{size}}", env, [2]).startswith("note: app links")


def test_the_sweep_notes_unused_threads_from_the_command_as_given(tmp_path):
    """external.run_external reads the command before its placeholders are filled: "-t 2"
    (filled) had hidden the {threads} the program takes its count from."""
    import subprocess

    from tests.helpers import hpcds1mpi_exe, system_program

    mpirun = system_program("mpirun.openmpi")
    app = _linked_app(tmp_path, {"libmpi.so.40": "libmpi.so.40"})
    env = {**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
    said = {}
    for name, command in (("plain", f"{app} {{size}}"), ("told", f"{app} -t {{threads}}")):
        proc = subprocess.run(
            [hpcds1mpi_exe(), "sweep", "--command", command, "--label", "app", "--sizes", "1",
             "--threads", "2", "--mpiexec", mpirun, "--min-repeats", "1", "--max-repeats",
             "1", "--min-time", "0", "--no-progress", "--out", str(tmp_path / f"{name}.h5")],
            capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        said[name] = "links no OpenMP runtime" in proc.stderr
    assert said == {"plain": True, "told": False}
