"""A program's time printed coarsely (whole seconds, or any decimal that is a large share of
it) is said once per sweep, and its repeats' noise is never stored as a measured 0."""

from __future__ import annotations

import math

import pytest

from hpcds1mpi.measure.coarse_timer import (COARSE_SHARE, below_tick, coarse_noise,
                                            coarse_note, is_coarse, resolution, tick_noise,
                                            zero_note)
from hpcds1mpi.records import telemetry
from tests.helpers import run_cli

pytestmark = pytest.mark.mpi


def test_whole_seconds_under_twenty_are_coarse_and_others_are_not():
    regex = r"--time-regex 'Analysis completed in (\d+) seconds?'"
    note = coarse_note("1", 1.66, regex)
    assert note.startswith(f"note: {regex} read 1 s of a launch of 1.66 s wall time: the "
                           "program's timer has 1-s resolution")
    assert "drop --time-regex to record the wall time" in note and "\n" not in note
    assert coarse_note("1.25", 1.3, regex) == coarse_note("42", 43.0, regex) == ""
    assert coarse_note("19", 20.0, regex) and not coarse_note("20", 21.0, regex)
    assert coarse_note(None, 1.0, regex) == ""


def test_the_resolution_is_read_from_the_decimals_printed_or_the_quantum_seen():
    """s37 tester G1: NWChem's `wall: 0.1s` (one decimal) was no whole second, so not coarse."""
    assert resolution(["0.1"]) == pytest.approx(0.1) and resolution(["12"]) == 1.0
    assert resolution(["1.25e-01"]) == pytest.approx(1e-3)
    assert resolution(["1,5"]) == pytest.approx(0.1)  # a decimal comma
    # %f of whole seconds: three values all ending in zeros after the point are 1-s ticks
    assert resolution(["1.000000", "2.000000", "1.000000"]) == 1.0
    assert resolution(["1.000000", "2.000000"]) == pytest.approx(1e-6)  # two may be chance
    assert resolution(["0.123", "0.120", "0.140"]) == pytest.approx(1e-3)
    assert math.isnan(resolution(["n/a"]))
    # coarse: a tick over 5 % of the time, recommend's tolerance for a good pick
    from hpcds1mpi.decide.confidence import GOOD_PICK_TOLERANCE

    assert COARSE_SHARE == GOOD_PICK_TOLERANCE
    assert is_coarse(0.1, 0.1) and is_coarse(0.01, 0.15) and not is_coarse(0.01, 0.25)
    assert not is_coarse(math.nan, 0.1)


def test_a_coarse_timers_noise_is_the_widest_spread_its_printed_values_allow():
    assert coarse_noise([0.1] * 5, ["0.1"] * 5) == pytest.approx(1.0)  # was stored 0.0
    assert coarse_noise([0.1, 0.2, 0.3], ["0.1", "0.2", "0.3"]) == pytest.approx(1.5)
    assert coarse_noise([12.3, 12.4], ["12.3", "12.4"]) is None  # 0.1 s of 12 s: fine
    assert coarse_noise([], []) is None
    assert math.isnan(coarse_noise([0.0, 0.0], ["0.0", "0.0"]))


def test_a_fine_timers_repeats_of_one_printed_value_store_one_tick():
    """s45 tester B3: MrBayes's 0.47 s from a 0.01-s timer (2 %: not coarse), three times,
    was stored noise 0.0; README says noise is never 0."""
    assert tick_noise([0.47] * 3, ["0.47"] * 3) == pytest.approx(0.01 / 0.47)
    assert tick_noise([0.47, 0.48], ["0.47", "0.48"]) is None  # the measured spread stands
    assert tick_noise([0.1] * 5, ["0.1"] * 5) == coarse_noise([0.1] * 5, ["0.1"] * 5)
    assert tick_noise([0.47], ["0.47"]) is None and tick_noise([0.5, 0.5], []) is None


