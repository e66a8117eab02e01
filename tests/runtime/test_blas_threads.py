"""runtime/blas_threads: numpy's BLAS on one thread inside the context, as before after it."""

from __future__ import annotations

import numpy as np  # noqa: F401  (loads the BLAS that threadpoolctl sees)
from threadpoolctl import threadpool_info

from hpcds1mpi.runtime.blas_threads import one_blas_thread


def _blas_threads() -> list[int]:
    return [p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"]


def test_blas_runs_on_one_thread_inside_and_as_before_after():
    before = _blas_threads()
    assert before, "numpy's BLAS is not visible to threadpoolctl"
    with one_blas_thread():
        assert set(_blas_threads()) == {1}
    assert _blas_threads() == before
