"""One process-wide thread pool per size, shared by the kernels' threaded loops and by
prediction (numpy, numba and the tree libraries release the GIL in both)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

_POOLS: dict[int, ThreadPoolExecutor] = {}


def pool(threads: int) -> ThreadPoolExecutor | None:
    """A pool of ``threads`` workers, made once per process (None for one thread: run inline).

    Never submit to a pool from one of its own tasks: a task waiting on another task of a
    full pool waits forever.
    """
    if threads <= 1:
        return None
    if threads not in _POOLS:
        _POOLS[threads] = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="hpcds")
    return _POOLS[threads]