def _sweep(tmp_path, label: str, body: str, regex: str, repeats: list[str], sizes: str):
    """A sweep of the shell program ``body`` (at 1 rank, 1 thread) reading ``regex``; its
    process, checked to have exited 0."""
    program = tmp_path / f"{label}.sh"
    program.write_text(f"#!/bin/sh\n{body}\n")
    program.chmod(0o755)
    proc = run_cli(["sweep", "--command", f"{program} {{size}}", "--label", label,
                    "--ranks-per-node", "1", "--threads", "1", "--min-time", "0", *repeats,
                    "--no-progress", "--sizes", sizes, "--time-regex", regex,
                    "--out", str(tmp_path / f"{label}.h5")], timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc


def test_a_sweep_says_once_that_a_whole_seconds_timer_is_coarse(tmp_path):
    """s35 tester A4: MrBayes's "Analysis completed in 1 seconds" was stored as runtime_s 1.0,
    noise 0.0, for a launch of 1.66 s, without a word."""
    proc = _sweep(tmp_path, "mb", 'sleep 0.7\necho "      Analysis completed in 1 seconds"',
                  r"Analysis completed in (\d+) seconds?", ["--max-repeats", "2"], "1,2")
    notes = [ln for ln in proc.stderr.splitlines() if "1-s resolution" in ln]
    assert len(notes) == 1, proc.stderr
    runs = telemetry.read_runs(tmp_path / "mb.h5")
    assert (runs["status"] == "ok").all() and list(runs["runtime_s"]) == [1.0, 1.0]
    assert list(runs["noise"]) == [1.0, 1.0]  # s37 G1: one tick of 1 s, not 0.0


def test_a_sweep_says_a_tenth_of_a_second_timer_is_coarse_and_stores_no_zero_noise(tmp_path):
    """s37 tester G1: NWChem's `Total times  cpu: 0.1s  wall: 0.1s` was stored runtime_s 0.1,
    noise 0.0, for every configuration, without a word; recommend then answered "100 ms
    (100 ms-100 ms), confidence 1.00"."""
    proc = _sweep(tmp_path, "nw", 'sleep 0.05\necho " Total times  cpu:        0.1s     '
                  'wall:        0.1s"', r"Total times\s+cpu:\s+\S+\s+wall:\s+([0-9.]+)s",
                  ["--min-repeats", "3", "--max-repeats", "3"], "1,2")
    notes = [ln for ln in proc.stderr.splitlines() if "0.1-s resolution" in ln]
    assert len(notes) == 1 and "100% of it" in notes[0], proc.stderr
    runs = telemetry.read_runs(tmp_path / "nw.h5")
    assert list(runs["runtime_s"]) == [0.1, 0.1]
    assert list(runs["noise"]) == pytest.approx([1.0, 1.0])


def test_a_clocks_resolution_is_its_last_fields_unit():
    """Was (s45 tester E2): a clock ("00:00:01", MOCASSIN's run time) read no number, so its
    resolution was NaN: never coarse, noise 0, "1 s (1 s-1 s), confidence 1.00"."""
    assert resolution(["00:00:01"]) == resolution(["0:01:05"]) == 1.0
    assert resolution(["1-02:03:04"]) == 1.0 and resolution(["0:02.35"]) == pytest.approx(0.01)
    assert resolution(["1h 2m"]) == 60.0 and resolution(["2m54.91s"]) == pytest.approx(0.01)
    # an hour unit after a clock makes its last field minutes (s46)
    assert resolution(["1:05h"]) == 60.0 and resolution(["1.5h 30s"]) == 1.0
    assert coarse_noise([1.0] * 3, ["00:00:01"] * 3) == coarse_noise([1.0] * 3, ["1"] * 3) == 1.0
    assert coarse_note("00:00:01", 4.5, "x").startswith(
        "note: x read 00:00:01 s of a launch of 4.50 s wall time: the program's timer has 1-s "
        "resolution, 100% of it")
    assert coarse_note("0:01:05", 66.0, "x") == ""  # 1 s of 65 s: fine


def test_a_sweep_reading_a_clock_says_its_timer_is_coarse(tmp_path):
    """s45 tester E2: MOCASSIN's "total run time per processor  00:00:01 (HMS)"."""
    proc = _sweep(tmp_path, "moc", 'sleep 0.7\necho " total run time per processor  00:00:01 '
                  '(HMS)"', r"total run time per processor\s+(\S+)", ["--max-repeats", "2"], "1")
    assert sum("1-s resolution" in ln for ln in proc.stderr.splitlines()) == 1, proc.stderr
    runs = telemetry.read_runs(tmp_path / "moc.h5")
    assert list(runs["runtime_s"]) == [1.0] and list(runs["noise"]) == [1.0]  # was 0.0


def test_a_zero_is_half_the_smaller_of_one_tick_and_the_wall_time():
    assert below_tick("0", 1.43) == 0.5 and below_tick("0", 0.4) == 0.2
    assert below_tick("0.000", 2.0) == 0.0005 and below_tick("0", math.nan) == 0.5
    assert below_tick("nothing", math.nan) == 0.0  # no bound known: not kept
    regex = "--time-regex 'run: ([0-9.]+) seconds'"
    note = zero_note("mpb size 16 N1xR1xT1", {"time": 0.5, "time_text": "0",
                                              "below_tick": True}, 1.43, regex)
    assert note.startswith("note: mpb size 16 N1xR1xT1: --time-regex 'run: ([0-9.]+) seconds' "
                           "read '0', under one tick of the program's timer (1-s resolution)")
    assert "not failed; it is kept ok, its runtime stored as 0.5 s" in note
    assert zero_note("x", {"time": 1.0, "time_text": "1"}, 1.4, regex) == ""


def test_a_sweep_keeps_a_zero_from_a_whole_seconds_timer_ok_and_says_each_configuration(
        tmp_path):
    """s47 tester K1: MPB's "total elapsed time for run: 0 seconds" was stored failed, said for
    the first configuration only, and recommend left out the fastest layout as "every run
    failed"."""
    proc = _sweep(tmp_path, "mpb", 'echo "total elapsed time for run: 0 seconds"',
                  r"total elapsed time for run: ([0-9.]+) seconds", ["--max-repeats", "2"],
                  "1,2")
    notes = [ln for ln in proc.stderr.splitlines() if "under one tick" in ln]
    assert [ln.split(": ")[2] for ln in notes] == [
        "mpb size 1 N1xR1xT1-cpu-fp64", "mpb size 2 N1xR1xT1-cpu-fp64"], proc.stderr
    runs = telemetry.read_runs(tmp_path / "mpb.h5").set_index("size")
    assert (runs["status"] == "ok").all(), runs["error"].tolist()
    for size in (1, 2):  # half of its wall time, under the 1-s tick
        assert 0 < runs.loc[size, "runtime_s"] <= runs.loc[size, "runtime_max_s"] < 0.5
    assert "1-s resolution" not in proc.stderr.replace("(1-s resolution)", "")  # no 2nd note
