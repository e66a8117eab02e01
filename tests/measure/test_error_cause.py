"""Which of a failure's error lines names its cause: a runtime's copy of the program's message
set aside, a line naming a missing file preferred (s37 tester G5)."""

from __future__ import annotations

import pytest

from hpcds1mpi.measure.error_cause import cause_first, names_cause, restates
from hpcds1mpi.measure.program_launch import classify

#: NWChem 7.0.2 under Open MPI's mpirun, a basis set name misspelt: its own account on stdout.
NWCHEM_BASIS_OUT = """\
 Summary of "ao basis" -> "" (cartesian)
 *                          sto-3gx                   on all atoms


 Attempting to read a basis set from a  non-existing file:
 /usr/share/nwchem/libraries/sto-3gx
 ------------------------------------------------------------------------
 bas_tag_lib: failed opening basis file                   0
 ------------------------------------------------------------------------
 ------------------------------------------------------------------------
  current input line :
    11: task scf energy
 ------------------------------------------------------------------------
 ------------------------------------------------------------------------
 There is an error in the specified basis set
 ------------------------------------------------------------------------
 For more information see the NWChem manual at https://github.com/nwchemgit/nwchem/wiki


 For further details see manual section:
"""
#: ARMCI's copy of it on stderr, cut at a colon, and Open MPI's MPI_ABORT text.
ARMCI_ERR = """\
[0] ARMCI Error: 0:bas_tag_lib: failed opening basis file:
--------------------------------------------------------------------------
MPI_ABORT was invoked on rank 0 in communicator MPI COMMUNICATOR 3 DUP FROM 0
with errorcode -1.

NOTE: invoking MPI_ABORT causes Open MPI to kill all MPI processes.
You may or may not see output from other processes, depending on
exactly when Open MPI kills them.
--------------------------------------------------------------------------
"""
NWCHEM_INPUT_OUT = """\
  Unable to open nothere.nw --- appending .nw
 ------------------------------------------------------------------------
 nwchem: failed to open the input file                   0
 ------------------------------------------------------------------------
 ------------------------------------------------------------------------
  current input line :
     0:
 ------------------------------------------------------------------------
 ------------------------------------------------------------------------
 There is an error in the input file
 ------------------------------------------------------------------------
"""


def _reason(stdout: str, stderr: str) -> str:
    return classify({"stdout": stdout, "stderr": stderr, "timed_out": False,
                     "exit_code": 255}, 60)[1]


def test_nwchems_own_line_naming_the_missing_file_is_the_reason_not_armcis_copy():
    """s37 tester G5: the reason was "ARMCI Error: 0:bas_tag_lib: failed opening basis
    file:", ending at a colon with no file."""
    assert _reason(NWCHEM_BASIS_OUT, ARMCI_ERR) == (
        "exit code 255: Attempting to read a basis set from a  non-existing file: "
        "/usr/share/nwchem/libraries/sto-3gx")
    missing_input = ARMCI_ERR.replace("bas_tag_lib: failed opening basis file",
                                      "nwchem: failed to open the input file")
    assert _reason(NWCHEM_INPUT_OUT, missing_input) == (
        "exit code 255: Unable to open nothere.nw --- appending .nw")


def test_a_runtimes_copy_is_told_by_its_words_and_a_cause_by_a_named_missing_file():
    assert restates("ARMCI Error: 0:bas_tag_lib: failed opening basis file:",
                    ["bas_tag_lib: failed opening basis file                   0"])
    assert not restates("ERROR: cannot allocate the grid", ["error in the input file"])
    assert names_cause("Unable to open nothere.nw --- appending .nw")
    assert names_cause("File '../../md.tpr' does not exist")
    assert not names_cause("There is an error in the input file")
    assert not names_cause("WARNING: file defaults.cfg not found, using built-ins")
    # s37 reviewer R3: a file the program went on without is no cause of what ended it
    assert not names_cause("ERROR: optional file tuning.dat not found, using built-in defaults")
    found = [(1, "ERROR: optional file tuning.dat not found, using built-in defaults"),
             (4, "ERROR: solver diverged at step 3 (residual 1e+30)")]
    assert cause_first(found) == found
    found = [(1, "cannot open in.x"), (40, "error: singular matrix")]
    assert cause_first(found) == found  # another report's line, far above: not its cause
    found = [(1, "cannot open in.x"), (5, "error: stopping")]
    assert cause_first(found)[-1] == (1, "cannot open in.x")


