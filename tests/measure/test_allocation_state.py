"""A launch that failed because its Slurm allocation ended is interrupted, not failed."""

from __future__ import annotations

import subprocess
import sys

import pytest

from hpcds1mpi.measure.allocation_state import allocation_end
from hpcds1mpi.records import telemetry
from tests.helpers import hpcds1mpi_exe


def test_outside_an_allocation_nothing_ended():
    assert allocation_end({"PATH": "/usr/bin:/bin"}) == ""


@pytest.mark.slurm
def test_a_cancelled_allocation_stops_the_sweep_with_the_run_interrupted(slurm, tmp_path):
    """Was (s28 tester U): `scancel` of the sweep's salloc recorded the run `failed` (with a
    line of Open MPI's help text as its reason), learnt by train, and the sweep went on."""
    out = tmp_path / "c.h5"
    command = "sh -c 'scancel $SLURM_JOB_ID; sleep 3; exit 3' size-{size}"  # $0: two sizes
    proc = subprocess.run(
        ["salloc", "-N1", "-n1", "-J", "hpcds1mpi-cancel", "--time=3", hpcds1mpi_exe(), "sweep",
         "--command", command, "--label", "c", "--sizes", "1,2", "--nodes", "1",
         "--ranks-per-node", "1", "--threads", "1", "--precisions", "fp64", "--launcher",
         "srun", "--min-repeats", "1", "--max-repeats", "1", "--out", str(out),
         "--no-progress"], capture_output=True, text=True, timeout=120, env=slurm.env,
        cwd=tmp_path, stdin=subprocess.DEVNULL)
    lines = [ln for ln in proc.stderr.splitlines() if "error:" in ln]
    assert proc.returncode != 0 and len(lines) == 1, proc.stderr
    assert "was cancelled" in lines[0] and "--resume inside a new allocation" in lines[0]
    runs = telemetry.read_runs(out)
    assert list(runs["status"]) == ["interrupted"], runs[["status", "error"]]
    assert sys.executable  # the sweep ran this Python's hpcds1mpi
