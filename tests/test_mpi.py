"""The timing communicator and the node layout (in-process, COMM_SELF / COMM_WORLD of 1)."""

from __future__ import annotations

import numpy as np

from hpcds1mpi.mpi import TimedComm, get_mpi, node_layout


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
    assert (layout["nodes"], layout["ranks_per_node"], layout["local_rank"]) == (1, 1, 0)
    monkeypatch.setenv("SLURM_NODEID", "3")
    assert node_layout(get_mpi().COMM_WORLD)["node_keys"] == ["slurm:3"]
