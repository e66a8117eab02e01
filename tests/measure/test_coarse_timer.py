"""A program's time in whole seconds is said, once per sweep, to be a coarse measurement."""

from __future__ import annotations

import pytest

from hpcds1mpi.measure.coarse_timer import coarse_note
from hpcds1mpi.records import telemetry
from tests.helpers import run_cli

pytestmark = pytest.mark.mpi


def test_whole_seconds_under_ten_are_coarse_and_others_are_not():
    regex = r"--time-regex 'Analysis completed in (\d+) seconds?'"
    note = coarse_note("1", 1.66, regex)
    assert note.startswith(f"note: {regex} read whole seconds (1 s of a launch of 1.66 s wall "
                           "time): the program's timer has 1-s resolution")
    assert "drop --time-regex to record the wall time" in note and "\n" not in note
    assert coarse_note("1.25", 1.3, regex) == coarse_note("42", 43.0, regex) == ""
    assert coarse_note(None, 1.0, regex) == ""


def test_a_sweep_says_once_that_a_whole_seconds_timer_is_coarse(tmp_path):
    """s35 tester A4: MrBayes's "Analysis completed in 1 seconds" was stored as runtime_s 1.0,
    noise 0.0, for a launch of 1.66 s, without a word."""
    program = tmp_path / "mb.sh"
    program.write_text('#!/bin/sh\nsleep 0.7\necho "      Analysis completed in 1 seconds"\n')
    program.chmod(0o755)
    proc = run_cli(["sweep", "--command", f"{program} {{size}}", "--label", "mb",
                    "--ranks-per-node", "1", "--threads", "1", "--min-time", "0",
                    "--max-repeats", "2", "--no-progress", "--sizes", "1,2",
                    "--time-regex", r"Analysis completed in (\d+) seconds?",
                    "--out", str(tmp_path / "mb.h5")], timeout=120)
    assert proc.returncode == 0, proc.stderr
    notes = [ln for ln in proc.stderr.splitlines() if "read whole seconds" in ln]
    assert len(notes) == 1 and "1-s resolution" in notes[0], proc.stderr
    runs = telemetry.read_runs(tmp_path / "mb.h5")
    assert (runs["status"] == "ok").all() and list(runs["runtime_s"]) == [1.0, 1.0]
