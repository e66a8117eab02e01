"""Distributed 3D complex FFT: slabs, local 2D FFTs, one Alltoallv transpose, local 1D FFTs."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hpcds1mpi.runtime import arrays
from hpcds1mpi.kernels import register
from hpcds1mpi.kernels._parallel import plane_rng, use_device
from hpcds1mpi.kernels.base import Kernel, KernelContext, WorkModel, block_range, relative_error

INPUT_STREAM = 37
COMPLEX_DTYPES = {"fp64": np.complex128, "fp32": np.complex64}


@dataclass
class FFTState:
    """One rank's slab.

    Attributes:
        n: points per dimension (N^3 complex values).
        input: host array (n0, N, N), planes [s0, e0) along axis 0 of the global input.
        blocks: every rank's [start, stop) along an axis (the same split for axes 0 and 1).
    """

    n: int
    input: np.ndarray
    blocks: list[tuple[int, int]]


def input_planes(seed: int, n: int, start: int, stop: int) -> np.ndarray:
    """Planes [start, stop) along axis 0 of the global complex input, complex128 (stop-start, N, N).

    Plane i comes from its own generator, so a slab does not depend on the rank count.
    """
    out = np.empty((stop - start, n, n), dtype=np.complex128)
    for i in range(start, stop):
        parts = plane_rng(seed, INPUT_STREAM, i).random((2, n, n))
        out[i - start].real = parts[0] - 0.5
        out[i - start].imag = parts[1] - 0.5
    return out


def _fft_backend(xp, threads: int):
    """(fft2 over axes 1,2; fft over axis 0) for the array module, keeping the input dtype."""
    if xp is np:
        import scipy.fft

        def planes(a):
            # On a private copy, in place: ~15 % faster than writing a fresh output (measured
            # at N=96); the caller's input stays intact for the next run.
            return scipy.fft.fftn(a.copy(), axes=(1, 2), workers=threads, overwrite_x=True)

        def lines(b):
            return scipy.fft.fft(b, axis=0, workers=threads, overwrite_x=True)
    else:
        # cupy.fft (or the fake device's numpy.fft, which promotes to complex128: cast back).
        def planes(a):
            return xp.fft.fftn(a, axes=(1, 2)).astype(a.dtype, copy=False)

        def lines(b):
            return xp.fft.fft(b, axis=0).astype(b.dtype, copy=False)
    return planes, lines


@register
class FFT3D(Kernel):
    name = "fft"
    options = {}  # reads no plan extra: any key there is refused
    description = "forward 3D complex FFT of an N^3 array (complex128 / complex64)"
    decomposition = "slabs along axis 0 in, slabs along axis 1 out (uneven splits allowed)"
    communication = "one Alltoallv transpose per transform (staged via host on GPU)"
    size_meaning = "N: points per dimension (N^3 complex values)"
    precisions = ("fp64", "fp32")
    devices = ("cpu", "gpu")
    uses_threads = True
    threads_via = "scipy.fft workers"
    default_sizes = (32, 48, 64, 80, 96, 128, 160, 192, 224)
    tolerance = {"fp64": 1e-12, "fp32": 1e-5}
    test_size = 10

    def min_size(self, ranks: int) -> int:
        return ranks

    def setup(self, ctx: KernelContext, size: int) -> FFTState:
        use_device(ctx)
        ranks, rank = ctx.comm.Get_size(), ctx.comm.Get_rank()
        blocks = [block_range(size, ranks, q) for q in range(ranks)]
        start, stop = blocks[rank]
        cdtype = COMPLEX_DTYPES.get(ctx.precision)
        if cdtype is None:
            arrays.numpy_dtype(ctx.precision)  # raises UnsupportedError with the reason
        data = input_planes(ctx.seed, size, start, stop).astype(cdtype)
        return FFTState(size, data, blocks)

    def run(self, ctx: KernelContext, state: FFTState):
        """Returns the rank's output slab, array (N, n1, N): axis 1 holds [s1, e1)."""
        from hpcds1mpi.runtime.mpi import get_mpi

        MPI = get_mpi()
        xp, comm = ctx.xp, ctx.comm
        rank, n = comm.Get_rank(), state.n
        planes, lines = _fft_backend(xp, ctx.threads)
        a = arrays.to_device(xp, state.input)  # timed host-to-device copy on GPU
        n0 = a.shape[0]
        a = planes(a)
        dtype = a.dtype
        if comm.Get_size() == 1:
            # One rank: the transpose would only copy the slab onto itself (pack, then MPI's
            # self-copy); the last axis runs in place on the planes' private output instead.
            out = lines(a)
            arrays.synchronize(xp)
            return out
        # Pack: the block for rank q is a[:, s1_q:e1_q, :] (n0, n1_q, N), contiguous in turn, so
        # the receiver's blocks, stacked by sender, form its (N, n1, N) slab directly.
        send_counts = [n0 * (hi - lo) * n for lo, hi in state.blocks]
        send_displs = np.concatenate(([0], np.cumsum(send_counts)[:-1])).tolist()
        sendbuf = xp.empty(n0 * n * n, dtype=dtype)
        for (lo, hi), offset, count in zip(state.blocks, send_displs, send_counts):
            sendbuf[offset:offset + count].reshape(n0, hi - lo, n)[...] = a[:, lo:hi, :]
        s1, e1 = state.blocks[rank]
        recv_counts = [(hi - lo) * (e1 - s1) * n for lo, hi in state.blocks]
        recv_displs = np.concatenate(([0], np.cumsum(recv_counts)[:-1])).tolist()
        mpi_type = MPI.C_DOUBLE_COMPLEX if dtype == np.complex128 else MPI.C_FLOAT_COMPLEX
        staged = xp is not np and not ctx.gpu_aware
        if staged:
            host_recv = np.empty(n * (e1 - s1) * n, dtype=dtype)
            comm.Alltoallv([arrays.to_host(sendbuf), send_counts, send_displs, mpi_type],
                           [host_recv, recv_counts, recv_displs, mpi_type])
            b = xp.asarray(host_recv)
        else:
            b = xp.empty(n * (e1 - s1) * n, dtype=dtype)
            arrays.synchronize(xp)  # the packing must end before MPI reads the send buffer
            comm.Alltoallv([sendbuf, send_counts, send_displs, mpi_type],
                           [b, recv_counts, recv_displs, mpi_type])
        out = lines(b.reshape(n, e1 - s1, n))
        arrays.synchronize(xp)
        return out

    def check(self, ctx: KernelContext, state: FFTState, result) -> float:
        """Gather the output slabs on rank 0, compare with numpy.fft.fftn in complex128 there."""
        from hpcds1mpi.runtime.mpi import get_mpi

        MPI = get_mpi()
        comm = ctx.comm
        n = state.n
        local = np.ascontiguousarray(arrays.to_host(result), dtype=np.complex128).reshape(-1)
        counts = [n * (hi - lo) * n for lo, hi in state.blocks]
        displs = np.concatenate(([0], np.cumsum(counts)[:-1])).tolist()
        root = comm.Get_rank() == 0
        gathered = np.empty(n ** 3, dtype=np.complex128) if root else None
        comm.Gatherv(local, [gathered, counts, displs, MPI.C_DOUBLE_COMPLEX], root=0)
        error = np.zeros(1)
        if root:
            got = np.empty((n, n, n), dtype=np.complex128)
            for (lo, hi), offset, count in zip(state.blocks, displs, counts):
                got[:, lo:hi, :] = gathered[offset:offset + count].reshape(n, hi - lo, n)
            want = np.fft.fftn(input_planes(ctx.seed, n, 0, n))
            error[0] = relative_error(got.view(np.float64), want.view(np.float64))
        comm.Bcast(error, root=0)
        return float(error[0])

    def work(self, size: int, ranks: int) -> WorkModel:
        item = 16  # complex128 (fp64 sizes; fp32 halves the bytes)
        points = size ** 3 / ranks
        passes = 5 if ranks > 1 else 4  # one rank has no pack (no transpose at all)
        return WorkModel(
            flops=float(5.0 * size ** 3 * np.log2(float(size) ** 3) / ranks),
            # The input copy, 3 axis passes of the FFT and (several ranks) the pack, each
            # reading and writing the slab.
            bytes_moved=passes * 2.0 * item * points,
            messages=float(ranks - 1),
            comm_bytes=item * points * (ranks - 1) / ranks,
            # input, 2D-FFT output, send buffer, receive/output slab (one rank: the first two).
            memory_bytes=(4.0 if ranks > 1 else 2.0) * item * points,
        )
