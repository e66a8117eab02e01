"""Threads for fitting, and prediction over row blocks in row order."""

from __future__ import annotations

import numpy as np

from hpcds1mpi.surrogates import parallel


def test_small_tables_fit_on_one_thread():
    assert parallel.fit_threads(parallel.PARALLEL_MIN_ROWS - 1, 4) == 1
    assert parallel.fit_threads(parallel.PARALLEL_MIN_ROWS, 4) == 4


def test_row_blocks_cover_every_row_once_in_order(monkeypatch):
    monkeypatch.setattr(parallel, "predict_threads", lambda: 3)
    n = 5 * parallel.PREDICT_PARALLEL_ROWS + 7
    blocks = parallel.map_row_blocks(lambda start, stop: (int(start), int(stop)), n)
    assert len(blocks) == 3  # one per usable core
    assert blocks[0][0] == 0 and blocks[-1][1] == n
    assert all(a[1] == b[0] for a, b in zip(blocks, blocks[1:]))
    # a small table is one block
    assert parallel.map_row_blocks(lambda start, stop: (start, stop), 10) == [(0, 10)]


def test_parallel_map_keeps_item_order(monkeypatch):
    monkeypatch.setattr(parallel, "predict_threads", lambda: 2)
    items = list(range(50))
    got = parallel.parallel_map(lambda i: i * i, items, parallel.PREDICT_PARALLEL_ROWS)
    assert got == [i * i for i in items]
    assert np.array_equal(parallel.parallel_map(np.sqrt, [4.0], 1), [2.0])
