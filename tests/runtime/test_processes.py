"""Process groups: a launch is ended as a whole, even what ignores SIGTERM."""

from __future__ import annotations

import os
import subprocess
import time

from hpcds1mpi.runtime.processes import end_group


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie is dead for our purpose
    with open(f"/proc/{pid}/stat") as fh:
        return fh.read().split()[2] != "Z"


def test_end_group_ends_the_leader_and_a_child_that_ignores_sigterm(tmp_path):
    pids = tmp_path / "child"
    proc = subprocess.Popen(["sh", "-c", f"trap '' TERM; sleep 60 & echo $! > {pids}; wait"],
                            start_new_session=True)
    deadline = time.monotonic() + 10
    while not (pids.exists() and pids.read_text().strip()) and time.monotonic() < deadline:
        time.sleep(0.02)
    child = int(pids.read_text())
    start = time.monotonic()
    end_group(proc, grace_s=0.5)
    assert proc.poll() is not None and time.monotonic() - start < 8
    deadline = time.monotonic() + 5
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not _alive(child)


def test_end_group_of_a_finished_launch_is_quiet():
    proc = subprocess.Popen(["true"], start_new_session=True)
    proc.wait()
    end_group(proc)  # no group left: nothing to do, nothing raised
