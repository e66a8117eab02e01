"""A program that exited 0 but whose closing trailer says it ended abnormally (s44 tester M1)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hpcds1mpi.measure.abnormal_ending import abnormal_ending, exit_0_failure
from hpcds1mpi.measure.program_launch import classify

#: Real program outputs (tests/data/program_outputs/README.md says how each was captured).
OUTPUTS = Path(__file__).parent.parent / "data" / "program_outputs"
BASE = {"exit_code": 0, "timed_out": False, "stdout": "", "stderr": ""}
TRAILER = ("\n\n     >>>>>  {}  <<<<<\n     >>>>>  CPU time: 0.000352[s].  <<<<<\n"
           "     >>>>>  Elapsed time(OMP): 0.00164166[s].  <<<<<\n     >>>>>  See you.  <<<<<\n")


def test_molds_finishing_abnormally_under_exit_0_is_failed_with_its_error():
    """Was: stored ok with the trailer's 0.3 ms elapsed time as its runtime."""
    stdout = (OUTPUTS / "molds-missing-input.stdout").read_text()
    assert classify({**BASE, "stdout": stdout}, 60) == (
        "failed", 'exit 0, but the program said "The MolDS finished abnormally": '
                  "Error in base::InputParser::StoreInputTermsFromFile: Not found.")


def test_molds_finishing_normally_stays_ok():
    stdout = (OUTPUTS / "molds-good-run.stdout").read_text()
    assert "finished normally" in stdout
    assert classify({**BASE, "stdout": stdout}, 60) == ("ok", "")


@pytest.mark.parametrize("words", [
    "Program terminated abnormally", "ABNORMAL TERMINATION", "Run ended in error",
    "Process 0 terminated abnormally", "Summary: 2 of 10 tasks exited with errors",
    "solver exited with errors", "Job completed unsuccessfully", "*** abnormal end ***",
])
def test_a_trailer_saying_it_ended_badly_fails_the_run(words):
    said = abnormal_ending("step 1\nstep 2\n" + TRAILER.format(words), "")
    assert said.startswith('exit 0, but the program said "') and said.endswith('"')
    assert words.strip("* ") in said


def test_the_reason_is_the_last_error_before_the_trailer_on_its_own_stream():
    stderr = "ERROR: cannot open mesh.msh\n" + TRAILER.format("Program terminated abnormally")
    assert exit_0_failure("", stderr) == ('exit 0, but the program said "Program terminated '
                                          'abnormally": ERROR: cannot open mesh.msh')


@pytest.mark.parametrize("stdout", [
    "step 1\n" + TRAILER.format("The program finished normally!"),
    "step 1\n" + TRAILER.format("Run did not end abnormally"),
    "step 1\n" + TRAILER.format("Completed with 0 errors"),
    "step 1\n" + TRAILER.format("finished without errors"),
    "task 3 exited with errors, continuing with task 4\nresult 1.5\n",
    "task 3 exited with errors, skipped\nresult 1.5\n",
    # an ended-badly line mid-run, followed by more than a trailer's lines
    "run 1 ended in error\n" + "".join(f"step {i}: e = -1.{i}\n" for i in range(12)),
    "Error: 1.2e-05\nL2 error = 2e-5\ndone\n",
])
def test_a_good_end_a_denial_or_a_line_mid_run_stays_ok(stdout):
    assert abnormal_ending(stdout, "") == ""
    assert classify({**BASE, "stdout": stdout}, 60) == ("ok", "")


@pytest.mark.parametrize("closing", [
    # s44 tester O1: a note on an earlier run, the program restarted and finished
    "Warning: previous run terminated abnormally, restarting from checkpoint step 100\n"
    "step 200 E=-1.5\nTotal time 1.2 s\n",
    "Previous run ended abnormally - resuming from restart file\nstep 200\n",
    "WARNING: last run exited with errors\nstep 200 E=-1.5\n",
    # O2: a tally of none in any common spelling
    "Ranks that exited abnormally: 0\n", "Completed with errors: none\n",
    "Run completed with failures recovered by retry\n", "Finished with errors = 0\n",
    "0 of 10 tasks exited with errors\n", "none of the ranks terminated abnormally\n",
    "Abnormal terminations: zero\n",
    # O3: an error quantity, or error-free
    "iter 10 res 1e-3\nCG stopped with error 1.2e-09 after 45 iterations\n",
    "Integration finished with error estimate 3.1e-10\n", "Run completed in error-free mode\n",
])
def test_an_earlier_run_a_tally_of_none_or_an_error_quantity_stays_ok(closing):
    """s44 tester O1-O3: each was stored failed, a good run (the README: a good run failed is
    worse than a refusal missed); only the program's plain word that it ended badly fails."""
    assert exit_0_failure(closing, "") == ""
    assert classify({**BASE, "stdout": "step 1\n" + closing}, 60) == ("ok", "")


def test_open_mpis_help_text_on_abnormal_termination_is_not_the_programs():
    stderr = (OUTPUTS / "elk-tasks-blank-line.stderr").read_text()
    assert "abnormal termination" in stderr
    assert abnormal_ending("", stderr) == ""


def test_every_real_output_kept_for_tests_but_molds_abnormal_end_keeps_its_verdict():
    for path in sorted(OUTPUTS.iterdir()):
        if path.name != "molds-missing-input.stdout" and path.suffix in (".stdout", ".stderr"):
            assert abnormal_ending(path.read_text(), path.read_text()) == "", path.name


