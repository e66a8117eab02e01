"""A program that exited 0 but whose output ends with its own error message."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from hpcds1mpi.measure.ending_error import ending_error
from hpcds1mpi.measure.program_launch import classify, launch_once

#: Real program outputs (tests/data/program_outputs/README.md says how each was captured).
OUTPUTS = Path(__file__).parent.parent / "data" / "program_outputs"
BASE = {"exit_code": 0, "timed_out": False, "stdout": "", "stderr": ""}


@pytest.mark.parametrize("stdout, stderr, line", [
    ("elk-missing-species-srun.stdout", "elk-missing-species-srun.stderr",
     "Error(readspecies): error opening species file /usr/share/elk-lapw/species/Alx.in"),
    ("elk-invalid-block-srun.stdout", "elk-missing-species-srun.stderr",  # the same Note
     "Error(readinput): invalid block name : ngridkk"),
])
def test_elk_exiting_0_after_its_error_under_srun_is_failed(stdout, stderr, line):
    """Was (s30 tester L1): recorded ok, and tune kept it as its best run."""
    result = {**BASE, "stdout": (OUTPUTS / stdout).read_text(),
              "stderr": (OUTPUTS / stderr).read_text()}
    assert classify(result, 60) == ("failed", f"exit 0, but the program ended with: {line}")


def test_elks_good_run_with_a_failure_word_in_a_warning_stays_ok():
    stdout = (OUTPUTS / "elk-ground-state-srun.stdout").read_text()
    assert "failed to reach self-consistency" in stdout  # a warning mid-run, then its end
    assert classify({**BASE, "stdout": stdout}, 60) == ("ok", "")


@pytest.mark.parametrize("stdout, stderr", [
    ("step 1\nERROR: could not open restart.dat, starting fresh\nstep 2\nenergy = -1.5\n", ""),
    ("Error estimate: 1.3e-04\nL2 error = 2e-5\n", ""),
    ("iterations: 12\nError: 1.2e-05\n", ""),  # a value, not an error message
    ("Max error: 3.1e-3 (tol 1e-2)\n", ""),
    ("result 4.2\n", "WARNING: deprecated option -foo\n"),
    ("done\n", "Warning(init): failed to read optional file, using defaults\n"),
    ("0 errors\n", "errors: 0\n"),
    ("checks passed\n", "Note: The following floating-point exceptions are signalling: "
                        "IEEE_UNDERFLOW_FLAG\n"),
    # s30 tester R1: Python's shutdown noise and log records under an exit 0 (an uncaught
    # exception exits 1)
    ("result 42\n", "Exception ignored in: <function H.__del__ at 0x7f>\nTraceback (most recent "
                    "call last):\n  File \"app.py\", line 4, in __del__\nAttributeError: 'H' "
                    "object has no attribute 'f'\n"),
    ("", "Exception ignored in: <_io.TextIOWrapper name='<stdout>'>\nBrokenPipeError: [Errno "
         "32] Broken pipe\n"),
    ("done\n", "ERROR:root:could not reach telemetry server\n"),
    # s30 tester R2: a launcher's or a library's line is not the program's error
    ("hello 1000000\n", "srun: error: Not using a pseudo-terminal, disregarding --pty option\n"),
    ("ok\n", "slurmstepd: error: _is_a_lwp: open() /proc/99/status failed: No such file\n"),
    ("ok\n", "hwloc: error: could not read /sys/x\n"),
    # s30 tester R3: a last line that reports no problem
    *[(f"iterations: 12\n{line}\n", "") for line in (
        "Error: none", "ERROR: none found", "Error: (none)", "Error: n/a", "Error: OK",
        "Error: PASSED", "Error: within tolerance", "Error! Check: passed", "Fatal: no",
        "error: false", "error: null", "error: nan", "error: inf", "error: ~1e-6",
        "error: <1e-6", "Error: 1,234",
        # its value under the title, or after a program's name (s30 review)
        "Error:\n  1.2e-10", "Error (relative):\n  1.2e-10", "cg: error: 1.2e-08",
        "solver.c: error: 3.1e-7",
        "1: Error: none")],  # srun -l's label (s30 verifier V2 D4)
])
def test_an_error_word_mid_run_or_in_a_result_stays_ok(stdout, stderr):
    assert ending_error(stdout, stderr) == ""
    assert classify({**BASE, "stdout": stdout, "stderr": stderr}, 60) == ("ok", "")


@pytest.mark.parametrize("stdout, stderr, line", [
    ("start\n", "ERROR: Unknown command: fix nvx (src/input.cpp:232)\n",
     "ERROR: Unknown command: fix nvx (src/input.cpp:232)"),
    ("LAMMPS\nERROR on proc 0: Cannot open input script in.x\n", "",
     "ERROR on proc 0: Cannot open input script in.x"),
    ("run\n", "forrtl: severe (29): file not found, unit 10, file /x/in\n",
     "forrtl: severe (29): file not found, unit 10, file /x/in"),
    ("", "Fortran runtime error:\nCannot open file 'LU.dat': No such file\n",
     "Fortran runtime error: Cannot open file 'LU.dat': No such file"),
    ("Fatal error: mesh file missing\n\n", "[n1:1234] some launcher log line\n",
     "Fatal error: mesh file missing"),
    ("", "solver: error: no such file in.dat\n", "solver: error: no such file in.dat"),
])
def test_an_output_ending_with_an_error_line_is_that_error(stdout, stderr, line):
    assert ending_error(stdout, stderr) == line


def test_a_real_launch_exiting_0_after_its_error_is_failed(tmp_path):
    """A real process, as the sweep launches it."""
    app = tmp_path / "app.py"
    app.write_text("import sys\nprint('started')\nprint('Error(readinput): invalid block "
                   "name : ngridkk')\nsys.exit(0)\n")
    result = launch_once([sys.executable, str(app)], {}, 30)
    assert result["exit_code"] == 0
    assert classify(result, 30) == ("failed", "exit 0, but the program ended with: "
                                    "Error(readinput): invalid block name : ngridkk")


def test_the_line_readers_have_one_home_that_ending_error_imports():
    """Was (s31 review M2): ending_error took program_launch's line readers as arguments (an
    import loop otherwise); now both import them from measure/program_lines.py."""
    import ast
    import inspect

    from hpcds1mpi.measure import ending_error as module
    from hpcds1mpi.measure import program_launch, program_lines

    assert list(inspect.signature(ending_error).parameters) == ["stdout", "stderr"]
    imported = {node.module for node in ast.walk(ast.parse(inspect.getsource(module)))
                if isinstance(node, ast.ImportFrom)}
    assert "hpcds1mpi.measure.program_lines" in imported
    assert "hpcds1mpi.measure.program_launch" not in imported
    for name in ("SPECIFIC_LINE", "NO_ERROR", "with_message", "program_lines"):
        assert getattr(program_launch, name) is getattr(program_lines, name)


def test_an_error_then_an_abort_mid_run_stays_ok_but_is_named_for_a_note():
    """s42 tester E3: GARLI with a fixed randseed, every rank "ERROR: ..." then "***process 0
    aborted run 0", its closing lines after, exit 0: ok (the ending rule), but told."""
    from hpcds1mpi.measure.convergence import convergence_note, convergence_warning
    from hpcds1mpi.measure.ending_error import error_then_abort

    stdout = (OUTPUTS / "garli-fixed-seed-2ranks.stdout").read_text()
    assert ending_error(stdout, "") == ""
    assert classify({**BASE, "stdout": stdout}, 60.0)[0] == "ok"
    line, words = error_then_abort(stdout, "")
    assert line.startswith("ERROR: You cannot specify a random number seed with the MPI")
    assert " ... ***process 0 aborted run 0 at " in line and words == "aborted run"
    note = convergence_note("garli-mpi size 2 N1xR2xT1-cpu-fp64", *convergence_warning(stdout, ""))
    assert note.startswith("note: garli-mpi size 2 N1xR2xT1-cpu-fp64: ok, but the program said "
                           "\"ERROR: You cannot specify") and note.endswith(
        "sweep into a new --out with --fail-regex 'aborted run'"), note
    # an error line with no abort after it, or an abort with no error before it: nothing
    assert error_then_abort("ERROR: file x.dat not found, using defaults\nresult 3.2\n", "") \
        == ("", "")
    assert error_then_abort("run aborted by user request? no\nError: 1.2e-05\n", "") == ("", "")
    assert error_then_abort("Error: 0\nno aborts\n", "") == ("", "")


