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
    and 0.05 s were recorded as the program's (psutil, "largest process of the launch").
    Since s38 (K4) each rank's wrapper reports its own (sacct's, sampled, is the fallback:
    the mpirun-through-srun tests in tests/slurm/test_sweep_srun.py)."""
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
    assert row["peak_rss_source"].startswith("rank wrapper under srun"), row["peak_rss_source"]
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
    _fake(bin_dir, "sacct", 'echo "77.0|77.0|$(date +%s)|COMPLETED||00:01.500|1"', log)
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
    has no MaxRSS, which the read waited for. Since s38 (K4) the rank's wrapper gives its peak
    (its source had said "ended before Slurm's first memory sample", the peak NaN)."""
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
    assert row["cpu_s"] >= 0 and row["peak_rss_mb"] > 0, row["peak_rss_source"]
    assert row["peak_rss_source"].startswith("rank wrapper under srun"), row["peak_rss_source"]
    assert len(log.read_text().splitlines()) <= 3  # the sweep's mark, then one read


def _read_steps(tmp_path, job_id: str, lines: list[str]):
    """What a read of allocation ``job_id`` takes from a sacct listing ``lines`` (``{now}``:
    this second, as ``SLURM_TIME_FORMAT=%s`` writes a step's Start), at most 0.5 s polled."""
    import time

    from hpcds1mpi.measure.slurm_accounting import StepAccounting

    bin_dir = tmp_path / "bin"
    listing = "\n".join(lines).replace("{now}", "$(date +%s)")
    _fake(bin_dir, "sacct", f'cat <<EOF\n{listing}\nEOF', tmp_path / "sacct.log")
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    return StepAccounting(job_id, env).read(2, time.time(), wait_s=0.5)


def test_an_array_tasks_steps_are_matched_by_their_raw_id(tmp_path):
    """Was (s28 reviewer R5): sacct names an array task's steps ``1230_5.0``; matched on that
    against SLURM_JOB_ID (the task's raw id, 1235), no step was ever found: every srun launch
    in an array job polled the full wait and recorded NaN. The array's first task (raw id
    1230) is listed with the other tasks' steps, which are not its own."""
    usage = _read_steps(tmp_path, "1235", [
        "1230_5|1235|{now}|RUNNING|||", "1230_5.batch|1235.batch|{now}|RUNNING|||1",
        "1230_5.0|1235.0|{now}|COMPLETED|2048K|00:01.500|2"])
    assert usage is not None and usage.cpu_s == pytest.approx(1.5) and usage.peak_rss_mb == 2.0
    first = _read_steps(tmp_path, "1230", [
        "1230_5.0|1235.0|{now}|COMPLETED|2048K|00:01.500|2",
        "1230_6.0|1230.0|{now}|COMPLETED|1024K|00:00.500|2"])
    assert first is not None and first.cpu_s == pytest.approx(0.5)


def test_a_heterogeneous_jobs_components_steps_are_all_read(tmp_path):
    """A step across both components of het job 1234 is ``1234+0.0`` (raw 1234.0) and
    ``1234+1.0`` (raw 1235.0): both are the launch's, SLURM_JOB_ID being the leader's 1234."""
    usage = _read_steps(tmp_path, "1234", [
        "1234+0.batch|1234.batch|{now}|RUNNING|||1",
        "1234+0.0|1234.0|{now}|COMPLETED|1024K|00:01.000|1",
        "1234+1.0|1235.0|{now}|COMPLETED|3072K|00:02.000|1"])
    assert usage is not None and usage.cpu_s == pytest.approx(3.0)
    assert usage.peak_rss_mb == 3.0 and usage.ranks_per_task == 1


@pytest.mark.slurm
def test_srun_steps_in_a_real_array_task_are_read(slurm, tmp_path):
    """R5 on the test Slurm: once the accounting knows the task (sacct shows ``A_T``), its
    srun step is read at once, not polled for the full wait and recorded NaN."""
    if not slurm.accounting:
        pytest.skip("this Slurm keeps no accounting (no slurmdbd): sacct cannot answer")
    probe = tmp_path / "probe.py"
    probe.write_text("\n".join([
        "import os, subprocess, time",
        "from hpcds1mpi.measure.slurm_accounting import StepAccounting",
        "accounting = StepAccounting.here(os.environ['SLURM_JOB_ID'])",
        "accounting.mark()",
        "start = time.time()",
        "subprocess.run(['srun', '-n1', 'true'], check=True)",
        "usage = accounting.read(1, start)",
        "print('USAGE', usage, round(time.time() - start, 1))", ""]))
    log, script = tmp_path / "job.out", tmp_path / "job.sh"
    # Waits (at most 20 s) for sacct to name the task as the array's: only then is the
    # raw id the one thing that matches.
    script.write_text("\n".join([
        "#!/bin/bash", "#SBATCH -N1 -n1 --time=2", f"#SBATCH --output={log}",
        "for i in $(seq 40); do",
        "  sacct -j $SLURM_JOB_ID -X -n -P --format JobID | grep -q _ && break; sleep 0.5",
        "done",
        "sacct -j $SLURM_JOB_ID -X -n -P --format JobID",
        f"{sys.executable} {probe}", ""]))
    _, state, text = slurm.run_job(
        lambda: slurm.sbatch(script, "--array=7", cwd=tmp_path), log, timeout=120)
    assert state == "COMPLETED", text or state
    assert "_7" in text, text  # the accounting named the task as the array's
    usage = [line for line in text.splitlines() if line.startswith("USAGE")]
    assert usage and "StepUsage(" in usage[0] and "cpu_s=nan" not in usage[0], text


