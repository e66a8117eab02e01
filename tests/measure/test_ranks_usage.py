"""The ranks' memory and CPU time from the launch's tree or Slurm's accounting."""

from __future__ import annotations

import os
import subprocess
import time

import pytest

from hpcds1mpi.measure.launch_tree import TreeSampler
from hpcds1mpi.measure.ranks_usage import ranks_usage
from hpcds1mpi.measure.slurm_accounting import StepAccounting
from tests.helpers import logging_command


def test_a_daemons_task_is_divided_by_the_ranks_on_its_node(tmp_path):
    """s29 tester A4: under Open MPI's mpirun in a 2-node allocation a 1-node x 2-rank run has
    an orted on each node; the one holding both ranks (256 MB) is 2 ranks' memory, not 1's."""
    bin_dir = tmp_path / "bin"
    logging_command(bin_dir, "srun", "sleep 0.3", tmp_path / "srun.log")
    logging_command(bin_dir, "sacct", 'echo "5.0|5.0|$(date +%s)|COMPLETED|262144K|00:02.0|2|'
                    'orted"', tmp_path / "sacct.log")
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    start = time.time()
    proc = subprocess.Popen([str(bin_dir / "srun"), "orted"], env=env)
    tree = TreeSampler(proc.pid, {"app"})
    proc.wait()
    tree.stop()
    assert tree.remote_starter == "srun"
    peak, cpu, source = ranks_usage(tree, 0.0, 2, StepAccounting("5", env), start,
                                    ranks_per_node=2)
    assert peak == pytest.approx(128.0) and cpu == pytest.approx(2.0)
    assert source == "slurm accounting (sacct MaxRSS of a task holding 2 ranks, / 2)"
