"""The process-wide thread pools: one per size, none for one thread."""

from __future__ import annotations

import threading

from hpcds1mpi.runtime.pools import pool


def test_one_pool_per_size_and_inline_for_one_thread():
    assert pool(1) is None and pool(0) is None
    two = pool(2)
    assert two is pool(2) and two is not pool(3)
    names = set(two.map(lambda _: threading.current_thread().name, range(8)))
    assert names and all(n.startswith("hpcds") for n in names)
    assert two._max_workers == 2
