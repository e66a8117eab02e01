"""A launch whose --fom-regex matched nothing and that printed an error line is failed with
it (s44 tester M3: ScaLAPACK's xdhrd refusing a size, exit 0, was stored ok at its wall time
under a --fom-regex alone, and recommend answered auto for a size nothing can run)."""

from __future__ import annotations

import pytest

from hpcds1mpi.measure.fom_miss import fom_miss_problem
from hpcds1mpi.measure.readings import Readings
from tests.apps.scalapack import XDHRD_TOTMEM

#: xdhrd (Debian's scalapack-mpi-test) at N=300 on a 1 x 1 grid, which fits.
XDHRD_OK = XDHRD_TOTMEM.replace(
    "Unable to perform Hessenberg reduction: need TOTMEM of at least    4863400\n"
    "Bad MEMORY parameters: going on to next test case.\n",
    "WALL    300      1    300  32     1     1      0.01    13718.06     0.08 PASSED\n").replace(
    "    0 tests completed and passed", "    1 tests completed and passed").replace(
    "    1 tests skipped", "    0 tests skipped")
FOM = r"^WALL\s+\d+\s+\d+\s+\d+\s+\d+\s+\d+\s+\d+\s+\S+\s+([0-9.]+)"


def test_a_refusal_with_no_figure_of_merit_fails_with_the_programs_line():
    readings = Readings.of(fom_regex=FOM)
    assert fom_miss_problem(readings, readings.read(XDHRD_TOTMEM)) == (
        f"exit 0, but --fom-regex '{FOM}' matched no number in its output; the program said: "
        "Unable to perform Hessenberg reduction: need TOTMEM of at least 4863400")
    # the same on stderr
    assert "need TOTMEM" in fom_miss_problem(readings, readings.read("", XDHRD_TOTMEM))


@pytest.mark.parametrize("output, fom_regex", [
    (XDHRD_OK, FOM),  # read: no problem
    (XDHRD_OK, FOM.replace("WALL", "CPU")),  # a plain miss on a clean run: ok, with its note
    (XDHRD_TOTMEM, None),  # no --fom-regex
    ("Version 5.0.11\nerror: cannot open restart\n", r"Version (\S+)"),  # a text, no number:
])                                                                      # the regex to fix
def test_a_clean_miss_a_read_figure_or_no_regex_is_no_failure(output, fom_regex):
    readings = Readings.of(fom_regex=fom_regex)
    assert fom_miss_problem(readings, readings.read(output)) == ""


def test_a_last_line_without_an_error_word_is_no_failure():
    """A program's last line, printed by every run, is no reason (MrBayes's)."""
    readings = Readings.of(fom_regex=r"GFLOP/s ([0-9.]+)")
    assert fom_miss_problem(readings, readings.read("run 1 done\nor use 'set mode=x'\n")) == ""


@pytest.mark.parametrize("line", ["Max abs error vs reference: 1.2e-15", "L2 error = 0.003",
                                  "relative error 3.1E-09 (tolerance 1e-8)"])
def test_a_reported_error_quantity_on_a_good_run_is_no_failure(line):
    """A good run's check against a reference prints "error" and a number: a wrong
    --fom-regex there is the regex's miss (a note), not a failed run."""
    readings = Readings.of(fom_regex=r"GFLOPS=([0-9.]+)")
    assert fom_miss_problem(readings, readings.read(f"step 1\n{line}\nGflops: 3.2\n")) == ""


@pytest.mark.parametrize("line", [
    "Residual error check: PASSED", "Number of failed tests: 0", "Error: 1.2e-05",
    "Failed to set CPU affinity, continuing with the default",
    "could not open optional file opt.cfg, using defaults", "fatal error in step 2.5"])
def test_a_line_with_an_error_word_that_names_no_cause_is_no_failure(line):
    """s44 tester O8: harmless lines of good runs hold error words; a wrong --fom-regex on
    them stays the regex's note."""
    readings = Readings.of(fom_regex=r"GFLOPS=([0-9.]+)")
    assert fom_miss_problem(readings, readings.read(f"step 1\n{line}\nGflops: 3.2\n")) == ""


@pytest.mark.parametrize("line", ["Error: grid 2.5 too small",
                                  "error: cannot open input.dat: No such file or directory"])
def test_an_error_message_naming_its_cause_still_fails(line):
    readings = Readings.of(fom_regex=r"GFLOPS=([0-9.]+)")
    assert line.split()[0] in fom_miss_problem(readings, readings.read(f"step 1\n{line}\n"))


