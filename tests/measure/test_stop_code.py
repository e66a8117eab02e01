"""A Fortran program's bare stop code, read with the line it stopped after."""

from __future__ import annotations

from pathlib import Path

from hpcds1mpi.measure.program_launch import classify, reason_line
from hpcds1mpi.measure.stop_code import stop_reason

DATA = Path(__file__).parent.parent / "data"
#: Real program outputs (tests/data/program_outputs/README.md says how each was captured).
OUTPUTS = DATA / "program_outputs"


def test_the_stop_code_takes_the_programs_last_line_before_it():
    assert stop_reason([["ERROR STOP 2"], ["usage: heat N"]],
                       [[""], ["usage: heat N"]]) == "usage: heat N; ERROR STOP 2"
    # its own stream's line above it first; nothing else: the stop code alone
    assert stop_reason([["reading deck", "STOP 3"], ["step 1"]],
                       [["reading deck", ""], ["step 1"]]) == "reading deck; STOP 3"
    assert stop_reason([["ERROR STOP 1"], []], [[""], []]) == "ERROR STOP 1"
    assert stop_reason([["ERROR STOP matrix is singular"], []], [["x"], []]) == ""  # specific


def test_a_coarray_programs_error_stop_is_its_reason_not_mpi_abort():
    """Was (s32 tester X5): "exit code 2: MPI_ABORT was invoked on rank 0 in communicator
    MPI_COMM_WORLD with errorcode 2.", the program's "usage: heat N" and "ERROR STOP 2" lost."""
    result = {"exit_code": 2, "timed_out": False, "ranks": 1,
              "stdout": (OUTPUTS / "opencoarrays-error-stop-usage.stdout").read_text(),
              "stderr": (OUTPUTS / "opencoarrays-error-stop-usage.stderr").read_text()}
    assert classify(result, 60) == ("failed", "exit code 2: usage: heat N; ERROR STOP 2")
    # the program's error words still win over a stop code (pw.x's "convergence NOT achieved")
    assert reason_line("SCF run NOT converged\n", "ERROR STOP 1\n") == "SCF run NOT converged"


def test_a_real_sweep_of_a_coarray_program_records_its_error_stop(tmp_path):
    """The tester's OpenCoarrays program under Debian's Open MPI, run without its size."""
    from tests.helpers import coarray_heat, run_cli

    mpirun = coarray_heat(tmp_path)
    done = run_cli(["sweep", "--program", "./heat", "--label", "heate", "--sizes", "1",
                    "--ranks-per-node", "1", "--time-regex", r"elapsed: +([0-9.eE+-]+) s",
                    "--mpiexec", mpirun, "--out", "e1.h5"], cwd=tmp_path, timeout=120,
                   env={"OMPI_MCA_osc": "ucx", "OMPI_ALLOW_RUN_AS_ROOT": "1",
                        "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"})
    assert "failed: exit code 2: usage: heat N; ERROR STOP 2" in done.stderr, done.stderr
