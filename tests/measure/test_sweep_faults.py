"""Faults: random kill -9 with resume, timeouts, a raising rank, wrong results, unsupported
precisions, a crashed run retried, and a concurrent writer."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import time
from pathlib import Path

import h5py
import pytest

from hpcds1mpi.measure import sweep
from hpcds1mpi.records import telemetry
from hpcds1mpi.cluster import Partition
from tests.helpers import REPO, hpcds1mpi_exe, mpiexec, run_cli

FAULTS = str(REPO / "tests" / "fault_kernels.py")

pytestmark = pytest.mark.mpi


def _popen(nranks: int, args: list[str], env: dict | None = None) -> subprocess.Popen:
    return subprocess.Popen([mpiexec(), "-n", str(nranks), hpcds1mpi_exe(), "sweep", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True, env={**os.environ, **(env or {})})


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # mpiexec and every rank, at once
    except ProcessLookupError:
        pass
    proc.communicate(timeout=30)


def _finished(path: Path) -> dict:
    df = telemetry.read_runs(path)
    return {r.run_id: r.status for r in df.itertuples() if r.status != "crashed"}


def test_twenty_random_kills_lose_nothing_and_never_duplicate(tmp_path):
    out = tmp_path / "t.h5"
    # 4..128 ms: enough work that the plan is not done before the last kill on a fast machine.
    sizes = "4..128"
    args = ["--kernel-module", FAULTS, "--kernel", "fault_sleep", "--sizes", sizes,
            "--ranks-per-node", "1,2", "--threads", "1", "--precisions", "fp64,fp32",
            "--min-time", "0", "--max-repeats", "1", "--warmup", "1", "--out", str(out),
            "--resume", "--no-progress", "--snapshot-every", "0"]
    from hpcds1mpi import kernels

    kernels.load_plugin(FAULTS)
    doc = {"sweep": {"sizes": sizes, "ranks_per_node": "1,2", "threads": "1",
                     "precisions": "fp64,fp32"}, "kernel": [{"name": "fault_sleep"},
                                                              {"name": "fault_wrong"}]}
    args[3] = "fault_sleep,fault_wrong"
    expected = {r.run_id for r in sweep.build_plan(doc, Partition("p", 2, 8.0)).runs}
    rng = random.Random(1234)
    finished_before: dict = {}
    kills_mid_write = 0
    for kill in range(20):
        # Odd kills land inside the n-th snapshot write of this launch: the writer holds each
        # snapshot half-written for 50 ms so the poll below sees it on a fast machine too.
        proc = _popen(2, args, {"HPCDS1MPI_TEST_SNAPSHOT_PAUSE": "0.05"} if kill % 2 else None)
        if kill % 2:
            target, seen, was_there = rng.randint(1, 4), 0, False
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline and proc.poll() is None:
                there = bool(list(tmp_path.glob(".t.h5.tmp-*")))
                if there and not was_there:
                    seen += 1
                    if seen == target:
                        kills_mid_write += 1
                        break
                was_there = there
                time.sleep(0.0002)
        else:
            time.sleep(rng.uniform(0.5, 3.0))
        _kill_group(proc)
        if not out.exists():  # killed before the writer created it: nothing ran yet
            assert not finished_before
            continue
        with h5py.File(out, "r") as f:  # the snapshot itself always opens
            assert f.attrs["schema_version"] == telemetry.SCHEMA_VERSION
        finished = _finished(out)
        lost = set(finished_before) - set(finished)
        assert not lost, f"kill {kill}: lost finished runs {lost}"
        assert all(finished[k] == v for k, v in finished_before.items())
        finished_before = finished
    assert kills_mid_write >= 5
    assert len(finished_before) >= 10  # the kills landed while runs were being finished
    proc = _popen(2, args)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err.decode()[-2000:]
    df = telemetry.read_runs(out)
    assert len(df) == len(expected) and set(df["run_id"]) == expected  # each exactly once
    assert set(finished_before) <= set(df["run_id"])
    with h5py.File(out, "r") as f:  # exactly once in the file itself, not only after reading
        ids = [x.decode() for x in f["runs/run_id"][()]]
    assert len(ids) == len(set(ids)) == len(expected)
    assert set(df["status"]) <= {"ok", "wrong", "crashed"}
    assert (df[df["workload"] == "fault_wrong"]["status"].isin(["wrong", "crashed"])).all()
    assert not telemetry.journal_path(out).exists() and not telemetry.lock_path(out).exists()


def test_timeout_raise_wrong_unsupported_and_the_sweep_goes_on(tmp_path):
    """Run under the supervisor: a hang inside MPI is recorded as timeout, a rank that raises
    alone makes its run failed, a wrong result is `wrong`, bf16 is `unsupported`; every other
    configuration (before and after them) is ok."""
    out = tmp_path / "t.h5"
    plan = tmp_path / "plan.toml"
    plan.write_text("""
[sweep]
min_time = 0.0
max_repeats = 2
timeout = 4
ranks_per_node = [1, 2]
threads = [1]

[[kernel]]
name = "fault_hang"
sizes = [5, 1000]
precisions = ["fp64"]

[[kernel]]
name = "fault_raise"
sizes = [5]
precisions = ["fp64"]

