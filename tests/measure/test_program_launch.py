"""One launch of a user's program: its output bounded, its exit classified."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from hpcds1mpi.measure import program_launch
from hpcds1mpi.measure.program_launch import classify, launch_once, reason_line
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
    (1, "terminate called after throwing an instance of 'std::bad_alloc'\n  what():  "
        "std::bad_alloc\n"),
    (1, "Traceback (most recent call last):\nMemoryError\n"),
    (1, "malloc: Cannot allocate memory\n"),
    (1, "CUDA error: out of memory\n"),
    (1, "RuntimeError: CUDA_ERROR_OUT_OF_MEMORY\n"),
    (1, "Out of memory: Killed process 4242 (app) total-vm:1234kB\n"),
    (137, "Killed process 4242 (app) total-vm:1234kB, anon-rss:24000000kB\n"),
    (1, "slurmstepd: error: Detected 1 oom-kill event(s) in StepId=12.0. Some of your "
        "processes may have been killed by the cgroup out-of-memory handler.\n"),
    (1, "slurmstepd: error: Detected 1 oom_kill event in StepId=12.0. Some of the step "
        "tasks have been OOM Killed.\n"),
    (137, "srun: error: n1: task 0: Out Of Memory\n"),  # Slurm's OUT_OF_MEMORY
])
def test_the_signs_of_running_out_of_memory_are_oom(code, stderr):
    status, error = classify({**BASE, "exit_code": code, "stderr": stderr, "rss_mb": 10.0}, 5,
                             memory_mb=25000.0)  # a word is evidence at any peak
    assert status == "oom" and "(out of memory)" in error, (code, stderr)


#: SIGKILL as the shell or a launcher reports it: no sign of memory by itself.
SIGKILLED = [
    (137, ""),
    (-9, ""),
    (1, "Killed\n"),  # sh's report of a child killed by SIGKILL
    (1, "./run.sh: line 3: 12345 Killed                  ./app 100\n"),  # bash's
    (9, "YOUR APPLICATION TERMINATED WITH THE EXIT STRING: Killed (signal 9)\n"),  # hydra
    (137, "mpirun.openmpi noticed that process rank 0 with PID 0 on node vm exited on signal 9 "
          "(Killed).\n"),  # Open MPI
]


@pytest.mark.parametrize("code, stderr", SIGKILLED)
def test_a_sigkill_is_oom_only_with_a_peak_near_the_memory(code, stderr):
    # s46 testers G1, H1: every SIGKILL was oom (a kill -9 at 133 MB a rank on a 25 GB node);
    # oom now takes a peak near the memory available (a rank's x its ranks on a node).
    near = {**BASE, "exit_code": code, "stderr": stderr, "rss_mb": 7000.0, "ranks": 4,
            "ranks_per_node": 2}
    status, error = classify(near, 5, memory_mb=25300.0)
    assert status == "oom" and "(out of memory): killed by signal 9 near the memory" in error
    assert "14000 MiB a node, 55% of 25300 MiB" in error
    status, error = classify({**near, "rss_mb": 132.8}, 5, memory_mb=25300.0)
    assert status == "failed", error
    assert error.startswith(f"exit code {code}: killed by signal 9 (not known to be memory: its "
                            "ranks' peak 266 MiB a node is 1.0% of the 25300 MiB available, "
                            "and no out-of-memory line)"), error
    status, error = classify({**BASE, "exit_code": code, "stderr": stderr}, 5, memory_mb=25300.0)
    assert status == "failed" and "its ranks' peak memory was not measured" in error, error


def test_a_sigkill_is_judged_by_the_memory_here_when_not_told(monkeypatch):
    from hpcds1mpi.measure import oom_evidence

    assert oom_evidence.available_mb() > 0  # /proc/meminfo's, or the cgroup's limit
    monkeypatch.setattr(oom_evidence, "available_mb", lambda: 1000.0)
    assert classify({**BASE, "exit_code": 137, "rss_mb": 600.0}, 5)[0] == "oom"
    assert classify({**BASE, "exit_code": 137, "rss_mb": 60.0}, 5)[0] == "failed"


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


#: Open MPI's mpirun when a rank calls MPI_Abort, as LAMMPS does on any input error (stderr).
OMPI_MPI_ABORT = """\
--------------------------------------------------------------------------
MPI_ABORT was invoked on rank 0 in communicator MPI_COMM_WORLD
with errorcode 1.

