"""CPU binding of a rank's threads to distinct cores, and its undoing."""

from __future__ import annotations

import os

from hpcds1mpi.runtime import binding


def test_bind_distinct_cpus_or_unbound_when_oversubscribed():
    cpus = binding.initial_cpus()
    try:
        if len(cpus) >= 2:
            assert binding.bind(1, 2, 1, cpus) == str(cpus[1])
            assert os.sched_getaffinity(0) == {cpus[1]}
        text = binding.bind(0, len(cpus) + 1, 1, cpus)
        assert text.startswith("unbound (oversubscribed")
        assert os.sched_getaffinity(0) == set(cpus)
    finally:
        binding.unbind(cpus)
    assert os.sched_getaffinity(0) == set(cpus)


def test_node_cpus_is_the_union_of_the_node_ranks_start_masks():
    """Under srun each task starts on its own CPU: the node's CPUs are its ranks' together."""
    starts = [[0], [1], [0], [1]]
    keys = ["slurm:0", "slurm:0", "slurm:1", "slurm:1"]
    assert binding.node_cpus(starts, keys, "slurm:0") == [0, 1]
    assert binding.node_cpus([[3, 2], [2]], ["a", "b"], "a") == [2, 3]


def test_bind_beyond_the_own_mask_says_so():
    cpus = binding.initial_cpus()
    if len(cpus) < 2:
        import pytest

        pytest.skip("needs 2 CPUs")
    try:
        text = binding.bind(0, 1, 2, cpus[:2], own=cpus[:1])
        assert text == f"{cpus[0]},{cpus[1]} (beyond the task's {cpus[0]})"
        assert os.sched_getaffinity(0) == set(cpus[:2])
        assert binding.bind(0, 1, 2, cpus[:2], own=cpus[:2]) == f"{cpus[0]},{cpus[1]}"
    finally:
        binding.unbind(cpus)