def test_a_stderr_error_of_its_own_stays_the_reason():
    # LAMMPS-like: stderr's own error, stdout unrelated error lines: stderr's is kept
    assert _reason("ERROR: Unknown pair style\n", "ERROR on proc 0: Cannot open input script "
                   "in.ljj: No such file or directory\n") == (
        "exit code 255: ERROR on proc 0: Cannot open input script in.ljj: No such file or "
        "directory")


#: ExaML 3.0.22 under Open MPI's mpirun, its output files of the run name already there (exit
#: 255): its own account on stdout, Open MPI's help text on stderr.
EXAML_EXISTS_OUT = """
This is ExaML FINE-GRAIN MPI Process Number: 0
ExaML output files with the run ID <run_300> already exist 
in directory /tmp/s38/FA/ex/ ...... exiting
"""
EXAML_EXISTS_ERR = """\
--------------------------------------------------------------------------
Primary job  terminated normally, but 1 process returned
a non-zero exit code. Per user-direction, the job has been aborted.
--------------------------------------------------------------------------
--------------------------------------------------------------------------
mpirun.openmpi detected that one or more processes exited with non-zero status, thus causing
the job to be terminated. The first process to do so was:

  Process name: [[6968,1],0]
  Exit code:    255
--------------------------------------------------------------------------
"""


def test_a_program_refusing_an_existing_output_is_the_reason_not_open_mpis_banner():
    # s38 tester A3: the reason had been "Primary job terminated normally, but 1 process ...".
    status, error = classify({"exit_code": 255, "timed_out": False, "stdout": EXAML_EXISTS_OUT,
                              "stderr": EXAML_EXISTS_ERR}, 60)
    assert (status, error) == ("failed", "exit code 255: ExaML output files with the run ID "
                                         "<run_300> already exist")


def open_mpi_exit_trailer(process: str, code: int) -> str:
    """What Debian's mpirun.openmpi (4.1) writes on stderr after a rank exited non-zero."""
    rule = "-" * 74 + "\n"
    return (rule + "Primary job  terminated normally, but 1 process returned\n"
            "a non-zero exit code. Per user-direction, the job has been aborted.\n" + rule + rule
            + "mpirun.openmpi detected that one or more processes exited with non-zero status, "
            "thus causing\nthe job to be terminated. The first process to do so was:\n\n"
            f"  Process name: {process}\n  Exit code:    {code}\n" + rule)


#: TREE-PUZZLE's tree-ppuzzle at 1 rank under Debian's mpirun.openmpi (s43 tester I2): its own
#: halt on stdout, Open MPI's complaint at its second MPI_Finalize on stderr.
PUZZLE_OUT = ('\n'
    'Halt: TREE-PUZZLE needs at least 2 processes for a parallel run!!!\n'
    '\n')
PUZZLE_ERR = ('*** The MPI_Finalize() function was called after MPI_FINALIZE was invoked.\n'
    '*** This is disallowed by the MPI standard.\n'
    '*** Your MPI job will now abort.\n'
    '[vm:24124] Local abort after MPI_FINALIZE started completed successfully, but am not able to aggregate error messages, and not able to guarantee that all other processes were killed!\n'
    + open_mpi_exit_trailer('[[13019,1],0]', 1))
