"""How many threads fitting and prediction use, and prediction spread over row blocks.

The one place the surrogates decide their parallelism: :func:`fit_threads` (the ensemble
members, the TabNet embedding and the sampling model all train through it) and
:func:`parallel_map` / :func:`map_row_blocks` (prediction on the process-wide pool of
:mod:`hpcds1mpi.runtime.pools`).
"""

from __future__ import annotations

import numpy as np

#: Below this many rows a model trains on one thread: OpenMP pools (LightGBM, XGBoost) spin-wait,
#: and on a shared 2-core machine a 2-thread fit of 100 rows was measured 100x slower than 1.
PARALLEL_MIN_ROWS = 20000
#: From this many scored rows on, prediction spreads over the usable cores (threads: the
#: members' C libraries and numpy's matrix products release the GIL); below it one thread is
#: faster (System 1's grids score a few hundred tree regions).
PREDICT_PARALLEL_ROWS = 4096


def fit_threads(n_rows: int, threads: int) -> int:
    """Threads worth using to fit on ``n_rows`` rows."""
    return threads if n_rows >= PARALLEL_MIN_ROWS else 1


def predict_threads() -> int:
    """Cores prediction may use: this process's CPU affinity, at most 8."""
    from hpcds1mpi.runtime.binding import initial_cpus

    return max(1, min(8, len(initial_cpus())))


def parallel_map(fn, items: list, n_rows: int) -> list:
    """``[fn(item) for item in items]``, on the usable cores when ``n_rows`` is large enough."""
    from hpcds1mpi.runtime.pools import pool

    workers = pool(predict_threads() if n_rows >= PREDICT_PARALLEL_ROWS else 1)
    if workers is None or len(items) <= 1:
        return [fn(item) for item in items]
    return list(workers.map(fn, items))


def map_row_blocks(fn, n_rows: int) -> list:
    """``fn(start, stop)`` over consecutive row blocks, one per usable core (blocks of at least
    ``PREDICT_PARALLEL_ROWS / 2`` rows; one block when small), in row order."""
    blocks = max(1, min(predict_threads(), n_rows // (PREDICT_PARALLEL_ROWS // 2)))
    bounds = np.linspace(0, n_rows, blocks + 1).astype(int)
    return parallel_map(lambda b: fn(b[0], b[1]), list(zip(bounds[:-1], bounds[1:])), n_rows)
