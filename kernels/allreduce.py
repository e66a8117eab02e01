"""Interconnect microbenchmark: ``Allreduce`` over message sizes and a ping-pong.

For every message size ``s`` (powers of two from one element up to ``size`` bytes, and
``size`` itself), all ranks time ``iterations(s)`` back-to-back ``Allreduce(SUM)`` calls, and
rank 0 and the last rank (on another node when the job spans nodes: ranks are placed in block
order) time ``iterations(s)`` ``Send``/``Recv`` round trips after ``PINGPONG_WARMUP`` untimed
ones, each side sending its own payload buffer and receiving into another. Latency is seconds per call
(allreduce) or per one-way message (ping-pong, half a round trip, as ``mpi4py.bench pingpong``
reports); bandwidth is ``s / latency``. Each rank's times are reduced with MAX (the slowest rank
is the one a job waits for).

Correctness is judged analytically: element ``i`` of rank ``r``'s send buffer is
``(r + 1) * (1 + i % 3)``, so the reduced buffer must equal ``P (P + 1) / 2 * (1 + i % 3)``
exactly (small integers are exact in fp32 and fp64), and each ping-pong side must have received
the other side's payload exactly. On GPU the buffers live on the device and are staged through host memory (timed) unless
the MPI is GPU-aware.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hpcds1mpi.kernels import register
from hpcds1mpi.kernels.base import Kernel, KernelContext, WorkModel

#: Bytes per size above which only :data:`MIN_ITERATIONS` calls are timed.
ITERATION_BYTES = 1 << 20
MIN_ITERATIONS, MAX_ITERATIONS = 4, 200
#: Untimed ping-pong round trips per size before the timed ones (first-touch, protocol setup).
PINGPONG_WARMUP = 2


def message_sizes(size: int, itemsize: int) -> list[int]:
    """Message sizes in bytes: powers of two from one element up to ``size``, plus ``size``
    rounded down to whole elements when it is not a power of two."""
    top = max(itemsize, (int(size) // itemsize) * itemsize)
    sizes, s = [], itemsize
    while s <= top:
        sizes.append(s)
        s *= 2
    if sizes[-1] != top:
        sizes.append(top)
    return sizes


def iterations(nbytes: int, scale: float = 1.0) -> int:
    """Timed calls per message size: many for small messages (latency), few for large ones."""
    count = int(scale * ITERATION_BYTES // max(1, nbytes))
    floor = max(MIN_ITERATIONS, int(MIN_ITERATIONS * scale))
    return max(floor, min(int(MAX_ITERATIONS * scale), count))


def send_pattern(xp, rank: int, n: int, dtype):
    """Rank ``rank``'s send buffer: ``(rank + 1) * (1 + i % 3)``, shape (n,)."""
    return ((rank + 1) * (1 + np.arange(n) % 3)).astype(dtype)


def ping_pattern(n: int, dtype):
    """Rank 0's ping-pong payload, shape (n,): small integers, exact in fp32."""
    return (np.arange(n) % 251 + 1).astype(dtype)


def pong_pattern(n: int, dtype):
    """The last rank's reply payload: a different pattern, so a reply that merely returned the
    ping (or a stale buffer) is caught by the check."""
    return (np.arange(n) % 241 + 2).astype(dtype)


def _ranks_on_node(comm) -> int:
    """How many ranks of ``comm`` share this rank's node."""
    from hpcds1mpi.runtime.mpi import get_mpi

    raw = getattr(comm, "raw", comm)
    local = raw.Split_type(get_mpi().COMM_TYPE_SHARED)
    try:
        return local.Get_size()
    finally:
        local.Free()


def _idle_barrier(comm) -> None:
    """A barrier that sleeps instead of spinning, for ranks with nothing to do while others
    time a ping-pong (a spinning idle rank steals the core of a timed one when oversubscribed)."""
    import time

    request = comm.Ibarrier()
    while not request.Test():
        time.sleep(2e-4)


@dataclass
class _State:
    sizes: list[int]
    counts: list[int]  # elements per size
    iters: list[int]
    dtype: Any
    send_host: np.ndarray  # (max count,) this rank's pattern
    ping_host: np.ndarray  # (max count,) rank 0's ping-pong payload
    pong_host: np.ndarray  # (max count,) the last rank's reply payload
    recv: list = field(default_factory=list)  # per size, device buffers of the reduced values
    echo: list = field(default_factory=list)  # per size, the ping-pong receive buffers
    host_out: np.ndarray | None = None  # staging buffer for non-GPU-aware device runs


