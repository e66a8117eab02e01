"""What ``--valid-only`` left out, counted by reason (s33 tester A10)."""

from __future__ import annotations

from hpcds1mpi.cluster import Partition
from hpcds1mpi.measure.left_out import LeftOut


def test_reasons_are_counted_apart_most_first_each_with_one_example():
    """Each configuration by its first reason (nodes, then cores, then GPUs); one that fits
    (1 rank on the CPU) is none."""
    left = LeftOut()
    left.layouts(Partition("p", 2, 4.0), nodes=[1, 2], ranks_per_node=[1, 4], threads=[1],
                 devices=["cpu", "gpu"], precisions=["fp64"])
    line = left.line()
    assert line.startswith("4 for nodes (e.g. 2 nodes asked but partition 'p' has at most 1)")
    assert "2 for cores (e.g. 4 ranks x 1 thread = 4 cores per node" in line
    assert "1 for GPUs (e.g. GPU asked but partition 'p' has no GPUs)" in line, line
    assert LeftOut().line() == ""
