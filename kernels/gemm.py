"""Distributed dense matrix multiply ``C = A @ B`` with a ring pass of B's row blocks.

Layout (1D row blocks, rank count ``P`` arbitrary, uneven splits via ``block_range``): rank ``r``
owns rows ``R_r`` of A, of B and of C. ``C[R_r] = sum_k A[R_r, R_k] @ B[R_k]``; the row blocks
``B[R_k]`` travel round a ring (rank ``r`` sends to ``r - 1`` and receives from ``r + 1``), so no
rank ever holds more than two blocks of B besides its own. The next block's non-blocking
send/receive is posted before the current block's multiply, so the transfer overlaps the BLAS
call. Ring buffers are sized for the largest block.

Local multiplies are one BLAS call each on views (numpy/cupy ``matmul(..., out=)``; torch
``matmul`` / ``addmm_`` for bf16, which uses AMX-bf16 on CPUs that have it). bf16 blocks are
communicated as raw 16-bit buffers (an ``int16`` view of the tensor).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from hpcds1mpi.kernels import register
from hpcds1mpi.kernels.base import (
    Kernel,
    KernelContext,
    WorkModel,
    block_range,
    global_relative_error,
)

#: Rows per independently seeded tile: inputs do not depend on the rank count.
TILE_ROWS = 64
_STREAM_A, _STREAM_B = 11, 12


def matrix_rows(seed: int, stream: int, n: int, start: int, stop: int) -> np.ndarray:
    """Rows ``[start, stop)`` of a global ``n x n`` standard-normal matrix, in fp64.

    Every tile of :data:`TILE_ROWS` rows has its own generator seeded from
    ``(seed, stream, n, tile)``, so any rank builds exactly its rows, whatever the rank count.

    Returns:
        Array of shape (stop - start, n).
    """
    out = np.empty((stop - start, n), dtype=np.float64)
    first_tile, end_tile = start // TILE_ROWS, -(-stop // TILE_ROWS)
    for tile in range(first_tile, end_tile if stop > start else first_tile):
        t0 = tile * TILE_ROWS
        t1 = min(n, t0 + TILE_ROWS)
        rows = np.random.default_rng([seed, stream, n, tile]).standard_normal((t1 - t0, n))
        lo, hi = max(start, t0), min(stop, t1)
        out[lo - start:hi - start] = rows[lo - t0:hi - t0]
    return out


class _XpBackend:
    """fp64 / fp32 on numpy, cupy or the fake cupy (device arrays staged through the host)."""

    def __init__(self, ctx: KernelContext, dtype):
        self.ctx, self.xp, self.dtype = ctx, ctx.xp, dtype
        self.on_device = ctx.xp is not np

    def prepare(self, host: np.ndarray) -> np.ndarray:
        """fp64 host input -> host array in the compute dtype (setup, untimed)."""
        return host.astype(self.dtype, copy=False)

    def to_device(self, prepared: np.ndarray):
        """One H2D copy on GPU; the array itself on CPU."""
        return self.xp.asarray(prepared) if self.on_device else prepared

    def empty(self, shape):
        return self.xp.empty(shape, dtype=self.dtype)

    def host_empty(self, shape) -> np.ndarray:
        return np.empty(shape, dtype=self.dtype)

    def matmul(self, a, b, out) -> None:
        self.xp.matmul(a, b, out=out)

    def accumulate(self, c, a, b, tmp) -> None:
        self.xp.matmul(a, b, out=tmp)
        self.xp.add(c, tmp, out=c)

    def send_buffer(self, block):
        """An MPI buffer holding ``block`` (a host copy unless the MPI is GPU-aware)."""
        if self.on_device and not self.ctx.gpu_aware:
            from hpcds1mpi.runtime.arrays import to_host

            return to_host(block)
        return block

    def recv_buffer(self, block, host_scratch: np.ndarray):
        """(buffer to receive into, callable that moves it into ``block`` after the wait)."""
        if self.on_device and not self.ctx.gpu_aware:
            staged = host_scratch[: block.shape[0]]

            def finish() -> None:
                block[...] = self.xp.asarray(staged)

            return staged, finish
        return block, lambda: None

    def synchronize(self) -> None:
        from hpcds1mpi.runtime.arrays import synchronize

        synchronize(self.xp)

    def to_host(self, a) -> np.ndarray:
        from hpcds1mpi.runtime.arrays import to_host

        return to_host(a)


class _TorchBf16Backend:
    """bf16 through torch (CPU, or CUDA when the run's device is a real GPU).

    Under the fake GPU (``HPCDS1MPI_FAKE_GPU=1``) tensors stay on the CPU; the staging path
    (device buffer -> host int16 buffer -> MPI) still runs.
    """

    def __init__(self, ctx: KernelContext):
        import torch

        self.ctx, self.torch = ctx, torch
        self.on_device = ctx.device == "gpu"
        fake = getattr(ctx.xp, "is_fake", False)
        if self.on_device and not fake:
            if not torch.cuda.is_available():
                from hpcds1mpi.errors import UnsupportedError

                raise UnsupportedError("gemm bf16 on GPU needs torch with CUDA; none found")
            self.device = torch.device("cuda", ctx.local_rank % torch.cuda.device_count())
        else:
            self.device = torch.device("cpu")
        self.dtype = torch.bfloat16

    def prepare(self, host: np.ndarray):
        """fp64 host input -> bf16 CPU tensor (setup, untimed)."""
        return self.torch.from_numpy(host).to(self.torch.bfloat16)

    def to_device(self, prepared):
        """One H2D copy on a CUDA device; the tensor itself on CPU."""
        return prepared.to(self.device) if self.device.type == "cuda" else prepared

    def empty(self, shape):
        return self.torch.empty(shape, dtype=self.dtype, device=self.device)

    def host_empty(self, shape) -> np.ndarray:
        return np.empty(shape, dtype=np.int16)

    def matmul(self, a, b, out) -> None:
        self.torch.matmul(a, b, out=out)

    def accumulate(self, c, a, b, tmp) -> None:
        c.addmm_(a, b)  # one BLAS call with beta = 1: no temporary

    def _raw(self, block):
        return block.view(self.torch.int16)

    def send_buffer(self, block):
        raw = self._raw(block)
        if raw.device.type == "cpu":
            return raw.numpy()
        if self.ctx.gpu_aware:
            return raw
        return raw.cpu().numpy()

    def recv_buffer(self, block, host_scratch: np.ndarray):
        raw = self._raw(block)
        if raw.device.type == "cpu":
            return raw.numpy(), lambda: None
        if self.ctx.gpu_aware:
            return raw, lambda: None
        staged = host_scratch[: block.shape[0]]

        def finish() -> None:
            raw.copy_(self.torch.from_numpy(staged))

        return staged, finish

    def synchronize(self) -> None:
        if self.device.type == "cuda":
            self.torch.cuda.synchronize(self.device)

    def to_host(self, a) -> np.ndarray:
        return a.detach().to("cpu", self.torch.float32).numpy()


@dataclass
class _GemmState:
    n: int
    rows: tuple[int, int]
    blocks: list[tuple[int, int]]
    a_host: Any  # (m, n) this rank's rows of A, host, compute precision
    b_host: Any  # (m, n) this rank's rows of B, host, compute precision
    backend: Any
    ring: list  # two device buffers of (max_rows, n)
    host_scratch: np.ndarray | None  # (max_rows, n) staging buffer for receives
    tmp: Any  # (m, n) product buffer (numpy/cupy accumulate)
    c: Any  # (m, n) result buffer


@register
class Gemm(Kernel):
    name = "gemm"
    options = {}  # reads no plan extra: any key there is refused
    description = "dense C = A @ B (N x N, standard-normal inputs)"
    decomposition = "1D row blocks of A, B, C (uneven splits allowed)"
    communication = "ring pass of B's row blocks: P-1 Isend/Irecv per rank, overlapped"
    size_meaning = "N (matrices are N x N)"
    threads_via = "BLAS (threadpoolctl); torch intra-op threads for bf16"
    precisions = ("fp64", "fp32", "bf16")
    devices = ("cpu", "gpu")
    uses_threads = True
    uses_torch = False  # only bf16 needs torch; the runner limits torch threads if it is loaded
    default_sizes = (384, 512, 768, 1024, 1280, 1536, 2048, 2560, 3072)
    test_size = 101  # small and odd: uneven blocks at 2-4 ranks
    # bf16 inputs are rounded to 8 mantissa bits and sums of P partial products are rounded
    # again: ~0.5 % relative error is normal, 3 % is a broken kernel.
    tolerance = {"fp64": 1e-10, "fp32": 1e-5, "bf16": 3e-2}

    def min_size(self, ranks: int) -> int:
        return ranks

    def setup(self, ctx: KernelContext, size: int) -> _GemmState:
        n = int(size)
        ranks, rank = ctx.comm.Get_size(), ctx.comm.Get_rank()
        blocks = [block_range(n, ranks, k) for k in range(ranks)]
        start, stop = blocks[rank]
        m = stop - start
        max_rows = max(b - a for a, b in blocks)
        if ctx.precision == "bf16":
            # The runner already limited torch threads when torch was loaded before it started;
            # set it here too so a first bf16 run honours the knob.
            import torch

            torch.set_num_threads(ctx.threads)
            backend: Any = _TorchBf16Backend(ctx)
        else:
            from hpcds1mpi.runtime.arrays import numpy_dtype

            backend = _XpBackend(ctx, numpy_dtype(ctx.precision))
        ring = [backend.empty((max_rows, n)) for _ in range(2)] if ranks > 1 else []
        host_scratch = backend.host_empty((max_rows, n)) if ranks > 1 and backend.on_device \
            and not ctx.gpu_aware else None
        return _GemmState(
            n=n, rows=(start, stop), blocks=blocks,
            a_host=backend.prepare(matrix_rows(ctx.seed, _STREAM_A, n, start, stop)),
            b_host=backend.prepare(matrix_rows(ctx.seed, _STREAM_B, n, start, stop)),
            backend=backend, ring=ring, host_scratch=host_scratch,
            tmp=backend.empty((m, n)) if ranks > 1 and ctx.precision != "bf16" else None,
            c=backend.empty((m, n)),
        )

    def run(self, ctx: KernelContext, state: _GemmState) -> Any:
        comm, be = ctx.comm, state.backend
        ranks, rank = comm.Get_size(), comm.Get_rank()
        a = be.to_device(state.a_host)  # H2D copy on GPU (timed, a real job pays it)
        b_own = be.to_device(state.b_host)
        c = state.c
        left, right = (rank - 1) % ranks, (rank + 1) % ranks
        current = b_own
        for step in range(ranks):
            owner = (rank + step) % ranks  # whose row block of B ``current`` holds
            k0, k1 = state.blocks[owner]
            requests, finish = [], None
            if step < ranks - 1:
                nxt_owner = (owner + 1) % ranks
                nxt_rows = state.blocks[nxt_owner][1] - state.blocks[nxt_owner][0]
                nxt = state.ring[step % 2][:nxt_rows]
                recv_buf, finish = be.recv_buffer(nxt, state.host_scratch)
                requests.append(comm.Irecv(recv_buf, source=right, tag=step))
                requests.append(comm.Isend(be.send_buffer(current[: k1 - k0]), dest=left,
                                           tag=step))
            a_block = a[:, k0:k1]
            if step == 0:
                be.matmul(a_block, current[: k1 - k0], c)
            else:
                be.accumulate(c, a_block, current[: k1 - k0], state.tmp)
            if requests:
                comm.Waitall(requests)
                finish()
                current = nxt
        be.synchronize()
        return c

    def check(self, ctx: KernelContext, state: _GemmState, result: Any) -> float:
        """fp64 ``A[rows] @ B`` against the returned block (inputs regenerated from the seed,
        unrounded: the error includes the rounding of the inputs to the precision)."""
        got = state.backend.to_host(result)
        a_rows = matrix_rows(ctx.seed, _STREAM_A, state.n, *state.rows)
        b_full = matrix_rows(ctx.seed, _STREAM_B, state.n, 0, state.n)
        want = a_rows @ b_full
        return global_relative_error(ctx.comm, got, want)

    def work(self, size: int, ranks: int) -> WorkModel:
        """Per rank, for the rank with the largest block; bytes counted at 8 per element."""
        n = int(size)
        m = -(-n // ranks)
        item = 8
        return WorkModel(
            flops=2.0 * m * n * n,
            # Read A's rows and every block of B once, write C; with P > 1 every further block's
            # (m, n) product is written to a temporary, read back and added into C (read+write).
            bytes_moved=float(item * (m * n + n * n + m * n + 4 * (ranks - 1) * m * n)),
            messages=float(ranks - 1),
            comm_bytes=float(item * (ranks - 1) * m * n),
            # A, own B, C; with P > 1 also the product buffer and two ring buffers.
            memory_bytes=float(item * m * n * (6 if ranks > 1 else 3)),
        )