def test_an_error_line_mid_run_stays_ok_but_is_named_for_a_note_with_its_first_clause():
    """s47 tester K4: "Error: mesh quality too low, results are invalid" then the program's
    time line, exit 0: ok, but nothing was said, where a "did not converge" there was noted."""
    from hpcds1mpi.measure.ending_error import mid_run_error

    stdout = ("ranks 1 n 32 iterations 12 reason 2\nError: mesh quality too low, results are "
              "invalid\nsolve time 0.0505 s\n")
    assert ending_error(stdout, "") == "" and classify({**BASE, "stdout": stdout}, 60)[0] == "ok"
    assert mid_run_error(stdout, "") == ("Error: mesh quality too low, results are invalid",
                                         "Error: mesh quality too low")
    assert mid_run_error("", "step 1\nforrtl: severe (29): file not found, unit 10\ndone\n") \
        == ("forrtl: severe (29): file not found, unit 10", "forrtl: severe (29): file not found")
    # no error of the program's own: one it went on from, a value, a log record, none counted
    for text in ("ERROR: file x.dat not found, using defaults\nresult 3.2\n",
                 "Error: 1.2e-05\nresult\n", "ERROR:root:could not reach it\nresult\n",
                 "0 errors\nresult\n", "srun: error: Not using a pseudo-terminal\nresult\n"):
        assert mid_run_error(text, "") == ("", ""), text


