"""The one module that starts MPI; the timing wrapper around communicators; where a rank sits.

Importing ``mpi4py.MPI`` initialises MPI, so nothing imports it at module level: call
:func:`get_mpi` (or :func:`world`). Every function that communicates takes ``comm`` as an
argument; the command layer (and scripts) ask for the world communicator and pass it in.
"""

from __future__ import annotations

import os
import socket
import time
from dataclasses import dataclass
from functools import lru_cache

#: Launch environment variables holding this process's rank, read before MPI starts.
LAUNCH_RANK_VARS = ("PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "SLURM_PROCID")

# Methods whose time counts as "inside MPI". Upper-case (buffer) calls plus the helpers kernels use.
_TIMED_PREFIXES = (
    "Send", "Recv", "Isend", "Irecv", "Sendrecv", "Allreduce", "Reduce", "Bcast", "Alltoall",
    "Allgather", "Gather", "Scatter", "Barrier", "Neighbor", "Wait", "Ireduce", "Iallreduce",
    "Reduce_scatter", "Scan", "Exscan", "allreduce", "bcast", "gather", "allgather", "barrier",
    "sendrecv", "send", "recv", "scatter", "alltoall", "reduce",
)


@lru_cache(maxsize=None)
def get_mpi():
    """Return the ``mpi4py.MPI`` module, initialising MPI on first use."""
    import mpi4py

    # Set before MPI is imported. Abort-on-exception comes from running under
    # `python -m mpi4py`, or from the sweep driver aborting its communicator on any exception.
    mpi4py.rc.thread_level = "funneled"
    from mpi4py import MPI

    return MPI


def world():
    """``MPI.COMM_WORLD`` (starting MPI): for commands and scripts to pass to what they call."""
    return get_mpi().COMM_WORLD


def launch_rank(env: dict | None = None) -> int:
    """This process's rank as the launcher tells it, without starting MPI; 0 if not launched.

    Args:
        env: the environment to read (default ``os.environ``).
    """
    env = os.environ if env is None else env
    for var in LAUNCH_RANK_VARS:
        value = env.get(var)
        if value is not None and value.isdigit():
            return int(value)
    return 0


def library_version() -> str:
    """The MPI library's own version string, first line."""
    return get_mpi().Get_library_version().strip().splitlines()[0]


@lru_cache(maxsize=None)
def gpu_aware() -> bool:
    """Whether the MPI library can take device pointers. Decided once per process.

    ``HPCDS1MPI_GPU_AWARE=0|1`` overrides the probe (sites know their MPI better than a probe).
    """
    override = os.environ.get("HPCDS1MPI_GPU_AWARE")
    if override is not None:
        return override.strip() not in ("", "0", "false", "no")
    MPI = get_mpi()
    query = getattr(MPI, "Query_cuda_support", None)
    if query is not None:
        try:
            return bool(query())
        except Exception:  # noqa: BLE001 - a probe failing means "not aware"
            return False
    return False


class TimedComm:
    """A communicator proxy that adds up wall time spent inside MPI calls.

    Kernels receive a ``TimedComm`` and call MPI through it exactly as on an ``MPI.Comm``;
    the sweep driver reads ``mpi_seconds`` to split wall time into communication and compute.
    Derived communicators (:meth:`wrap`) add their time to the same counters.
    """

    def __init__(self, comm, sink: "TimedComm | None" = None):
        self._comm = comm
        self._sink = sink if sink is not None else self
        self.mpi_seconds = 0.0
        self.calls = 0

    @property
    def raw(self):
        """The wrapped ``MPI.Comm`` (for constructing derived communicators)."""
        return self._comm

    def reset(self) -> None:
        """Zero the counters (the runner does, before each timed repeat)."""
        self.mpi_seconds = 0.0
        self.calls = 0

    def _add(self, seconds: float) -> None:
        self._sink.mpi_seconds += seconds
        self._sink.calls += 1

    def Waitall(self, requests) -> None:
        start = time.perf_counter()
        get_mpi().Request.Waitall(requests)
        self._add(time.perf_counter() - start)

    def __getattr__(self, name):
        attr = getattr(self._comm, name)
        if not callable(attr) or not name.startswith(_TIMED_PREFIXES):
            return attr

        def timed(*args, **kwargs):
            start = time.perf_counter()
            try:
                return attr(*args, **kwargs)
            finally:
                self._add(time.perf_counter() - start)

        return timed

    def wrap(self, comm) -> "TimedComm":
        """A derived communicator (e.g. Cartesian) sharing this one's counters."""
        return TimedComm(comm, sink=self._sink)


@dataclass(frozen=True)
class NodeLayout:
    """Where this rank sits among the ranks of a communicator.

    Attributes:
        node_index: this rank's node, 0 being the node of the communicator's rank 0 (nodes
            are numbered in the order of their lowest rank).
        local_rank: this rank's index among the ranks on its node, in rank order.
        node_sizes: ranks on each node, indexed by node index.
        node_keys: per rank of ``comm``, the key naming its node (``slurm:N`` or ``shm:R``).
        hostname: this rank's host name.
    """

    node_index: int
    local_rank: int
    node_sizes: list[int]
    node_keys: list[str]
    hostname: str

    @property
    def nodes(self) -> int:
        """Number of nodes the communicator spans."""
        return len(self.node_sizes)

    @property
    def ranks_per_node(self) -> int:
        """Ranks on this rank's node."""
        return self.node_sizes[self.node_index]

    def ranks_available(self, nodes: int) -> int:
        """Ranks per node that every one of the first ``nodes`` nodes has (0 if fewer nodes)."""
        return min(self.node_sizes[:nodes]) if nodes <= self.nodes else 0


def node_layout(comm) -> NodeLayout:
    """Where this rank sits: its node, its rank within the node, the ranks on every node.

    Node identity comes from ``SLURM_NODEID`` when it holds a number (two slurmd on one host
    share a hostname), else from ``Split_type(COMM_TYPE_SHARED)``. Collective over ``comm``.

    Args:
        comm: the communicator whose ranks are grouped into nodes (an ``MPI.Comm``).

    Returns:
        This rank's :class:`NodeLayout`.
    """
    MPI = get_mpi()
    slurm_node = os.environ.get("SLURM_NODEID", "").strip()
    if slurm_node.isdigit():
        key = f"slurm:{int(slurm_node)}"
    else:
        shared = comm.Split_type(MPI.COMM_TYPE_SHARED)
        # The lowest rank on a shared-memory node names that node.
        key = f"shm:{shared.allreduce(comm.Get_rank(), op=MPI.MIN)}"
        shared.Free()
    keys = comm.allgather(key)
    order = sorted(set(keys), key=keys.index)
    on_node = [r for r, k in enumerate(keys) if k == key]
    return NodeLayout(node_index=order.index(key), local_rank=on_node.index(comm.Get_rank()),
                      node_sizes=[keys.count(k) for k in order], node_keys=keys,
                      hostname=socket.gethostname())


def sleepy_barrier(comm) -> None:
    """A barrier whose waiters sleep (MPI's own barrier busy-polls and would steal cores).

    Args:
        comm: the communicator to synchronise (an ``MPI.Comm``); collective.
    """
    request = comm.Ibarrier()
    pause = 0.0002
    while not request.Test():
        time.sleep(pause)
        pause = min(pause * 1.5, 0.002)  # <= 500 wake-ups/s: negligible CPU, ~1 ms latency
