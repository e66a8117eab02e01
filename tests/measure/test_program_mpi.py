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