@pytest.mark.parametrize("stdout, line", [
    # s43 tester L1: mpgrafic given an invalid spectrum case, exit 0 after 0.5 s, nothing written
    (" Reading input\n Choose a power spectrum: 1 .. 5\n Illegal choice.  Aborting\n",
     "Illegal choice.  Aborting"),
    ("step 1\ninput deck incomplete. Aborting.\n", "input deck incomplete. Aborting."),
    ("mesh has negative volume... Aborting!\n", "mesh has negative volume... Aborting!"),
    ("bad restart file, aborting run\n", "bad restart file, aborting run"),
    ("Run aborted.\n", "Run aborted."),
])
def test_a_last_line_saying_it_aborted_under_exit_0_is_failed(stdout, line):
    """Was (s43 tester L1): stored ok and timed, a run that did no work as training data."""
    assert classify({**BASE, "stdout": stdout}, 60) == (
        "failed", f"exit 0, but the program ended with: {line}")


@pytest.mark.parametrize("stdout", [
    "step 1\nAborting line search, retrying with smaller step\nstep 2\nenergy -1.5\n",
    "iteration 3: aborting\nrestarting from checkpoint\ndone\n",  # mid-run, output after it
    "abortion_rate 0.3\n", "calling MPI_Abort_hook\n", "press q to abort\n",
    "0 runs aborted\n", "the solver will abort\n",
])
def test_abort_words_mid_run_or_inside_other_words_stay_ok(stdout):
    assert classify({**BASE, "stdout": stdout}, 60) == ("ok", "")


