"""One launch of a user's program: its output bounded, its exit classified."""

from __future__ import annotations

import sys

import pytest

from hpcds1mpi.measure import program_launch
from hpcds1mpi.measure.program_launch import classify, launch_once
from hpcds1mpi.measure.readings import Readings

BASE = {"stdout": "", "stderr": "", "timed_out": False}

#: Open MPI's words on every aborted MPI_Init (no memory problem in it).
OMPI_ABORT = """*** An error occurred in MPI_Init
*** on a NULL communicator
*** MPI_ERRORS_ARE_FATAL (processes in this communicator will now abort,
***    and potentially your MPI job)
[vm:01234] Local abort before MPI_INIT completed completed successfully, but am not able to \
aggregate error messages, and not able to guarantee that all other processes were killed!
"""


@pytest.mark.parametrize("stdout, stderr", [
    ("", OMPI_ABORT),
    ("cleanup: 0 stray processes killed\n", "solver did not converge\n"),
    ("", "Killed 3 of 4 candidate moves\nfailed\n"),
    ("the memory killer test was skipped\n", "error\n"),
])
def test_the_word_killed_in_passing_is_a_failure_not_oom(stdout, stderr):
    # Any "killed" made these oom before (\bKilled\b, any case).
    status, error = classify({**BASE, "exit_code": 1, "stdout": stdout, "stderr": stderr}, 5)
    assert status == "failed" and error.startswith("exit code 1: "), error


@pytest.mark.parametrize("code, stderr", [
    (137, ""),
    (-9, ""),
    (1, "terminate called after throwing an instance of 'std::bad_alloc'\n  what():  "
        "std::bad_alloc\n"),
    (1, "Traceback (most recent call last):\nMemoryError\n"),
    (1, "malloc: Cannot allocate memory\n"),
    (1, "CUDA error: out of memory\n"),
    (1, "RuntimeError: CUDA_ERROR_OUT_OF_MEMORY\n"),
    (1, "Out of memory: Killed process 4242 (app) total-vm:1234kB\n"),
    (1, "slurmstepd: error: Detected 1 oom-kill event(s) in StepId=12.0. Some of your "
        "processes may have been killed by the cgroup out-of-memory handler.\n"),
    (1, "slurmstepd: error: Detected 1 oom_kill event in StepId=12.0. Some of the step "
        "tasks have been OOM Killed.\n"),
    (1, "Killed\n"),  # sh's report of a child killed by SIGKILL
    (1, "./run.sh: line 3: 12345 Killed                  ./app 100\n"),  # bash's
    (9, "YOUR APPLICATION TERMINATED WITH THE EXIT STRING: Killed (signal 9)\n"),  # hydra
    (1, "mpirun noticed that process rank 0 with PID 1 on node vm exited on signal 9 "
        "(Killed).\n"),  # Open MPI
])
def test_the_signs_of_running_out_of_memory_are_oom(code, stderr):
    status, error = classify({**BASE, "exit_code": code, "stderr": stderr}, 5)
    assert status == "oom" and "(out of memory)" in error, (code, stderr)


def test_a_huge_output_is_scanned_whole_but_kept_only_as_its_tail(tmp_path, monkeypatch):
    # Before, stdout was read and decoded whole (1.5 GB of output: 4.4 GB of memory) and
    # launch_once took no scan.
    monkeypatch.setattr("hpcds1mpi.measure.readings.CHUNK", 2**20)
    app = tmp_path / "loud.py"
    app.write_text("import sys\nprint('RANKS=1')\nline = 'x' * 99 + '\\n'\n"
                   "sys.stdout.write(line * 200000)\nprint('TIME=0.125')\n"
                   "sys.stderr.write('e' * 99 + '\\n')\n")
    readings = Readings.of(time_regex=r"TIME=(\S+)", ranks_regex=r"RANKS=(\d+)")
    seen = []

    def scan(streams):
        seen.extend(fh.seek(0, 2) for fh in streams)
        return readings.scan(streams)

    result = launch_once([sys.executable, str(app)], {}, 60, str(tmp_path), scan=scan)
    assert result["exit_code"] == 0 and seen == [20_000_000 + 8 + 11, 100]
    assert len(result["stdout"]) <= program_launch.TAIL
    assert result["stdout"].endswith("TIME=0.125\n")
    assert result["stderr"] == "e" * 99 + "\n"
    assert result["found"]["time"] == 0.125 and result["found"]["ranks"] == 1  # its first line
    assert classify(result, 60) == ("ok", "")
    assert launch_once([sys.executable, "-c", "print(1)"], {}, 60)["found"] is None
