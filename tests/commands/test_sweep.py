"""The sweep command: how a program's launches are started (launcher, srun plugin)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.helpers import hpcds1mpi_exe

# srun stand-in: write its own argv, drop the options, run the program once.
FAKE_SRUN = """#!/bin/sh
echo "$@" >> "$SRUN_LOG"
while [ $# -gt 0 ]; do
  case "$1" in -c|-n|-N) shift 2;; -*) shift;; *) break;; esac
done
[ $# -gt 0 ] && exec "$@"
echo "slurm 23.02 (fake)"
"""

CLUSTER = """[clusters.site]
mpi = "pmix"
[clusters.site.partitions.p]
cores_per_node = 2
memory_gb = 8
max_nodes = 1
"""


def _sweep(tmp_path, *extra: str, cluster: bool = True) -> tuple[subprocess.CompletedProcess, str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "srun").write_text(FAKE_SRUN)
    (bin_dir / "srun").chmod(0o755)
    (tmp_path / "c.toml").write_text(CLUSTER)
    log = tmp_path / "srun.log"
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "SRUN_LOG": str(log)}
    args = [hpcds1mpi_exe(), "sweep", "--command", f"{sys.executable} -c pass", "--label", "p",
            "--sizes", "1", "--launcher", "srun", "--out", str(tmp_path / "t.h5"),
            "--no-progress", *extra]
    if cluster:
        args += ["--cluster", str(tmp_path / "c.toml")]
    proc = subprocess.run(args, env=env, capture_output=True, text=True, timeout=120)
    return proc, log.read_text() if log.exists() else ""


def test_a_programs_srun_launch_uses_the_cluster_files_plugin(tmp_path):
    proc, log = _sweep(tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "--mpi=pmix" in log.split() and "--mpi=pmi2" not in log
    from hpcds1mpi.records.telemetry import read_runs

    # The run says what bound it: srun's --cpu-bind=cores (it is in the launch line).
    assert "--cpu-bind=cores" in log.split()
    assert list(read_runs(tmp_path / "t.h5")["binding"]) == ["srun --cpu-bind=cores"]


@pytest.mark.parametrize("given, expected", [("none", "--mpi=none"), ("pmi2", "--mpi=pmi2")])
def test_mpi_overrides_the_cluster_file(tmp_path, given, expected):
    proc, log = _sweep(tmp_path, "--mpi", given)
    assert proc.returncode == 0, proc.stderr
    assert expected in log.split()


def test_without_a_cluster_file_the_plugin_is_pmi2(tmp_path):
    proc, log = _sweep(tmp_path, cluster=False)
    assert proc.returncode == 0, proc.stderr
    assert "--mpi=pmi2" in log.split()


def test_mpi_is_refused_for_an_in_process_sweep(tmp_path):
    proc = subprocess.run([hpcds1mpi_exe(), "sweep", "--kernel", "stencil", "--sizes", "8",
                           "--mpi", "pmix", "--out", str(tmp_path / "t.h5")],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "--mpi" in proc.stderr
    assert "Traceback" not in proc.stderr and not (tmp_path / "t.h5").exists()