@pytest.mark.parametrize("last", [
    "Finished: 10 done, 0 aborted", "Summary: 0 jobs aborted", "Nothing aborted",
    "All ranks finished, nothing aborted", "done; no tasks were aborted.",
    # s44 tester O4: a count after a sentence's end, "0 of 10"
    "Done. 0 of 10 tasks aborted", "Done! none of the 10 jobs aborted",
])
def test_a_summary_counting_no_aborts_is_no_quit(last):
    """s44 tester N1: a good run closing with "Finished: 10 done, 0 aborted" was stored failed
    ('exit 0, but the program ended with: ...'): a count of none after a label or another
    count is a count, as "0 runs aborted" opening the line is."""
    assert classify({**BASE, "stdout": f"step 1 x=3\n{last}\n"}, 60) == ("ok", "")


@pytest.mark.parametrize("last", [
    "Rank 0 aborted.", "Fatal: process 0 aborted", "Finished: 10 done, 2 aborted",
    "no solution found, aborting", "Done. 2 of 10 tasks aborted", "Solver v1.0 aborted",
])
def test_an_id_or_a_count_of_real_aborts_closing_the_output_stays_failed(last):
    assert classify({**BASE, "stdout": f"step 1 x=3\n{last}\n"}, 60) == (
        "failed", f"exit 0, but the program ended with: {last}")


@pytest.mark.parametrize("last", [
    "ERROR - no restart file found aborting", "Setup: no GPU found aborting",
    "init: no input deck aborting.", "mesh.c:120: no cells left aborting",
])
def test_a_quit_after_a_thing_found_none_of_is_failed(last):
    """Was (s46 review RV6): "no restart file found" read as a tally of none before the quit,
    so these bad runs were kept ok; "aborting" is the program's act now, no count's verb."""
    assert classify({**BASE, "stdout": f"step 1\n{last}\n"}, 60) == (
        "failed", f"exit 0, but the program ended with: {last}")


@pytest.mark.parametrize("last", [
    "node=0 aborted", "task: 0 aborted", "Rank: 0 of 4 aborted", "myrank=0 aborted",
    "4 ranks aborted", "2 jobs aborted.",
])
def test_an_id_of_zero_or_a_count_of_some_before_aborted_is_failed(last):
    """Was (s44 review E1, E2): "=0" or ": 0" read as a count of none, and any number opening
    the line as a count, so these bad runs were kept ok."""
    assert classify({**BASE, "stdout": f"step 1 x=3\n{last}\n"}, 60) == (
        "failed", f"exit 0, but the program ended with: {last}")


@pytest.mark.parametrize("name, line", [
    ("mocassin-missing-input.stdout", "!out_in: can't open file input/input.in - terminating"),
    ("mocassin-no-output-dir.stdout", "!output directory output/ doesn't exist - terminating"),
])
def test_mocassin_stopping_on_a_missing_file_under_exit_0_is_failed(name, line):
    """Was (s45 tester E1): stored ok at a sixth of a real run's time, and recommended."""
    result = {**BASE, "stdout": (OUTPUTS / name).read_text()}
    assert classify(result, 60) == ("failed", f"exit 0, but the program ended with: {line}")


@pytest.mark.parametrize("last", [
    "config.yml not found, exiting.", "cannot read mesh; giving up",
    "Could not open x.dat. Stopping!",
    "unable to allocate 4 GB - terminated", "restart.chk: no such file, exiting",
])
def test_a_last_line_with_a_cause_then_a_stop_is_failed(last):
    assert classify({**BASE, "stdout": f"step 1 x=3\n{last}\n"}, 60) == (
        "failed", f"exit 0, but the program ended with: {last}")


@pytest.mark.parametrize("last", [
    "terminating workers", "Exiting normally", "Done, exiting", "all done - terminating",
    "Summary: 0 files not found, exiting", "cannot open log, not stopping",
    "x.dat not found, using defaults", "continuing without exiting", "strings are null-terminated",
    "can't open x.dat - terminating workers",
])
def test_a_stop_without_a_cause_or_a_cause_without_a_stop_stays_ok(last):
    assert classify({**BASE, "stdout": f"step 1 x=3\n{last}\n"}, 60) == ("ok", "")


