"""Which recorded runs a --resume counts as done: a timeout cut at a limit below the resume's
--timeout is measured again, its new row replacing the old (s49: the resume with a raised
--timeout had said "nothing new" and kept the timeouts of a limit too short)."""

from __future__ import annotations

import sys
from types import SimpleNamespace

import pytest

from hpcds1mpi.measure.resumed_runs import cut_shorter, recorded_limit, retried_note, settled
from hpcds1mpi.records import telemetry
from tests.helpers import REPO, run_cli

FAULTS = str(REPO / "tests" / "fault_kernels.py")


def _asked(timeout: float, given: bool = True) -> SimpleNamespace:
    """A plan whose --timeout is ``timeout`` (``given``: asked for, not the default)."""
    return SimpleNamespace(timeout=timeout, timeout_given=given)


def _timeout(limit: str, words: str = "no exit within the {} s timeout; killed") -> dict:
    return {"status": "timeout", "error": words.format(limit)}


def test_a_timeout_below_the_resumes_limit_is_measured_again_one_at_or_above_it_kept():
    program = _timeout("2")
    kernel = _timeout("1.5", "no result within the {} s timeout (the measured repeat it cut "
                             "short had run 0.2 s); the job was aborted and the sweep resumes")
    assert recorded_limit(program) == 2.0 and recorded_limit(kernel) == 1.5
    for row in (program, kernel):
        assert not settled(row, _asked(10.0))  # raised: run again
        assert cut_shorter(row, _asked(10.0))
    assert settled(program, _asked(2.0))  # the same limit: kept, as before
    assert settled(program, _asked(1.0))  # a smaller one: kept
    assert settled(program)  # no plan: any timeout is done
    assert settled(kernel, _asked(1.5))


def test_a_resume_given_no_timeout_keeps_the_timeouts():
    # s49 review F4: a resume without --timeout has the default 600 s; it carries the sweep on
    # (a walltime's end), it does not run every earlier timeout for up to 600 s
    row = _timeout("2")
    assert settled(row, _asked(600.0, given=False)) and not cut_shorter(row, _asked(600.0, False))


def test_a_timeout_whose_error_names_no_limit_is_kept():
    # an older file's words, or none: nothing says it was cut shorter
    for row in ({"status": "timeout", "error": "killed"}, {"status": "timeout"},
                {"status": "timeout", "error": None}):
        assert recorded_limit(row) is None and settled(row, _asked(1e6))
    # other statuses keep their rules, whatever their error says
    assert settled({"status": "failed", "error": "no exit within the 2 s timeout"},
                   _asked(10.0))
    assert not settled({"status": "interrupted"}, _asked(10.0))


def test_the_same_limit_rounded_in_the_error_is_never_read_as_raised():
    # the error words the limit with 6 digits: 1.234564 reads back 1.23456, below it; the
    # supervisor's resume under the same --timeout must keep the run, not run it for ever
    row = _timeout(f"{1.234564:g}")
    assert settled(row, _asked(1.234564))
    assert not settled(row, _asked(1.2346))


def test_the_note_counts_the_runs_measured_again_and_says_why():
    specs = [SimpleNamespace(run_id=f"r{i}") for i in range(4)]
    store = SimpleNamespace(runs={("m", "r0"): _timeout("2"), ("m", "r1"): _timeout("0.5"),
                                  ("m", "r2"): _timeout("60"), ("m", "r3"): {"status": "ok"}})
    plan = SimpleNamespace(runs=specs, timeout=30.0, timeout_given=True)
    note = retried_note(store, plan, "m", "x.h5")
    assert note.startswith("2 timed-out run(s) in x.h5 are measured again: they were cut at "
                           "0.5, 2 s, below this --timeout 30 s") and "\n" not in note
    assert retried_note(store, SimpleNamespace(runs=specs, timeout=0.5, timeout_given=True), "m", "x.h5") == ""


NAP = "import sys, time\ntime.sleep(float(sys.argv[1]))\nprint('slept')\n"