@pytest.mark.parametrize("output", [
    "chk.h5 not found, starting from scratch\nstep 1\nGflops: 3.2\n",
    "Checkpoint restart.chk not found; starting a new run\nstep 1\nGflops: 3.2\n",
    "input.cfg not found\nUsing built-in defaults.\nstep 1\nGflops: 3.2\n",
    "Error: cannot open input.cfg\nFalling back to defaults\nstep 1\nGflops: 3.2\n",
])
def test_a_missing_file_the_program_went_on_from_is_no_failure(output):
    """s44 review F1: a first run's missing checkpoint ("starting from scratch"), or a missing
    file whose recovery the program wrote on the next line, had failed a good run under a
    missed --fom-regex; the miss is the regex's note."""
    readings = Readings.of(fom_regex=r"GFLOPS=([0-9.]+)")
    for out, err in ((output, ""), ("step 1\n", output)):
        assert fom_miss_problem(readings, readings.read(out, err), (out, err)) == ""


@pytest.mark.parametrize("line", [
    "ERROR: restart file chk.h5 not found; set restart=no to start from scratch",
    "Error: cannot open input.in; fallback disabled",
    "FATAL: params.txt not found - the built-in defaults are used only with -d",
    "Cannot open checkpoint state.cpt: remove -cpi to start from scratch",
    "ERROR: input.dat not found (see the manual for the defaults used)",
    "Error: config.yml not found; pass --reset to reset settings to factory values",
])
def test_a_refusal_advising_how_to_go_on_still_fails(line):
    """Was (s46 review RV5): a refusal's advice ("to start from scratch"), or a fallback said
    to be off, read as a program that went on; the run, which did nothing, was kept ok."""
    readings = Readings.of(fom_regex=r"Rate: ([0-9.]+)")
    out = f"{line}\nTiming: 0.01 s\nBye.\n"
    assert fom_miss_problem(readings, readings.read(out), (out, "")).endswith(
        f"the program said: {line}")


@pytest.mark.parametrize("output", ["input.cfg not found\ncannot continue without it\n",
                                    "input.cfg not found\nstep 1 done\n"])
def test_a_missing_file_not_gone_on_from_on_the_next_line_still_fails(output):
    readings = Readings.of(fom_regex=r"GFLOPS=([0-9.]+)")
    assert "input.cfg not found" in fom_miss_problem(readings, readings.read(output),
                                                     (output, ""))


@pytest.mark.parametrize("line", ["This calculation needs memory of at least 1200 MB",
                                  "Estimated memory: requires at least 2.5 GB per rank",
                                  "this run needs at least 30 minutes"])
def test_an_estimate_of_what_a_run_needs_is_no_failure(line):
    """s44 review F2: "need X of at least N" (ScaLAPACK's refusal) had read an estimate a good
    run prints as a refusal."""
    readings = Readings.of(fom_regex=r"GFLOPS=([0-9.]+)")
    assert fom_miss_problem(readings, readings.read(f"{line}\nstep 1\nGflops: 3.2\n")) == ""


def test_a_refused_count_of_time_levels_fails_the_run():
    """s45 review RV2: "3 time levels" is a count of levels, no need of time."""
    readings = Readings.of(fom_regex=r"GFLOPS: ([0-9.]+)")
    out, err = "Reading input.dat\n", "The integrator requires at least 3 time levels\n"
    assert fom_miss_problem(readings, readings.read(out, err), (out, err)).endswith(
        "the program said: The integrator requires at least 3 time levels")


@pytest.mark.mpi
def test_a_sweep_keeps_a_run_that_went_on_from_a_missing_file_ok(tmp_path):
    """End to end: the sweep hands the launch's output to the rule (s44 review F1)."""
    import sys

    from hpcds1mpi.records import telemetry
    from tests.helpers import run_cli

    app = tmp_path / "app.py"
    app.write_text("print('input.cfg not found')\nprint('Using built-in defaults.')\n"
                   "print('Gflops: 3.2')\n")
    out = tmp_path / "app.h5"
    proc = run_cli(["sweep", "--command", f"{sys.executable} {app}", "--label", "app",
                    "--sizes", "1", "--ranks-per-node", "1", "--threads", "1",
                    "--min-repeats", "1", "--max-repeats", "1", "--warmup", "0",
                    "--fom-regex", r"GFLOPS=([0-9.]+)", "--out", str(out), "--no-progress"],
                   cwd=tmp_path, timeout=120)
    assert proc.returncode == 0, proc.stderr
    runs = telemetry.read_runs(str(out))
    assert list(runs["status"]) == ["ok"], list(runs["error"])


@pytest.mark.timeout(60)
@pytest.mark.parametrize("after", ["using " * 16_000, "reset " * 16_000, "cannot ignore " * 7_000])
def test_a_long_line_after_the_reason_is_read_in_linear_time(after):
    """s45 review RV4: WENT_ON's ".*" was quadratic on "using " x N (over 20 s), and
    :mod:`~hpcds1mpi.measure.negation` read each denied match's whole clause."""
    import time

    readings = Readings.of(fom_regex=r"GFLOPS: ([0-9.]+)")
    out = f"step 1\nillegal nlev (-1)\n{after}\n"
    found = readings.read(out)
    start = time.perf_counter()
    assert fom_miss_problem(readings, found, (out, "")).endswith("illegal nlev (-1)")
    assert time.perf_counter() - start < 2  # generous for CI: ~0.2 s here, seconds before
