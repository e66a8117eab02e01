"""The timing communicator, the node layout and the sleeping barrier (in-process on COMM_SELF /
a COMM_WORLD of 1, and under mpiexec for uneven Slurm node groups)."""

from __future__ import annotations

import socket

import numpy as np

from hpcds1mpi.runtime.mpi import NodeLayout, TimedComm, get_mpi, node_layout, sleepy_barrier


def test_timed_comm_counts_calls_and_derived_comms_share_counters():
    MPI = get_mpi()
    timed = TimedComm(MPI.COMM_SELF)
    buf, out = np.ones(4), np.empty(4)
    timed.Allreduce(buf, out, op=MPI.SUM)
    assert timed.calls == 1 and timed.mpi_seconds > 0
    assert timed.Get_size() == 1 and timed.calls == 1  # queries are not MPI time
    child = timed.wrap(MPI.COMM_SELF.Dup())
    child.Allreduce(buf, out, op=MPI.SUM)
    child.Waitall([child.raw.Isend(buf, dest=0, tag=1), child.raw.Irecv(out, source=0, tag=1)])
    assert timed.calls == 3 and child.calls == 0
    np.testing.assert_array_equal(out, buf)
    timed.reset()
    assert timed.calls == 0 and timed.mpi_seconds == 0.0


def test_node_layout_single_process(monkeypatch):
    monkeypatch.delenv("SLURM_NODEID", raising=False)
    layout = node_layout(get_mpi().COMM_WORLD)
    assert (layout.nodes, layout.ranks_per_node, layout.local_rank) == (1, 1, 0)
    assert layout.node_sizes == [1] and layout.node_index == 0
    assert layout.hostname == socket.gethostname()
    monkeypatch.setenv("SLURM_NODEID", "03")
    assert node_layout(get_mpi().COMM_WORLD).node_keys == ["slurm:3"]
    for junk in ("", "node3"):  # not a node number: the shared-memory split decides
        monkeypatch.setenv("SLURM_NODEID", junk)
        assert node_layout(get_mpi().COMM_WORLD).node_keys[0].startswith("shm:")


def test_ranks_available_is_the_smallest_of_the_first_nodes():
    layout = NodeLayout(node_index=1, local_rank=0, node_sizes=[4, 2, 3],
                        node_keys=["a"] * 4 + ["b"] * 2 + ["c"] * 3, hostname="h")
    assert (layout.nodes, layout.ranks_per_node) == (3, 2)
    assert [layout.ranks_available(n) for n in (1, 2, 3, 4)] == [4, 2, 2, 0]


def test_sleepy_barrier_completes_and_sleeps():
    """On COMM_SELF it returns at once; the waiting is in sleeps, not a busy Barrier."""
    import time

    calls = []

    class Pending:  # a barrier that completes on the fifth test
        def Test(self):
            calls.append(time.perf_counter())
            return len(calls) >= 5

    class Comm:
        def Ibarrier(self):
            return Pending()

    sleepy_barrier(get_mpi().COMM_SELF)
    sleepy_barrier(Comm())
    assert len(calls) == 5
    gaps = [b - a for a, b in zip(calls, calls[1:])]
    assert min(gaps) >= 0.0002  # it slept between tests


LAYOUT_SCRIPT = """
import json
import sys
from hpcds1mpi.runtime.mpi import get_mpi
from hpcds1mpi.runtime.mpi import node_layout
world = get_mpi().COMM_WORLD
layout = node_layout(world)
row = [world.Get_rank(), layout.node_index, layout.local_rank, layout.node_sizes]
with open(f"{sys.argv[1]}/rank{world.Get_rank()}.json", "w") as out:  # ranks' stdout can interleave
    json.dump(row, out)
"""


def test_sweep_layout_groups_ranks_by_slurm_node_in_rank_order(tmp_path):
    import json
    import sys

    from tests.helpers import run_mpi

    script = tmp_path / "layout.py"
    script.write_text(LAYOUT_SCRIPT)
    segment = [sys.executable, str(script), str(tmp_path)]
    # Ranks 0 and 2 on Slurm node 5, rank 1 on node 2: node 5 comes first (its lowest rank is 0).
    argv = ["-env", "SLURM_NODEID", "5", *segment, ":", "-n", "1", "-env", "SLURM_NODEID", "2",
            *segment, ":", "-n", "1", "-env", "SLURM_NODEID", "5", *segment]
    res = run_mpi(1, argv, timeout=120)
    assert res.returncode == 0, res.stderr
    rows = sorted(json.loads(path.read_text()) for path in tmp_path.glob("rank*.json"))
    assert rows == [[0, 0, 0, [2, 1]], [1, 1, 0, [2, 1]], [2, 0, 1, [2, 1]]]


def test_launch_rank_from_the_launcher_environment():
    from hpcds1mpi.runtime.mpi import launch_rank

    assert launch_rank({}) == 0
    assert launch_rank({"PMI_RANK": "3"}) == 3
    assert launch_rank({"OMPI_COMM_WORLD_RANK": "2", "SLURM_PROCID": "5"}) == 2
    assert launch_rank({"PMI_RANK": "", "SLURM_PROCID": "7"}) == 7  # not a number: the next
