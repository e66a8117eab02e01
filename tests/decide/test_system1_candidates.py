"""System 1's candidate table: the kept grids per partition."""

from __future__ import annotations

import numpy as np
import pytest

from hpcds1mpi.cluster import Partition
from hpcds1mpi.decide import system1_candidates as candidates


def test_kept_grids_follow_the_partition_and_stay_unchanged():
    from dataclasses import replace

    from hpcds1mpi.config import configuration_grid

    part = Partition(name="kept", cores_per_node=4, memory_gb=16.0, max_nodes=4)
    first = candidates.candidate_columns("gemm", 512, [part])
    again = candidates.candidate_columns("gemm", 512, [part])
    assert all(np.array_equal(first[k], again[k]) for k in first.columns)
    want = configuration_grid(part, uses_threads=True)
    assert np.array_equal(first["nodes"], want["nodes"])
    bigger = replace(part, max_nodes=8)  # another partition of the same name: its own grid
    assert len(candidates.candidate_columns("gemm", 512, [bigger])) > len(first)
    kept = candidates._grid_of(part, None, None, None, True)
    with pytest.raises(ValueError):
        kept["nodes"][0] = 99  # the kept arrays cannot be changed by a caller
