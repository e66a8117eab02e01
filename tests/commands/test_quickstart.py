"""The README's main job, end to end: quickstart on this machine (real mpiexec sweep)."""

from __future__ import annotations

import json
import subprocess

import pytest

from hpcds1mpi import kernels
from hpcds1mpi.records import telemetry
from hpcds1mpi.commands.quickstart import UNMEASURED_INDEX, UNMEASURED_WORKLOAD
from tests.helpers import run_cli


@pytest.mark.slow
def test_quickstart_measures_trains_recommends_and_writes_a_script(tmp_path):
    out = tmp_path / "qs"
    proc = run_cli(["quickstart", "--out", str(out)], timeout=900)
    assert proc.returncode == 0, proc.stderr[-2000:]
    for name in ("telemetry.h5", "model", "job.sbatch", "pareto.png", "recommendation.json"):
        assert (out / name).exists(), name
    runs = telemetry.read_runs(out / "telemetry.h5")
    assert (runs["status"] == "ok").mean() > 0.9
    size = kernels.get(UNMEASURED_WORKLOAD).default_sizes[UNMEASURED_INDEX]
    measured = set(runs[runs["workload"] == UNMEASURED_WORKLOAD]["size"])
    assert size not in measured and min(measured) < size < max(measured)
    rec = json.loads((out / "recommendation.json").read_text())
    assert rec["workload"] == UNMEASURED_WORKLOAD and rec["size"] == size
    script = (out / "job.sbatch").read_text()
    assert "#SBATCH --nodes=" in script and f"--size {size}" in script
    subprocess.run(["bash", "-n", str(out / "job.sbatch")], check=True)
    assert (out / "pareto.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "where everything is" in proc.stdout