NOTE: invoking MPI_ABORT causes Open MPI to kill all MPI processes.
You may or may not see output from other processes, depending on
exactly when Open MPI kills them.
--------------------------------------------------------------------------
"""
#: LAMMPS's own report of a misspelled input file (stdout), as Debian's lmp writes it.
LAMMPS_TYPO = ("ERROR on proc 0: Cannot open input script in.ljj: No such file or directory "
               "(src/lammps.cpp:520)\nLast command: (unknown)\n")


@pytest.mark.parametrize("stdout, stderr, reason", [
    # Before: "exit code 1: -----..." (the rule under Open MPI's help text) for each of these.
    (LAMMPS_TYPO, OMPI_MPI_ABORT, LAMMPS_TYPO.splitlines()[0]),
    (LAMMPS_TYPO, OMPI_MPI_ABORT + "[vm:23283] [[13837,0],0] ORTE_ERROR_LOG: Out of resource "
     "in file ../../../orte/util/show_help.c at line 501\n", LAMMPS_TYPO.splitlines()[0]),
    (LAMMPS_TYPO, OMPI_MPI_ABORT + '[vm:23851] 1 more process has sent help message '
     'help-mpi-api.txt / mpi-abort\n[vm:23851] Set MCA parameter "orte_base_help_aggregate" '
     'to 0 to see all help / error messages\n', LAMMPS_TYPO.splitlines()[0]),
    # a crash the launcher reports inside its help text is the reason
    ("step 1\n", "-" * 74 + "\nmpirun noticed that process rank 1 with PID 0 on node vm exited "
     "on signal 11 (Segmentation fault).\n" + "-" * 74 + "\n",
     "mpirun noticed that process rank 1 with PID 0 on node vm exited on signal 11 "
     "(Segmentation fault)."),
    # hydra's box around a program's error
    ("ERROR: cannot open in.x\n", "=" * 40 + "\n=   BAD TERMINATION OF ONE OF YOUR APPLICATION "
     "PROCESSES\n=   EXIT CODE: 1\n" + "=" * 40 + "\n", "ERROR: cannot open in.x"),
])
def test_the_reason_is_the_programs_error_not_its_mpis_abort_banner(stdout, stderr, reason):
    status, error = classify({**BASE, "exit_code": 1, "stdout": stdout, "stderr": stderr}, 5)
    assert (status, error) == ("failed", f"exit code 1: {reason}")


@pytest.mark.parametrize("stdout, stderr, reason", [
    ("", "bad\n", "bad"),  # the program's last stderr line, as before
    ("step 1\n", "solver did not converge\n", "solver did not converge"),
    ("", "Traceback (most recent call last):\n  File \"x.py\", line 1\nValueError: size 7\n",
     "ValueError: size 7"),
    ("last words\n", "", "last words"),
    ("", "", ""),
])
def test_a_programs_own_stderr_is_still_its_reason(stdout, stderr, reason):
    assert program_launch.reason_line(stdout, stderr) == reason


#: Real outputs (stderr) of gfortran 12 programs: a missing input file (ScaLAPACK's xdlu
#: without its LU.dat), ``error stop``, -fcheck=bounds; every one ends with the same trailer.
GFORTRAN_TRAILER = """
Error termination. Backtrace:
#0  0x7fbca06218c2 in ???
#1  0x7fbca06223b9 in ???
#7  0x7fbca0445249 in __libc_start_call_main
\tat ../sysdeps/nptl/libc_start_call_main.h:58
#8  0x7fbca0445304 in __libc_start_main_impl
\tat ../csu/libc-start.c:360
#10  0xffffffffffffffff in ???
"""
GFORTRAN_OPEN = ("At line 172 of file /build/scalapack-Kzxoft/scalapack-2.2.1/TESTING/LIN/"
                 "pdluinfo.f (unit = 11)\nFortran runtime error: Cannot open file 'LU.dat': "
                 "No such file or directory\n" + GFORTRAN_TRAILER)
GFORTRAN_STOP = "ERROR STOP matrix is singular\n" + GFORTRAN_TRAILER
GFORTRAN_BOUNDS = ("At line 4 of file bounds.f90\nFortran runtime error: Index '11' of "
                   "dimension 1 of array 'a' above upper bound of 10\n" + GFORTRAN_TRAILER)
#: A C assert at 2 ranks under MPICH's mpiexec (hydra's box on stdout) and Open MPI's mpirun.
ASSERT = "app: assert.c:5: main: Assertion `r < 0' failed."
HYDRA_BOX = ("step 1\n\n" + "=" * 83 + "\n=   BAD TERMINATION OF ONE OF YOUR APPLICATION "
             "PROCESSES\n=   PID 8190 RUNNING AT vm\n=   EXIT CODE: 6\n" + "=" * 83 +
             "\nYOUR APPLICATION TERMINATED WITH THE EXIT STRING: Aborted (signal 6)\nThis "
             "typically refers to a problem with your application.\n")
OMPI_SIGNAL = (f"{ASSERT}\n[vm:08225] *** Process received signal ***\n[vm:08225] Signal: "
               "Aborted (6)\n[vm:08225] [ 6] ./app(+0x120e)[0x55f82004920e]\n[vm:08225] *** End "
               "of error message ***\n" + "-" * 74 + "\nPrimary job  terminated normally, but 1 "
               "process returned\na non-zero exit code. Per user-direction, the job has been "
               "aborted.\n" + "-" * 74 + "\n" + "-" * 74 + "\nmpirun noticed that process rank "
               "0 with PID 0 on node vm exited on signal 6 (Aborted).\n" + "-" * 74 + "\n")
#: A program's error, then MPI_Abort, under MPICH and Open MPI 4.
MPICH_ABORT = ("ERROR: cannot read input deck in.x\nAbort(3) on node 0 (rank 0 in comm 0): "
               "application called MPI_Abort(MPI_COMM_WORLD, 3) - process 0\n")
OMPI4_ABORT = ("ERROR: cannot read input deck in.x\n[vm:08342] [[19560,0],0] ORTE_ERROR_LOG: "
               "Out of resource in file ../../../orte/util/show_help.c at line 507\n")


@pytest.mark.parametrize("stdout, stderr, reason", [
    # Before: "Error termination. Backtrace:" for each gfortran one, and Open MPI's "mpirun
    # noticed ... signal 6" for the assert.
    ("", GFORTRAN_OPEN, "Fortran runtime error: Cannot open file 'LU.dat': No such file or "
     "directory"),
    ("", GFORTRAN_STOP, "ERROR STOP matrix is singular"),
    ("", GFORTRAN_BOUNDS, "Fortran runtime error: Index '11' of dimension 1 of array 'a' above "
     "upper bound of 10"),
    ("", "At line 9 of file t.f90\nFortran runtime error:\nEnd of file\n" + GFORTRAN_TRAILER,
     "Fortran runtime error: End of file"),  # its message on the line after
    (HYDRA_BOX, f"{ASSERT}\n{ASSERT}\n", ASSERT),
    # a segfault under hydra: its banner, on stdout, is all there is (s39 tester B1: was
    # "Please see the FAQ page for debugging suggestions")
    (HYDRA_BOX.replace("Aborted (signal 6)", "Segmentation fault (signal 11)") +
     "Please see the FAQ page for debugging suggestions\n", "",
     "YOUR APPLICATION TERMINATED WITH THE EXIT STRING: Segmentation fault (signal 11)"),
    ("signal 11 handler installed\nstep 1\nbad input deck\n", "",
     "bad input deck"),  # a program's own stdout is not read for crash words
    ("step 1\nstep 1\n", OMPI_SIGNAL, ASSERT),
    ("", MPICH_ABORT, "ERROR: cannot read input deck in.x"),
    ("", OMPI4_ABORT + OMPI_MPI_ABORT, "ERROR: cannot read input deck in.x"),
    ("", "terminate called after throwing an instance of 'std::runtime_error'\n  what():  "
     "bad mesh\n", "what():  bad mesh"),
    # a report of zero failures is not the error
    ("Unable to perform factorization: need TOTMEM of at least 4494136\n"
     "0 tests completed and failed residual checks.\nerrors: 0\n", "",
     "Unable to perform factorization: need TOTMEM of at least 4494136"),
])
def test_the_reason_is_the_most_specific_line_not_a_runtimes_trailer(stdout, stderr, reason):
    assert program_launch.reason_line(stdout, stderr) == reason


#: GROMACS 2022 (Debian's gmx_mpi) under Open MPI's mpirun: its fatal error between two rules of
#: 55 dashes, then Open MPI's MPI_ABORT help text between rules of 74 (stderr).
GMX_HEAD = ("Command line:\n  gmx_mpi mdrun -s /w/25/topoll.tpr -nsteps 100 -deffnm run\n\n"
            "Reading file /w/25/topol.tpr, VERSION 2022.5-Debian_2022.5_2 (single precision)\n\n"
            + "-" * 55 + "\nProgram:     gmx mdrun, version 2022.5-Debian_2022.5_2\n")
GMX_TAIL = ("\nFor more information and tips for troubleshooting, please check the GROMACS\n"
            "website at http://www.gromacs.org/Documentation/Errors\n" + "-" * 55 + "\n")
GMX_OMP = (GMX_HEAD + "Source file: src/gromacs/mdlib/gmx_omp_nthreads.cpp (line 196)\n\n"
           "Fatal error:\nEnvironment variable OMP_NUM_THREADS (2) and the number of threads "
           "requested\non the command line (1) have different values. Either omit one, or set "
           "them\nboth to the same value.\n" + GMX_TAIL + OMPI_MPI_ABORT)
GMX_TYPO = (GMX_HEAD + "Source file: src/gromacs/commandline/cmdlineparser.cpp (line 271)\n"
            "Function:    void gmx::CommandLineParser::parse(int*, char**)\n\nError in user "
            "input:\nInvalid command-line options\n  In command-line option -s\n    File "
            "'/w/25/topoll.tpr' does not exist or is not accessible.\n    The file could not be "
            "opened.\n      Reason: No such file or directory\n      (call to fopen() returned "
            "error code 2)\n" + GMX_TAIL + OMPI_MPI_ABORT)
#: Open MPI 4.1's mpirun when a rank exits 3: two help texts, with "aborted" and "Exit code".
OMPI_EXIT = ("-" * 74 + "\nPrimary job  terminated normally, but 1 process returned\na non-zero "
             "exit code. Per user-direction, the job has been aborted.\n" + "-" * 74 + "\n" +
             "-" * 74 + "\nmpirun.openmpi detected that one or more processes exited with "
             "non-zero status, thus causing\nthe job to be terminated. The first process to do "
             "so was:\n\n  Process name: [[11147,1],0]\n  Exit code:    3\n" + "-" * 74 + "\n")


@pytest.mark.parametrize("stderr, reason", [
    # Before: "Reading file ... (single precision)", a progress line, for both (the echo of the
    # command line without it): the text between any two rules was taken for Open MPI's help
    # text and dropped, GROMACS's error with it.
    (GMX_OMP, "Fatal error: Environment variable OMP_NUM_THREADS (2) and the number of threads "
     "requested on the command line (1) have different values. Either omit one, or set them "
     "both to the same value."),
    (GMX_TYPO, "Error in user input: Invalid command-line options In command-line option -s "
     "File '/w/25/topoll.tpr' does not exist or is not accessible. The file could not be "
     "opened. Reason: No such file or directory (call to fopen() returned error code 2)"),
    # Open MPI's own help text is still not the reason, though it says "aborted"
    ("bad things\n" + OMPI_EXIT, "bad things"),
])
def test_a_programs_framed_error_is_its_reason_open_mpis_help_text_is_not(stderr, reason):
    assert program_launch.reason_line("", stderr) == reason
    status, error = classify({**BASE, "exit_code": 1, "stdout": "", "stderr": stderr}, 5)
    assert (status, error) == ("failed", f"exit code 1: {reason}")


#: Quantum ESPRESSO 6.7's pw.x under Open MPI's mpirun (Debian): its error block on stdout
#: between two rules of '%', then "stopping ...", and MPI_ABORT's help text on stderr.
QE_RULE = " " + "%" * 78
QE_ABORT = ("-" * 74 + "\nMPI_ABORT was invoked on rank 0 in communicator MPI_COMM_WORLD\nwith "
            "errorcode 1.\n\nNOTE: invoking MPI_ABORT causes Open MPI to kill all MPI "
            "processes.\n" + "-" * 74 + "\n")


def qe_block(title: str, message: str) -> str:
    return ("     Reading input from si-904.in\n\n     Max angular momentum in pseudopotentials "
            f"(lmaxx) =  3\n\n{QE_RULE}\n     {title}\n     {message}\n{QE_RULE}\n\n"
            "     stopping ...\n")


@pytest.mark.parametrize("title, message", [
    # Before: the title alone ("Error in routine latgen (99):"); the message was kept only
    # where its own line had an error word, and then without its title.
    ("Error in routine latgen (99):", "nonexistent bravais lattice"),
    ("Error in routine read_input (1):", "opening input file"),
    ("Error in routine readpp (1):", "file /usr/share/espresso/pseudo/Si.missing.UPF not found"),
])
def test_a_title_ending_at_its_colon_keeps_the_message_under_it(title, message):
    status, error = classify({**BASE, "exit_code": 1, "stdout": qe_block(title, message),
                              "stderr": QE_ABORT}, 5)
    assert (status, error) == ("failed", f"exit code 1: {title} {message}")


#: pw.x's SCF that ran out of iterations (electron_maxstep=2): gfortran's stop code on stderr,
#: Open MPI 4.1's help texts under it, pw.x's own statement on stdout above its timings.
QE_SCF_OUT = ("     total energy              =     -15.83823005 Ry\n     estimated scf accuracy"
              "    <       0.00073131 Ry\n\n     convergence NOT achieved after   2 iterations: "
              "stopping\n\n     Writing output data file ./tmp/si.save/\n\n     PWSCF        :"
              "      0.12s CPU      0.33s WALL\n\n\n   This run was terminated on:  23:22:51   "
              "4Dec2026\n\n=" + "-" * 78 + "=\n   JOB DONE.\n=" + "-" * 78 + "=\n")


@pytest.mark.parametrize("stdout, stderr, reason", [
    # Before: "STOP 2", gfortran's stop code, the exit code again.
    (QE_SCF_OUT, "STOP 2\n" + OMPI_EXIT, "convergence NOT achieved after   2 iterations: "
     "stopping"),
    ("iteration 40 residual 3e-2\nSCF run NOT converged\n", "ERROR STOP 1\n", "SCF run NOT "
     "converged"),
    # a bare stop code is still said, after the program's last line (s32 tester X5)
    ("step 1\nJOB DONE.\n", "STOP 2\n", "JOB DONE.; STOP 2"),
    ("", "STOP 2\n", "STOP 2"),
])
def test_a_programs_statement_beats_a_bare_stop_code(stdout, stderr, reason):
    assert program_launch.reason_line(stdout, stderr) == reason


@pytest.fixture
def terminal_stdin():
    """The sweep's stdin an open pipe nobody writes to (a terminal nobody types at)."""
    import os

    read_end, write_end = os.pipe()
    saved = os.dup(0)
    os.dup2(read_end, 0)
    try:
        yield
    finally:
        os.dup2(saved, 0)
        for fd in (saved, read_end, write_end):
            os.close(fd)


