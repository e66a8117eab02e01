"""The watchdog and the guarded kernel: a hang inside MPI is recorded ``timeout``, a rank that
raises alone makes its run ``failed``, and the sweep goes on (under the supervisor)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from hpcds1mpi.measure.watchdog import TIMEOUT_EXIT_CODE, GuardedKernel
from hpcds1mpi.records import telemetry
from tests.helpers import REPO, run_cli

FAULTS = str(REPO / "tests" / "fault_kernels.py")


@pytest.mark.mpi
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
    # it hung in its warm-up: the limit says nothing of one run (s41 tester D16)
    assert "no measured repeat begun: no bound on one run" in \
        errors[("fault_hang", 1000, 1, "fp64")]
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


# A fake writer and communicator: the watchdog's abort path ends the process, so it runs in a
# child process that reports what was recorded and aborted through its files and exit code.
FIRE_SCRIPT = """
import json, sys, time
from hpcds1mpi.measure.watchdog import Watchdog

class Writer:
    def record(self, row, detail):
        open(sys.argv[1], "w").write(json.dumps(row))
    def snapshot(self):
        open(sys.argv[1] + ".snap", "w").write("done")

class Comm:
    def Abort(self, code):
        open(sys.argv[1] + ".abort", "w").write(str(code))

row = {"run_id": "r", "workload": "w", "size": 7, "nodes": 1, "ranks_per_node": 2,
       "threads": 1, "device": "cpu", "precision": "fp64", "status": "crashed"}
dog = Watchdog(Writer(), Comm())
dog.arm(dict(row, size=1), 0.2)
time.sleep(0.05)
assert dog.disarm()  # in time: nothing recorded
time.sleep(0.4)
dog.arm(row, 0.2)
time.sleep(5)
print("not aborted")
"""


def test_watchdog_records_timeout_then_aborts(tmp_path):
    script = tmp_path / "fire.py"
    script.write_text(FIRE_SCRIPT)
    record = tmp_path / "row.json"
    proc = subprocess.run([sys.executable, str(script), str(record)], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == TIMEOUT_EXIT_CODE, proc.stderr
    import json

    row = json.loads(record.read_text())
    assert row["status"] == "timeout" and row["size"] == 7 and "0.2 s timeout" in row["error"]
    assert (tmp_path / "row.json.snap").exists()
    assert (tmp_path / "row.json.abort").read_text() == str(TIMEOUT_EXIT_CODE)
    assert "w size 7" in proc.stderr and "timed out after 0.2 s" in proc.stderr
    assert "not aborted" not in proc.stdout


class _Raising:
    name = "raising"

    def setup(self, ctx, size):
        return size

    def run(self, ctx, state):
        raise ValueError("broken input")

    def check(self, ctx, state, result):
        return 0.0


def test_guarded_kernel_passes_an_exception_every_rank_raised():
    """On COMM_SELF every rank (the one) raised: the exception goes on to the runner."""
    from hpcds1mpi.runtime.mpi import get_mpi

    self_comm = get_mpi().COMM_SELF
    errcomm = self_comm.Dup()
    try:
        guarded = GuardedKernel(_Raising(), errcomm, "unused.h5", "r", self_comm, agree_s=5.0)
        assert guarded.name == "raising" and guarded.setup(None, 3) == 3
        with pytest.raises(ValueError, match="broken input"):
            guarded.run(None, 3)
    finally:
        errcomm.Free()


ALONE_SCRIPT = """
import sys
from hpcds1mpi.measure.watchdog import GuardedKernel

class Never:  # the other ranks never raise: the barrier never completes
    def Ibarrier(self):
        return self
    def Test(self):
        return False

class Comm:
    def Get_rank(self):
        return 3
    def Abort(self, code):
        open(sys.argv[1] + ".abort", "w").write(str(code))

class Kernel:
    def run(self, ctx, state):
        raise RuntimeError("only here")

GuardedKernel(Kernel(), Never(), sys.argv[1], "run-1", Comm(), agree_s=0.1).run(None, None)
print("not aborted")
"""


def test_guarded_kernel_failing_alone_leaves_a_note_and_aborts(tmp_path):
    script = tmp_path / "alone.py"
    script.write_text(ALONE_SCRIPT)
    out = tmp_path / "t.h5"
    proc = subprocess.run([sys.executable, str(script), str(out)], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 1, proc.stderr
    assert telemetry.read_fault_notes(out) == {"run-1": "rank 3: RuntimeError: only here"}
    assert (tmp_path / "t.h5.abort").read_text() == "1"
    assert "rank 3 failed alone" in proc.stderr and "not aborted" not in proc.stdout
