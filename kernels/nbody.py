"""All-pairs softened gravity: particle blocks travel round a ring of ranks (P-1 Sendrecv steps)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hpcds1mpi.runtime import arrays
from hpcds1mpi.runtime import jit
from hpcds1mpi.kernels import register
from hpcds1mpi.kernels._parallel import chunks, run_chunks, use_device
from hpcds1mpi.kernels.base import (Kernel, KernelContext, WorkModel, block_range,
                                    global_relative_error)

INPUT_STREAM = 41
#: Softening length (the box is the unit cube centred on 0).
SOFTENING = 0.02
#: Elements of one (rows x visiting particles) tile of pair terms, sized to stay in L2.
TILE_ELEMENTS = 32 * 1024


@dataclass
class NBodyState:
    """One rank's particles.

    Attributes:
        n: total particles.
        blocks: every rank's [start, stop) of particle indices.
        local: host array (nb, 4): x, y, z, mass of the owned particles.
        width: rows of the travelling buffer (the largest block; shorter blocks are padded with
            zero-mass particles, which exert no force).
    """

    n: int
    blocks: list[tuple[int, int]]
    local: np.ndarray
    width: int


def particles(seed: int, n: int) -> np.ndarray:
    """All particles, fp64 array (n, 4): positions uniform in [-0.5, 0.5)^3, masses in [0.5, 1.5)/n.

    Drawn from one generator over all n particles, so a rank's block does not depend on the
    rank count.
    """
    rng = np.random.default_rng([seed, INPUT_STREAM, n])
    out = np.empty((n, 4))
    out[:, :3] = rng.random((n, 3)) - 0.5
    out[:, 3] = (rng.random(n) + 0.5) / n
    return out


def accumulate_forces(targets, sources, acc, xp=np, threads: int = 1,
                      same: bool = False) -> None:
    """``acc += sum_j m_j (r_j - r_i) / (|r_j - r_i|^2 + eps^2)^(3/2)`` for every target i.

    Squared distances come from explicit coordinate differences (the |r_i|^2 + |r_j|^2 -
    2 r_i.r_j expansion loses ~1e-4 relative on the closest pairs in fp32). On the host with
    numba (a dependency) every pair is one pass of the compiled :func:`_pair_loop` (~10x the
    numpy path in fp64, measured); without it (or ``HPCDS1MPI_NO_JIT=1``) and on a device, the
    sums over j come from one matrix product of the weights with [r_j, 1] (BLAS), each tile of
    target rows times all sources sized to stay in L2 across the elementwise passes.

    Args:
        targets: array (ni, 3), positions of the particles the force acts on.
        sources: array (nj, 4), positions and masses of the attracting particles.
        acc: array (ni, 3), accumulated in place.
        xp: array module (numpy tiles the targets over ``threads``; a device does one tile).
        threads: threads of the pool.
        same: the sources are the targets themselves (in order): the self-pair terms, exactly
            zero but computed as m/eps^3 r_i - r_i m/eps^3, are dropped so their rounding does
            not swamp the real forces.
    """
    dtype = targets.dtype
    eps2 = dtype.type(SOFTENING ** 2)
    pairs = jit.compiled(_pair_loop, fastmath=True) if xp is np else None
    if pairs is not None:
        # One compiled pass per pair (numba, SIMD over sources, GIL released): the differences
        # of a self-pair are exactly zero, so it adds exactly nothing and needs no special case.
        tx, ty, tz = (np.ascontiguousarray(targets[:, k]) for k in range(3))
        sx, sy, sz, sm = (np.ascontiguousarray(sources[:, k]) for k in range(4))
        rows = max(1, -(-targets.shape[0] // (4 * threads))) if threads > 1 else targets.shape[0]
        run_chunks(lambda i0, i1: pairs(tx, ty, tz, sx, sy, sz, sm, acc, i0, i1, eps2,
                                               dtype == np.float64),
                   chunks(targets.shape[0], rows), threads)
        return
    src_coords = [xp.ascontiguousarray(sources[:, k]) for k in range(3)]
    src_mass = xp.ascontiguousarray(sources[:, 3])
    # [x_j, y_j, z_j, 1]: w @ this = (sum_j w_ij r_j, sum_j w_ij).
    src_aug = xp.ones((sources.shape[0], 4), dtype=dtype)
    src_aug[:, :3] = sources[:, :3]

    def tile(i0: int, i1: int) -> None:
        pos = targets[i0:i1]
        d2 = pos[:, 0:1] - src_coords[0][None, :]
        d2 *= d2
        for k in (1, 2):
            diff = pos[:, k:k + 1] - src_coords[k][None, :]
            diff *= diff
            d2 += diff
        d2 += eps2
        w = xp.sqrt(d2)
        w *= d2
        xp.divide(src_mass, w, out=w)  # m_j / d^3
        if same:
            rows = xp.arange(i1 - i0)
            w[rows, rows + i0] = 0
        sums = w @ src_aug
        acc[i0:i1] += sums[:, :3] - pos * sums[:, 3:4]

    ni = targets.shape[0]
    if xp is not np:
        tile(0, ni)
        return
    rows = max(8, TILE_ELEMENTS // max(1, sources.shape[0]))
    run_chunks(tile, chunks(ni, rows), threads)


def _pair_loop(tx, ty, tz, sx, sy, sz, sm, acc, i0, i1, eps2, refine):  # pragma: no cover - compiled
    """``acc[i] += sum_j m_j (r_j - r_i) / (|r_j - r_i|^2 + eps^2)^(3/2)`` for targets i0..i1-1.

    Structure-of-arrays inputs so the inner loop over sources is unit-stride SIMD; ``eps2`` has
    the arrays' dtype, so fp32 runs compute (and accumulate) in fp32; ``refine``: one Newton
    step on the fp32 estimate of 1/sqrt (fp64 runs).
    """
    # Constants in the arrays' dtype (numba types int * float32 as float64, which would pull
    # an fp32 loop into fp64).
    one = eps2 / eps2
    half, three_halves = one * np.float32(0.5), one * np.float32(1.5)
    for i in range(i0, i1):
        xi, yi, zi = tx[i], ty[i], tz[i]
        ax = ay = az = eps2 - eps2
        for j in range(sx.shape[0]):
            dx = sx[j] - xi
            dy = sy[j] - yi
            dz = sz[j] - zi
            d2 = dx * dx + dy * dy + dz * dz + eps2
            # 1/sqrt(d2): fp32's hardware estimate (refined once by LLVM) plus one Newton step
            # in the arrays' dtype: ~46 correct bits in fp64 (errors ~1e-14), 3x faster than an
            # fp64 sqrt and divide; fp32 runs stop at the refined estimate.
            inv = one * (np.float32(1.0) / np.sqrt(np.float32(d2)))
            if refine:
                inv = inv * (three_halves - half * d2 * inv * inv)
            w = sm[j] * inv * inv * inv
            ax += w * dx
            ay += w * dy
            az += w * dz
        acc[i, 0] += ax
        acc[i, 1] += ay
        acc[i, 2] += az


def reference_forces(all_particles: np.ndarray, start: int, stop: int) -> np.ndarray:
    """fp64 direct sum for particles [start, stop) against all, by explicit differences.

    Returns:
        Array (stop - start, 3).
    """
    pos, mass = all_particles[:, :3], all_particles[:, 3]
    coords = [np.ascontiguousarray(pos[:, k]) for k in range(3)]
    out = np.empty((stop - start, 3))
    for i0, i1 in chunks(stop - start, max(1, 2 ** 18 // len(pos))):
        diffs = [c[None, :] - c[start + i0:start + i1, None] for c in coords]  # (rows, n) each
        dist2 = diffs[0] ** 2 + diffs[1] ** 2 + diffs[2] ** 2 + SOFTENING ** 2
        weight = mass[None, :] / (dist2 * np.sqrt(dist2))
        for k in range(3):
            out[i0:i1, k] = (weight * diffs[k]).sum(axis=1)
    return out


@register
class NBody(Kernel):
    name = "nbody"
    options = {}  # reads no plan extra: any key there is refused
    description = "all-pairs softened gravitational accelerations of N particles (one step)"
    decomposition = "particles in contiguous blocks (uneven splits allowed)"
    communication = "ring pass: P-1 Sendrecv steps of a block's positions and masses"
    size_meaning = "N: number of particles"
    precisions = ("fp64", "fp32")
    devices = ("cpu", "gpu")
    uses_threads = True
    threads_via = "thread pool over target tiles (BLAS pinned to 1 thread inside)"
    default_sizes = (768, 1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288)
    tolerance = {"fp64": 1e-12, "fp32": 5e-5}
    test_size = 100

    def min_size(self, ranks: int) -> int:
        return ranks

    def setup(self, ctx: KernelContext, size: int) -> NBodyState:
        use_device(ctx)
        ranks, rank = ctx.comm.Get_size(), ctx.comm.Get_rank()
        blocks = [block_range(size, ranks, q) for q in range(ranks)]
        start, stop = blocks[rank]
        dtype = arrays.numpy_dtype(ctx.precision)
        local = particles(ctx.seed, size)[start:stop].astype(dtype)
        width = max(hi - lo for lo, hi in blocks)
        return NBodyState(size, blocks, local, width)

    def run(self, ctx: KernelContext, state: NBodyState):
        """Returns the owned particles' accelerations, array (nb, 3)."""
        xp, comm = ctx.xp, ctx.comm
        ranks, rank = comm.Get_size(), comm.Get_rank()
        local = arrays.to_device(xp, state.local)  # timed host-to-device copy on GPU
        nb = local.shape[0]
        dtype = local.dtype
        acc = xp.zeros((nb, 3), dtype=dtype)
        targets = xp.ascontiguousarray(local[:, :3])
        staged = xp is not np and not ctx.gpu_aware
        alloc = np.zeros if (xp is np or staged) else xp.zeros
        travelling = alloc((state.width, 4), dtype=dtype)
        arriving = alloc((state.width, 4), dtype=dtype)
        travelling[:nb] = arrays.to_host(local) if staged else local
        arrays.synchronize(xp)  # device copies must end before MPI reads the buffer
        right, left = (rank + 1) % ranks, (rank - 1) % ranks
        limits = _blas_single_thread() if (xp is np and ctx.threads > 1) else _nothing()
        with limits:
            for step in range(ranks):
                origin = (rank - step) % ranks
                count = state.blocks[origin][1] - state.blocks[origin][0]
                sources = xp.asarray(travelling[:count]) if staged else travelling[:count]
                accumulate_forces(targets, sources, acc, xp, ctx.threads, same=step == 0)
                if step < ranks - 1:
                    comm.Sendrecv(travelling, dest=right, sendtag=7,
                                  recvbuf=arriving, source=left, recvtag=7)
                    travelling, arriving = arriving, travelling
        arrays.synchronize(xp)
        return acc

    def check(self, ctx: KernelContext, state: NBodyState, result) -> float:
        start, stop = state.blocks[ctx.comm.Get_rank()]
        want = reference_forces(particles(ctx.seed, state.n), start, stop)
        return global_relative_error(ctx.comm, arrays.to_host(result), want)

    def work(self, size: int, ranks: int) -> WorkModel:
        item = 8
        local = size / ranks
        width = float(-(-size // ranks))
        return WorkModel(
            # 20 flops per pair (3 differences, 3 squares, 2 adds, softening, sqrt, mul, div,
            # the sums by matmul 8) — the usual all-pairs count.
            flops=20.0 * local * size,
            # Compulsory: every particle read once as a source, targets read, accelerations
            # written (tiles live in cache).
            bytes_moved=item * (4.0 * size + 3.0 * local + 3.0 * local),
            messages=float(ranks - 1),
            comm_bytes=(ranks - 1) * width * 4.0 * item,
            memory_bytes=item * (2 * 4.0 * width + 7.0 * local + 5.0 * width)
            + item * 4.0 * TILE_ELEMENTS,
        )


def _blas_single_thread():
    """BLAS pinned to one thread while our own pool supplies the parallelism."""
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=1, user_api="blas")


def _nothing():
    import contextlib

    return contextlib.nullcontext()