#: sacct's listing (``SLURM_TIME_FORMAT=%s``) of Open MPI's ``mpirun -n 2`` in ``salloc -N 2
#: --ntasks-per-node 2`` on the test Slurm: a daemon on each node, both ranks under n1's.
ORTED_ON_EVERY_NODE = [
    "56449950|56449950|{now}|RUNNING||00:00.915||interactive",
    "56449950.1|56449950.1|{now}|COMPLETED|280148K|00:00.313|2|orted"]


@pytest.mark.parametrize("ranks_per_node, per_rank_mb, per_task", [(2, 136.8, 2), (0, 273.6, 1)])
def test_a_daemon_that_ran_no_rank_is_no_task_holding_one(tmp_path, ranks_per_node,
                                                          per_rank_mb, per_task):
    """Was (s29 tester A4): MaxRSS was divided by the ranks over the step's tasks, 2 / 2: the
    daemon holding both ranks gave 260 MB per rank for 130 MB ranks, the idle one on the
    allocation's other node counted as holding one. Not knowing the layout, they still are."""
    import time

    from hpcds1mpi.measure.slurm_accounting import StepAccounting

    listing = "\n".join(ORTED_ON_EVERY_NODE).replace("{now}", "$(date +%s)")
    _fake(tmp_path / "bin", "sacct", f"cat <<EOF\n{listing}\nEOF", tmp_path / "sacct.log")
    env = {**os.environ, "PATH": f"{tmp_path / 'bin'}:{os.environ['PATH']}"}
    usage = StepAccounting("56449950", env).read(2, time.time(), wait_s=0.5,
                                                  ranks_per_node=ranks_per_node)
    assert usage is not None and usage.ranks_per_task == per_task
    assert usage.peak_rss_mb == pytest.approx(per_rank_mb, abs=0.1)


def test_ranks_started_by_srun_are_one_a_task_whatever_the_layout(tmp_path):
    """Only a launcher's daemons hold a node's ranks: srun's tasks are one rank each."""
    import time

    from hpcds1mpi.measure.slurm_accounting import StepAccounting

    _fake(tmp_path / "bin", "sacct", 'echo "9.0|9.0|$(date +%s)|COMPLETED|2048K|00:01.0|4|app"',
          tmp_path / "sacct.log")
    env = {**os.environ, "PATH": f"{tmp_path / 'bin'}:{os.environ['PATH']}"}
    usage = StepAccounting("9", env).read(4, time.time(), wait_s=0.5, ranks_per_node=2)
    assert usage is not None and usage.peak_rss_mb == 2.0 and usage.ranks_per_task == 1


@pytest.mark.slurm
def test_mpirun_ranks_on_one_node_of_a_two_node_allocation_are_read_per_rank(slurm, tmp_path):
    """A4 on the test Slurm: Open MPI's mpirun in ``salloc -N 2 --ntasks-per-node 2`` runs 2
    ranks of 120 MB on n1 and starts an idle orted on n2 too; the rank's peak was read as 2
    ranks' (the step's 2 tasks taken to hold one rank each)."""
    if not slurm.accounting:
        pytest.skip("this Slurm keeps no accounting (no slurmdbd): sacct cannot answer")
    from tests.helpers import system_program

    mpirun = system_program("mpirun.openmpi")
    app = tmp_path / "app.py"
    # Longer than JobAcctGatherFrequency (1 s here), so the step has a MaxRSS.
    app.write_text("import time\nheld = b'x' * (120 * 2**20)\ntime.sleep(4)\n")
    probe = tmp_path / "probe.py"
    probe.write_text("\n".join([
        "import os, subprocess, sys, time",
        "from hpcds1mpi.measure.slurm_accounting import StepAccounting",
        "accounting = StepAccounting.here(os.environ['SLURM_JOB_ID'])",
        "accounting.mark()",
        "start = time.time()",
        f"subprocess.run(['{mpirun}', '--allow-run-as-root', '-n', '2', sys.executable,",
        f"                '{app}'], check=True)",
        "usage = accounting.read(2, start, ranks_per_node=2)",
        "print('USAGE', usage.peak_rss_mb, usage.ranks_per_task)", ""]))
    proc = slurm.cmd(["salloc", "-N2", "--ntasks-per-node", "2", "--time=2",
                      "--job-name=hpcds-a4", sys.executable, str(probe)], timeout=120,
                     check=False, cwd=tmp_path)
    usage = [line.split() for line in proc.stdout.splitlines() if line.startswith("USAGE")]
    assert usage, proc.stdout + proc.stderr
    assert 110 < float(usage[0][1]) < 200 and usage[0][2] == "2", usage
