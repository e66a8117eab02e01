"""A run whose declared working set is above the node's memory is refused before anything
runs, or left out with valid_only (s26 tester m: stencil at 1024 grew to 24 GB on a 25 GB
shared machine until the OOM killer ended it, and other users' processes with it)."""

from __future__ import annotations

import pytest

from hpcds1mpi import kernels
from hpcds1mpi.cluster import Partition
from hpcds1mpi.config import Configuration
from hpcds1mpi.errors import ConfigError
from hpcds1mpi.measure.plan import build_plan
from hpcds1mpi.measure.plan_memory import memory_need_gb, memory_problem

SMALL = Partition(name="local", cores_per_node=2, memory_gb=8.0)


def _doc(sizes, valid_only=False):
    return {"sweep": {"valid_only": valid_only},
            "kernel": [{"name": "stencil", "sizes": sizes, "ranks_per_node": "1,2",
                        "threads": 1, "precisions": "fp64"}]}


def test_the_need_is_the_declared_set_per_rank_times_ranks_per_node():
    stencil = kernels.get("stencil")
    one = Configuration(1, 1, 1, "cpu", "fp64")
    two = Configuration(1, 2, 1, "cpu", "fp64")
    per_rank = stencil.work(512, 2).memory_bytes / 1e9
    assert memory_need_gb(stencil, 512, two) == pytest.approx(2 * per_rank)
    assert memory_problem(stencil, 64, one, SMALL) is None
    line = memory_problem(stencil, 1024, one, SMALL)
    assert "stencil size 1024 on N1xR1xT1-cpu-fp64 needs about 25.9 GB per node" in line
    assert "over the 8.0 GB a job may use there" in line
    assert memory_problem(stencil, 1024, Configuration(1, 1, 1, "gpu", "fp64"), SMALL) is None


def test_a_plan_with_a_size_past_the_nodes_memory_is_refused_or_skipped():
    with pytest.raises(ConfigError, match="size 1024 .* drop size 1024, or add --valid-only"):
        build_plan(_doc("32,1024"), SMALL)
    plan = build_plan(_doc("32,1024", valid_only=True), SMALL)
    assert {r.size for r in plan.runs} == {32} and len(plan.runs) == 2
    with pytest.raises(ConfigError, match="leave no configuration"):
        build_plan(_doc("1024", valid_only=True), SMALL)


def test_an_allocations_share_is_the_limit():
    share = Partition(name="local", cores_per_node=2, memory_gb=64.0, allocated_memory_gb=4.0)
    with pytest.raises(ConfigError, match="over the 4.0 GB"):
        build_plan(_doc("32,768"), share)
