"""The line recommend says of measured layouts with more ranks x threads than cores."""

from __future__ import annotations

import numpy as np

from hpcds1mpi.cluster import Partition
from hpcds1mpi.decide.oversubscribed import oversubscribed_line

NODE = {"cores_per_node": 2, "memory_gb": 25.3, "gpus_per_node": 0, "gpu_memory_gb": 0.0,
        "max_nodes": 1}


class _Runs:
    """A bundle of crashy's runs at 800 on a 2-core node (s39 tester B8's telemetry)."""

    partitions = {"local": NODE}

    def training_columns(self):
        layouts = [(1, 1, 0.211, "ok"), (4, 1, 0.104, "ok"), (4, 4, 0.130, "ok"),
                   (4, 2, 0.135, "ok"), (2, 1, float("nan"), "failed"), (4, 1, 0.09, "ok")]
        size = [800] * 5 + [400]
        return {"workload": np.array(["crashy"] * 6), "size": np.array(size, float),
                "partition": np.array(["local"] * 6), "status": np.array([s for *_, s in layouts]),
                "nodes": np.ones(6, int), "ranks_per_node": np.array([r for r, *_ in layouts]),
                "threads": np.array([t for _, t, *_ in layouts]),
                "device": np.array(["cpu"] * 6), "precision": np.array(["fp64"] * 6),
                "runtime_s": np.array([x for _, _, x, _ in layouts])}


def test_oversubscribed_layouts_measured_faster_than_the_pick_are_named():
    """Was (s39 tester B8): crashy 800 picked 1 x 1 (211 ms); 4 ranks x 1 thread ran 104 ms
    on the 2-core node and the answer said nothing of it."""
    part = Partition("local", cores_per_node=2, memory_gb=25.3, max_nodes=1)
    line = oversubscribed_line(_Runs(), "crashy", 800, part, 0.211)
    assert line.startswith("measured faster than the pick (211 ms) at size 800 but with more "
                           "ranks x threads than the node's 2 cores, so not offered: "
                           "1 node x 4 ranks x 1 thread (cpu, fp64) 104 ms; ")
    assert "4 ranks x 2 threads" in line and "90" not in line  # another size: not said
    assert oversubscribed_line(_Runs(), "crashy", 800, part, 0.1) == ""  # none faster
    assert oversubscribed_line(_Runs(), "crashy", 300, part, 0.211) == ""  # not measured there


def test_layouts_at_threads_the_offer_left_out_are_not_named():
    """s41 tester A3: a program whose runs ignored their threads is offered 1 thread; its
    4 x 2 and 4 x 4 are the 4 x 1 computation, their times noise, never "faster"."""
    part = Partition("local", cores_per_node=2, memory_gb=25.3, max_nodes=1)
    line = oversubscribed_line(_Runs(), "crashy", 800, part, 0.211, threads_offered=[1])
    assert line.endswith("so not offered: 1 node x 4 ranks x 1 thread (cpu, fp64) 104 ms")
    assert oversubscribed_line(_Runs(), "crashy", 800, part, 0.1, [1]) == ""


def test_inside_an_allocation_the_line_counts_the_cores_the_grid_offers_up_to():
    """s39 review: the line compared with the node's cores while the grid offers only the
    allocation's share, so in an allocation of 1 of 2 cores a measured 2 x 1 faster than the
    pick (2 ranks: within the node, beyond the allocation) was neither offered nor named."""
    from hpcds1mpi.config import configuration_grid

    held = Partition("local", cores_per_node=2, memory_gb=25.3, max_nodes=1,
                     allocated_cores_per_node=1)
    grid = configuration_grid(held)
    assert (grid["ranks_per_node"] * grid["threads"]).max() == 1

    class _TwoRanks(_Runs):
        def training_columns(self):
            cols = super().training_columns()
            cols["ranks_per_node"] = np.array([1, 2, 4, 4, 2, 4])
            return cols

    line = oversubscribed_line(_TwoRanks(), "crashy", 800, held, 0.211)
    assert line.startswith("measured faster than the pick (211 ms) at size 800 but with more "
                           "ranks x threads than the 1 core per node this allocation holds "
                           "(of the node's 2), so not offered: 1 node x 2 ranks x 1 thread "
                           "(cpu, fp64) 104 ms; ")