#: APBS with dime 50 (not c*2^(l+1)+1) at 1 rank (s43 tester I4): the cause first on stderr,
#: its generic follow-ups after it.
APBS_OUT = ('This executable compiled on Jan 10 2023 at 20:56:38\n'
    '\n'
    'Parsing input file apbs.in...\n'
    'rank 0 size 1...\n')
APBS_ERR = ('MGparm_check:  illegal nlev (-1); check your grid dimensions!\n'
    "MGparm_check:  you're using a very small nlev (-1) and therefore\n"
    'MGparm_check:  will not get the optimal performance of the multigrid\n'
    'MGparm_check:  algorithm.  Please check your grid dimensions.\n'
    'NOsh:  MG parameters not set correctly!\n'
    'Error while parsing input file.\n'
    + open_mpi_exit_trailer('[[12891,1],0]', 13))


def test_a_programs_own_halt_beats_open_mpis_complaint_at_a_second_finalize():
    """Was: "The MPI_Finalize() function was called after MPI_FINALIZE was invoked."."""
    from hpcds1mpi.measure.program_launch import reason_line

    assert reason_line(PUZZLE_OUT, PUZZLE_ERR) == ("Halt: TREE-PUZZLE needs at least 2 "
                                                   "processes for a parallel run!!!")


def test_the_line_naming_the_bad_value_beats_the_generic_lines_after_it():
    """Was: "Error while parsing input file."."""
    from hpcds1mpi.measure.program_launch import reason_line

    assert reason_line(APBS_OUT, APBS_ERR) == ("MGparm_check:  illegal nlev (-1); check your "
                                               "grid dimensions!")
    # the generic line still reasons where nothing names a cause before it
    generic = APBS_ERR.split("NOsh:", 1)[1]
    assert reason_line(APBS_OUT, "NOsh:" + generic).endswith("Error while parsing input file.")


@pytest.mark.parametrize("line", ["Halt: TREE-PUZZLE needs at least 2 processes for a "
                                  "parallel run!!!", "this code requires at least 4 ranks",
                                  "illegal nlev (-1)", "index 12 out of range",
                                  "grid too small for 3 levels"])
def test_a_program_refusing_its_input_or_layout_names_the_cause(line):
    assert names_cause(line)


@pytest.mark.parametrize("line", [
    "Unable to perform Hessenberg reduction: need TOTMEM of at least 4863400",
    "Error: this run requires at least 2 GB per rank", "not enough memory: need at least 1200 MB",
    "this code requires at least 4 ranks", "this grid needs at least 3 levels",
    "needs at least 1200 MB, but only 800 MB are free"])
def test_a_demand_refused_or_of_a_count_is_a_refusal(line):
    from hpcds1mpi.measure.error_cause import error_line, refuses

    assert refuses(line) and names_cause(line) and error_line(line)


@pytest.mark.parametrize("line", [
    "This calculation needs memory of at least 1200 MB", "requires at least 2.5 GB per rank",
    "the solver needs workspace of at least 4863400", "this run needs at least 30 minutes"])
def test_an_estimate_of_memory_disk_or_time_needed_is_no_refusal(line):
    """s44 review F2: "need X of at least N" (ScaLAPACK's TOTMEM, with "Unable") had read an
    estimate a good run prints as a refusal."""
    from hpcds1mpi.measure.error_cause import error_line, refuses

    assert not (refuses(line) or names_cause(line) or error_line(line))


@pytest.mark.parametrize("line", [
    "The integrator requires at least 3 time levels",
    "Domain decomposition needs at least 2 space dimensions",
    "Checkpointing requires at least 10 time steps", "needs at least 4 memory banks"])
def test_a_count_of_things_named_after_a_quantity_is_a_refusal(line):
    """s45 review RV2: the word right after the number ("3 time levels") had been read as a
    need of time, and the refusal kept a run that did nothing ok."""
    from hpcds1mpi.measure.error_cause import refuses

    assert refuses(line) and names_cause(line)