@pytest.mark.parametrize("last", [
    "Unable to improve the likelihood further, stopping.", "Could not find a better tree; stopping",
    "Line search cannot decrease energy further - stopping",
    "Convergence reached; cannot reduce residual further, stopping.",
    "Unable to find further improvements, terminating.", "Cannot find more work, exiting.",
    "Tasks not found in queue: 0, exiting", "not found: 0; terminating",
])
def test_a_search_that_ended_or_a_tally_before_a_stop_stays_ok(last):
    """Was (s46 review RV9): an optimiser's or a work queue's normal stop read as a cause and a
    stop, failing a good run."""
    assert classify({**BASE, "stdout": f"step 1\nResult: E=-1.0\n{last}\n"}, 60) == ("ok", "")


@pytest.mark.parametrize("last", [
    "cannot allocate more memory, exiting", "cannot open input.in; no further steps, exiting",
    "file not found: 3.in, exiting",
    # s46 review RW1: a missing resource with "more", such words in a file name, a number
    # that counts nothing.
    "Cannot open any more files, exiting", "Unable to get more memory, terminating",
    "Cannot open improved_mesh.msh, exiting", "Unable to open file further.in, stopping.",
    "cannot open unit=10, stopping", "Error code not found: 42 - terminating",
])
def test_a_missing_thing_beside_such_words_is_still_failed(last):
    assert classify({**BASE, "stdout": f"step 1\nResult: E=-1.0\n{last}\n"}, 60) == (
        "failed", f"exit 0, but the program ended with: {last}")


def test_elk_error_followed_by_its_explanation_and_advice_under_exit_0_is_failed():
    """Was (s46 tester H4): only an error line that was the output's last counted, so Elk's
    three-line input error, ending in advice, was stored ok."""
    result = {**BASE, "stdout": (OUTPUTS / "elk-ngridk-block-srun.stdout").read_text(),
              "stderr": (OUTPUTS / "elk-ngridk-block-srun.stderr").read_text()}
    assert classify(result, 60) == (
        "failed", "exit 0, but the program ended with: Error(readinput): error reading from "
        "elk.in (Problem occurred in 'ngridk' block; Check input convention in manual)")


@pytest.mark.parametrize("lines", [
    "ERROR: unknown option -x\nSee --help for usage.",
    "Error: cannot parse in.dat\nexpected an integer near line 3\nPlease correct in.dat",
])
def test_an_error_line_closed_by_its_explanation_is_failed(lines):
    assert classify({**BASE, "stdout": f"step 1 x=3\n{lines}\n"}, 60)[0] == "failed"


@pytest.mark.parametrize("lines", [
    "ERROR: could not write the optional plot\nDone.",
    "Error: restart file missing\nResult: E=-1.0",
    "Error: bad dt\ndt must be positive, resetting to 0.01",
    "Error: bad value\nProblem size: 1000",
    "ERROR: x.dat missing\nUsing default values",
    "Error: 1.2e-05\nSee the manual for what this error means",
    "ERROR: a\nInvalid b\nInvalid c\nInvalid d\nInvalid e",
])
def test_an_error_line_followed_by_other_lines_stays_ok(lines):
    assert classify({**BASE, "stdout": f"step 1 x=3\n{lines}\n"}, 60) == ("ok", "")


@pytest.mark.timeout(60)
@pytest.mark.parametrize("last", [
    "cannot x exiting" + " " * 19_000 + "x", "aborting" + " " * 19_000 + "x",
    "cannot ignore " * 1_400 + "run terminated abnormally",
], ids=range(3))
def test_a_long_last_line_is_read_in_linear_time(last):
    """Was: CAUSE_THEN_QUIT's ".*?" from each cause and the stops' "\\s*[.!]*\\s*$" were
    quadratic, 1.5-4 s on these 19 kB lines (read within the last 20,000 characters)."""
    import time

    start = time.perf_counter()
    assert ending_error(f"step 1\n{last}\n", "") == ""
    assert time.perf_counter() - start < 0.5  # ~0.03 s here