[[kernel]]
name = "fault_raise_all"
sizes = [5]
precisions = ["fp64"]

[[kernel]]
name = "fault_wrong"
sizes = [5]
precisions = ["fp64"]

[[kernel]]
name = "fault_sleep"
sizes = [5]
precisions = ["fp64", "bf16"]
""")
    proc = run_cli(["sweep", "--launch", "2", "--plan", str(plan), "--out", str(out),
                    "--kernel-module", FAULTS, "--no-progress"], timeout=240)
    assert proc.returncode == 0, proc.stderr[-3000:]
    df = telemetry.read_runs(out)
    status = {(r.workload, int(r.size), int(r.ranks), r.precision): r.status
              for r in df.itertuples()}
    errors = {(r.workload, int(r.size), int(r.ranks), r.precision): r.error
              for r in df.itertuples()}
    assert len(df) == 14
    assert status[("fault_hang", 5, 1, "fp64")] == "ok"
    assert status[("fault_hang", 1000, 1, "fp64")] == "timeout"
    assert status[("fault_hang", 1000, 2, "fp64")] == "timeout"  # rank 0 hung inside MPI
    assert "timeout" in errors[("fault_hang", 1000, 2, "fp64")]
    assert status[("fault_raise", 5, 1, "fp64")] == "ok"
    assert status[("fault_raise", 5, 2, "fp64")] == "failed"
    assert "injected failure" in errors[("fault_raise", 5, 2, "fp64")]
    for ranks in (1, 2):  # every rank raising: failed through the runner, no abort needed
        assert status[("fault_raise_all", 5, ranks, "fp64")] == "failed"
        assert errors[("fault_raise_all", 5, ranks, "fp64")].startswith(
            "RuntimeError: injected failure on every rank (rank 0)")
    assert status[("fault_wrong", 5, 1, "fp64")] == "wrong"
    assert status[("fault_wrong", 5, 2, "fp64")] == "wrong"
    assert "relative error" in errors[("fault_wrong", 5, 2, "fp64")]
    assert status[("fault_sleep", 5, 1, "bf16")] == "unsupported"
    assert status[("fault_sleep", 5, 2, "bf16")] == "unsupported"
    assert status[("fault_sleep", 5, 1, "fp64")] == "ok"  # after all the faults: continued
    assert status[("fault_sleep", 5, 2, "fp64")] == "ok"
    # Exactly three launches died: the two hangs (watchdog abort) and the lone raising rank.
    assert proc.stderr.count("resuming") == 3, proc.stderr


def test_crashed_run_is_recorded_then_skipped_or_retried(tmp_path):
    out = tmp_path / "t.h5"
    args = ["--kernel-module", FAULTS, "--kernel", "fault_sleep", "--sizes", "5,3000",
            "--ranks-per-node", "1", "--threads", "1", "--precisions", "fp64",
            "--min-time", "0", "--max-repeats", "1", "--warmup", "0", "--out", str(out),
            "--no-progress"]
    proc = _popen(1, args)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # wait until the 3 s run has started, then kill
        if telemetry.journal_path(out).exists() and b"3000" in \
                telemetry.journal_path(out).read_bytes().split(b'"event": "start"')[-1]:
            break
        time.sleep(0.05)
    time.sleep(0.3)
    _kill_group(proc)
    df = telemetry.read_runs(out).set_index("size")
    assert df.loc[5, "status"] == "ok" and df.loc[3000, "status"] == "crashed"
    proc = _popen(1, args + ["--resume"])
    assert proc.wait(timeout=60) == 0
    df = telemetry.read_runs(out).set_index("size")
    assert df.loc[3000, "status"] == "crashed"  # skipped by default
    proc = _popen(1, args + ["--resume", "--retry-crashed", "--max-repeats", "1"])
    assert proc.wait(timeout=60) == 0
    df = telemetry.read_runs(out).set_index("size")
    assert df.loc[3000, "status"] == "ok" and df.loc[3000, "attempt"] == 2
    assert len(df) == 2


def test_concurrent_writer_gets_lock_error(tmp_path):
    out = tmp_path / "t.h5"
    first = _popen(1, ["--kernel-module", FAULTS, "--kernel", "fault_sleep", "--sizes",
                       "400,401,402,403", "--ranks-per-node", "1", "--threads", "1",
                       "--precisions", "fp64", "--min-time", "0", "--max-repeats", "1",
                       "--out", str(out), "--no-progress"])
    deadline = time.monotonic() + 60
    while not telemetry.writer_alive(out) and time.monotonic() < deadline:
        time.sleep(0.05)
    second = run_cli(["sweep", "--kernel-module", FAULTS, "--kernel", "fault_sleep", "--sizes",
                      "1", "--ranks-per-node", "1", "--threads", "1", "--out", str(out),
                      "--resume", "--no-progress"], timeout=60)
    assert second.returncode != 0
    assert "being written by another process" in second.stderr
    assert len(second.stderr.strip().splitlines()) == 1
    _, err = first.communicate(timeout=120)
    assert first.returncode == 0, err.decode()[-2000:]
    df = telemetry.read_runs(out)
    assert sorted(df["size"]) == [400, 401, 402, 403] and (df["status"] == "ok").all()
