"""3D 7-point Jacobi sweeps on a Cartesian process grid with a halo exchange every sweep."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hpcds1mpi.runtime import arrays
from hpcds1mpi.runtime import jit
from hpcds1mpi.kernels import register
from hpcds1mpi.kernels._parallel import (aligned_chunks, aligned_empty, global_planes, run_items,
                                         use_device)
from hpcds1mpi.kernels.base import (Kernel, KernelContext, WorkModel, balanced_dims, block_range,
                                    global_relative_error)

INPUT_STREAM = 11
DEFAULT_SWEEPS = 10
#: Bytes of output per chunk: small enough that the chunk and its 6 source slices stay in L2
#: across numpy's 6 passes, large enough that the per-call overhead of numpy is amortised
#: (64-512 KiB measured within 10 % of each other on a 2 MiB-L2 Xeon; 128 KiB was best).
CHUNK_BYTES = 128 * 1024


@dataclass
class StencilState:
    """One rank's block.

    Attributes:
        n: global interior points per dimension (the grid with its fixed boundary is (n+2)^3).
        sweeps: Jacobi sweeps per run.
        cart: the Cartesian communicator (timed).
        coords: this rank's (z, y, x) coordinates in the process grid.
        box: ((z0, z1), (y0, y1), (x0, x1)) owned interior range in global interior indices.
        initial: host array (nz+2, ny+2, nx+2), the block with one ghost layer from the global
            initial field (ghosts on the global boundary are the fixed Dirichlet values).
        neighbours: per dimension, (lower, upper) ranks (MPI.PROC_NULL at the boundary).
        host_buffers: preallocated working arrays on the host (CPU runs).
        fixed_faces: indices of the y/x ghost faces (planes 1..nz) on the global boundary.
        sweep_plans: ``jacobi_sweep``'s chunk slices per (src, dst) pair, kept across repeats.
    """

    n: int
    sweeps: int
    cart: Any
    coords: tuple[int, int, int]
    box: tuple[tuple[int, int], ...]
    initial: np.ndarray
    neighbours: list[tuple[int, int]]
    host_buffers: tuple[np.ndarray, np.ndarray] | None
    fixed_faces: list[tuple]
    sweep_plans: dict = field(default_factory=dict)


def jacobi_sweep(src, dst, threads: int = 1, xp=np, fixed_faces=(), plans: dict | None = None
                 ) -> None:
    """One 7-point Jacobi sweep ``dst[interior] = mean of the 6 neighbours in src``.

    On the host with numba installed (a dependency) the sweep is one compiled, fused loop over
    plane ranges (``_fused_sweep``, the GIL released so the thread pool runs ranges in
    parallel). Without numba, or with ``HPCDS1MPI_NO_JIT=1``, and for device arrays, it is numpy:
    the update runs on the flattened array: for the planes 1..nz, taken whole (their y and x
    ghost rows/columns included), the 6 neighbours of flat index f are f +- 1, f +- X and
    f +- X*Y, so every numpy pass is over contiguous 1D slices, and a cache-sized chunk of
    output stays in cache across the 6 passes (memory then sees about one read of ``src`` and
    one write of ``dst`` per point). The y/x ghost cells of planes 1..nz get meaningless values;
    the halo exchange refills those facing a neighbour, ``fixed_faces`` restores the rest.

    Args:
        src: C-contiguous array (nz+2, ny+2, nx+2) with valid ghost layers.
        dst: array of the same shape; its planes 1..nz are written.
        threads: threads splitting the chunks (numpy releases the GIL in ufunc loops).
        xp: array module (cupy / fake cupy do one whole-range pass).
        fixed_faces: (index, values) pairs restored into ``dst`` afterwards (the Dirichlet
            boundary values in the y/x ghost faces of planes 1..nz).
        plans: a dict the caller keeps across sweeps over the same buffers; the chunks' slices
            are built once per (src, dst) pair and reused (saves ~7 slice objects per chunk).
    """
    sixth = src.dtype.type(1.0 / 6.0)
    compiled = jit.compiled(_fused_sweep) if xp is np else None
    if compiled is not None:
        # One fused pass per point (numba, GIL released): ~2x the numpy chunks' rate (measured).
        nz = src.shape[0] - 2
        pieces = [(z0 + 1, z1 + 1) for z0, z1 in plane_pieces(nz, threads)]
        run_items(lambda piece: compiled(src, dst, piece[0], piece[1], sixth), pieces, threads)
    elif xp is not np:
        out, below, above, south, north, west, east = _chunk_views(src, dst, None)[0]
        xp.add(below, above, out=out)
        for term in (south, north, west, east):
            out += term
        out *= sixth
    else:
        key = (src.ctypes.data, dst.ctypes.data, src.shape, src.dtype.str)
        views = plans.get(key) if plans is not None else None
        if views is None:
            views = _chunk_views(src, dst, max(1024, CHUNK_BYTES // src.itemsize))
            if plans is not None:
                plans[key] = views
        add, multiply = np.add, np.multiply

        def update(chunk) -> None:
            out, below, above, south, north, west, east = chunk
            add(below, above, out=out)
            add(out, south, out=out)
            add(out, north, out=out)
            add(out, west, out=out)
            add(out, east, out=out)
            multiply(out, sixth, out=out)

        run_items(update, views, threads)
    for index, values in fixed_faces:
        dst[index] = values


def plane_pieces(nz: int, threads: int) -> list[tuple[int, int]]:
    """Split planes 0..nz-1 into ``4 * threads`` near-equal ranges (one range for 1 thread)."""
    count = 1 if threads <= 1 else min(nz, 4 * threads)
    return [block_range(nz, count, k) for k in range(count) if nz > 0]


def _fused_sweep(src, dst, z0, z1, sixth):  # pragma: no cover - runs compiled
    """``dst[z, y, x]`` = mean of the 6 neighbours in ``src``, planes z0..z1-1, interior y/x only
    (ghost rows and columns of ``dst`` are left as they are). ``sixth`` has the arrays' dtype,
    so fp32 runs compute in fp32."""
    rows, cols = src.shape[1], src.shape[2]
    for z in range(z0, z1):
        for y in range(1, rows - 1):
            for x in range(1, cols - 1):
                dst[z, y, x] = (src[z - 1, y, x] + src[z + 1, y, x] + src[z, y - 1, x]
                                + src[z, y + 1, x] + src[z, y, x - 1] + src[z, y, x + 1]) * sixth


def _chunk_views(src, dst, chunk: int | None) -> list[tuple]:
    """Per chunk of the flat planes 1..nz: (out, f-P, f+P, f-X, f+X, f-1, f+1) 1D views.

    ``chunk`` None gives one whole-range chunk (device arrays). Otherwise chunks start on
    cache-line boundaries of ``dst``: numpy's add is ~2x slower into an unaligned output
    (measured), and the planes' offsets are rarely multiples of 64 B.
    """
    planes, rows, cols = src.shape
    plane = rows * cols
    flat_src = src.reshape(-1)
    flat_dst = dst.reshape(-1)
    first, stop = plane, (planes - 1) * plane  # flat indices of (1, 0, 0) and (nz + 1, 0, 0)
    pieces = [(first, stop)] if chunk is None else aligned_chunks(flat_dst, first, stop, chunk)
    return [(flat_dst[f0:f1],
             flat_src[f0 - plane:f1 - plane], flat_src[f0 + plane:f1 + plane],
             flat_src[f0 - cols:f1 - cols], flat_src[f0 + cols:f1 + cols],
             flat_src[f0 - 1:f1 - 1], flat_src[f0 + 1:f1 + 1])
            for f0, f1 in pieces]


def reference_block(seed: int, n: int, box, sweeps: int) -> np.ndarray:
    """fp64 serial Jacobi restricted to the dependency cone of ``box``.

    After ``sweeps`` sweeps a point depends only on points within ``sweeps`` of it, so a box
    extended by ``sweeps`` layers (clipped at the global boundary), whose outer layer is held
    fixed, gives the exact serial values on ``box``.

    Returns:
        Array of the owned block's shape, fp64.
    """
    ext = []
    for lo, hi in box:
        # In "with boundary" indices the interior point i is at i + 1.
        ext.append((max(0, lo + 1 - sweeps), min(n + 2, hi + 1 + sweeps)))
    src = global_planes(seed, INPUT_STREAM, (n + 2,) * 3, tuple(ext))
    dst = src.copy()
    for _ in range(sweeps):
        # Written independently of jacobi_sweep (plain whole-array expression), so a bug in the
        # kernel's chunked update is not reproduced by its own reference.
        dst[1:-1, 1:-1, 1:-1] = (
            src[1:-1, 1:-1, :-2] + src[1:-1, 1:-1, 2:] + src[1:-1, :-2, 1:-1]
            + src[1:-1, 2:, 1:-1] + src[:-2, 1:-1, 1:-1] + src[2:, 1:-1, 1:-1]
        ) / 6.0
        src, dst = dst, src
    sl = tuple(slice(lo + 1 - e0, hi + 1 - e0) for (lo, hi), (e0, _) in zip(box, ext))
    return src[sl]


@register
class Stencil(Kernel):
    name = "stencil"
    options = {"sweeps": (int, 1, 10**6)}
    description = "3D 7-point Jacobi sweeps (Laplace, fixed Dirichlet boundary) on an N^3 grid"
    decomposition = "3D blocks on a Cartesian grid (balanced dims), uneven splits allowed"
    communication = "6 face halos per sweep, Isend/Irecv + Waitall (staged via host on GPU)"
    size_meaning = "N: interior grid points per dimension (N^3 points); extra: sweeps (10)"
    precisions = ("fp64", "fp32")
    devices = ("cpu", "gpu")
    uses_threads = True
    threads_via = "thread pool over plane ranges (numba loop releases the GIL; numpy chunks w/o numba)"
    default_sizes = (40, 56, 64, 80, 100, 128, 160, 200, 256)
    tolerance = {"fp64": 1e-12, "fp32": 1e-5}
    test_size = 12

    def min_size(self, ranks: int) -> int:
        return max(balanced_dims(ranks, 3))

    def setup(self, ctx: KernelContext, size: int) -> StencilState:
        use_device(ctx)
        sweeps = int(ctx.extra.get("sweeps", DEFAULT_SWEEPS))
        dims = balanced_dims(ctx.comm.Get_size(), 3)
        raw = ctx.comm.raw if hasattr(ctx.comm, "raw") else ctx.comm
        cart_raw = _cartesian(raw, tuple(dims))
        cart = ctx.comm.wrap(cart_raw) if hasattr(ctx.comm, "wrap") else cart_raw
        coords = tuple(cart_raw.Get_coords(cart_raw.Get_rank()))
        box = tuple(block_range(size, d, c) for d, c in zip(dims, coords))
        ext = tuple((lo, hi + 2) for lo, hi in box)  # ghost layers, "with boundary" indices
        dtype = arrays.numpy_dtype(ctx.precision)
        initial = global_planes(ctx.seed, INPUT_STREAM, (size + 2,) * 3, ext, dtype=dtype)
        neighbours = [cart_raw.Shift(d, 1) for d in range(3)]
        host_buffers = None
        if ctx.xp is np:
            host_buffers = (aligned_empty(initial.shape, initial.dtype),
                            aligned_empty(initial.shape, initial.dtype))
            for buffer in host_buffers:
                buffer[...] = initial
        fixed_faces = []
        for d in (1, 2):
            for side, peer in enumerate(neighbours[d]):
                if peer < 0:
                    index = [slice(1, -1), slice(None), slice(None)]
                    index[d] = 0 if side == 0 else -1
                    fixed_faces.append(tuple(index))
        return StencilState(size, sweeps, cart, coords, box, initial, neighbours, host_buffers,
                            fixed_faces)

    def run(self, ctx: KernelContext, state: StencilState):
        xp = ctx.xp
        if state.host_buffers is not None:
            current = state.initial
            buffers = state.host_buffers
        else:
            current = arrays.to_device(xp, state.initial)  # timed host-to-device copy
            # Two device work buffers (not the transferred array itself: the fake device's
            # asarray returns a view of the host array, which must stay the initial field).
            buffers = (current.copy(), current.copy())
        exchanger = HaloExchange(ctx, state, current.dtype)
        fixed = [(index, xp.array(current[index])) for index in state.fixed_faces]
        for sweep in range(state.sweeps):
            # The halo exchange only writes ghost faces, so on the first sweep it rewrites the
            # initial field's ghosts with the values they already hold.
            exchanger.exchange(current)
            target = buffers[sweep % 2]
            jacobi_sweep(current, target, ctx.threads, xp, fixed, state.sweep_plans)
            current = target
        arrays.synchronize(xp)
        return current[1:-1, 1:-1, 1:-1]

    def check(self, ctx: KernelContext, state: StencilState, result) -> float:
        want = reference_block(ctx.seed, state.n, state.box, state.sweeps)
        got = arrays.to_host(result)
        return global_relative_error(ctx.comm, got, want)

    def work(self, size: int, ranks: int) -> WorkModel:
        dims = balanced_dims(ranks, 3)
        sweeps = DEFAULT_SWEEPS
        item = 8
        local = [size / d for d in dims]
        points = local[0] * local[1] * local[2]
        faces = 0.0
        messages = 0.0
        for d in range(3):
            if dims[d] > 1:
                # An interior rank has 2 neighbours along d; average over the line: 2 (p-1)/p.
                share = 2.0 * (dims[d] - 1) / dims[d]
                face = points / local[d]
                faces += share * face
                messages += share
        return WorkModel(
            flops=7.0 * points * sweeps,
            bytes_moved=2.0 * item * points * sweeps,
            messages=messages * sweeps,
            comm_bytes=faces * item * sweeps,
            memory_bytes=3.0 * item * (local[0] + 2) * (local[1] + 2) * (local[2] + 2)
            + 2.0 * faces * item,
        )


class HaloExchange:
    """Face buffers and the non-blocking exchange of the 6 ghost faces of a block."""

    def __init__(self, ctx: KernelContext, state: StencilState, dtype):
        self.comm = state.cart
        self.xp = ctx.xp
        self.staged = ctx.xp is not np and not ctx.gpu_aware
        self.neighbours = state.neighbours
        self.faces = []  # (dim, side, send_index, recv_index, send_buf, recv_buf, peer)
        shape = [hi - lo for lo, hi in state.box]
        alloc = np.empty if (ctx.xp is np or self.staged) else ctx.xp.empty
        for d in range(3):
            face_shape = tuple(s for k, s in enumerate(shape) if k != d)
            lower, upper = self.neighbours[d]
            for side, peer in ((0, lower), (1, upper)):
                if peer < 0:  # MPI.PROC_NULL: global boundary, ghosts keep fixed values
                    continue
                send_idx = 1 if side == 0 else shape[d]
                recv_idx = 0 if side == 0 else shape[d] + 1
                self.faces.append((d, side, send_idx, recv_idx, alloc(face_shape, dtype),
                                   alloc(face_shape, dtype), peer))

    @staticmethod
    def _face(u, d: int, index: int):
        sl = [slice(1, -1)] * 3
        sl[d] = index
        return u[tuple(sl)]

    def exchange(self, u) -> None:
        """Fill the ghost faces of ``u`` (nz+2, ny+2, nx+2) from the neighbours' owned faces."""
        if not self.faces:
            return
        requests = []
        for d, side, _, _, _, recv, peer in self.faces:
            # A face sent "up" (side 1) arrives at the upper rank's lower ghost: tag by direction.
            requests.append(self.comm.Irecv(recv, source=peer, tag=2 * d + (1 - side)))
        for d, side, send_idx, _, send, _, peer in self.faces:
            face = self._face(u, d, send_idx)
            send[...] = arrays.to_host(face) if self.staged else face
        # Device-to-device packing is asynchronous: MPI must not read the buffers before it ends.
        arrays.synchronize(self.xp)
        for d, side, _, _, send, _, peer in self.faces:
            requests.append(self.comm.Isend(send, dest=peer, tag=2 * d + side))
        self.comm.Waitall(requests)
        for d, _, _, recv_idx, _, recv, _ in self.faces:
            target = self._face(u, d, recv_idx)
            target[...] = self.xp.asarray(recv) if self.staged else recv


_CARTESIAN: dict[tuple, object] = {}


def _cartesian(raw, dims: tuple[int, int, int]):
    """The non-periodic Cartesian communicator of ``dims`` over ``raw``, created once.

    A sweep calls ``setup`` hundreds of times in one process and MPI has a bounded number of
    communicator contexts, so each (process group, dims) pair gets one, reused. The key is the
    group's members (as COMM_WORLD ranks), not the communicator handle, which MPI may recycle
    after a free; a Cartesian communicator stays valid after its parent is freed. Every rank of
    ``raw`` computes the same key, so all create it together (it is collective).
    """
    MPI = _mpi()
    group, world_group = raw.Get_group(), MPI.COMM_WORLD.Get_group()
    members = tuple(MPI.Group.Translate_ranks(group, list(range(group.Get_size())), world_group))
    group.Free()
    world_group.Free()
    key = (members, dims)
    if key not in _CARTESIAN:
        _CARTESIAN[key] = raw.Create_cart(list(dims), periods=[False] * 3, reorder=False)
    return _CARTESIAN[key]


def _mpi():
    from hpcds1mpi.runtime.mpi import get_mpi

    return get_mpi()
