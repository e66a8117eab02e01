"""Checkpoint write and read-back of a distributed 1D array to HDF5, measuring bandwidth.

The global array has ``size`` elements split in row blocks (``block_range``). Two modes,
chosen by ``ctx.extra["io_mode"]``:

- ``"gather"`` (default): rank 0 gathers the blocks with ``Gatherv``, writes one file with one
  dataset, flushes and ``fsync``s it; then reads it back and scatters with ``Scatterv``. The PyPI
  h5py has no MPI driver, so this is what a job without parallel HDF5 does.
- ``"shards"``: every rank writes and reads back its own file (no communication).

Files go to ``ctx.extra["workdir"]`` (shared storage for multi-node jobs) or the system temp
directory, and are deleted at the end of each run. Write and read times are each the slowest
rank's; bandwidth = global bytes / time. The read usually comes from the page cache (we do not
drop caches on a shared machine), so it measures the cached path, not the disk.

On GPU the array is copied to the device (timed), then back to the host for writing, and the
read-back is copied to the device again: a GPU job's checkpoint pays both transfers.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass

import numpy as np

from hpcds1mpi.kernels import register
from hpcds1mpi.kernels.base import Kernel, KernelContext, WorkModel, block_range

TILE = 1 << 16
_STREAM = 41
MODES = ("gather", "shards")


def array_block(seed: int, n: int, start: int, stop: int) -> np.ndarray:
    """Elements ``[start, stop)`` of the global standard-normal array of length ``n``, fp64.
    Tiles of :data:`TILE` elements are seeded independently (rank-count independent)."""
    out = np.empty(stop - start, dtype=np.float64)
    if stop <= start:
        return out
    for tile in range(start // TILE, -(-stop // TILE)):
        t0 = tile * TILE
        values = np.random.default_rng([seed, _STREAM, n, tile]).standard_normal(
            min(TILE, n - t0))
        lo, hi = max(start, t0), min(stop, t0 + TILE)
        out[lo - start:hi - start] = values[lo - t0:hi - t0]
    return out


@dataclass
class _IoState:
    n: int
    mode: str
    blocks: list[tuple[int, int]]
    host: np.ndarray  # (m,) this rank's block in the run's precision
    paths: list[str]  # files this rank writes (deleted at the end of each run)
    gathered: np.ndarray | None  # (n,) rank 0's gather/read buffer in gather mode
    readback: np.ndarray  # (m,) host buffer for the read-back block


@register
class Io(Kernel):
    name = "io"
    options = {"io_mode": (str, MODES), "workdir": (str, None)}
    description = "HDF5 checkpoint write (fsync) and read-back of a distributed array"
    decomposition = "1D row blocks; rank 0 gathers to one file, or one file per rank"
    communication = "gather mode: Gatherv before the write, Scatterv after the read; shards: none"
    size_meaning = ("global array length (elements); extra: io_mode gather|shards (gather), "
                    "workdir (system temp dir)")
    threads_via = "none (I/O bound)"
    precisions = ("fp64", "fp32")
    devices = ("cpu", "gpu")
    uses_threads = False
    default_sizes = (1 << 17, 1 << 18, 1 << 19, 1 << 20, 1 << 21, 1 << 22, 1 << 23, 1 << 24,
                     1 << 25)
    tolerance = {"fp64": 0.0, "fp32": 0.0}  # a checkpoint is bit-exact or broken
    test_size = 70001  # odd, spans two generator tiles

    def __init__(self) -> None:
        #: The last run's bandwidths and times (seconds, bytes per second).
        self.last_profile: dict | None = None

    def min_size(self, ranks: int) -> int:
        return ranks

    def setup(self, ctx: KernelContext, size: int) -> _IoState:
        import tempfile
        import uuid

        from hpcds1mpi.runtime.arrays import numpy_dtype
        from hpcds1mpi.errors import ConfigError

        mode = ctx.extra.get("io_mode", "gather")
        if mode not in MODES:
            raise ConfigError(f"io_mode must be one of {', '.join(MODES)}, got {mode!r}")
        n = int(size)
        ranks, rank = ctx.comm.Get_size(), ctx.comm.Get_rank()
        blocks = [block_range(n, ranks, k) for k in range(ranks)]
        start, stop = blocks[rank]
        workdir = ctx.extra.get("workdir") or tempfile.gettempdir()
        os.makedirs(workdir, exist_ok=True)
        # One token for the whole job (rank 0's), so the files of concurrent jobs never clash.
        token = ctx.comm.bcast(uuid.uuid4().hex[:12] if rank == 0 else None, root=0)
        if mode == "gather":
            paths = [os.path.join(workdir, f"hpcds1mpi-io-{token}.h5")] if rank == 0 else []
        else:
            paths = [os.path.join(workdir, f"hpcds1mpi-io-{token}-r{rank}.h5")]
        dtype = numpy_dtype(ctx.precision)
        return _IoState(
            n=n, mode=mode, blocks=blocks,
            host=array_block(ctx.seed, n, start, stop).astype(dtype),
            paths=paths,
            gathered=np.empty(n, dtype=dtype) if mode == "gather" and rank == 0 else None,
            readback=np.empty(stop - start, dtype=dtype),
        )

    def run(self, ctx: KernelContext, state: _IoState) -> dict:
        import time

        import h5py

        from hpcds1mpi.runtime.arrays import synchronize, to_host
        from hpcds1mpi.runtime.mpi import get_mpi

        MPI = get_mpi()
        comm, xp = ctx.comm, ctx.xp
        rank = comm.Get_rank()
        on_device = xp is not np
        data = xp.asarray(state.host) if on_device else state.host  # the array to checkpoint
        synchronize(xp)
        counts = [b - a for a, b in state.blocks]
        displs = [a for a, _ in state.blocks]
        mpi_type = MPI.DOUBLE if state.host.dtype == np.float64 else MPI.FLOAT

        try:
            comm.Barrier()
            start = time.perf_counter()
            block = to_host(data) if on_device else data  # D2H before writing
            failure = None
            if state.mode == "gather":
                comm.Gatherv(block, [state.gathered, counts, displs, mpi_type] if rank == 0
                             else None, root=0)
                if rank == 0:
                    failure = _write(h5py, state.paths[0], state.gathered)
            else:
                failure = _write(h5py, state.paths[0], block)
            write_s = time.perf_counter() - start

            _together(comm, failure)  # the barrier before the read: every rank or none fails
            start = time.perf_counter()
            if state.mode == "gather":
                if rank == 0:
                    _read(h5py, state.paths[0], state.gathered)
                comm.Scatterv([state.gathered, counts, displs, mpi_type] if rank == 0
                              else None, state.readback, root=0)
            else:
                _read(h5py, state.paths[0], state.readback)
            restored = xp.asarray(state.readback) if on_device else state.readback.copy()
            synchronize(xp)
            read_s = time.perf_counter() - start
        finally:  # a failed or interrupted run leaves no checkpoint in the workdir either
            for path in state.paths:
                with contextlib.suppress(FileNotFoundError):
                    os.remove(path)
        times = np.empty(2)
        comm.Allreduce(np.array([write_s, read_s]), times, op=MPI.MAX)
        nbytes = float(state.n * state.host.dtype.itemsize)
        profile = {"write_s": float(times[0]), "read_s": float(times[1]),
                   "write_Bps": nbytes / float(times[0]), "read_Bps": nbytes / float(times[1]),
                   "bytes": nbytes, "mode": state.mode}
        self.last_profile = profile
        return {"restored": restored, "files": list(state.paths), **profile}

    def check(self, ctx: KernelContext, state: _IoState, result: dict) -> float:
        """Relative error of the read-back block against the written one (regenerated from the
        seed), MAX over ranks; infinite when a file was left behind."""
        from hpcds1mpi.runtime.arrays import to_host
        from hpcds1mpi.runtime.mpi import get_mpi

        MPI = get_mpi()
        start, stop = state.blocks[ctx.comm.Get_rank()]
        want = array_block(ctx.seed, state.n, start, stop).astype(state.host.dtype)
        got = np.asarray(to_host(result["restored"]))
        if got.shape != want.shape:
            error = float("inf")
        else:
            diff = np.abs(got.astype(np.float64) - want.astype(np.float64))
            scale = float(np.max(np.abs(want))) if want.size else 1.0
            error = float(np.max(diff)) / scale if want.size else 0.0
        if any(os.path.exists(p) for p in state.paths) or not np.isfinite(error):
            error = float("inf")
        out = np.empty(1)
        ctx.comm.Allreduce(np.array([error]), out, op=MPI.MAX)
        return float(out[0])

    def work(self, size: int, ranks: int) -> WorkModel:
        """Gather mode (the default), rank 0, fp64: it writes and reads the whole array."""
        n = int(size)
        m = -(-n // ranks)
        item = 8
        return WorkModel(
            flops=0.0,
            bytes_moved=float(2 * n * item),  # written once, read once (by rank 0)
            messages=float(2 if ranks > 1 else 0),
            comm_bytes=float((n - m) * item if ranks > 1 else 0),  # rank 0 scatters the rest
            memory_bytes=float((n + 3 * m) * item),
        )


def _write(h5py, path: str, array: np.ndarray):
    """One contiguous dataset, flushed and fsync'ed: a checkpoint must reach the storage.

    Returns:
        None, or the one-line error of a write that failed (:func:`_storage_failure`).
    """
    try:
        with h5py.File(path, "w") as f:
            f.create_dataset("array", data=array)
        # After close, so HDF5's final metadata writes are included.
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    except (OSError, RuntimeError) as exc:  # a full disk, a quota, an unwritable workdir
        return _storage_failure(exc, path, "written")
    return None


def _read(h5py, path: str, out: np.ndarray) -> None:
    try:
        with h5py.File(path, "r") as f:
            f["array"].read_direct(out)
    except (OSError, RuntimeError) as exc:
        raise _storage_failure(exc, path, "read back") from None


def _together(comm, failure) -> None:
    """Raise on every rank when any rank's checkpoint write failed (``failure``: its error):
    a rank failing alone would leave the others waiting in the read's collectives."""
    from hpcds1mpi.errors import WriteError
    from hpcds1mpi.runtime.mpi import get_mpi

    failed = np.empty(1)
    comm.Allreduce(np.array([1.0 if failure is not None else 0.0]), failed, op=get_mpi().MAX)
    if failed[0]:
        raise failure or WriteError("another rank's checkpoint was not written (its reason is "
                                    "recorded by that rank)")


def _storage_failure(exc: Exception, path: str, done: str):
    """One line naming the file and the reason: h5py's message (cut at a line break inside its
    time stamp) had named neither the path nor "No space left on device"."""
    import re

    from hpcds1mpi.errors import WriteError

    code = getattr(exc, "errno", None)
    if not code:
        found = re.search(r"errno = (\d+)", str(exc))
        code = int(found.group(1)) if found else None
    reason = os.strerror(code) if code else " ".join(str(exc).split())[:200]
    return WriteError(f"{path}: checkpoint not {done} ({reason}); free space in "
                      f"{os.path.dirname(path) or '.'} or give the io kernel another workdir "
                      "(the plan's extra workdir, or TMPDIR)")