@pytest.mark.parametrize("closing", [
    "Recovery failed, program terminated abnormally", "Restart failed: run ended in error",
    "failed to restart from checkpoint; program terminated abnormally",
    "Error during recovery, program terminated abnormally",
    "Restart of the previous run failed, program terminated abnormally",
    # s45 tester F7: the recovery's own "not" had read as denying the ending, and "Resume from
    # checkpoint failed" as a note on another run
    "Could not restart from checkpoint; program terminated abnormally",
    "Resume from checkpoint failed: terminated abnormally",
    "Restart not possible, terminated abnormally", "Couldn't resume: run ended in error",
    # s46: a restart's file that is bad, or no restart possible, had read as a note on another
    # run (its "restart"), and the "No" as denying the ending
    "Restart file corrupt, run terminated abnormally",
    "No restart possible, terminated abnormally",
    "Checkpoint file is corrupted; program terminated abnormally",
])
def test_a_failed_recovery_then_ending_badly_fails_the_run(closing):
    """Was (s44 review A1): any restart / resume / recover word read the line as a note on
    another run, so this run's own failed recovery kept a bad run ok."""
    assert exit_0_failure(f"step 1\n{closing}\n", "").startswith(
        f'exit 0, but the program said "{closing}"')


@pytest.mark.parametrize("closing", [
    "Restarting: previous run terminated abnormally",
    "Resuming from the checkpoint of a run that terminated abnormally",
    "Recovered from error; previous run terminated abnormally",
    # s45 tester F7: a failed recovery's "not" is set aside, a denied ending's is not
    "The program did not end abnormally", "Could not restart? No, it did not end abnormally",
    "Resuming from failed step 3; previous run terminated abnormally",
])
def test_a_restart_from_another_run_that_ended_badly_stays_ok(closing):
    assert exit_0_failure(f"step 1\n{closing}\n", "") == ""


@pytest.mark.parametrize("closing", [
    "Restart file read without errors; previous run terminated abnormally",
    "Recovered from checkpoint without failure; the previous run terminated abnormally",
    "Restart never failed; previous run terminated abnormally",
])
def test_a_recovery_said_to_have_worked_is_no_failed_one(closing):
    """Was (s46 review RV1): the failed recovery's pattern took "read without errors" as a
    failed one, and blanking it took its "without" too: a restarted good run was failed."""
    assert exit_0_failure(f"{closing}\nStep 1 E=-1.0\nStep 2 E=-1.1\nDone\n", "") == ""


@pytest.mark.parametrize("closing", [
    "rank=0 terminated abnormally", "rank 0: terminated abnormally", "Rank: 0 exited with errors",
    "pid=0 terminated abnormally", "Process zero terminated abnormally",
])
def test_an_id_of_zero_before_ending_badly_is_no_count_and_fails_the_run(closing):
    """Was (s44 review A2): "=0" or ": 0" before the words read as a count of none, ok."""
    assert exit_0_failure(f"step 1\n{closing}\n", "") == (
        f'exit 0, but the program said "{closing}"')


@pytest.mark.parametrize("closing", [
    "PASSED: handles abnormal termination", "[  OK  ] abnormal exit", "ok 3 - abnormal end",
    "PASS: recovers after abnormal termination", "Success: abnormal termination",
])
def test_a_check_passed_naming_the_words_stays_ok(closing):
    """Was (s44 review A3): a test suite's verdict naming the case it tested ("handles
    abnormal termination") among the last lines failed a good run."""
    stdout = f"step 1\n{closing}\nall 12 tests done\n"
    assert exit_0_failure(stdout, "") == ""
    assert classify({**BASE, "stdout": stdout}, 60) == ("ok", "")


@pytest.mark.parametrize("closing", [
    "Passed 120 of 200 steps; solver terminated abnormally",
    "Success: 3 of 4 ranks done; rank 3 terminated abnormally",
    "OK so far; run terminated abnormally", "ok, run terminated abnormally"])
def test_a_verdict_word_opening_how_this_run_ended_still_fails_the_run(closing):
    """Was (s45 review RV3): any line opening with "passed", "ok" or "success" read as a
    test suite's verdict, and a run that terminated abnormally stayed ok."""
    assert exit_0_failure(f"step 120 energy nan\n{closing}\n", "") == (
        f'exit 0, but the program said "{closing}"')


def test_a_pass_of_the_programs_own_ending_badly_still_fails_the_run():
    assert exit_0_failure("step 1\nPass 2 ended in error\n", "") == (
        'exit 0, but the program said "Pass 2 ended in error"')


#: 100 kB lines whose long runs of spaces or repeated words had made a rule's regex quadratic
#: (s45 review RV4: 15 s for one launch, 500 s for the bare regex); the rules read the last
#: 20,000 characters of a stream (program_lines.kept_lines), where the runs are.
LONG, FILL = 19_000, "data " * 16_000
SLOW_LINES = [
    FILL + "Restart failed" + " " * LONG + "x: previous run terminated abnormally",
    FILL + "Summary: rank" + " " * LONG + "x: 0 aborted",
    FILL + "Summary: rank" + " " * LONG + "= 0 terminated abnormally",
    FILL + "illegal nlev" + " " * LONG + "x; run terminated abnormally",
    FILL + "using " * (LONG // 6) + "run terminated abnormally",
    FILL + "cannot ignore " * (LONG // 14) + "run terminated abnormally",
]


@pytest.mark.timeout(60)
@pytest.mark.parametrize("line", SLOW_LINES, ids=range(len(SLOW_LINES)))
def test_a_long_line_of_spaces_and_words_is_read_in_linear_time(line):
    import time

    for out, err in ((f"step 1\n{line}\n", ""), ("", f"step 1\n{line}\n")):
        start = time.perf_counter()
        exit_0_failure(out, err)
        abnormal_ending(out, err)
        assert time.perf_counter() - start < 2  # generous for CI: ~0.05 s here, 3-7 s before