@pytest.mark.parametrize("line", [
    "chk.h5 not found, starting from scratch", "restart.chk not found; starting fresh",
    "checkpoint state.h5 not found: starting a new run", "cannot open tune.dat, falls back to "
    "defaults", "missing params.in, default values will be used"])
def test_a_missing_file_the_program_started_afresh_without_names_no_cause(line):
    """s44 review F1: a first run's missing checkpoint is no cause of anything."""
    assert not names_cause(line)


def test_a_count_of_inputs_skipped_as_illegal_is_no_refusal():
    """ScaLAPACK's tester's summary line "1 tests skipped because of illegal input values." had
    beaten its "Unable to perform factorization: need TOTMEM ..." once "illegal" alone counted."""
    assert not names_cause("1 tests skipped because of illegal input values.")


@pytest.mark.parametrize("recovered", [
    "timestep too large for stability, reducing dt to 0.005",
    "ghost index 7 out of range, clamped to 6",
    "Richardson extrapolation needs at least 3 grids, doing without it",
    "illegal nlev (-1) replaced by 4",
])
def test_a_refused_value_the_program_recovered_from_is_not_the_reason(recovered):
    """s43 tester K4: the recovered line had been the reason over the later real error."""
    stdout = (f"step 1: dt=0.01\n{recovered}\nstep 2: dt=0.005\n"
              "Error: solver diverged at step 30 (NaN in pressure)\n")
    assert not names_cause(recovered)
    assert _reason(stdout, "") == "exit code 255: Error: solver diverged at step 30 (NaN in pressure)"


@pytest.mark.parametrize("refused", [
    "timestep too large for stability", "ghost index 7 out of range",
    "this grid needs at least 3 levels", "illegal nlev (-1)",
])
def test_a_refused_value_after_which_the_programs_steps_went_on_is_not_the_reason(refused):
    """s43 tester K4, without a word of recovery: its next step's progress line ("step 2"
    after "step 1") shows the run went on from the refused value, so the later error is the
    reason."""
    from hpcds1mpi.measure.error_cause import cause_first

    stdout = (f"step 1: dt=0.01\n{refused}\nstep 2: dt=0.005\n"
              "Error: solver diverged at step 30 (NaN in pressure)\n")
    assert _reason(stdout, "") == ("exit code 255: Error: solver diverged at step 30 (NaN in "
                                   "pressure)")
    # no step after it: the refusal ended the run, and stays the reason over the generic line
    ended = f"step 1: dt=0.01\n{refused}\nstopping.\nError: run failed\n"
    assert _reason(ended, "") == f"exit code 255: {refused}"
    # without the stream's lines (an older caller) the refusal is moved last as before
    assert cause_first([(1, refused), (3, "Error: x")])[-1] == (1, refused)


def test_yoricks_missing_include_file_beats_its_generic_abort_after_it():
    """s44 tester M2: ``mpiexec.mpich -n 1 mpy -batch nofile.i`` (exit 1). Was "ERROR (VM idle
    or lost) ****ABORTING PARSE**** too many errors": the line naming the missing file had no
    error word, and "too many errors" counted as a refusal."""
    from pathlib import Path

    stderr = (Path(__file__).parent.parent / "data" / "program_outputs"
              / "mpy-missing-script.stderr").read_text()
    assert classify({"exit_code": 1, "timed_out": False, "stdout": "", "stderr": stderr},
                    60) == ("failed", "exit code 1: SYNTAX: missing include file nofile.i")


@pytest.mark.parametrize("line", ["SYNTAX: missing include file nofile.i",
                                  "missing input file 'case.inp'"])
def test_a_line_saying_a_named_file_is_missing_is_an_error_line(line):
    from hpcds1mpi.measure.error_cause import error_line

    assert error_line(line) and names_cause(line)


@pytest.mark.parametrize("line", ["too many errors", "ABORTING PARSE: too many warnings",
                                  "giving up after too many failures"])
def test_a_tally_of_earlier_errors_names_no_cause(line):
    assert not names_cause(line)


