"""The program's own error line before its crash is a failed launch's reason (s38 tester A4)."""

from __future__ import annotations

from hpcds1mpi.measure.crash_cause import crash_cause
from hpcds1mpi.measure.program_launch import classify

#: PT-Scotch 7.0 dgord under Open MPI 4.1's mpirun, its graph file missing (exit 139).
DGORD_MISSING = """\
dgord: ERROR: fileBlockOpen: cannot open file (0)
dgord: ERROR: dgraphLoad: no input stream provided
[vm:16857] *** Process received signal ***
[vm:16857] Signal: Segmentation fault (11)
[vm:16857] Signal code: Address not mapped (1)
[vm:16857] Failing at address: (nil)
[vm:16857] [ 0] /lib/x86_64-linux-gnu/libc.so.6(+0x3c050)[0x7f0b5b088050]
[vm:16857] *** End of error message ***
--------------------------------------------------------------------------
Primary job  terminated normally, but 1 process returned
a non-zero exit code. Per user-direction, the job has been aborted.
--------------------------------------------------------------------------
--------------------------------------------------------------------------
mpirun.openmpi noticed that process rank 0 with PID 0 on node vm exited on signal 11 (Segmentation fault).
--------------------------------------------------------------------------
"""


def _reason(stderr: str, code: int = 139) -> tuple[str, str]:
    result = {"exit_code": code, "timed_out": False, "stdout": "", "stderr": stderr}
    return crash_cause(result, *classify(result, 60))


def test_the_programs_error_before_its_crash_is_the_reason_the_crash_after_it():
    # before: "exit code 139: mpirun.openmpi noticed that process rank 0 ... signal 11 ..."
    assert _reason(DGORD_MISSING) == (
        "failed", "exit code 139: dgord: ERROR: fileBlockOpen: cannot open file (0) (then: "
                  "mpirun.openmpi noticed that process rank 0 with PID 0 on node vm exited on "
                  "signal 11 (Segmentation fault).)")


def test_a_crash_without_an_error_stated_before_it_keeps_the_launchers_report():
    plain = DGORD_MISSING.split("\n", 2)[2]
    warned = "dgord: warning: error estimate large\n" + plain
    for stderr in (plain, warned):
        status, error = _reason(stderr)
        assert error.startswith("exit code 139: mpirun.openmpi noticed"), error
    assert _reason("prog: error: bad input\n", 1) == ("failed", "exit code 1: prog: error: "
                                                                "bad input")



def test_a_sweep_of_dgord_given_a_missing_graph_records_dgords_error(tmp_path):
    # s38 tester A4 with the real program (Debian ptscotch); skipped where it is missing
    from hpcds1mpi.records import telemetry
    from tests.helpers import run_cli, system_program

    dgord, mpirun = system_program("dgord"), system_program("mpirun.openmpi")
    proc = run_cli(["sweep", "--command", f"{dgord} m2_{{size}}.grf o_{{size}}.ord", "--label",
                    "dgord", "--sizes", "500", "--ranks-per-node", "1", "--no-progress", "--out",
                    str(tmp_path / "d.h5"), "--mpiexec", mpirun], timeout=120, cwd=str(tmp_path))
    row = telemetry.read_runs(tmp_path / "d.h5").iloc[0]
    assert row.status == "failed" and row.error.startswith(
        "exit code 139: dgord: ERROR: fileBlockOpen: cannot open file (0) (then: "), \
        (row.error, proc.stderr)


#: FreeFem++ 4.11 given a missing script (exit 134): its account on stdout, the exception on
#: stderr (s39 tester A3).
FREEFEM_OUT = ("-- FreeFem++ v4.11 (date)\n Error opening file nothere.edp in: \n  -- try  :"
               "\"nothere.edp\"\n\n Error line number 1, in file -- unknown --, before  token \n"
               "lex: Error input opening file \n  current line = -1 mpirank 0 / 1\n"
               "Compile error : lex: Error input opening file \n\tline number :1, \n")
FREEFEM_ERR = ("terminate called after throwing an instance of 'ErrorCompile'\n"
               "  what():  Compile error : lex: Error input opening file\n")
#: PhyML 3.3's MPI build at 1 rank: its words on stdout, an assert that says nothing on stderr.
PHYML_OUT = (". Running the analysis on 1 CPU\n\n. The number of CPUs used in the MPI bootstrap "
             "analysis should be\n. strictly greater than 1 (it is equal to 1 here).\n")
PHYML_ERR = "phyml-mpi: mpi_boot.c:75: Bootstrap_MPI: Assertion `FALSE' failed.\n"


def _aborted(stdout: str, stderr: str) -> str:
    result = {"exit_code": 134, "timed_out": False, "stdout": stdout, "stderr": stderr}
    return crash_cause(result, *classify(result, 60))[1]


def test_an_abort_after_the_programs_account_on_stdout_is_led_by_that_account():
    # before: "exit code 134: what():  Compile error : lex: Error input opening file"
    assert _aborted(FREEFEM_OUT, FREEFEM_ERR) == (
        "exit code 134: Error opening file nothere.edp in: (then: what():  Compile error : lex: "
        "Error input opening file)")
    # before: "exit code 134: phyml-mpi: mpi_boot.c:75: Bootstrap_MPI: Assertion `FALSE' failed."
    assert _aborted(PHYML_OUT, PHYML_ERR) == (
        "exit code 134: The number of CPUs used in the MPI bootstrap analysis should be strictly "
        "greater than 1 (it is equal to 1 here). (then: phyml-mpi: mpi_boot.c:75: Bootstrap_MPI: "
        "Assertion `FALSE' failed.)")


def test_an_abort_that_says_what_failed_keeps_it_over_ordinary_output():
    stderr = "app: solve.c:9: solve: Assertion `n > 0' failed.\n"
    for stdout in ("step 1\nstep 2\n", "step 1\nrelative error: 1.2e-05\n", "",
                   "step 2 L2 error norm 3.2e-05\n", "max error = 3\n"):
        assert _aborted(stdout, stderr) == ("exit code 134: app: solve.c:9: solve: Assertion "
                                            "`n > 0' failed.")
