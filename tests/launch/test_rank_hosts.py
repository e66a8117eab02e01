"""Where a launch's ranks land (:mod:`hpcds1mpi.launch.rank_hosts`): the real hydra of the
MPICH wheel, which starts every rank on this host when it is given no hosts (s35 tester X2)."""

from __future__ import annotations

import os

import pytest

from hpcds1mpi.errors import LaunchError
from hpcds1mpi.launch import launchers
from hpcds1mpi.launch.rank_hosts import parse_hosts, rank_hosts
from tests.helpers import mpiexec

#: The test's own variables that would hand hydra hosts or place it in a job.
_BATCH_PREFIXES = ("SLURM_", "PBS_", "LSB_", "HYDRA_", "PE_HOSTFILE", "COBALT_",
                   "I_MPI_HYDRA_", "FLUX_")


def _here() -> dict:
    return {k: v for k, v in os.environ.items() if not k.startswith(_BATCH_PREFIXES)}


def test_each_ranks_host_is_read_past_a_launchers_label_with_slurms_node_name():
    text = ("0: hpcds1mpi-host vm n1\n1: hpcds1mpi-host vm n2\nsrun: warning: x\n"
            "[1,0]<stdout>:hpcds1mpi-host node7.cluster node7\nhpcds1mpi-host node8 \n")
    assert parse_hosts(text) == ["n1 on vm", "n2 on vm", "node7.cluster", "node8"]


@pytest.mark.mpi
def test_hydra_given_no_hosts_starts_every_rank_of_a_two_node_launch_here():
    """s35 tester X2: in an LSF job's variables hydra still put both ranks on this host."""
    env = {**_here(), "LSB_JOBID": "123", "LSB_HOSTS": "vm vm n9 n9",
           "LSB_MCPU_HOSTS": "vm 2 n9 2"}
    hosts = rank_hosts(launchers.HydraMpiexec(mpiexec(), ()), 2, env)
    assert hosts == [os.uname().nodename] * 2


@pytest.mark.mpi
def test_a_launch_that_fails_is_one_line_naming_the_node_count(tmp_path):
    with pytest.raises(LaunchError) as caught:
        rank_hosts(launchers.HydraMpiexec(mpiexec(), ("--no-such-option",)), 3, _here(),
                   cwd=str(tmp_path))
    message = str(caught.value)
    assert "\n" not in message and message.startswith("the 3-node launch probe (")
    assert message.endswith("a run on 3 nodes would fail too: check --mpiexec / "
                            "--launcher-args, or drop --nodes 3")


def test_a_failed_launch_under_prterun_says_its_line_not_its_closing_nul(tmp_path):
    """s40 review G1: prterun's closing NUL was the reason: "(exit 1: \\x00)"."""
    fake = tmp_path / "prterun"
    fake.write_text("#!/bin/sh\nprintf 'prterun has exited due to process rank 1\\n\\000' >&2\n"
                    "exit 1\n")
    fake.chmod(0o755)
    with pytest.raises(LaunchError) as caught:
        rank_hosts(launchers.local("mpiexec", mpiexec=str(fake)), 2, _here(),
                   cwd=str(tmp_path))
    message = str(caught.value)
    assert "(exit 1: prterun has exited due to process rank 1); nothing" in message, message
    assert "\0" not in message