@pytest.mark.parametrize("stderr", [
    "Warning: missing optional file tune.dat\nERROR: solver diverged\n",
    "missing file tuning.dat, using built-in defaults\nERROR: solver diverged\n",
])
def test_a_missing_file_warned_of_or_gone_on_from_is_not_the_reason(stderr):
    assert _reason("", stderr) == "exit code 255: ERROR: solver diverged"


@pytest.mark.parametrize("stdout, stderr, reason", [
    ("rank 0 of 2: reading mesh.dat\nERROR: cannot open file 'mesh.dat': No such file or "
     "directory\nrank 1 of 2: reading mesh.dat\nError: aborting the run\n", "",
     "ERROR: cannot open file 'mesh.dat': No such file or directory"),
    ("", "0: Setting up 4 blocks\n1: Setting up 4 blocks\n0: ERROR: could not open "
     "restart.chk\n1: Setting up 4 blocks\n0: Error: aborting\n",
     "ERROR: could not open restart.chk"),
])
def test_another_ranks_copy_of_a_line_is_no_step_on_from_a_missing_file(stdout, stderr, reason):
    """s44 review R6: under several ranks, another rank's set-up line after the cause had read
    as the program going on from it, and the generic abort won."""
    from hpcds1mpi.measure.program_launch import reason_line

    assert reason_line(stdout, stderr) == reason


#: The tester's refusals that say the program cannot go on (s45 tester F6), each a bad run.
CANNOT_GO_ON = [
    "Reading restart.dat\nrestart.dat not found: cannot start from scratch in restart mode\n"
    "Stopping.",
    "restart.dat not found: unable to start from scratch in restart mode\nStopping.",
    "mesh.msh not found; cannot fall back to a default mesh\nexiting",
    "ERROR: mesh.msh not found, no fallback; will not start afresh\nexiting",
    "mesh.msh not found; fall back not possible\nexiting",
]


@pytest.mark.parametrize("output", CANNOT_GO_ON)
def test_a_went_on_phrase_the_line_denies_is_no_going_on_and_fails_a_missed_fom(output):
    """Was (s45 tester F6): "from scratch", "fall back", "start afresh" read even under
    "cannot", "no", "will not": a bad exit-0 run stayed ok under a missed --fom-regex."""
    from hpcds1mpi.measure.error_cause import WENT_ON
    from hpcds1mpi.measure.fom_miss import fom_miss_problem
    from hpcds1mpi.measure.readings import Readings

    line = next(ln for ln in output.splitlines() if "not found" in ln)
    assert WENT_ON.search(line) is None and names_cause(line)
    readings = Readings.of(fom_regex=r"FOM=([0-9.]+)")
    assert "the program said: " in fom_miss_problem(readings, readings.read(output),
                                                    (output, ""))


@pytest.mark.parametrize("line", [
    "This calculation needs at least 1.2 GB of memory, which does not exceed the 64 GB "
    "available", "The job needs at least 3600 s of walltime to avoid failure at checkpoint",
    "needs at least 2 GB of memory, which doesn't exceed the limit"])
def test_a_refusal_word_the_line_denies_makes_no_refusal_of_an_estimate(line):
    """Was (s45 tester F6): "exceed", "fail" under "does not", "avoid" read as refusing, so
    a good exit-0 run whose --fom-regex missed failed."""
    from hpcds1mpi.measure.error_cause import refuses
    from hpcds1mpi.measure.fom_miss import fom_miss_problem
    from hpcds1mpi.measure.readings import Readings

    assert not refuses(line) and not names_cause(line)
    readings = Readings.of(fom_regex=r"FOM=([0-9.]+)")
    output = f"{line}\nstep 1\nGflops: 3.2\n"
    assert fom_miss_problem(readings, readings.read(output), (output, "")) == ""
    assert refuses(line.replace("does not exceed", "exceeds").replace("doesn't exceed",
                                                                      "exceeds")
                   .replace("to avoid failure", "or it will fail"))