def test_a_program_reads_dev_null_not_the_sweeps_stdin(terminal_stdin):
    """Was: ``pw.x < si.in`` ran pw.x reading the sweep's own stdin (its terminal), waiting
    there until --timeout (600 s by default) in every configuration."""
    result = launch_once([sys.executable, "-c", "import sys; print(len(sys.stdin.read()))"],
                         {}, timeout=10)
    assert not result["timed_out"] and result["exit_code"] == 0
    assert result["stdout"].strip() == "0"


def test_nwchems_specific_error_wins_over_its_generic_box():
    """NWChem (Global Arrays) repeats its specific error on stderr as "[0] ARMCI Error:
    0:input_parse: unknown directive scff:", which read as a report of no error ("Error: 0"),
    so stdout's generic "There is an error in the input file" was the reason (s27 tester Q, 5)."""
    from hpcds1mpi.measure.program_launch import reason_line

    out = ("----\n input_parse: unknown directive scff      0\n----\n----\n"
           " There is an error in the input file\n----\n")
    err = ("[0] ARMCI Error: 0:input_parse: unknown directive scff:\nAbort(-1) on node 0 (rank 0"
           " in comm 496): application called MPI_Abort(comm=0x84000000, -1) - process 0\n")
    # its rank tag "[0] " is no part of the message (s29 tester A5)
    assert reason_line(out, err) == "ARMCI Error: 0:input_parse: unknown directive scff:"
    assert reason_line("tests passed, errors: 0\n", "") == "tests passed, errors: 0"


