"""Conjugate gradient on 3D Poisson: matrix-free SpMV with halo planes, Allreduce dot products."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hpcds1mpi.runtime import arrays
from hpcds1mpi.runtime import jit
from hpcds1mpi.kernels import register
from hpcds1mpi.kernels._parallel import chunks, global_planes, run_chunks, use_device
from hpcds1mpi.kernels.base import Kernel, KernelContext, WorkModel, block_range

RHS_STREAM = 23
DEFAULT_ITERATIONS = 50
#: Bytes of one vector per chunk (a few planes of each vector stay in L2 across a phase).
CHUNK_BYTES = 256 * 1024


@dataclass
class CGState:
    """One rank's slab of the problem.

    Attributes:
        n: grid points per dimension (N^3 unknowns, zero Dirichlet boundary outside).
        iterations: CG iterations per run (fixed, no convergence test).
        z_range: owned z-planes [z0, z1).
        rhs: host array (nz, N, N), the owned planes of the right-hand side b.
        lower, upper: neighbour ranks along z (MPI.PROC_NULL at the boundary).
    """

    n: int
    iterations: int
    z_range: tuple[int, int]
    rhs: np.ndarray
    lower: int
    upper: int


def poisson_apply(p_pad, out, xp=np) -> None:
    """``out = A p`` for the 7-point Poisson matrix (6 on the diagonal, -1 per neighbour).

    Args:
        p_pad: array (nz+2, N+2, N+2): the planes of p with zero y/x borders and, at both
            ends, ghost planes holding the neighbours' planes (zeros on the global boundary).
        out: array (nz, N, N).
        xp: array module.
    """
    xp.multiply(p_pad[1:-1, 1:-1, 1:-1], 6, out=out)
    out -= p_pad[:-2, 1:-1, 1:-1]
    out -= p_pad[2:, 1:-1, 1:-1]
    out -= p_pad[1:-1, :-2, 1:-1]
    out -= p_pad[1:-1, 2:, 1:-1]
    out -= p_pad[1:-1, 1:-1, :-2]
    out -= p_pad[1:-1, 1:-1, 2:]


class LocalCG:
    """The rank-local work of one CG iteration, in three fused phases over z-plane chunks.

    Each phase touches a chunk of every vector it needs while it is in cache, and the chunks
    run on ``threads`` threads (numpy and single-threaded BLAS release the GIL). On a device
    (cupy / fake cupy) a phase is one whole-array pass. Vectors are (nz, N, N) and contiguous,
    so a z-chunk of each is a contiguous flat slice.
    """

    def __init__(self, xp, dtype, nz: int, n: int, threads: int):
        self.xp = xp
        self.threads = threads
        self.host = xp is np
        # The compiled phases (numba, GIL released): one pass per point per phase, the dots
        # summed in registers (~3x the numpy phases at N=72, measured); None without numba.
        self.fused = None
        if self.host and jit.compiled(_apply_dot, fastmath=True) is not None:
            self.fused = tuple(jit.compiled(f, fastmath=True)
                               for f in (_apply_dot, _update_solution, _update_direction))
        if self.host:
            from scipy.linalg import blas

            self._dot, self._axpy = blas.get_blas_funcs(("dot", "axpy"), dtype=dtype)
            planes = max(1, CHUNK_BYTES // (n * n * np.dtype(dtype).itemsize))
            self.pieces = chunks(nz, planes)
        else:
            self.pieces = [(0, nz)]
        self.plane = n * n

    def _each(self, fn) -> float:
        """Run ``fn(z0, z1) -> partial`` on every chunk; return the sum of the partials."""
        partials = [0.0] * len(self.pieces)
        index = {piece: i for i, piece in enumerate(self.pieces)}

        def call(z0: int, z1: int) -> None:
            partials[index[(z0, z1)]] = fn(z0, z1)

        if self.host:
            run_chunks(call, self.pieces, self.threads)
        else:
            call(*self.pieces[0])
        return float(sum(partials))

    def dot(self, a, b) -> float:
        """Local ``a . b`` of two (nz, N, N) vectors."""
        if not self.host:
            return float(self.xp.vdot(a, b))
        fa, fb, m = a.reshape(-1), b.reshape(-1), self.plane
        return self._each(lambda z0, z1: float(self._dot(fa[z0 * m:z1 * m], fb[z0 * m:z1 * m])))

    def apply_and_dot(self, p_pad, p, ap) -> float:
        """``ap = A p`` (p_pad holds p and its ghost planes); returns the local ``p . Ap``."""
        m = self.plane
        if self.fused is not None:
            apply_dot = self.fused[0]
            return self._each(lambda z0, z1: apply_dot(p_pad, ap, z0, z1))

        def phase(z0: int, z1: int) -> float:
            poisson_apply(p_pad[z0:z1 + 2], ap[z0:z1], self.xp)
            if not self.host:
                return float(self.xp.vdot(p[z0:z1], ap[z0:z1]))
            return float(self._dot(p.reshape(-1)[z0 * m:z1 * m], ap.reshape(-1)[z0 * m:z1 * m]))

        return self._each(phase)

    def update_solution(self, alpha: float, x, r, p, ap) -> float:
        """``x += alpha p``, ``r -= alpha Ap``; returns the local ``r . r``."""
        m = self.plane
        if self.fused is not None:
            update = self.fused[1]
            flat = [v.reshape(-1) for v in (x, r, p, ap)]
            return self._each(lambda z0, z1: update(x.dtype.type(alpha), *flat, z0 * m, z1 * m))

        def phase(z0: int, z1: int) -> float:
            if not self.host:
                x[z0:z1] += alpha * p[z0:z1]
                r[z0:z1] -= alpha * ap[z0:z1]
                return float(self.xp.vdot(r[z0:z1], r[z0:z1]))
            sl = slice(z0 * m, z1 * m)
            fx, fr, fp, fap = (v.reshape(-1)[sl] for v in (x, r, p, ap))
            self._axpy(fp, fx, a=alpha)
            self._axpy(fap, fr, a=-alpha)
            return float(self._dot(fr, fr))

        return self._each(phase)

    def update_direction(self, beta, p, r, p_pad) -> None:
        """``p = r + beta p``, copied into the interior of ``p_pad`` for the next SpMV."""
        if self.fused is not None:
            direction = self.fused[2]
            self._each(lambda z0, z1: direction(beta, p, r, p_pad, z0, z1))
            return

        def phase(z0: int, z1: int) -> float:
            p[z0:z1] *= beta
            p[z0:z1] += r[z0:z1]
            p_pad[z0 + 1:z1 + 1, 1:-1, 1:-1] = p[z0:z1]
            return 0.0

        self._each(phase)


def _apply_dot(p_pad, ap, z0, z1):  # pragma: no cover - runs compiled
    """``ap = A p`` on planes z0..z1-1 (p is the interior of ``p_pad``); returns the partial
    ``p . Ap`` of those planes, accumulated in fp64."""
    ny, nx = ap.shape[1], ap.shape[2]
    six = ap.dtype.type(6)
    total = 0.0
    for z in range(z0, z1):
        for y in range(ny):
            for x in range(nx):
                c = p_pad[z + 1, y + 1, x + 1]
                v = (six * c - p_pad[z, y + 1, x + 1] - p_pad[z + 2, y + 1, x + 1]
                     - p_pad[z + 1, y, x + 1] - p_pad[z + 1, y + 2, x + 1]
                     - p_pad[z + 1, y + 1, x] - p_pad[z + 1, y + 1, x + 2])
                ap[z, y, x] = v
                total += c * v
    return total


def _update_solution(alpha, x, r, p, ap, i0, i1):  # pragma: no cover - runs compiled
    """Flat items i0..i1-1: ``x += alpha p``, ``r -= alpha Ap``; returns the partial ``r . r``."""
    total = 0.0
    for i in range(i0, i1):
        x[i] += alpha * p[i]
        value = r[i] - alpha * ap[i]
        r[i] = value
        total += value * value
    return total


def _update_direction(beta, p, r, p_pad, z0, z1):  # pragma: no cover - runs compiled
    """Planes z0..z1-1: ``p = r + beta p``, written to ``p`` and the interior of ``p_pad``."""
    ny, nx = p.shape[1], p.shape[2]
    for z in range(z0, z1):
        for y in range(ny):
            for x in range(nx):
                value = r[z, y, x] + beta * p[z, y, x]
                p[z, y, x] = value
                p_pad[z + 1, y + 1, x + 1] = value
    return 0.0


def reference_solution(seed: int, n: int, iterations: int) -> np.ndarray:
    """fp64 serial CG (same start and iteration count) with a scipy.sparse Poisson matrix.

    Built independently of :func:`poisson_apply` (Kronecker sums, CSR SpMV).

    Returns:
        Array (N, N, N), the iterate after ``iterations`` steps.
    """
    import scipy.sparse as sp

    ones = np.ones(n)
    second = sp.diags([-ones[:-1], 2 * ones, -ones[:-1]], [-1, 0, 1], format="csr")
    eye = sp.identity(n, format="csr")
    matrix = (sp.kron(sp.kron(second, eye), eye) + sp.kron(sp.kron(eye, second), eye)
              + sp.kron(sp.kron(eye, eye), second)).tocsr()
    b = global_planes(seed, RHS_STREAM, (n, n, n), ((0, n), (0, n), (0, n))).reshape(-1)
    x = np.zeros_like(b)
    r = b.copy()
    p = r.copy()
    rr = r @ r
    for _ in range(iterations):
        if rr == 0:
            break  # solved exactly (N^3 unknowns in fewer iterations): 0/0 would follow
        ap = matrix @ p
        alpha = rr / (p @ ap)
        x += alpha * p
        r -= alpha * ap
        rr_new = r @ r
        p = r + (rr_new / rr) * p
        rr = rr_new
    return x.reshape(n, n, n)


@register
class ConjugateGradient(Kernel):
    name = "cg"
    options = {"iterations": (int, 1, 10**6)}
    description = "conjugate gradient, fixed iterations, on the 3D Poisson 7-point matrix (N^3)"
    decomposition = "1D slabs of z-planes (uneven splits allowed)"
    communication = "2 Sendrecv of boundary planes per SpMV + 2 Allreduce(1 double) per iteration"
    size_meaning = "N: grid points per dimension (N^3 unknowns); extra: iterations (50)"
    precisions = ("fp64", "fp32")
    devices = ("cpu", "gpu")
    uses_threads = True
    threads_via = "thread pool over z-plane chunks of fused SpMV/dot/axpy phases"
    default_sizes = (20, 24, 32, 40, 48, 56, 64, 72, 88)
    tolerance = {"fp64": 1e-10, "fp32": 1e-4}
    test_size = 12
    #: The MPI tests oversubscribe 2 cores with 4 ranks, where each Allreduce costs a time slice.
    test_extra = {"iterations": 15}

    def min_size(self, ranks: int) -> int:
        return ranks

    def setup(self, ctx: KernelContext, size: int) -> CGState:
        from hpcds1mpi.runtime.mpi import get_mpi

        use_device(ctx)
        MPI = get_mpi()
        ranks, rank = ctx.comm.Get_size(), ctx.comm.Get_rank()
        z0, z1 = block_range(size, ranks, rank)
        rhs = global_planes(ctx.seed, RHS_STREAM, (size,) * 3, ((z0, z1), (0, size), (0, size)),
                            dtype=arrays.numpy_dtype(ctx.precision))
        lower = rank - 1 if rank > 0 else MPI.PROC_NULL
        upper = rank + 1 if rank < ranks - 1 else MPI.PROC_NULL
        iterations = int(ctx.extra.get("iterations", DEFAULT_ITERATIONS))
        return CGState(size, iterations, (z0, z1), rhs, lower, upper)

    def run(self, ctx: KernelContext, state: CGState):
        from hpcds1mpi.runtime.mpi import get_mpi

        MPI = get_mpi()
        xp, comm = ctx.xp, ctx.comm
        b = arrays.to_device(xp, state.rhs)  # timed host-to-device copy on GPU
        nz, n = b.shape[0], state.n
        dtype = b.dtype
        x = xp.zeros_like(b)
        r = b.copy()
        p_pad = xp.zeros((nz + 2, n + 2, n + 2), dtype=dtype)
        p = r.copy()
        ap = xp.empty_like(b)
        staged = xp is not np and not ctx.gpu_aware
        ghost_lo = np.zeros((n + 2, n + 2), dtype) if staged else None
        ghost_hi = np.zeros((n + 2, n + 2), dtype) if staged else None

        def allreduce(value) -> float:
            total = np.empty(1)
            comm.Allreduce(np.array([float(value)]), total, op=MPI.SUM)
            return float(total[0])

        def exchange() -> None:
            if staged:
                top = arrays.to_host(p_pad[nz])
                bottom = arrays.to_host(p_pad[1])
                comm.Sendrecv(top, dest=state.upper, sendtag=1,
                              recvbuf=ghost_lo, source=state.lower, recvtag=1)
                comm.Sendrecv(bottom, dest=state.lower, sendtag=2,
                              recvbuf=ghost_hi, source=state.upper, recvtag=2)
                p_pad[0] = xp.asarray(ghost_lo)
                p_pad[nz + 1] = xp.asarray(ghost_hi)
            else:
                arrays.synchronize(xp)  # the copy into p_pad must end before MPI reads it
                comm.Sendrecv(p_pad[nz], dest=state.upper, sendtag=1,
                              recvbuf=p_pad[0], source=state.lower, recvtag=1)
                comm.Sendrecv(p_pad[1], dest=state.lower, sendtag=2,
                              recvbuf=p_pad[nz + 1], source=state.upper, recvtag=2)

        local = LocalCG(xp, dtype, nz, n, ctx.threads)
        p_pad[1:-1, 1:-1, 1:-1] = p
        rr = allreduce(local.dot(r, r))
        # Our pool supplies the threads: BLAS calls inside it stay single-threaded.
        with _blas_single_thread() if (xp is np and ctx.threads > 1) else _nothing():
            for _ in range(state.iterations):
                if rr == 0:
                    break  # solved exactly (tiny N): every rank has the same allreduced rr
                exchange()
                alpha = rr / allreduce(local.apply_and_dot(p_pad, p, ap))
                rr_new = allreduce(local.update_solution(alpha, x, r, p, ap))
                local.update_direction(dtype.type(rr_new / rr), p, r, p_pad)
                rr = rr_new
        arrays.synchronize(xp)
        return x

    def check(self, ctx: KernelContext, state: CGState, result) -> float:
        """Gather x on rank 0, compare with the serial fp64 CG there, broadcast the error."""
        from hpcds1mpi.runtime.mpi import get_mpi

        MPI = get_mpi()
        comm = ctx.comm
        ranks = comm.Get_size()
        n = state.n
        local = np.ascontiguousarray(arrays.to_host(result), dtype=np.float64)
        counts = [(hi - lo) * n * n for lo, hi in (block_range(n, ranks, q) for q in range(ranks))]
        displs = np.concatenate(([0], np.cumsum(counts)[:-1])).tolist()
        full = np.empty(n ** 3) if comm.Get_rank() == 0 else None
        comm.Gatherv(local.reshape(-1), [full, counts, displs, MPI.DOUBLE], root=0)
        error = np.zeros(1)
        if comm.Get_rank() == 0:
            from hpcds1mpi.kernels.base import relative_error

            want = reference_solution(ctx.seed, n, state.iterations)
            error[0] = relative_error(full.reshape(n, n, n), want)
        comm.Bcast(error, root=0)
        return float(error[0])

    def work(self, size: int, ranks: int) -> WorkModel:
        iterations = DEFAULT_ITERATIONS
        item = 8
        points = size ** 3 / ranks
        plane = (size + 2) ** 2
        neighbours = 2.0 * (ranks - 1) / ranks  # average number of z-neighbours
        collectives = 2.0 if ranks > 1 else 0.0  # Allreduce of one double (p.Ap, r.r)
        return WorkModel(
            # SpMV 7, two dots 4, three axpys 6 flops per point and iteration.
            flops=17.0 * points * iterations,
            # The compiled phases (numba, shipped): SpMV + p.Ap read p, write Ap (2); x, r
            # updates + r.r read x, r, p, Ap, write x, r (6); p = r + beta p reads r, p, writes
            # p and p's padded copy (4). (The numpy fallback moves 18: its dots re-read 3, its
            # in-place scale + add and copy into the padded array cost 2 more.)
            bytes_moved=12.0 * item * points * iterations,
            messages=(neighbours + collectives) * iterations,
            comm_bytes=(neighbours * plane * item + collectives * 8.0) * iterations,
            # b, x, r, p, Ap compact; a copy of p with ghost planes and zero borders.
            memory_bytes=item * (5.0 * points + (size / ranks + 2) * plane),
        )


def _blas_single_thread():
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=1, user_api="blas")


def _nothing():
    import contextlib

    return contextlib.nullcontext()
