"""The in-process sweep under ``srun`` binds within the CPUs the step gave the node, not
within one task's: Slurm pins each task to its own CPU(s), and a configuration with fewer
ranks than were launched (1 rank x 2 threads of a 2-task launch) must get the CPUs of the
tasks that sit it out. Checked where the threads run: ``affinity_probe`` records each thread's
affinity (tests/slurm/affinity_kernel.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import PMI_WIREUP_ERROR
from tests.helpers import hpcds1mpi_exe

pytestmark = pytest.mark.slurm

PROBE = str(Path(__file__).with_name("affinity_kernel.py"))


def _sweep(slurm, tmp_path, salloc: list[str], srun: list[str], threads: str):
    """salloc + srun of an in-process affinity_probe sweep: (proc, probe lines, runs)."""
    from hpcds1mpi.records.telemetry import read_runs

    for _ in range(3):  # Slurm 22.05's pmi2 sometimes breaks MPICH's wire-up (docs/slurm.md)
        out, log = tmp_path / "probe.h5", tmp_path / "probe.jsonl"
        for path in (out, log):
            path.unlink(missing_ok=True)
        proc = slurm.cmd(
            ["salloc", *salloc, "--time=3", "--job-name=hpcds-bind", "env",
             f"AFFINITY_PROBE_OUT={log}", "srun", *srun,
             "--kill-on-bad-exit=1", hpcds1mpi_exe(), "sweep", "--kernel", "affinity_probe",
             "--kernel-module", PROBE, "--sizes", "20", "--ranks-per-node", "1",
             "--threads", threads, "--precisions", "fp64", "--max-repeats", "1",
             "--min-time", "0", "--out", str(out), "--no-progress"],
            timeout=150, check=False, cwd=tmp_path)
        if PMI_WIREUP_ERROR not in proc.stderr:
            break
    else:
        pytest.skip("Slurm's pmi2 plugin broke MPICH's wire-up three times (docs/slurm.md)")
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    return proc, lines, read_runs(out)


def test_one_rank_two_threads_of_a_two_task_step_runs_its_threads_on_two_cpus(slurm, tmp_path):
    """Was: both threads pinned to rank 0's one CPU, the other task's CPU idle, recorded as
    "unbound (oversubscribed: 1 x 2 > 1 cpus)" and a 2-thread measurement."""
    proc, lines, runs = _sweep(slurm, tmp_path, ["-N1", "-n2"], ["--mpi=pmi2", "-n2"], "2")
    two = [line for line in lines if line["threads"] == 2]
    assert two, lines
    for line in two:
        assert [len(cpus) for cpus in line["affinity"]] == [2, 2], line
    binding = runs.loc[runs["threads"] == 2, "binding"].iloc[0]
    assert binding.startswith("r0:") and "oversubscribed" not in binding, binding
    assert "beyond the task's" in binding, binding  # the text says the mask was widened
    assert "oversubscribed" not in proc.stderr, proc.stderr


def test_a_step_narrower_than_the_configuration_says_how_to_launch_it(slurm, tmp_path):
    """One task of one CPU cannot hold 2 threads: one line naming srun --cpus-per-task."""
    proc, lines, runs = _sweep(slurm, tmp_path, ["-N1", "-n2"], ["--mpi=none", "-n1", "-c1"],
                               "2")
    ours = [line for line in proc.stderr.splitlines() if "oversubscribed" in line]
    assert len(ours) == 1 and "srun --cpus-per-task=2" in ours[0], proc.stderr
    assert "oversubscribed: 1 x 2 > 1 cpus" in runs["binding"].iloc[0]
