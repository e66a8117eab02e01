"""Process groups: a launch is ended as a whole, even what ignores SIGTERM."""

from __future__ import annotations

import os
import signal
import subprocess
import time

import pytest

from hpcds1mpi.runtime.processes import children_end_first, end_group, run_child


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie is dead for our purpose; one reaped between the two looks is gone (this
    # helper raised FileNotFoundError in session 36's CI, the process having ended)
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split()[2] != "Z"
    except FileNotFoundError:
        return False


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


# -- a child command that dies with its parent; the children of one that did not start them so


def _wait_for(path, timeout: float = 20.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().strip():
            return path.read_text().strip()
        time.sleep(0.02)
    raise AssertionError(f"{path} never written")


def _gone(pid: int, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not _alive(pid)


def test_run_child_group_dies_with_a_parent_killed_by_sigkill(tmp_path):
    """s33 tester C5: kill -9 of quickstart left its mpiexec, sweep ranks and train running;
    a child of run_child (and what it started) ends with its parent."""
    import sys
    import textwrap

    from tests.helpers import mpiexec

    pids = tmp_path / "rank"
    code = textwrap.dedent(f"""
        from hpcds1mpi.runtime.processes import run_child
        run_child([{mpiexec()!r}, "-n", "1", "sh", "-c", "echo $$ > {pids}; exec sleep 60"])
    """)
    parent = subprocess.Popen([sys.executable, "-c", code])
    grandchild = int(_wait_for(pids))
    parent.kill()
    parent.wait()
    assert _gone(grandchild)


def test_run_child_returns_what_subprocess_run_returns():
    proc = run_child(["sh", "-c", "echo out; echo err >&2; exit 3"])
    assert (proc.returncode, proc.stdout, proc.stderr) == (3, "out\n", "err\n")


def test_run_child_past_its_time_limit_ends_its_group(tmp_path):
    pids = tmp_path / "grandchild"
    with pytest.raises(subprocess.TimeoutExpired):
        run_child(["sh", "-c", f"sleep 60 & echo $! > {pids}; wait"], timeout=1.0)
    assert _gone(int(pids.read_text()))


def test_sigterm_inside_children_end_first_ends_a_child_subprocess_run_started(tmp_path):
    """s33 tester C6: tune's trial sweeps run under subprocess.run, which SIGKILLs only the
    launcher when interrupted: its ranks went on. The launcher gets SIGTERM and its time."""
    import sys
    import textwrap

    pids = tmp_path / "grandchild"
    code = textwrap.dedent(f"""
        import subprocess
        from hpcds1mpi.runtime.processes import children_end_first
        from hpcds1mpi.writers import catch_sigterm
        catch_sigterm("out.h5", "telemetry", "kept")
        with children_end_first():
            subprocess.run(["sh", "-c", "trap 'kill $c; exit 0' TERM; sleep 60 & c=$!; "
                            "echo $c > {pids}; wait"])
    """)
    parent = subprocess.Popen([sys.executable, "-c", code], stderr=subprocess.PIPE, text=True)
    grandchild = int(_wait_for(pids))
    parent.send_signal(signal.SIGTERM)
    _, err = parent.communicate(timeout=30)
    assert parent.returncode == 1
    assert err.strip() == ("hpcds1mpi: error: out.h5: stopped by SIGTERM while writing the "
                           "telemetry; kept")
    assert _gone(grandchild)


def test_children_end_first_gives_back_the_handlers_it_found():
    before = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)
    with children_end_first():
        assert signal.getsignal(signal.SIGTERM) is not before[0]
    assert (signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)) == before