#: ABINIT 9.6's stdout for an input without ``ecut`` (its YAML error document), then its abort.
ABINIT_ERROR = """ symspgr: optical characteristics = isotropic

--- !ERROR
src_file: m_invars2.F90
src_line: 826
mpi_rank: 0
message: |
    The input keyword "ecut" is compulsory !
    Action: add a value for "ecut" in the input file.
...


 abinit_abort: decision taken to exit. Check above messages for more info
"""


def test_a_yaml_error_documents_message_is_the_reason():
    """Was (s28 tester U): "exit code 14: --- !ERROR", the document's header alone."""
    status, error = classify({**BASE, "exit_code": 14, "stdout": ABINIT_ERROR,
                              "stderr": OMPI_MPI_ABORT.replace("errorcode 1", "errorcode 14")}, 5)
    assert (status, error) == ("failed", 'exit code 14: ERROR: The input keyword "ecut" is '
                               'compulsory ! Action: add a value for "ecut" in the input file.')
    bug = "--- !BUG\nsrc_file: m_xg.F90\nmessage: Wrong size of x\n...\n"
    assert program_launch.reason_line(bug, "") == "BUG: Wrong size of x"
    warning = "--- !WARNING\nmessage: |\n    nstep reached\n...\nfatal: no WFK\n"
    assert program_launch.reason_line(warning, "") == "fatal: no WFK"  # a warning is no reason


#: Open MPI's mpirun when its allocation was revoked under it (exit 205, stderr).
OMPI_LOST_DAEMON = "-" * 74 + """
ORTE has lost communication with a remote daemon.

  HNP daemon   : [[21480,0],0] on node vm
  Remote daemon: [[21480,0],1] on node n1

This is usually due to either a failure of the TCP network
connection to the node, or possibly an internal failure of
the daemon itself. We cannot recover from this failure, and
therefore will terminate the job.
""" + "-" * 74 + "\n"


def test_open_mpis_help_text_alone_gives_its_title_not_a_fragment():
    """Was (s28 tester U): "exit code 205: therefore will terminate the job.", its last line."""
    error = classify({**BASE, "exit_code": 205, "stdout": " ITER STEP NUMBER 3\n",
                      "stderr": OMPI_LOST_DAEMON}, 5)[1]
    assert error == "exit code 205: ORTE has lost communication with a remote daemon."


#: Debian's Open MPI 4.1 (a one-rank mpi4py) under ``srun --mpi=pmi2`` on the test Slurm: its
#: stderr, whole (s30 tester L2).
OMPI_UNDER_SRUN_PMI2 = ("[vm:17689] OPAL ERROR: Unreachable in file ext3x_client.c at line 112\n"
                        "srun: error: n1: task 0: Exited with exit code 1\n" + "-" * 74 + """
The application appears to have been direct launched using "srun",
but OMPI was not built with SLURM's PMI support and therefore cannot
execute. There are several options for building PMI support under
SLURM, depending upon the SLURM version you are using:

  version 16.05 or later: you can use SLURM's PMIx support. This
  requires that you configure and build SLURM --with-pmix.

Please configure as appropriate and try again.
""" + "-" * 74 + """
*** An error occurred in MPI_Init_thread
*** on a NULL communicator
*** MPI_ERRORS_ARE_FATAL (processes in this communicator will now abort,
***    and potentially your MPI job)
[vm:17689] Local abort before MPI_INIT completed completed successfully, but am not able to \
aggregate error messages, and not able to guarantee that all other processes were killed!
""")


def test_open_mpis_abort_banner_loses_to_its_help_text_saying_why():
    """Was: "exit code 1: *** MPI_ERRORS_ARE_FATAL (processes in this communicator will now
    abort,"; a banner's error class line stays the reason where there is one."""
    error = classify({**BASE, "exit_code": 1, "stdout": "", "stderr": OMPI_UNDER_SRUN_PMI2}, 5)[1]
    assert error.startswith('exit code 1: The application appears to have been direct launched '
                            'using "srun", but OMPI was not built with SLURM\'s PMI support'), error
    stepped = OMPI_UNDER_SRUN_PMI2.replace(  # srun ending the step, after the task's exit
        "exit code 1\n", "exit code 1\nsrun: launch/slurm: _step_signal: Terminating "
        "StepId=56461583.0\n", 1)
    assert classify({**BASE, "exit_code": 1, "stdout": "", "stderr": stepped}, 5)[1] == error
    banner = ("*** An error occurred in MPI_Send\n*** reported by process [1,0]\n*** on "
              "communicator MPI_COMM_WORLD\n*** MPI_ERR_RANK: invalid rank\n*** "
              "MPI_ERRORS_ARE_FATAL (processes in this communicator will now abort,\n***    and "
              "potentially your MPI job)\n")
    assert classify({**BASE, "exit_code": 6, "stdout": "", "stderr": banner}, 5)[1] == \
        "exit code 6: An error occurred in MPI_Send: MPI_ERR_RANK: invalid rank"


def test_open_mpis_abort_banner_under_its_process_prefix_is_one_reason():
    """Was (s32 tester X4): "exit code 53: [vm:26902] ***    and potentially your MPI job)",
    the banner's last line, each of its lines a "[host:pid]" log line."""
    stderr = (OUTPUTS / "opencoarrays-win-create-no-osc.stderr").read_text()
    assert classify({**BASE, "exit_code": 53, "stderr": stderr, "ranks": 1}, 60) == \
        ("failed", "exit code 53: An error occurred in MPI_Win_create: MPI_ERR_WIN: invalid "
                   "window")


#: CP2K 2023.1 (Debian's cp2k.psmp) under Open MPI's mpirun: the end of its stdout when it
#: aborts, its "[ABORT]" box (cut from real runs), and MPI_ABORT's help text on stderr.
CP2K_RULE = " " + "*" * 79 + "\n"
CP2K_STACK = "\n\n ===== Routine Calling Stack ===== \n\n            1 read_input\n"