def test_bagels_error_at_2_ranks_under_exit_0_is_failed_as_at_1_rank():
    """Was (s48 tester O7): BAGEL's "ERROR ON MPI PROCESS N: EXCEPTION RAISED: ..." (exit 0,
    nothing computed) was stored ok with its time and no note at 2 ranks, while its 1-rank
    "ERROR: EXCEPTION RAISED: ..." made the same run failed."""
    stdout = (OUTPUTS / "bagel-unknown-method-2ranks.stdout").read_text()
    assert classify({**BASE, "stdout": stdout}, 60) == (
        "failed", "exit 0, but the program ended with: ERROR ON MPI PROCESS 1: EXCEPTION "
        "RAISED:  HFF : unknown method")
    one_rank = stdout[:stdout.index("  ERROR ON")] + \
        "  ERROR: EXCEPTION RAISED:  HFF : unknown method\n"
    assert classify({**BASE, "stdout": one_rank}, 60)[0] == "failed"


def test_bagels_error_under_advice_gets_the_same_note_at_1_and_2_ranks():
    """s48 tester O7: BAGEL's missing basis, its advice line under each rank's error (exit 0):
    ok with the "the program said" note at 1 rank, and had no note at 2 ranks."""
    from hpcds1mpi.measure.convergence import convergence_warning

    error = ("EXCEPTION RAISED:  no-such-basis cannot be opened. Please see if the file is in "
             "/usr/share/bagel.")
    advice = "  You can also specify the full path to the basis file.\n"
    for stdout, said in ((f"  * METHOD: MOLECULE  0.05\n\n  ERROR: {error}\n{advice}",
                          f"ERROR: {error}"),
                         (f"  * METHOD: MOLECULE  0.05\n\n  ERROR ON MPI PROCESS 0: {error}\n"
                          f"{advice}  ERROR ON MPI PROCESS 1: {error}\n{advice}",
                          f"ERROR ON MPI PROCESS 1: {error}")):
        assert classify({**BASE, "stdout": stdout}, 60) == ("ok", "")
        assert convergence_warning(stdout, "")[0] == said


@pytest.mark.parametrize("stdout", [
    "Error: \nwork done\nelapsed (max over 2 ranks): 0.2500 seconds\n",
    # hansl's catch + printf "Error: %s\n", errmsg($error) at 2 ranks, errmsg empty
    "Error: \nError: \nelapsed (max over 2 ranks): 0.0076 seconds\n",
])
def test_an_empty_error_title_mid_run_is_noted_as_a_one_line_error_is(stdout):
    """Was (s48 tester O1): gretl's "Error: " with nothing after its colon took every line under
    it, its time line too, as its message, so the exit-0 run was failed "ended with: Error: work
    done elapsed ..."; "Error: matrix is singular" there was ok with a note."""
    from hpcds1mpi.measure.convergence import convergence_warning

    assert classify({**BASE, "stdout": stdout}, 60) == ("ok", "")
    assert convergence_warning(stdout, "") == ("Error:", "Error:")
    one_line = stdout.replace("Error: \n", "Error: matrix is singular\n", 1)
    assert classify({**BASE, "stdout": one_line}, 60) == ("ok", "")


def _swept(tmp_path, script: str, *options: str):
    """``(proc, runs)`` of a one-launch sweep of the shell ``script`` into a new file."""
    from hpcds1mpi.records import telemetry
    from tests.helpers import run_cli

    app = tmp_path / "prog.sh"
    app.write_text(f"#!/bin/sh\n{script}")
    app.chmod(0o755)
    proc = run_cli(["sweep", "--command", f"{app} {{size}}", "--label", "p", "--sizes", "100",
                    *options, "--min-time", "0", "--min-repeats", "1", "--max-repeats", "1",
                    "--no-progress", "--out", str(tmp_path / "p.h5")], timeout=120)
    return proc, telemetry.read_runs(tmp_path / "p.h5")


