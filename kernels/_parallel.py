"""Shared helpers of the built-in kernels: plane-seeded inputs and a chunked thread pool.

Not a kernel (the registry imports only the names in ``BUILTIN_MODULES``).
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from hpcds1mpi.runtime.pools import pool


def plane_rng(seed: int, stream: int, plane: int) -> np.random.Generator:
    """The generator of one plane of a global array.

    Seeding each plane from ``(seed, stream, plane)`` lets every rank build exactly its own slice
    of a global array, with values that do not depend on the rank count.
    """
    return np.random.default_rng([seed, stream, plane])


def global_planes(seed: int, stream: int, shape: tuple[int, int, int],
                  box: tuple[tuple[int, int], ...], dtype=np.float64) -> np.ndarray:
    """The sub-box ``box`` of a global uniform[0, 1) array of ``shape``, built plane by plane.

    Args:
        seed, stream: identify the global array.
        shape: global shape (Z, Y, X); plane ``z`` is drawn whole as a (Y, X) array.
        box: ((z0, z1), (y0, y1), (x0, x1)) half-open ranges.

    Returns:
        Array of shape (z1-z0, y1-y0, x1-x0) in ``dtype``.
    """
    (z0, z1), (y0, y1), (x0, x1) = box
    out = np.empty((z1 - z0, y1 - y0, x1 - x0), dtype=dtype)
    for z in range(z0, z1):
        plane = plane_rng(seed, stream, z).random((shape[1], shape[2]))
        out[z - z0] = plane[y0:y1, x0:x1]
    return out


def aligned_empty(shape: tuple[int, ...], dtype=np.float64, alignment: int = 64) -> np.ndarray:
    """An uninitialised C-contiguous array whose first element sits on an ``alignment``-byte
    boundary (numpy only guarantees 16 bytes; its SIMD loops run about 2x slower when the
    output of a ufunc is not cache-line aligned)."""
    dtype = np.dtype(dtype)
    count = int(np.prod(shape))
    raw = np.empty(count + alignment // dtype.itemsize, dtype=dtype)
    offset = (-raw.ctypes.data % alignment) // dtype.itemsize
    return raw[offset:offset + count].reshape(shape)


def aligned_chunks(flat: np.ndarray, start: int, stop: int, chunk: int,
                   alignment: int = 64) -> list[tuple[int, int]]:
    """Split [start, stop) of the 1D array ``flat`` into pieces of at most ``chunk`` items whose
    starts (after the first) fall on ``alignment``-byte boundaries of ``flat``'s memory.

    Used for chunks that are ufunc outputs: an aligned output keeps numpy's vector loop fast.
    """
    item = flat.itemsize
    step = max(1, alignment // item)
    chunk = max(step, chunk - chunk % step)
    address = flat.ctypes.data + start * item
    head = (-address % alignment) // item if address % item == 0 else 0
    pieces = []
    position = start
    if head and start + head < stop:
        pieces.append((start, start + head))
        position = start + head
    while position < stop:
        pieces.append((position, min(stop, position + chunk)))
        position += chunk
    return pieces


def chunks(n: int, chunk: int) -> list[tuple[int, int]]:
    """Split range(n) into consecutive [start, stop) pieces of at most ``chunk`` items."""
    chunk = max(1, chunk)
    return [(s, min(n, s + chunk)) for s in range(0, n, chunk)]


def run_chunks(fn: Callable[[int, int], None], pieces: list[tuple[int, int]], threads: int) -> None:
    """Call ``fn(start, stop)`` for every piece, on ``threads`` threads (see ``run_items``)."""
    run_items(lambda piece: fn(*piece), pieces, threads)


def run_items(fn: Callable[[object], None], items: list, threads: int) -> None:
    """Call ``fn(item)`` for every item, on ``threads`` threads.

    numpy releases the GIL inside ufunc loops on large arrays, so items run truly in parallel.
    Items are dealt round-robin to one task per thread, which keeps the per-task overhead low.
    """
    executor = pool(threads)
    if executor is None or len(items) == 1:
        for item in items:
            fn(item)
        return

    def worker(mine: list) -> None:
        for item in mine:
            fn(item)

    futures = [executor.submit(worker, items[t::threads]) for t in range(threads)]
    for future in futures:
        future.result()


def use_device(ctx) -> None:
    """Make the GPU of this rank current (node-local rank modulo the GPUs), for cupy runs.

    Called from ``setup``, before any device allocation; a no-op on CPU.
    """
    xp = ctx.xp
    if xp is np:
        return
    count = int(xp.cuda.runtime.getDeviceCount())
    if count > 0:
        xp.cuda.Device(ctx.local_rank % count).use()
