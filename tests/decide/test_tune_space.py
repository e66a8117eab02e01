"""A tuning session's space: the allocation, neighbours one knob away, the default start."""

from __future__ import annotations

import pytest

from hpcds1mpi.cluster import Partition
from hpcds1mpi.config import Configuration
from hpcds1mpi.decide import tune_space
from hpcds1mpi.errors import ConfigError

PART = Partition("p", cores_per_node=8, memory_gb=16, max_nodes=4)


def test_neighbours_are_one_knob_away_and_inside_the_space():
    space = tune_space.build_space(PART, max_nodes=2, precisions=["fp64", "fp32"])
    start = Configuration(1, 2, 2)
    near = space.neighbours(start)
    assert near[0] == Configuration(1, 4, 2) and Configuration(2, 2, 2) in near
    assert Configuration(1, 2, 2, "cpu", "fp32") in near
    assert all(c in space for c in near) and start not in near
    assert all(c.nodes <= 2 and c.ranks_per_node * c.threads <= 8 for c in space.configs)
    with pytest.raises(ConfigError):
        tune_space.Space([])


def test_allocation_and_default_start(monkeypatch):
    monkeypatch.setenv("SLURM_JOB_NUM_NODES", "3")
    monkeypatch.setenv("SLURM_CPUS_ON_NODE", "6")
    assert tune_space.allocation(PART, "srun") == (3, 6)
    assert tune_space.allocation(PART, "mpiexec") == (1, 8)
    space = tune_space.build_space(PART, max_nodes=1, cores_per_node=6)
    assert tune_space.default_config(space, 6) == Configuration(1, 6, 1, "cpu", "fp64")


def test_a_program_is_tuned_over_precisions_only_where_its_command_takes_them():
    # Was: fp32 and bf16 runs of a program that never gets a precision, the same computation
    # measured three times under three labels.
    plain = tune_space.workload_space(PART, None, max_nodes=1, program="./app {size}")
    assert {c.precision for c in plain.configs} == {"fp64"}
    takes = tune_space.workload_space(PART, None, max_nodes=1,
                                      program="./app {size} --prec {precision}")
    assert {"fp64", "fp32"} <= {c.precision for c in takes.configs}
    kernel = tune_space.workload_space(PART, "gemm", max_nodes=1)
    assert "fp32" in {c.precision for c in kernel.configs}