def test_a_sweep_keeps_the_time_of_a_run_that_printed_an_empty_error_title(tmp_path):
    """s48 tester O1, as the sweep runs it: ok, its printed time kept, the note given."""
    proc, runs = _swept(tmp_path, "printf 'Error: \\n'\nsleep 0.3\necho 'work done'\n"
                        "echo 'elapsed (max over 1 ranks): 0.2500 seconds'\n", "--time-regex",
                        r"elapsed \(max over \d+ ranks\): ([0-9.]+) seconds")
    assert proc.returncode == 0, proc.stderr
    assert "ok, but the program said \"Error:\"; its time is kept" in proc.stderr, proc.stderr
    assert list(runs["status"]) == ["ok"] and list(runs["runtime_s"]) == [0.25]


@pytest.mark.parametrize("stdout, said", [
    ("reading input\nelapsed 0.01 s\nFATAL ERROR:\ncannot open file x.dat\n",
     "FATAL ERROR: cannot open file x.dat"),
    ("ERROR:\nthe input deck has no cell\n", "ERROR: the input deck has no cell"),
    ("mytool: error:\nno such option\n", "mytool: error: no such option"),
    # rank-prefixed lines, the message indented under the tag: "[0] ", srun --label, --tag-output
    ("[0] Error:\n[0]   cannot allocate 3 GB\n", "Error: cannot allocate 3 GB"),
    ("[0] Error: \n[0]   cannot allocate 3 GB\n", "Error: cannot allocate 3 GB"),
    ("0: Error:\n0:   cannot allocate 3 GB\n", "Error: cannot allocate 3 GB"),
    ("[1,0]<stderr>:Error:\n[1,0]<stderr>:  cannot allocate 3 GB\n",
     "Error: cannot allocate 3 GB"),
])
def test_an_error_title_over_its_message_ending_the_output_is_failed(stdout, said):
    """Was (s48 review RY3): O1's fix took only a message indented deeper than its title in the
    raw line, so a title over its message at column 0, or over one indented after a rank tag,
    had none, ended nothing, and the exit-0 run was stored ok (before it: failed)."""
    assert ending_error(stdout, "") == said
    assert classify({**BASE, "stdout": stdout}, 60) == \
        ("failed", f"exit 0, but the program ended with: {said}")


@pytest.mark.parametrize("stdout", [
    "Error: \nwork done\nelapsed (max over 2 ranks): 0.2500 seconds\n",
    # hansl's catch + printf "Error: %s\n", errmsg($error) at 1 rank, errmsg empty
    "Error: \nelapsed (max over 1 ranks): 0.0076 seconds\n",
])
def test_a_title_printed_with_an_empty_message_takes_no_line_under_it(stdout):
    """s48 tester O1 beside review RY3: gretl's "Error: " (a blank after its colon) printed an
    empty message; the line under it is the program's output, its time line too: ok, noted."""
    from hpcds1mpi.measure.convergence import convergence_warning

    assert ending_error(stdout, "") == ""
    assert classify({**BASE, "stdout": stdout}, 60) == ("ok", "")
    assert convergence_warning(stdout, "") == ("Error:", "Error:")


def test_a_sweep_fails_a_run_ending_in_an_error_title_over_its_message(tmp_path):
    """s48 review RY3, as the sweep runs it: failed, not a measured ok row."""
    proc, runs = _swept(tmp_path, "echo 'reading input'\necho 'elapsed 0.01 s'\n"
                        "echo 'FATAL ERROR:'\necho 'cannot open file x.dat'\n")
    assert "exit 0, but the program ended with: FATAL ERROR: cannot open file x.dat" in \
        proc.stderr, proc.stderr
    assert list(runs["status"]) == ["failed"]
