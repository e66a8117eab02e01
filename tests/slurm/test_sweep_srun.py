"""``sweep --command --launcher srun`` against the real test Slurm: the ``--mpi`` plugin is
checked against ``srun --mpi=list`` before anything launches, and a plugin it has still
measures inside an allocation (``salloc``)."""

from __future__ import annotations

import sys

import pytest

from tests.helpers import hpcds1mpi_exe

pytestmark = pytest.mark.slurm

#: Two ranks of the wheel's MPICH as one job under srun --mpi=pmi2: the program says its size.
PROGRAM = f"{sys.executable} -c 'from mpi4py import MPI; print(\"ranks:\", MPI.COMM_WORLD.size)'"


def _sweep_in_allocation(slurm, tmp_path, mpi: str, ranks: str):
    out = tmp_path / f"{mpi}-{ranks}.h5"
    proc = slurm.cmd(["salloc", "-N1", f"-n{ranks}", "--time=3", "--job-name=hpcds-srun-mpi",
                      hpcds1mpi_exe(), "sweep", "--command", PROGRAM, "--label", "size",
                      "--sizes", "1", "--ranks-per-node", ranks, "--launcher", "srun",
                      "--mpi", mpi, "--ranks-regex", r"ranks: (\d+)", "--max-repeats", "1",
                      "--out", str(out), "--no-progress"], timeout=180, check=False,
                     cwd=tmp_path)
    ours = [line for line in proc.stderr.splitlines() if line.startswith("hpcds1mpi")]
    return proc, ours, out


@pytest.mark.parametrize("ranks", ["1", "2"])
def test_a_plugin_srun_lacks_is_refused_in_one_line_before_any_launch(slurm, tmp_path, ranks):
    """It was a failed run and exit 0 with one rank, a probe failure blaming --mpiexec with two."""
    proc, ours, out = _sweep_in_allocation(slurm, tmp_path, "bogus", ranks)
    assert proc.returncode == 2 and len(ours) == 1, proc.stderr
    assert ours[0].startswith("hpcds1mpi: error: srun has no --mpi plugin 'bogus'; "
                              "`srun --mpi=list` names ") and "pmi2" in ours[0]
    assert not out.exists()


@pytest.mark.parametrize("ranks", ["1", "2"])
def test_a_plugin_srun_has_still_measures_inside_an_allocation(slurm, tmp_path, ranks):
    proc, ours, out = _sweep_in_allocation(slurm, tmp_path, "pmi2", ranks)
    assert proc.returncode == 0, proc.stderr
    assert not any("not inside a Slurm allocation" in line for line in ours), ours
    from hpcds1mpi.records.telemetry import read_runs

    runs = read_runs(out)
    assert list(runs["status"]) == ["ok"], runs[["status", "error"]].to_dict("records")


def test_mpirun_in_a_two_node_allocation_records_each_ranks_own_memory(slurm, tmp_path):
    """s29 tester A4: Open MPI's mpirun inside ``salloc -N 2`` starts an orted on both nodes,
    so a 1-node x 2-rank step has two tasks, one holding both ranks; the sweep recorded that
    task's MaxRSS (2 ranks' worth) as each rank's peak, and scripts asked --mem from it."""
    if not slurm.accounting:
        pytest.skip("this Slurm keeps no accounting (no slurmdbd): sacct cannot answer")
    from hpcds1mpi.records.telemetry import read_runs
    from tests.helpers import system_program

    mpirun = system_program("mpirun.openmpi")
    app = tmp_path / "app.py"
    # 120 MB held past JobAcctGatherFrequency (1 s here), so the step has a MaxRSS
    app.write_text("import time\nheld = b'x' * (120 * 2**20)\ntime.sleep(4)\nprint('time: 4 s')\n")
    out = tmp_path / "a4.h5"
    proc = slurm.cmd(["salloc", "-N2", "--ntasks-per-node", "2", "--time=3",
                      "--job-name=hpcds-a4-sweep", hpcds1mpi_exe(), "sweep", "--command",
                      f"/usr/bin/python3 {app}", "--label", "held", "--sizes", "1",
                      "--nodes", "1", "--ranks-per-node", "2", "--mpiexec", mpirun,
                      "--max-repeats", "1", "--out", str(out), "--no-progress"],
                     timeout=240, check=False, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    runs = read_runs(out)
    assert list(runs["status"]) == ["ok"], runs[["status", "error"]].to_dict("records")
    assert 110 < float(runs["peak_rss_mb"].iloc[0]) < 200, runs[
        ["peak_rss_mb", "peak_rss_source"]].to_dict("records")


def _sweep_two_ranks(slurm, tmp_path, *extra: str):
    out = tmp_path / "over.h5"
    proc = slurm.cmd(["salloc", "-N1", "-n2", "--time=3", "--job-name=hpcds-overcommit",
                      hpcds1mpi_exe(), "sweep", "--command", PROGRAM, "--label", "size",
                      "--sizes", "1", "--ranks-per-node", "2", "--threads", "1,2",
                      "--launcher", "srun", "--mpi", "pmi2", "--ranks-regex", r"ranks: (\d+)",
                      "--max-repeats", "1", "--out", str(out), "--no-progress", *extra],
                     timeout=180, check=False, cwd=tmp_path)
    return proc, out


def test_more_ranks_x_threads_than_the_allocation_holds_run_overcommitted(slurm, tmp_path):
    """Was (s31 tester P4): the pre-flight said such runs "run unbound and oversubscribed",
    then srun refused each step ("More processors requested than permitted"), recorded as the
    program's failures. srun is given --overcommit for them, and the pre-flight says so."""
    from hpcds1mpi.records.telemetry import read_runs

    proc, out = _sweep_two_ranks(slurm, tmp_path)
    assert proc.returncode == 0, proc.stderr
    runs = read_runs(out).set_index("threads")
    assert list(runs["status"]) == ["ok", "ok"], runs[["status", "error"]].to_dict("records")
    assert "--overcommit" in runs.loc[2, "command"] and "--overcommit" not in runs.loc[1, "command"]
    assert "srun is given --overcommit for them" in proc.stderr
    assert "run unbound" not in proc.stderr


def test_a_step_srun_refuses_is_not_the_programs_failure_and_resume_retries_it(slurm, tmp_path):
    """srun's refusal of a step is ``unsupported`` (no model learns it), and --resume launches
    it again. Here the sweep cannot know the allocation's CPUs (SLURM_JOB_CPUS_PER_NODE unset),
    so it gives no --overcommit and srun refuses 1 x 2 threads in a 1-CPU allocation."""
    from hpcds1mpi.records.telemetry import read_runs

    out = tmp_path / "refused.h5"
    argv = ["salloc", "-N1", "-n1", "--time=3", "--job-name=hpcds-refused", "env", "-u",
            "SLURM_JOB_CPUS_PER_NODE", hpcds1mpi_exe(), "sweep", "--command", "/bin/echo hi",
            "--label", "echo", "--sizes", "1", "--threads", "2", "--launcher", "srun",
            "--mpi", "pmi2", "--max-repeats", "1", "--out", str(out), "--no-progress"]
    proc = slurm.cmd(argv, timeout=120, check=False, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    runs = read_runs(out)
    assert list(runs["status"]) == ["unsupported"], runs[["status", "error"]].to_dict("records")
    assert runs["error"].iloc[0].startswith(
        "srun refused to start it (srun: error: Unable to create step for job "), runs["error"]
    again = slurm.cmd([*argv, "--resume"], timeout=120, check=False, cwd=tmp_path)
    assert "(unsupported 1; 0 already done)" in again.stderr, again.stderr
