"""Launcher options that set what a configuration sets are refused
(:mod:`hpcds1mpi.launch.owned_options`; s36 tester M3: ``--launcher-args "-np 2"`` ran 2-rank
worlds recorded as 1 rank, ``-genv OMP_NUM_THREADS 2`` 2 threads recorded as 1)."""

from __future__ import annotations

import subprocess

import pytest

from hpcds1mpi.errors import ConfigError
from hpcds1mpi.launch import launchers
from hpcds1mpi.launch.owned_options import owned_option
from tests.helpers import hpcds1mpi_exe, system_program


@pytest.mark.parametrize("args, sets", [
    ("-np 2", "the rank count"), ("-n 2", "the rank count"), ("--np=2", "the rank count"),
    ("-c 2", "the rank count (Open MPI's -c)"), ("-ppn 2", "the ranks per node"),
    ("--npernode 2", "the ranks per node"), ("--map-by ppr:2:node", "the ranks per node"),
    ("-genv OMP_NUM_THREADS 2", "the threads per rank"),
    ("-env OMP_NUM_THREADS 2", "the threads per rank"),
    ("-x OMP_NUM_THREADS=2", "the threads per rank"),
    ("--export=ALL,OMP_NUM_THREADS=2", "the threads per rank"),
    ("--ntasks-per-node=2", "the ranks per node"),
])
def test_options_that_set_the_layout_are_refused_in_one_line(args, sets):
    with pytest.raises(ConfigError) as caught:
        launchers.parse_args(args)
    message = str(caught.value)
    assert "\n" not in message and message.startswith(f"--launcher-args {args!r} sets {sets}")
    assert "remove it from --launcher-args and give --" in message


@pytest.mark.parametrize("args", ["-bind-to core", "--map-by slot:PE=2", "-x OMP_NUM_THREADS",
                                  "-genv I_MPI_DEBUG 5", "-x PATH=/x", "--overlap --label",
                                  "-launcher slurm -hosts n1,n2", "--map-by ppr:1:socket"])
def test_options_that_bind_place_on_hosts_or_pass_other_variables_are_kept(args):
    assert owned_option(launchers.parse_args(args)) is None


@pytest.mark.mpi
def test_a_sweep_given_the_rank_count_in_launcher_args_runs_nothing(tmp_path):
    """The tester's case: Open MPI's mpirun, one rank per node, ``--launcher-args "-np 2"``."""
    mpirun = system_program("mpirun.openmpi")
    out = tmp_path / "x.h5"
    proc = subprocess.run(
        [hpcds1mpi_exe(), "sweep", "--command", "true", "--label", "x", "--sizes", "1",
         "--ranks-per-node", "1", "--max-repeats", "1", "--mpiexec", mpirun,
         "--launcher-args", "-np 2", "--out", str(out), "--no-progress"],
        capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().splitlines()[-1] == (
        "hpcds1mpi: error: --launcher-args '-np 2' sets the rank count, which the sweep sets "
        "from --nodes x --ranks-per-node (a run would be recorded with a layout that did not "
        "run); remove it from --launcher-args and give --nodes x --ranks-per-node")
    assert not out.exists()


def test_a_cluster_files_layout_option_refuses_a_script_with_the_scripts_fix(tmp_path):
    """s36 review 2: a cluster file's ``launcher_args = "--export=ALL,OMP_NUM_THREADS=1"``
    refused ``recommend --emit`` naming the sweep's ``--threads``, which recommend has not;
    a script sets the layout from the configuration it writes: remove the option."""
    from pathlib import Path

    cluster = (Path(__file__).parents[1] / "data" / "clusters" / "two_partitions.toml"
               ).read_text()
    args = ["recommend", "--workload", "gemm", "--size", "1024", "--emit", "slurm",
            "--cluster", "c1.toml"]
    for given, code in (("--export=ALL,OMP_NUM_THREADS=1", 2), ("--cpu-bind=cores", 0)):
        (tmp_path / "c1.toml").write_text(cluster.replace(
            "[clusters.demo]\n", f'[clusters.demo]\nlauncher_args = "{given}"\n'))
        proc = subprocess.run([hpcds1mpi_exe(), *args], capture_output=True, text=True,
                              timeout=120, cwd=tmp_path)
        assert proc.returncode == code, proc.stderr
    assert " --cpu-bind=cores " in proc.stdout  # a placement option: the script's
    (tmp_path / "c1.toml").write_text(cluster.replace(
        "[clusters.demo]\n", '[clusters.demo]\nlauncher_args = "-x OMP_NUM_THREADS=2"\n'))
    refused = subprocess.run([hpcds1mpi_exe(), *args, "-o", "job.sh"], capture_output=True,
                             text=True, timeout=120, cwd=tmp_path)
    assert refused.returncode == 2 and refused.stderr.strip() == (
        "hpcds1mpi: error: the cluster file's launcher_args '-x OMP_NUM_THREADS=2' sets the "
        "threads per rank, which the script sets from the configuration it writes (the job "
        "would run another layout than that one); remove it from the cluster file's "
        "launcher_args")
    assert not (tmp_path / "job.sh").exists()
