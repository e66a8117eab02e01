"""A launch killed at --timeout after its program's error is that error's failure
(measure/hang_cause.py)."""

from __future__ import annotations

import sys

import pytest

from hpcds1mpi.measure.hang_cause import ending_traceback, said_before, timed_out
from hpcds1mpi.measure.program_launch import classify, launch_once

#: ESyS-Particle's master on a typo in its script; its worker rank then waits for ever.
ESYS = ("Traceback (most recent call last):\n"
        '  File "/tmp/sim_typo.py", line 26, in <module>\n'
        "    sim.runn()\n"
        "    ^^^^^^^^\n"
        "AttributeError: 'LsmMpi' object has no attribute 'runn'. Did you mean: 'run'?\n")
ESYS_OUT = "CSubLatticeControler::initMPI()\nslave started at local/global rank 0 / 1\n"


def _result(stdout: str, stderr: str, **more) -> dict:
    return {"stdout": stdout, "stderr": stderr, "timed_out": True, "exit_code": -15,
            "found": {}, "ranks": 2, **more}


def test_a_master_that_died_on_a_traceback_and_left_its_workers_waiting_failed():
    """s47 tester L2: stored timeout, "no failure", advice "raise --timeout"."""
    status, why = classify(_result(ESYS_OUT, ESYS), 15)
    assert status == "failed"
    assert why == ("the program stopped on an uncaught Python exception: AttributeError: "
                   "'LsmMpi' object has no attribute 'runn'. Did you mean: 'run'?; then no "
                   "exit within the 15 s timeout, killed")


@pytest.mark.parametrize("stdout, stderr, quoted", [
    ("step 1\n", "ERROR: cannot open geom-8.txt\n", "ERROR: cannot open geom-8.txt"),
    ("reading input\nFatal error:\nFile geom-8.txt not found\n", "", "Fatal error:"),
    # a slow run whose latest line is an error it went on from (s47 review RX5: was failed)
    ("Error: failed to open restart file, starting from scratch\n", "",
     "Error: failed to open restart file"),
])
def test_an_error_line_last_before_the_kill_is_quoted_and_the_run_stays_a_timeout(
        stdout, stderr, quoted):
    """A killed run had not ended: its last line is no ending, so no proof of a failure."""
    status, why = timed_out(_result(stdout, stderr), 10)
    assert status == "timeout", why
    assert why.startswith("no exit within the 10 s timeout, killed; before, the program said: "
                          + quoted), why


def test_a_line_the_fail_regex_matched_makes_a_hang_failed():
    """s47 tester L2: --fail-regex 'Error' did not help a launch that timed out."""
    status, why = timed_out(_result("step 1\n", "", found={"fail_line": "Error  in  x"}), 10)
    assert (status, why) == ("failed", "its output matched --fail-regex: Error in x; then no "
                                       "exit within the 10 s timeout, killed")


@pytest.mark.parametrize("stdout, stderr", [
    ("step 1\nstep 2\n", ""),  # a slow run
    ("L2 error: 3.2e-05\nstep 2\n", "Warning: error estimate large\n"),  # values, a warning
    ("step 1\n", "Exception ignored in: <function f>\nTraceback (most recent call last):\n"
                 '  File "x.py", line 1, in f\nValueError: x\n'),  # printed and went on
])
def test_a_slow_run_stays_a_timeout_with_nothing_quoted(stdout, stderr):
    assert timed_out(_result(stdout, stderr), 10) == (
        "timeout", "no exit within the 10 s timeout; killed")


def test_an_error_the_program_went_on_from_is_quoted_but_the_run_stays_a_timeout():
    status, why = timed_out(_result("", ESYS + "step 2\nstep 3\n"), 10)
    assert status == "timeout" and not ending_traceback(ESYS + "step 2\n")
    assert why.startswith("no exit within the 10 s timeout, killed; before, the program said: "
                          "AttributeError: 'LsmMpi' object")
    assert "rather than raising --timeout" in why
    assert said_before("ERROR: bad input\ncontinuing\n", "") == "ERROR: bad input"


def test_only_what_was_written_before_the_kill_is_read(tmp_path):
    """A program whose SIGTERM handler raises prints its traceback after the kill: no cause."""
    hang = tmp_path / "hang.py"
    hang.write_text("import sys, time, traceback\n"
                    "try:\n    raise AttributeError('no attribute runn')\n"
                    "except AttributeError:\n    traceback.print_exc()\n"
                    "sys.stderr.flush()\ntime.sleep(60)\n")
    slow = tmp_path / "slow.py"
    slow.write_text("import signal, time\nclass Stop(Exception):\n    pass\n"
                    "def stop(*_):\n    raise Stop('terminated')\n"
                    "signal.signal(signal.SIGTERM, stop)\nprint('step 1', flush=True)\n"
                    "time.sleep(60)\n")
    result = launch_once([sys.executable, str(hang)], {}, 2.0)
    assert classify(result, 2.0) == (
        "failed", "the program stopped on an uncaught Python exception: AttributeError: no "
                  "attribute runn; then no exit within the 2 s timeout, killed")
    result = launch_once([sys.executable, str(slow)], {}, 2.0)
    assert "Stop: terminated" in result["stderr"]  # written as it was killed
    assert classify(result, 2.0) == ("timeout", "no exit within the 2 s timeout; killed")
