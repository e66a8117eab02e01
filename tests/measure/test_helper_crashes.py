"""A program that exited 0 although its own processes crashed (s45 tester P2)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from hpcds1mpi.measure.helper_crashes import crash_traces, helper_crashes
from hpcds1mpi.measure.program_launch import classify
from hpcds1mpi.records import telemetry
from tests.helpers import run_cli

#: Real program outputs (tests/data/program_outputs/README.md says how each was captured).
OUTPUTS = Path(__file__).parent.parent / "data" / "program_outputs"
BASE = {"exit_code": 0, "timed_out": False, "stdout": "", "stderr": ""}
#: One process's crash as Open MPI's handler prints it.
OPAL = ("[n1:{pid}] *** Process received signal ***\n[n1:{pid}] Signal: Segmentation fault (11)\n"
        "[n1:{pid}] Signal code: Address not mapped (1)\n[n1:{pid}] Failing at address: (nil)\n"
        "[n1:{pid}] [ 0] /lib/x86_64-linux-gnu/libc.so.6(+0x3c050)[0x7f65d532b050]\n"
        "[n1:{pid}] *** End of error message ***\n")


def test_ffindex_whose_helpers_crashed_under_exit_0_is_failed_quoting_the_first_trace():
    """Was: stored ok, its launch wall time as the runtime, an empty result database."""
    stderr = (OUTPUTS / "ffindex-apply-misspelled-command.stderr").read_text()
    assert classify({**BASE, "stderr": stderr}, 60) == (
        "failed", "exit 0, but the program's own processes crashed (10 crash traces in its "
                  "output), the first: [vm:02020] *** Process received signal *** Signal: "
                  "Aborted (6)")
    assert sum("Segmentation fault (11)" in t for t in crash_traces(stderr)) == 2


def test_interleaved_traces_are_each_read_by_their_own_process_tag():
    stderr = ("[n1:7] *** Process received signal ***\n[n1:8] *** Process received signal ***\n"
              "[n1:8] [n1:7] Signal: Aborted (6)\n[n1:8] Signal: Bus error (7)\n")
    assert crash_traces(stderr) == ["[n1:7] *** Process received signal *** Signal: Aborted (6)",
                                    "[n1:8] *** Process received signal *** Signal: Bus error (7)"]


@pytest.mark.parametrize("trace", [
    OPAL.format(pid=4242),
    "Program received signal SIGSEGV: Segmentation fault - invalid memory reference.\n\n"
    "Backtrace for this error:\n#0  0x7f3a in ???\n",
    "*** Error in `./app': free(): invalid pointer: 0x0000000001b2c010 ***\n"
    "======= Backtrace: =========\n/lib/libc.so.6(+0x777e5)[0x7f1c]\n",
    "Fatal Python error: Segmentation fault\n\nCurrent thread 0x00007f1c (most recent call "
    "first):\n  File \"helper.py\", line 3 in <module>\n",
    "forrtl: severe (174): SIGSEGV, segmentation fault occurred\nImage              PC     "
    "           Routine            Line        Source\n",
])
def test_each_runtimes_crash_trace_twice_fails_the_run_once_does_not(trace):
    assert helper_crashes("result: 0\n", trace + trace).startswith(
        "exit 0, but the program's own processes crashed (2 crash traces in its output), the "
        f"first: {trace.splitlines()[0]}")
    # one crash may be a child crashed on purpose, or one the program retried
    assert helper_crashes("result: 0\n", trace) == ""
    assert helper_crashes(trace, trace)  # one on each stream


@pytest.mark.parametrize("stdout", [
    "SIGSEGV handler installed\nstep 1\nstep 2\n" * 3,
    "Run summary: 0 segfaults, 0 aborts\n" * 3,
    "Segmentation fault test: PASSED\nBus error test: PASSED\nSegmentation fault test: PASSED\n",
    "caught signal 11 (Segmentation fault) in the probe, recovered\n" * 3,
    # the openings without the lines that make them a trace
    "*** Process received signal ***\nhandler test ok\n" * 3,
    "Program received signal SIGSEGV: handled by the test harness\n" * 3,
    "Fatal Python error: Segmentation fault\nis what the docs say\n" * 3,
    "line 3: segfault in the input deck ignored\n" * 3,
])
def test_a_good_run_that_mentions_a_signal_stays_ok(stdout):
    assert classify({**BASE, "stdout": stdout, "stderr": stdout}, 60) == ("ok", "")


# Forks helpers that each crash on a null pointer, with a handler printing Open MPI's trace
# shape (as ffindex_apply_mpi's forked children, which inherit Open MPI's), then exits 0.
CRASHING_HELPERS = r"""
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
static void trace(int sig) {
    fprintf(stderr, "[n1:%d] *** Process received signal ***\n[n1:%d] Signal: %s (%d)\n"
            "[n1:%d] *** End of error message ***\n", getpid(), getpid(), strsignal(sig), sig,
            getpid());
    signal(sig, SIG_DFL);  /* returning re-runs the faulting access: a real crash */
}
int main(void) {
    for (int i = 0; i < 3; i++) {
        if (fork() == 0) { signal(SIGSEGV, trace); volatile int *p = 0; return *p; }
        wait(NULL);
    }
    printf("processed 3 entries\n");
    return 0;
}
"""


#: A wrapper picking the fastest build this CPU runs: each probe of a missing CPU feature dies
#: of SIGILL, which bash reports, and the generic build runs fine (s46 review RV7).
PROBING_WRAPPER = """#!/bin/bash
./probe.sh avx512 && exec ./app_avx512 "$@"
./probe.sh avx2 && exec ./app_avx2 "$@"
echo "app generic build: n=$1"
echo "Elapsed: 0.005 s"
"""


def test_bashs_reports_of_killed_probes_in_a_wrapper_that_went_on_keep_the_run_ok(tmp_path):
    """Was (s46 review RV7): bash's two reports, no trace with a confirming line, failed
    this good run: "exit 0, but the program's own processes crashed (2 crash traces ...)"."""
    (tmp_path / "probe.sh").write_text("#!/bin/bash\nkill -ILL $$\n")
    (tmp_path / "run.sh").write_text(PROBING_WRAPPER)
    for script in ("probe.sh", "run.sh"):
        (tmp_path / script).chmod(0o755)
    done = subprocess.run(["./run.sh", "8"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0 and "Elapsed: 0.005 s" in done.stdout, done
    assert done.stderr.count("Illegal instruction") == 2, done.stderr  # bash's own reports
    result = {**BASE, "stdout": done.stdout, "stderr": done.stderr}
    assert classify(result, 60) == ("ok", "")
    # the same reports from every rank's wrapper, and a segfault's, too
    segfault = "./run.sh: line 3:  4242 Segmentation fault      (core dumped) ./helper in.dat\n"
    assert helper_crashes(done.stdout, done.stderr * 4 + segfault * 2) == ""


@pytest.mark.mpi
def test_a_sweep_fails_a_program_whose_helpers_segfaulted_under_exit_0(tmp_path):
    if shutil.which("cc") is None:
        pytest.skip("no C compiler")
    (tmp_path / "helpers.c").write_text(CRASHING_HELPERS)
    subprocess.run(["cc", "-o", str(tmp_path / "helpers"), str(tmp_path / "helpers.c")],
                   check=True, timeout=120)
    out = tmp_path / "h.h5"
    proc = run_cli(["sweep", "--command", str(tmp_path / "helpers"), "--label", "helpers",
                    "--sizes", "1", "--ranks-per-node", "1", "--min-time", "0", "--no-progress",
                    "--out", str(out)], timeout=120, cwd=str(tmp_path))
    row = telemetry.read_runs(out).iloc[0]
    # before: ok, its launch wall time as the runtime
    assert row.status == "failed", (row, proc.stderr)
    assert row.error.startswith("exit 0, but the program's own processes crashed (3 crash "
                                "traces in its output), the first: [n1:"), row.error
    assert row.error.endswith("*** Process received signal *** Signal: Segmentation fault (11)")