def cp2k_abort(message_lines: tuple[str, str], location: str) -> str:
    first, second = message_lines
    return (" GENERATE|  Achieved consistency in connectivity generation.\n\n" + CP2K_RULE +
            " *   ___                                                                       *\n"
            " *  /   \\                                                                      *\n"
            " * [ABORT]                                                                     *\n"
            f" *  \\___/{first}*\n"
            f" *    |  {second}*\n"
            " *  O/|                                                                        *\n"
            " * /| |                                                                        *\n"
            f" * / \\  {location} *\n" + CP2K_RULE + CP2K_STACK)


CP2K_NO_BASIS = cp2k_abort(
    ("    The requested basis set <DZVP-MOLOPT-XX-GTH> for element <O> was  ",
     "     not found in the basis set files </usr/share/cp2k/BASIS_MOLOPT>  "),
    "                                        aobasis/basis_set_types.F:1509")
CP2K_SYNTAX = cp2k_abort(
    ("   non-compatible end of section SCF , File: 'syn-150.inp', Line: 19, ",
     "                        Column: 1, Chunk: <SCFX>                      "),
    "                                             input/input_parsing.F:160")
CP2K_NO_FILE = cp2k_abort(
    ("    The specified OLD file <wrong-150.inp> cannot be opened. It does  ",
     "             not exist. Data directory path: /usr/share/cp2k          "),
    "                                                 common/cp_files.F:396")


@pytest.mark.parametrize("stdout, reason", [
    # Before: "*    |       not found in the basis set files </usr/share/cp2k/BASIS_MOLOPT>  *",
    # "* [ABORT]   ...   *" and "*  \___/    The specified OLD file <wrong-150.inp> cannot be
    # opened. It does  *": one line of the box each (s28 tester T5).
    (CP2K_NO_BASIS, "The requested basis set <DZVP-MOLOPT-XX-GTH> for element <O> was not "
     "found in the basis set files </usr/share/cp2k/BASIS_MOLOPT>"),
    (CP2K_SYNTAX, "non-compatible end of section SCF, File: 'syn-150.inp', Line: 19, Column: "
     "1, Chunk: <SCFX>"),
    (CP2K_NO_FILE, "The specified OLD file <wrong-150.inp> cannot be opened. It does not "
     "exist. Data directory path: /usr/share/cp2k"),
])
def test_a_framed_abort_box_is_one_message_without_its_art(stdout, reason):
    status, error = classify({**BASE, "exit_code": 1, "stdout": stdout,
                              "stderr": OMPI_MPI_ABORT}, 5)
    assert (status, error) == ("failed", f"exit code 1: {reason}")
    # under srun the launcher's own "error" line on stderr does not beat the box
    srun = "srun: error: vm: task 0: Exited with exit code 1\n"
    assert program_launch.reason_line(stdout, srun) == reason


def test_a_framed_box_without_an_error_is_no_reason():
    info = CP2K_RULE + " *   RESTART INFORMATION                                  *\n" + \
        CP2K_RULE
    assert program_launch.reason_line(info + "bad input deck\n", "") == "bad input deck"
    # a "*** WARNING ... ***" line (no frame above and below) is not a box
    assert program_launch.reason_line(" *** WARNING in x.F:1 :: odd ***\n", "") == \
        "*** WARNING in x.F:1 :: odd ***"


def test_sacct_is_not_asked_for_ranks_that_ran_under_the_launch(tmp_path):
    """Was (s28 tester Z5): every launch inside an allocation first asked sacct for its steps
    (15 s each where it hung), even a local mpirun's whose ranks never ran under slurmstepd."""
    import os

    from hpcds1mpi.measure.slurm_accounting import StepAccounting

    bin_dir, log = tmp_path / "bin", tmp_path / "sacct.log"
    bin_dir.mkdir()
    (bin_dir / "sacct").write_text(f'#!/bin/sh\necho "$*" >> {log}\n')
    (bin_dir / "sacct").chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "SLURM_JOB_ID": "77"}
    result = launch_once([sys.executable, "-c", "import time; time.sleep(0.2)"], env, 30,
                         accounting=StepAccounting("77", env))
    assert result["exit_code"] == 0 and result["rss_mb"] > 0, result["rss_source"]
    assert not log.exists(), log.read_text()


#: Real program outputs (tests/data/program_outputs/README.md says how each was captured).
OUTPUTS = Path(__file__).parent.parent / "data" / "program_outputs"


@pytest.mark.parametrize("name, reason", [
    ("petsc-partition-too-fine.stderr",
     "Argument out of range; Partition in x direction is too fine! 2 4"),
    ("petsc-too-fine-options-unused.stderr",  # its unused-option warning is no message line
     "Argument out of range; Partition in x direction is too fine! 2 4"),
    ("petsc-error-on-rank-1.stderr", "deliberate failure on rank 1"),
])
def test_a_petsc_errors_reason_is_its_message_not_its_option_table(name, reason):
    """Was (s29 tester C4): "[0]PETSC ERROR: PETSc Option Table entries: [0]PETSC ERROR:
    -da_grid_x 2 ... End of Error Message ...": the table's title ends in ':' and was taken
    for the error's, its options for the message."""
    stderr = (OUTPUTS / name).read_text()
    assert classify({"exit_code": 63, "timed_out": False, "stdout": "", "stderr": stderr},
                    60) == ("failed", f"exit code 63: {reason}")


@pytest.mark.parametrize("name, reason", [
    ("openfoam-parallel-on-1-processor.stderr",  # not mpirun's "exited on signal 6 (Aborted)"
     "FOAM FATAL ERROR: attempt to run parallel on 1 processor"),
    ("openfoam-processor-count-mismatch.stderr",  # no "[0]" tags, no "FOAM parallel run exiting"
     "FOAM FATAL ERROR: number of processor directories = 2 is not equal to the number of "
     "processors = 4"),
    ("openfoam-missing-scheme.stderr",  # up to its blank line, not its "file:" and "From"
     "FOAM FATAL IO ERROR: Entry 'div(phi,U)' not found in dictionary "
     '"/tmp/FX2/io/system/fvSchemes.divSchemes"'),
    ("openmpi-ppr-too-many.stderr",  # the help text's first paragraph, not its first line,
     "Your job has requested more processes than the ppr for this topology can support: "
     "App: true Number of procs:  2 PPR: 1:node"),  # and the detail its colon introduces
])
def test_a_programs_own_fatal_error_is_the_reason_not_the_launchers_crash_line(name, reason):
    """Was (s29 tester A5): "mpirun.openmpi noticed that process rank 0 ... exited on signal 6
    (Aborted)." over OpenFOAM's own error, and "[0] --> FOAM FATAL ERROR: [0] number of ... [0]
    FOAM parallel run exiting [0]" where it was kept."""
    stderr = (OUTPUTS / name).read_text()
    assert classify({**BASE, "exit_code": 134, "stderr": stderr, "ranks": 1}, 60) == \
        ("failed", f"exit code 134: {reason}")


