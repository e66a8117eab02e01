"""The ranks' numbers from Slurm's accounting, for ranks that ran under slurmstepd."""

from __future__ import annotations

import math
import sys

import pytest

from hpcds1mpi.measure.slurm_accounting import cpu_seconds, memory_mb
from hpcds1mpi.records import telemetry
from tests.helpers import hpcds1mpi_exe


@pytest.mark.parametrize("text, mb", [("16188K", 16188 / 1024), ("1.5G", 1536.0),
                                      ("128988", 128988 / 1024), ("0", 0.0), ("", math.nan)])
def test_maxrss_is_read_in_mb(text, mb):
    assert memory_mb(text) == pytest.approx(mb, nan_ok=True)


@pytest.mark.parametrize("text, seconds", [("00:00.085", 0.085), ("01:02:03", 3723.0),
                                           ("1-00:00:01", 86401.0), ("02:03", 123.0),
                                           ("", math.nan)])
def test_totalcpu_is_read_in_seconds(text, seconds):
    assert cpu_seconds(text) == pytest.approx(seconds, nan_ok=True)


@pytest.mark.slurm
def test_srun_launched_ranks_are_measured_from_slurm_accounting(slurm, tmp_path):
    """Was (s28 tester U): inside an allocation the launch's tree held only srun, whose 10 MB
    and 0.05 s were recorded as the program's (psutil, "largest process of the launch")."""
    if not slurm.accounting:
        pytest.skip("this Slurm keeps no accounting (no slurmdbd): sacct cannot answer")
    app = tmp_path / "app.py"
    app.write_text("import time\nheld = b'x' * (120 * 2**20)\nt = time.time()\n"
                   "while time.time() - t < 2.5: pass\n")
    out, log, script = tmp_path / "t.h5", tmp_path / "job.out", tmp_path / "job.sh"
    script.write_text("\n".join([
        "#!/bin/bash", "#SBATCH -N1 -n1", "#SBATCH --time=3", f"#SBATCH --output={log}",
        f"{hpcds1mpi_exe()} sweep --command '{sys.executable} {app}' --label app --sizes 1 "
        "--nodes 1 --ranks-per-node 1 --threads 1 --precisions fp64 --launcher srun "
        f"--min-repeats 1 --max-repeats 1 --min-time 0 --out {out} --no-progress", ""]))
    _, state, text = slurm.run_job(lambda: slurm.sbatch(script, cwd=tmp_path), log, timeout=180)
    assert state == "COMPLETED", text or state
    row = telemetry.read_runs(out).iloc[0]
    assert row["status"] == "ok", row["error"]
    assert row["peak_rss_source"] == "slurm accounting (sacct MaxRSS)", row["peak_rss_source"]
    assert 110 < row["peak_rss_mb"] < 400 and row["cpu_s"] > 1.5, (row["peak_rss_mb"],
                                                                    row["cpu_s"])
