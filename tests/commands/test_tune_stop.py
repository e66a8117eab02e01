"""A stopped tune says what it kept and ends its trial launch (s33 tester C6, C9): real tune
runs under mpiexec, stopped while a trial's sweep runs."""

from __future__ import annotations

import os
import signal
import subprocess
import time

import pytest

from tests.helpers import hpcds1mpi_exe, mpiexec


def _sweeps_writing(out) -> list[int]:
    """PIDs of the processes whose command line writes ``out`` (the trials' sweeps)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                argv = fh.read().split(b"\0")
            with open(f"/proc/{pid}/stat") as fh:
                zombie = fh.read().rsplit(")", 1)[1].split()[0] == "Z"
        except OSError:
            continue
        if b"sweep" in argv and os.fsencode(str(out)) in argv and not zombie:
            found.append(int(pid))
    return found


@pytest.mark.parametrize("signum, code, words", [
    (signal.SIGTERM, 1, "SIGTERM"), (signal.SIGINT, 130, "Ctrl-C (SIGINT)")])
def test_a_stopped_tune_says_what_is_kept_and_its_trial_launch_ends(tmp_path, signum, code,
                                                                     words):
    """SIGTERM had ended tune with a silent 143 and its `mpiexec ... sweep` went on writing a
    run after tune was gone; Ctrl-C said only "aborted"."""
    out = tmp_path / "v.h5"
    env = {**os.environ, "PATH": f"{os.path.dirname(mpiexec())}:{os.environ['PATH']}"}
    proc = subprocess.Popen(
        [hpcds1mpi_exe(), "tune", "--kernel", "gemm", "--size", "256", "--out", str(out),
         "--budget", "20", "--launcher", "mpiexec", "--min-time", "2"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 120
    while not _sweeps_writing(out) and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.1)
    assert _sweeps_writing(out), "no trial sweep started"
    time.sleep(1.0)  # the trial's sweep is under way
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == code, err
    assert err.strip().splitlines()[-1] == (
        f"hpcds1mpi: error: {out}: stopped by {words} while writing the tune's telemetry; the "
        "runs measured so far are kept there; rerun tune with the same --out to continue")
    assert _sweeps_writing(out) == []


def test_a_tune_killed_by_sigkill_leaves_no_trial_launch(tmp_path):
    """kill -9 of tune had left its trial's `mpiexec ... sweep` and ranks writing --out (s33
    tester C5): a trial runs in its own group that dies with tune."""
    out = tmp_path / "v.h5"
    env = {**os.environ, "PATH": f"{os.path.dirname(mpiexec())}:{os.environ['PATH']}"}
    proc = subprocess.Popen(
        [hpcds1mpi_exe(), "tune", "--kernel", "gemm", "--size", "512", "--out", str(out),
         "--budget", "20", "--launcher", "mpiexec", "--min-repeats", "2000",
         "--max-repeats", "2000"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    deadline = time.monotonic() + 120
    while not _sweeps_writing(out) and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.1)
    assert _sweeps_writing(out), "no trial sweep started"
    time.sleep(1.0)
    proc.kill()
    proc.wait()
    deadline = time.monotonic() + 10  # the trial alone measures for about a minute
    while _sweeps_writing(out) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = _sweeps_writing(out)
    for pid in left:  # do not leave them to the next test
        os.kill(pid, signal.SIGKILL)
    assert left == []