@pytest.mark.parametrize("name, reason", [
    ("petsc-unknown-ksp-type.stderr",  # 2 ranks: not Open MPI's ORTE_ERROR_LOG under it
     "Unknown type. Check for miss-spelling or missing package: https://petsc.org/release/"
     "install/install/#external-packages; Unable to find requested KSP type cgg"),
    ("petsc-unknown-pc-type.stderr",  # 1 rank: not the MPI_ABORT help text under it
     "Unknown type. Check for miss-spelling or missing package: https://petsc.org/release/"
     "install/install/#external-packages; Unable to find requested PC type jacobii"),
])
def test_a_petsc_message_line_with_a_link_is_the_reason(name, reason):
    """Was (s29 V2-2): its first message line has a link, taken for the section's
    boilerplate: no message, and the reason was "MPI_ABORT was invoked on rank 0 ..." or
    "[vm:24263] ... ORTE_ERROR_LOG: Data unpack would read past end of buffer ..."."""
    stderr = (OUTPUTS / name).read_text()
    assert classify({**BASE, "exit_code": 86, "stderr": stderr, "ranks": 2}, 60) == \
        ("failed", f"exit code 86: {reason}")


def test_a_content_line_over_a_considered_fatal_trailer_is_the_reason():
    """Was (s29 V1-3): OpenFOAM's blockMesh in a case folder named with a space gave "For debug
    level (= 2) > 1 this is considered fatal", the line saying what was wrong dropped."""
    result = {**BASE, "exit_code": 1,
              "stdout": (OUTPUTS / "openfoam-invalid-case-name.stdout").read_text(),
              "stderr": (OUTPUTS / "openfoam-invalid-case-name.stderr").read_text()}
    assert classify(result, 60) == ("failed", "exit code 1: fileName::stripInvalid() called "
                                    "for invalid fileName /tmp/fx/ofcase (for debug level "
                                    "(= 2) > 1 this is considered fatal)")
    # its rank's tags, and a content line without an error word of its own
    assert program_launch.reason_line("", "[1] mesh zone 3 is empty\n[1]   This is "
                                          "considered fatal\n") == \
        "mesh zone 3 is empty (this is considered fatal)"


def test_an_srun_task_that_never_launched_is_a_failure_not_oom():
    """Was (s29 V1-1): srun's step failed to launch (pmix), srun killed the other task, exit
    137: "oom: exit code 137 (out of memory): srun: error: n2: task 1: Killed"."""
    result = {**BASE, "exit_code": 137, "ranks": 2,
              "stderr": (OUTPUTS / "srun-pmix-launch-failed.stderr").read_text()}
    assert classify(result, 60) == \
        ("failed", "exit code 137: srun: error: task 0 launch failed: Unspecified error")
    killed_after = ("srun: error: n1: task 0: Exited with exit code 2\n"
                    "srun: error: n2: task 1: Killed\n")  # killed after another task failed
    assert classify({**BASE, "exit_code": 137, "stderr": "ERROR: bad deck\n" + killed_after},
                    60) == ("failed", "exit code 137: ERROR: bad deck")  # not srun's "Killed"
    for unlaunched in ("srun: error: Unable to launch step: bad node\n",
                       "slurmstepd: error: task launch failed on node n2\n"):
        assert classify({**BASE, "exit_code": 137, "stderr": unlaunched}, 60) == \
            ("failed", f"exit code 137: {unlaunched.strip()}")
    real_oom = result["stderr"] + "slurmstepd: error: Detected 1 oom_kill event in StepId=7.0\n"
    assert classify({**result, "stderr": real_oom}, 60)[0] == "oom"  # its evidence wins


def test_a_program_alone_under_another_mpis_launcher_gets_a_hint():
    """Was (s29 tester A5): MPICH's hydra starting an Open MPI OpenFOAM as two singletons,
    each saying "attempt to run parallel on 1 processor", read "exit code 134: Aborted"."""
    result = {**BASE, "exit_code": 134, "ranks": 2,
              "stdout": (OUTPUTS / "openfoam-under-hydra.stdout").read_text(),
              "stderr": (OUTPUTS / "openfoam-under-hydra.stderr").read_text()}
    status, error = classify(result, 60)
    assert status == "failed" and error.startswith(
        "exit code 134: FOAM FATAL ERROR: attempt to run parallel on 1 processor (")
    assert "ran as 1 process, not 2" in error and "not of the program's MPI" in error
    assert "not of" not in classify({**result, "ranks": 1}, 60)[1]  # alone is right at 1 rank
    assert launch_once([sys.executable, "-c", "pass"], {}, 10, ranks=3)["ranks"] == 3


def test_a_programs_error_trailer_is_no_reason():
    """OpenFOAM ends every error with "FOAM exiting" / "FOAM parallel run exiting" (s29 tester
    A5): the last line on stderr, it was the reason where no error word was found above it."""
    assert program_launch.reason_line("", "[1] mesh has 0 cells\n[1]\nFOAM parallel run "
                                          "exiting\n") == "mesh has 0 cells"


