"""The launcher abstraction: srun / mpiexec tokens for a Configuration."""

from __future__ import annotations

import pytest

from hpcds1mpi.launch import launchers as launcher
from hpcds1mpi.config import Configuration
from hpcds1mpi.errors import LaunchError


def test_srun_tokens():
    tokens = launcher.launch_tokens(Configuration(2, 4, 3), launcher="srun")
    assert tokens == ["srun", "-N", "2", "--ntasks-per-node", "4", "-c", "3",
                      "--kill-on-bad-exit=1", "--mpi=pmi2"]
    no_plugin = launcher.launch_tokens(Configuration(1, 1, 1), launcher="srun", mpi="")
    assert not any(t.startswith("--mpi") for t in no_plugin)


def test_mpiexec_tokens_one_and_many_nodes(monkeypatch):
    assert launcher.launch_tokens(Configuration(1, 4, 2), launcher="mpiexec",
                                  mpiexec="/x/mpiexec") == ["/x/mpiexec", "-n", "4"]
    monkeypatch.setattr(launcher, "mpiexec_flavor", lambda path: "hydra")
    assert launcher.launch_tokens(Configuration(2, 3, 1), launcher="mpiexec",
                                  mpiexec="/x/mpiexec") == ["/x/mpiexec", "-n", "6", "-ppn", "3"]
    monkeypatch.setattr(launcher, "mpiexec_flavor", lambda path: "openmpi")
    assert launcher.launch_tokens(Configuration(2, 3, 1), launcher="mpiexec",
                                  mpiexec="/x/mpiexec")[-2:] == ["--map-by", "ppr:3:node"]


def test_detect_inside_and_outside_slurm(monkeypatch):
    monkeypatch.setattr(launcher.shutil, "which", lambda name: f"/usr/bin/{name}")
    assert launcher.detect({"SLURM_JOB_ID": "7"}) == "srun"
    assert launcher.detect({}) == "mpiexec"
    monkeypatch.setattr(launcher.shutil, "which", lambda name: None)
    assert launcher.detect({"SLURM_JOB_ID": "7"}) == "mpiexec"  # no srun on PATH


def test_unknown_launcher_and_thread_env():
    with pytest.raises(LaunchError, match="unknown launcher"):
        launcher.launch_tokens(Configuration(), launcher="aprun")
    env = launcher.thread_env(Configuration(1, 1, 4, "cpu", "fp32"))
    assert env["OMP_NUM_THREADS"] == "4" and env["HPCDS1MPI_PRECISION"] == "fp32"


def test_venv_mpiexec_found_and_flavor():
    path = launcher.mpiexec_path()
    assert path.endswith("mpiexec")
    assert launcher.mpiexec_flavor(path) == "hydra"  # the mpich wheel
    assert launcher.total_tokens(3, launcher="srun") == ["srun", "-n", "3", "--mpi=pmi2"]