@pytest.mark.mpi
def test_a_program_resumed_with_a_raised_timeout_measures_its_timeout_again(tmp_path):
    nap = tmp_path / "nap.py"
    nap.write_text(NAP)
    out = tmp_path / "nap.h5"
    args = ["sweep", "--command", f"{sys.executable} {nap} {{size}}", "--label", "nap",
            "--sizes", "1", "--ranks-per-node", "1", "--threads", "1", "--min-repeats", "1",
            "--max-repeats", "1", "--min-time", "0", "--out", str(out), "--no-progress"]
    first = run_cli(args + ["--timeout", "0.3"], timeout=120)
    assert first.returncode == 1 and "timed out" in first.stderr, first.stderr
    assert "--resume and a larger --timeout measures them again" in first.stderr
    assert list(telemetry.read_runs(out)["status"]) == ["timeout"]
    same = run_cli(args + ["--timeout", "0.3", "--resume"], timeout=120)  # as before: kept
    assert same.returncode == 0 and "nothing new; 1 already done" in same.stderr, same.stderr
    bare = run_cli(args + ["--resume"], timeout=120)  # no --timeout: carries on, kept
    assert bare.returncode == 0 and "nothing new; 1 already done" in bare.stderr, bare.stderr
    again = run_cli(args + ["--timeout", "30", "--resume"], timeout=120)
    assert again.returncode == 0, again.stderr
    said = [ln for ln in again.stderr.splitlines() if "measured again" in ln]
    assert len(said) == 1 and "1 timed-out run(s)" in said[0] and "cut at 0.3 s" in said[0]
    assert "are timeouts, kept as measured" not in again.stderr
    df = telemetry.read_runs(out)
    assert len(df) == 1 and df["status"].iloc[0] == "ok"  # replaced, not a second row
    assert df["runtime_s"].iloc[0] > 0.9


@pytest.mark.mpi
def test_a_kernel_resumed_with_a_raised_timeout_measures_its_timeout_again(tmp_path):
    out = tmp_path / "k.h5"
    args = ["sweep", "--kernel-module", FAULTS, "--kernel", "fault_sleep", "--sizes", "1200",
            "--ranks-per-node", "1", "--threads", "1", "--precisions", "fp64", "--min-time",
            "0", "--max-repeats", "1", "--warmup", "0", "--out", str(out), "--no-progress"]
    first = run_cli(args + ["--timeout", "0.3"], timeout=120)  # the watchdog aborts it
    assert first.returncode == 124, first.stderr
    assert list(telemetry.read_runs(out)["status"]) == ["timeout"]
    same = run_cli(args + ["--timeout", "0.3", "--resume"], timeout=120)
    assert same.returncode == 0 and "nothing new; 1 already done" in same.stderr, same.stderr
    again = run_cli(args + ["--timeout", "30", "--resume"], timeout=120)
    assert again.returncode == 0, again.stderr
    assert "1 timed-out run(s)" in again.stderr and "below this --timeout 30 s" in again.stderr
    df = telemetry.read_runs(out)
    assert len(df) == 1 and df["status"].iloc[0] == "ok" and df["runtime_s"].iloc[0] > 1.0


@pytest.mark.mpi
def test_a_supervised_resume_whose_runs_time_out_again_carries_on_to_the_rest(tmp_path):
    """s49 review F1: under --launch a run measured again replaces its row, so the count of
    rows stays; the supervisor had called the second such launch "without recording a run" and
    stopped, leaving the plan's later sizes unmeasured."""
    out = tmp_path / "k.h5"
    args = ["sweep", "--launch", "1", "--kernel-module", FAULTS, "--kernel", "fault_sleep",
            "--ranks-per-node", "1", "--threads", "1",
            "--precisions", "fp64", "--min-time", "0", "--max-repeats", "1", "--warmup", "0",
            "--out", str(out), "--no-progress"]
    first = run_cli(args + ["--timeout", "0.3", "--sizes", "1200,1300"], timeout=300)
    assert list(telemetry.read_runs(out)["status"]) == ["timeout"] * 2, first.stderr
    again = run_cli(args + ["--timeout", "0.6", "--sizes", "1200,1300,50", "--resume"],
                    timeout=300)  # both time out again (1.2 s, 1.3 s), then size 50
    assert again.returncode == 0, again.stderr
    df = telemetry.read_runs(out).sort_values("size")
    assert list(df["size"]) == [50, 1200, 1300]
    assert list(df["status"]) == ["ok", "timeout", "timeout"]
    assert df["error"].iloc[1:].str.contains("within the 0.6 s timeout").all()