#: A failed program's output that repeats an error title (s29 tester H2): the kept 64 KB tail.
REPEATED_TITLE = "---error---\n" * (program_launch.TAIL // 12)


def test_a_repeated_error_title_is_classified_in_linear_time():
    """Was (s29 tester H2): 64 KB of "---error---" (exit 1) took 55 s to classify, 71 s on
    both streams: each untagged title scanned to the end for its "End of" rule, and each
    stream's boxes were found twice."""
    import time

    from tests.scaling import best_seconds

    start = time.perf_counter()
    assert classify({**BASE, "exit_code": 1, "stdout": REPEATED_TITLE,
                     "stderr": REPEATED_TITLE}, 60) == ("failed", "exit code 1: ---error---")
    assert time.perf_counter() - start < 2.0
    for unit in ("---error---\n", "ERROR:\n\n", "--- !ERROR\nmessage: |\n", "Fatal error:\n"):
        small = unit * (program_launch.TAIL // 4 // len(unit))  # 16 KB, then 64 KB
        took = [best_seconds(lambda text=text: program_launch.reason_line(text, text), 3)
                for text in (small, small * 4)]
        assert took[1] < 2.0 and took[1] < 8 * max(took[0], 0.005), (unit, took)


def test_a_sweep_of_a_program_repeating_an_error_title_finishes_quickly(tmp_path):
    """The tester's command (s29 H2): 55 s for a 0.1 s run, now its start-up's time."""
    import time

    from hpcds1mpi.records import telemetry
    from tests.helpers import run_cli

    (tmp_path / "bad.py").write_text(f"import sys\ntext = {REPEATED_TITLE!r}\n"
                                     "sys.stdout.write(text)\nsys.stderr.write(text)\n"
                                     "sys.exit(1)\n")
    start = time.perf_counter()
    proc = run_cli(["sweep", "--command", f"{sys.executable} bad.py {{size}}", "--label",
                    "bad", "--sizes", "1", "--ranks-per-node", "1", "--min-repeats", "1",
                    "--max-repeats", "1", "--no-progress", "--out", "bad.h5"],
                   cwd=tmp_path, timeout=60)
    assert proc.returncode == 1 and "failed: exit code 1: ---error---" in proc.stderr, \
        proc.stderr
    assert time.perf_counter() - start < 20  # start-up included; was 71 s
    assert list(telemetry.read_runs(tmp_path / "bad.h5")["error"]) == \
        ["exit code 1: ---error---"]


def test_a_reason_and_a_launchers_problem_have_no_control_characters():
    """Was (s29 tester H5): printed and stored as the program wrote it; the terminal obeyed."""
    from tests.measure.test_printable import HOSTILE_REASON

    assert classify({**BASE, "exit_code": 3, "stderr": HOSTILE_REASON + "\n"}, 60)[1] == \
        "exit code 3: ERROR: bad \\x1b[2J\\x1b]0;PWN\\x07 input"
    assert program_launch.reason_line("", "a\tb\x9b2J\n") == "a\tb\\x9b2J"  # tab kept, C1 not
    assert program_launch.launch_problem({**BASE, "exit_code": 127, "stderr": (
        "sh: ./a\x1b]52;c;cHdu\x07: command not found\n")}) == \
        "sh: ./a\\x1b]52;c;cHdu\\x07: command not found"  # OSC 52: the clipboard


def test_a_failure_with_nothing_readable_says_so():
    """s29 verifier V3-5: a program printing only rules of asterisks failed with the reason
    `exit code 1: ` and nothing after it."""
    status, error = classify({**BASE, "exit_code": 1, "stdout": "*****\n" * 20,
                              "stderr": ""}, 5)
    assert status == "failed" and error == "exit code 1: no message read", error


@pytest.mark.parametrize("refusal", [
    "srun: error: Unable to create step for job 56472659: More processors requested than "
    "permitted",
    "srun: error: Unable to create step for job 56472662: Memory required by task is not "
    "available",
    "srun: error: Unable to allocate resources: Requested node configuration is not available"])
def test_srun_refusing_the_step_is_no_failure_of_the_program(refusal):
    """Was (s31 tester P4): srun's own refusal was recorded ``failed``, which the failure model
    learns as the program's; it is ``unsupported`` (learnt by none), and --resume retries it."""
    status, error = classify({**BASE, "exit_code": 1, "stderr": refusal + "\n"}, 60)
    assert status == "unsupported" and error.startswith(f"srun refused to start it ({refusal})")
    assert "--resume" in error
    assert program_launch.refused_by_launcher({"status": status, "error": error})
    # a program whose own message says "unable to": its failure
    assert classify({**BASE, "exit_code": 1, "stderr": "error: Unable to open deck\n"}, 60)[0] \
        == "failed"
    assert not program_launch.refused_by_launcher({"status": "failed", "error": error})


@pytest.mark.parametrize("refusal", [  # tester A's srun under a job past its time limit
    "srun: error: Unable to create step for job 56496199: Job/step already completing or "
    "completed",
    "srun: error: Unable to create step for job 7: Job has expired",
    "srun: error: Unable to create step for job 7: Invalid job id specified"])
def test_srun_refusing_a_step_as_the_job_ends_is_interrupted_not_unsupported(refusal):
    """Was (s33 tester A8): the refusal at the job's time limit was ``unsupported``, as if
    the configuration did not fit; it is the allocation ending: ``interrupted``."""
    status, error = classify({**BASE, "exit_code": 1, "stderr": refusal + "\n"}, 60)
    assert status == "interrupted" and "the Slurm allocation is ending" in error, error
    assert refusal in error and "--resume inside a new allocation" in error


@pytest.mark.mpi
def test_a_launcher_that_refuses_its_options_is_no_run_of_the_program(tmp_path):
    """s36 tester M3: hydra refusing its options ("error parsing parameters") was recorded as
    the program's failed run, with a runtime and an energy; the sweep now stops, recording
    nothing for it, and names --launcher-args."""
    import subprocess

    from tests.helpers import hpcds1mpi_exe, mpiexec

    refused = launch_once([mpiexec(), "-n", "1", "--no-such-option", "true"], {}, 30)
    assert program_launch.options_refused(refused) == \
        f"[mpiexec@{__import__('os').uname().nodename}] unrecognized argument no-such-option"
    assert program_launch.options_refused(launch_once(["sh", "-c", "exit 3"], {}, 30)) == ""
    out = tmp_path / "x.h5"
    proc = subprocess.run(
        [hpcds1mpi_exe(), "sweep", "--command", "true", "--label", "x", "--sizes", "1",
         "--ranks-per-node", "1", "--max-repeats", "1", "--mpiexec", mpiexec(),
         "--launcher-args", "--no-such-option", "--out", str(out), "--no-progress"],
        capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.strip().splitlines()[-1].startswith(
        "hpcds1mpi: error: the launcher refused its options ([mpiexec@")
    assert proc.stderr.strip().endswith("nothing was recorded for this configuration: fix "
                                        "--launcher-args (or launcher_args)")
    from hpcds1mpi.records.telemetry import read_runs

    assert not out.exists() or read_runs(out).empty  # no runtime, no energy stored


#: The launchers' own refusals as they print them (MPICH 5's hydra, Open MPI 4.1's mpirun,
#: Slurm's srun), and the first token each was run by.
_HYDRA_REFUSAL = (
    "[mpiexec@vm] match_arg (/mpich-5.0.2/src/pm/hydra/lib/utils/args.c:166): unrecognized "
    "argument no-such-option\n"
    "[mpiexec@vm] HYDU_parse_array (/mpich-5.0.2/src/pm/hydra/lib/utils/args.c:181): argument "
    "matching returned error\n"
    "[mpiexec@vm] main (/mpich-5.0.2/src/pm/hydra/mpiexec/mpiexec.c:49): error parsing "
    "parameters\n")
_OPEN_MPI_REFUSAL = ('/usr/bin/mpirun.openmpi: Error: unknown option "--bogus"\n'
                     "Type '/usr/bin/mpirun.openmpi --help' for usage.\n")
_SRUN_REFUSAL = "srun: unrecognized option '--bogus'\nTry \"srun --help\" for more information\n"


@pytest.mark.parametrize("launcher, stderr, said", [
    ("/venv/bin/mpiexec", _HYDRA_REFUSAL, "[mpiexec@vm] unrecognized argument no-such-option"),
    ("/usr/bin/mpirun.openmpi", _OPEN_MPI_REFUSAL,
     '/usr/bin/mpirun.openmpi: Error: unknown option "--bogus"'),
    ("srun", _SRUN_REFUSAL, "srun: unrecognized option '--bogus'"),
    # a program's own lines, or a wrapper's own srun / mpirun refusing: the program's failure
    ("/venv/bin/mpiexec", "error: error parsing parameters\n", ""),
    ("/venv/bin/mpiexec", "input.c: unable to parse user arguments\n", ""),
    ("/venv/bin/mpiexec", _SRUN_REFUSAL, ""),
    ("/venv/bin/mpiexec", _OPEN_MPI_REFUSAL, ""),
    ("srun", _SRUN_REFUSAL + "srun: error: n1: task 0: Exited with exit code 1\n", ""),
    ("/usr/bin/mpirun.openmpi", _OPEN_MPI_REFUSAL + "mpirun.openmpi detected that one or more "
     "processes exited with non-zero status\n", ""),
    ("/venv/bin/mpiexec", _HYDRA_REFUSAL + "the program's own last line\n", ""),
])
def test_only_the_launchers_own_refusal_at_the_end_is_one_of_its_options(launcher, stderr,
                                                                          said):
    """s36 review 5: "error parsing parameters" or "srun: unrecognized option" anywhere in the
    output — a program's own line, a wrapper's srun — stopped the sweep as the launcher's
    refusal of its options; only the launcher's own lines, as it ends with them, are."""
    result = {**BASE, "exit_code": 1, "stderr": stderr}
    assert program_launch.options_refused(result, launcher) == said


@pytest.mark.mpi
def test_a_program_that_prints_a_launchers_refusal_is_a_failed_run_and_the_sweep_goes_on(
        tmp_path):
    """s36 review 5: a wrapper whose own srun refused an option (and which says "error
    parsing parameters") aborted the whole sweep; each size is now a failed run."""
    import subprocess

    from hpcds1mpi.records.telemetry import read_runs
    from tests.helpers import hpcds1mpi_exe, mpiexec

    (tmp_path / "app.sh").write_text(
        "echo 'app: error parsing parameters' >&2\n"
        "srun --no-such-option-here true\n"  # Slurm's own srun refusing the wrapper's option
        "exit 1\n")
    out = tmp_path / "x.h5"
    proc = subprocess.run(
        [hpcds1mpi_exe(), "sweep", "--command", "sh app.sh {size}", "--label", "x", "--sizes",
         "1,2", "--ranks-per-node", "1", "--max-repeats", "1", "--mpiexec", mpiexec(),
         "--out", str(out), "--no-progress"],
        capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert "refused its options" not in proc.stderr, proc.stderr
    runs = read_runs(out)
    assert sorted(runs["size"]) == [1, 2] and set(runs["status"]) == {"failed"}, proc.stderr


#: Open MPI 5's prterun when rank 1 calls MPI_Abort inside a 2-node allocation (stderr as
#: written, NULs included: it ends its output with its C strings' terminating NULs).
PRTERUN_ABORT = (
    b"hyb: rank 1 giving up: bad input\n" + b"-" * 74 + b"\n"
    b"MPI_ABORT was invoked on rank 1 in communicator MPI_COMM_WORLD\n"
    b"  Proc: [[56537,1],1]\n  Errorcode: 7\n\n"
    b"NOTE: invoking MPI_ABORT causes Open MPI to kill all MPI processes.\n"
    b"You may or may not see output from other processes, depending on\n"
    b"exactly when Open MPI kills them.\n" + b"-" * 74 + b"\n"
    b"[n1:00000] *** An error occurred in Socket closed\n"
    b"[n1:00000] *** reported by process [3705208833,0]\n"
    b"[n1:00000] *** on a NULL communicator\n[n1:00000] *** Unknown error\n" + b"-" * 74 + b"\n"
    b"prterun has exited due to process rank 1 with PID 27427 on node n2 calling\n"
    b"\"abort\". This may have caused other processes in the application to be\n"
    b"terminated by signals sent by prterun (as reported here).\n" + b"-" * 74 + b"\n")


@pytest.mark.parametrize("stderr", [PRTERUN_ABORT + b"\0", PRTERUN_ABORT + b"\0\0",
                                    PRTERUN_ABORT + b"\0\n",
                                    PRTERUN_ABORT.replace(b"\n---", b"\n\0---")])
def test_prteruns_closing_nul_is_no_reason_the_programs_line_is(tmp_path, stderr):
    """s40 tester A1: under Open MPI 5's launcher every MPI_Abort was recorded as "exit code 7:
    \\x00": its stderr ends with a lone NUL, the last "line"; one before a rule unframed its
    help text; a regex's miss said the same."""
    (tmp_path / "err").write_bytes(stderr)
    app = f"import sys; sys.stderr.buffer.write(open({str(tmp_path / 'err')!r}, 'rb').read())" \
          "; sys.exit(7)"
    readings = Readings.of(time_regex=r"TIME ([0-9.]+)")
    result = launch_once([sys.executable, "-c", app], {}, 60, str(tmp_path), scan=readings.scan)
    assert "\0" not in result["stderr"]
    assert classify(result, 60) == ("failed", "exit code 7: hyb: rank 1 giving up: bad input")
    assert result["found"]["said"] == "hyb: rank 1 giving up: bad input"


#: NEURON 8.2's hoc errors through Python's ``h(...)`` at 2 ranks (under Open MPI's mpirun) and
#: from a hoc file at 1 rank: the error, its location, the source line echoed, a caret.
NEURON_MECHANISM = ("1 nrniv: hhx is not a MECHANISM\n1  near line 1\n1  insert hhx\n"
                    "          ^\n[vm:16319] [[21313,0],0] ORTE_ERROR_LOG: Out of resource in "
                    "file ../../../orte/util/show_help.c at line 501\n")
NEURON_UNDEFINED = ("nrniv: stdinit undefined function\n in tiny.hoc near line 7\n stdinit()\n"
                    "          ^\n        stdinit()\n")


@pytest.mark.parametrize("code, stderr, reason", [
    (255, NEURON_MECHANISM, "nrniv: hhx is not a MECHANISM near line 1"),
    (1, NEURON_UNDEFINED, "nrniv: stdinit undefined function in tiny.hoc near line 7"),
])
def test_a_hoc_error_is_the_reason_not_its_caret_or_echoed_source(code, stderr, reason):
    # s46 tester G3: the reasons were "^" and "stdinit()"
    assert classify({**BASE, "exit_code": code, "stdout": "numprocs=2\n", "stderr": stderr,
                     "ranks": 2}, 60) == ("failed", f"exit code {code}: {reason}")


def test_a_line_of_punctuation_is_never_the_reason():
    assert reason_line("", "solver stopped\n   ^\n") == "solver stopped"
    assert reason_line("done\n^ ~\n", "") == "done"
