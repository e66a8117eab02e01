"""``measure/thread_use``: a run of several threads that kept one core busy per rank."""

from __future__ import annotations

import math
import subprocess
import sys

from hpcds1mpi.config import Configuration
from hpcds1mpi.measure.thread_use import idle_threads_note
from tests.helpers import hpcds1mpi_exe


def test_about_one_core_busy_per_rank_at_two_threads_is_said():
    """s41 tester A3: MPQC at 1 rank x 2 threads, CPU 21.6 s over 28.3 s: nothing said."""
    two = Configuration(1, 1, 2, "cpu", "fp64")
    note = idle_threads_note({"cpu_s": 21.6, "walls": [28.3]}, two, "mpqc size 4 N1xR1xT2")
    assert "kept 0.76 cores busy per rank at 2 threads" in note and "--threads 1" in note
    assert idle_threads_note({"cpu_s": 2 * 3 * 1.8, "walls": [1.0, 2.0]},
                             Configuration(1, 2, 2, "cpu", "fp64"), "x") == ""  # 1.8 a rank
    assert idle_threads_note({"cpu_s": 0.1, "walls": [1.0]}, two, "x") == ""  # it waited
    assert idle_threads_note({"cpu_s": math.nan, "walls": [1.0]}, two, "x") == ""
    assert idle_threads_note({"cpu_s": 1.0, "walls": [1.0]},
                             Configuration(1, 1, 1, "cpu", "fp64"), "x") == ""


def test_a_sweep_of_a_single_threaded_program_at_two_threads_says_so_once(tmp_path):
    spin = tmp_path / "spin.py"
    spin.write_text("import sys, time\nend = time.time() + 0.4\nwhile time.time() < end:\n"
                    "    pass\nprint(sys.argv[1])\n")
    proc = subprocess.run(
        [hpcds1mpi_exe(), "sweep", "--command", f"{sys.executable} {spin} {{size}}",
         "--sizes", "1,2", "--ranks-per-node", "1", "--threads", "2", "--precisions", "fp64",
         "--min-repeats", "1", "--max-repeats", "1", "--min-time", "0", "--warmup", "0",
         "--no-progress", "--out", str(tmp_path / "t.h5")],
        capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr
    said = [ln for ln in proc.stderr.splitlines() if "cores busy per rank" in ln]
    assert len(said) == 1 and said[0].startswith("hpcds1mpi sweep: note: spin.py size 1 "), \
        proc.stderr