@register
class Allreduce(Kernel):
    name = "allreduce"
    options = {"allreduce_iteration_scale": (float, 1e-6, 1e6)}
    description = "Allreduce(SUM) and rank0<->last ping-pong over message sizes"
    decomposition = "none: every rank contributes a buffer of each size"
    communication = "Allreduce per size and iteration; Send/Recv ping-pong between rank 0 and last"
    size_meaning = ("largest message in bytes (sizes sweep powers of two up to it); "
                    "extra: allreduce_iteration_scale (1.0)")
    threads_via = "none (communication only)"
    precisions = ("fp64", "fp32")
    devices = ("cpu", "gpu")
    uses_threads = False
    default_sizes = (1 << 12, 1 << 14, 1 << 16, 1 << 18, 1 << 20, 1 << 22, 1 << 23, 1 << 24,
                     1 << 25)
    tolerance = {"fp64": 0.0, "fp32": 0.0}  # integer-valued sums: exact
    test_size = 3000  # not a power of two: the last message size is 3000 bytes
    test_extra = {"allreduce_iteration_scale": 0.02}  # 4 calls per size in the harness

    def __init__(self) -> None:
        #: The last run's per-size table (same keys as the result dict, host numpy arrays).
        self.last_profile: dict | None = None

    def min_size(self, ranks: int) -> int:
        return 8

    def setup(self, ctx: KernelContext, size: int) -> _State:
        from hpcds1mpi.runtime.arrays import numpy_dtype
        from hpcds1mpi.runtime.binding import initial_cpus

        dtype = numpy_dtype(ctx.precision)
        item = np.dtype(dtype).itemsize
        scale = float(ctx.extra.get("allreduce_iteration_scale", 1.0))
        if _ranks_on_node(ctx.comm) > len(initial_cpus()):
            # Oversubscribed: every message waits for the OS scheduler (milliseconds), so many
            # iterations only multiply the run time without sharpening the number.
            scale = min(scale, MIN_ITERATIONS / MAX_ITERATIONS)
        sizes = message_sizes(size, item)
        counts = [s // item for s in sizes]
        rank, ranks = ctx.comm.Get_rank(), ctx.comm.Get_size()
        xp = ctx.xp
        state = _State(
            sizes=sizes, counts=counts, iters=[iterations(s, scale) for s in sizes], dtype=dtype,
            send_host=send_pattern(np, rank, counts[-1], dtype),
            ping_host=ping_pattern(counts[-1], dtype),
            pong_host=pong_pattern(counts[-1], dtype),
        )
        state.recv = [xp.zeros(c, dtype=dtype) for c in counts]
        if rank in (0, ranks - 1) and ranks > 1:
            # each side's received messages are kept and checked against the other's payload
            state.echo = [xp.zeros(c, dtype=dtype) for c in counts]
        if xp is not np and not ctx.gpu_aware:
            state.host_out = np.empty(counts[-1], dtype=dtype)
        return state

    def run(self, ctx: KernelContext, state: _State) -> dict:
        import time

        from hpcds1mpi.runtime.arrays import synchronize, to_host
        from hpcds1mpi.runtime.mpi import get_mpi

        MPI = get_mpi()
        comm, xp = ctx.comm, ctx.xp
        rank, ranks = comm.Get_rank(), comm.Get_size()
        staged = xp is not np and not ctx.gpu_aware
        send_dev = xp.asarray(state.send_host) if xp is not np else state.send_host  # H2D
        ping_dev = xp.asarray(state.ping_host) if xp is not np else state.ping_host
        pong_dev = xp.asarray(state.pong_host) if xp is not np else state.pong_host
        n_sizes = len(state.sizes)
        times = np.zeros(2 * n_sizes)  # allreduce seconds per call, then ping-pong one-way
        peer = ranks - 1
        # Time on the raw communicator with methods bound once: the TimedComm proxy costs about
        # a microsecond per call, as much as a shared-memory message. Every timed loop is all
        # MPI, so its whole time is added to the proxy's counter afterwards.
        raw = getattr(comm, "raw", comm)
        allreduce, send_msg, recv_msg = raw.Allreduce, raw.Send, raw.Recv
        in_mpi = 0.0
        for k, (count, iters) in enumerate(zip(state.counts, state.iters)):
            send, out = send_dev[:count], state.recv[k]
            comm.Barrier()
            start = time.perf_counter()
            for _ in range(iters):
                if staged:
                    host_out = state.host_out[:count]
                    allreduce(to_host(send), host_out, op=MPI.SUM)
                    out[...] = xp.asarray(host_out)
                else:
                    allreduce(send, out, op=MPI.SUM)
            synchronize(xp)
            elapsed = time.perf_counter() - start
            in_mpi += elapsed
            times[k] = elapsed / iters
            if ranks < 2:
                continue
            if rank not in (0, peer):
                _idle_barrier(comm)
                continue
            # Ping-pong: rank 0 sends its payload, the last rank replies with its own (separate
            # send and receive buffers, as OSU and mpi4py.bench do: replying from the buffer just
            # received measured ~2x slower at 64 KiB, a cache effect, not the interconnect).
            payload = ping_dev[:count] if rank == 0 else pong_dev[:count]
            other = peer if rank == 0 else 0
            box = state.echo[k]
            box_mpi = state.host_out[:count] if staged else box
            for trip in range(PINGPONG_WARMUP + iters):
                if trip == PINGPONG_WARMUP:  # untimed warm-up round trips first
                    start = time.perf_counter()
                if rank == 0:
                    send_msg(to_host(payload) if staged else payload, other, k)
                    recv_msg(box_mpi, other, k)
                else:
                    recv_msg(box_mpi, other, k)
                    send_msg(to_host(payload) if staged else payload, other, k)
                if staged:
                    box[...] = xp.asarray(box_mpi)
            synchronize(xp)
            elapsed = time.perf_counter() - start
            in_mpi += elapsed
            times[n_sizes + k] = elapsed / (2 * iters)
            _idle_barrier(comm)
        if hasattr(comm, "mpi_seconds"):
            comm.mpi_seconds += in_mpi
        slowest = np.empty_like(times)
        comm.Allreduce(times, slowest, op=MPI.MAX)
        sizes = np.array(state.sizes, dtype=np.float64)
        allreduce_s = slowest[:n_sizes]
        if ranks > 1:
            pingpong_s = slowest[n_sizes:]
        else:
            pingpong_s = np.full(n_sizes, np.nan)
        profile = {
            "message_bytes": sizes,
            "allreduce_latency_s": allreduce_s,
            "allreduce_bandwidth_Bps": sizes / allreduce_s,
            "pingpong_latency_s": pingpong_s,
            "pingpong_bandwidth_Bps": sizes / pingpong_s,
            "iterations": np.array(state.iters, dtype=np.float64),
        }
        self.last_profile = {k: v.copy() for k, v in profile.items()}
        echo = list(state.echo) if rank in (0, peer) and ranks > 1 else []
        return {**profile, "reduced": list(state.recv), "echo": echo}

    def check(self, ctx: KernelContext, state: _State, result: dict) -> float:
        """Largest relative deviation of any reduced or echoed element from its exact value
        (the MAX over ranks)."""
        from hpcds1mpi.runtime.arrays import to_host
        from hpcds1mpi.runtime.mpi import get_mpi

        MPI = get_mpi()
        ranks = ctx.comm.Get_size()
        worst = 0.0
        reduced = result.get("reduced") or []
        if len(reduced) != len(state.counts):
            worst = float("inf")
        for count, got in zip(state.counts, reduced):
            want = ranks * (ranks + 1) / 2 * (1 + np.arange(count) % 3)
            got = np.asarray(to_host(got), dtype=np.float64)
            worst = max(worst, float(np.max(np.abs(got - want) / want)) if got.shape == want.shape
                        else float("inf"))
        echo = result.get("echo") or []
        rank = ctx.comm.Get_rank()
        if rank in (0, ranks - 1) and ranks > 1:
            if len(echo) != len(state.counts):
                worst = float("inf")
            # rank 0 received the last rank's replies; the last rank received rank 0's pings
            payload = state.pong_host if rank == 0 else state.ping_host
            for count, got in zip(state.counts, echo):
                want = payload[:count].astype(np.float64)
                got = np.asarray(to_host(got), dtype=np.float64)
                worst = max(worst, float(np.max(np.abs(got - want) / want))
                            if got.shape == want.shape else float("inf"))
        if not np.isfinite(worst):
            worst = float("inf")
        out = np.empty(1)
        ctx.comm.Allreduce(np.array([worst]), out, op=MPI.MAX)
        return float(out[0])

    def work(self, size: int, ranks: int) -> WorkModel:
        """Per rank, at fp64, for rank 0 (it also runs the ping-pong). Allreduce traffic is
        modelled as a ring/reduce-scatter+allgather: ``2 (P - 1) / P`` of the message sent."""
        sizes = message_sizes(size, 8)
        its = [iterations(s) for s in sizes]
        ring = 2.0 * (ranks - 1) / ranks if ranks > 1 else 0.0
        allreduce_sent = sum(i * s * ring for s, i in zip(sizes, its))
        ping_sent = (sum((i + PINGPONG_WARMUP) * s for s, i in zip(sizes, its))
                     if ranks > 1 else 0.0)
        allreduce_calls = sum(its) + 1  # + the MAX of the timings
        ping_messages = 2 * (sum(its) + PINGPONG_WARMUP * len(its)) if ranks > 1 else 0
        return WorkModel(
            flops=float(sum(i * (s // 8) * (ranks - 1) / max(ranks, 1) for s, i in
                            zip(sizes, its))),
            # each allreduce reads the send buffer and writes the result (plus staging copies);
            # each ping-pong message is read once and written once.
            bytes_moved=float(sum(i * 3 * s for s, i in zip(sizes, its)) + 2 * ping_sent),
            messages=float(allreduce_calls + ping_messages),
            comm_bytes=float(allreduce_sent + ping_sent),
            memory_bytes=float(sizes[-1] * 2 + 4 * sum(sizes)),
        )
