"""The ranks' numbers from Slurm's accounting, for ranks that ran under slurmstepd."""

from __future__ import annotations

import math
import os
import subprocess
import sys

import pytest

from tests.helpers import logging_command as _fake

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
    # 2 s of its own CPU time, not of the wall: the test machine's cores are shared.
    app.write_text("import time\nheld = b'x' * (120 * 2**20)\n"
                   "while time.process_time() < 2.0: pass\n")
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


def _launch_under_fake_srun(tmp_path, accounting, env):
    """One launch whose tree shows only a (fake) srun: its ranks ran under slurmstepd."""
    from hpcds1mpi.measure.program_launch import launch_once

    return launch_once(["srun", "./app"], env, 30, program="./app", accounting=accounting)


def test_a_finished_step_without_maxrss_gives_its_cpu_time_in_one_call(tmp_path):
    """Was (s28 tester Z5): a step shorter than Slurm's first memory sample never gets a
    MaxRSS; the read polled sacct every 0.25 s for 5 s (a mark before the launch besides), then
    recorded memory and CPU NaN, "sacct gave no numbers"."""
    from hpcds1mpi.measure.slurm_accounting import StepAccounting

    bin_dir, log = tmp_path / "bin", tmp_path / "sacct.log"
    _fake(bin_dir, "srun", "sleep 0.2", tmp_path / "srun.log")
    _fake(bin_dir, "sacct", 'echo "77.0|$(date +%s)|COMPLETED||00:01.500|1"', log)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "SLURM_JOB_ID": "77"}
    result = _launch_under_fake_srun(tmp_path, StepAccounting("77", env), env)
    assert result["cpu_s"] == pytest.approx(1.5, abs=0.2), result["rss_source"]
    assert math.isnan(result["rss_mb"]) and "first memory sample" in result["rss_source"]
    assert len(log.read_text().splitlines()) == 1  # no mark, no polling of a final record


def test_a_sacct_that_does_not_answer_is_said_once_and_not_asked_again(tmp_path, monkeypatch):
    """Was (s28 tester Z5): a hung sacct cost its 15 s timeout before and after every launch,
    silently."""
    from hpcds1mpi.measure import slurm_accounting

    monkeypatch.setattr(slurm_accounting, "SACCT_TIMEOUT_S", 0.5)
    bin_dir, log = tmp_path / "bin", tmp_path / "sacct.log"
    _fake(bin_dir, "srun", "sleep 0.2", tmp_path / "srun.log")
    _fake(bin_dir, "sacct", "exec sleep 30", log)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "SLURM_JOB_ID": "77"}
    accounting, notes = slurm_accounting.StepAccounting("77", env), []
    accounting.say = notes.append
    sources = [_launch_under_fake_srun(tmp_path, accounting, env)["rss_source"]
               for _ in range(3)]
    assert len(log.read_text().splitlines()) == 1, log.read_text()
    assert notes == ["note: sacct did not answer in 0.5 s: memory and CPU of ranks under srun "
                     "are not measured for the rest of this sweep"]
    assert all("sacct did not answer" in source for source in sources), sources


@pytest.mark.slurm
def test_a_short_srun_step_gives_its_cpu_time_from_few_sacct_calls(slurm, tmp_path):
    """Was (s28 tester Z5): in an salloc, a 1-launch sweep of a short program made 16 sacct
    calls and recorded memory and CPU NaN ("sacct gave no numbers"): the step's final record
    has no MaxRSS, which the read waited for."""
    if not slurm.accounting:
        pytest.skip("this Slurm keeps no accounting (no slurmdbd): sacct cannot answer")
    import shutil

    bin_dir, log = tmp_path / "bin", tmp_path / "sacct.log"
    _fake(bin_dir, "sacct", f'exec {shutil.which("sacct", path=slurm.env.get("PATH"))} "$@"',
          log)
    out = tmp_path / "s.h5"
    proc = subprocess.run(
        ["salloc", "-N1", "-n1", "-J", "hpcds1mpi-short", "--time=3", "env",
         f"PATH={bin_dir}:{slurm.env['PATH']}", hpcds1mpi_exe(), "sweep", "--command",
         "sh -c 'exit 3' size-{size}", "--label", "s", "--sizes", "1", "--nodes", "1",
         "--ranks-per-node", "1", "--threads", "1", "--precisions", "fp64", "--launcher",
         "srun", "--min-repeats", "1", "--max-repeats", "1", "--out", str(out),
         "--no-progress"], capture_output=True, text=True, timeout=120, env=slurm.env,
        cwd=tmp_path, stdin=subprocess.DEVNULL)
    row = telemetry.read_runs(out).iloc[0]
    assert row["status"] == "failed" and "exit code 3" in row["error"], proc.stderr
    assert row["cpu_s"] >= 0 and "first memory sample" in row["peak_rss_source"], \
        row["peak_rss_source"]
    assert len(log.read_text().splitlines()) <= 3  # the sweep's mark, then one read
