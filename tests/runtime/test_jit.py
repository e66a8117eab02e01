"""Optional numba compilation: compiled once per function, off with HPCDS1MPI_NO_JIT=1."""

from __future__ import annotations

import numpy as np

from hpcds1mpi.runtime import jit


def _double_sum(a):
    total = 0.0
    for x in a:
        total += 2.0 * x
    return total


def test_compiled_once_and_equal_to_the_python_function(monkeypatch):
    monkeypatch.delenv(jit.NO_JIT_ENV, raising=False)
    fast = jit.compiled(_double_sum)
    try:
        import numba  # noqa: F401
    except ImportError:
        assert fast is None
        return
    assert fast is not None and jit.compiled(_double_sum) is fast
    a = np.arange(10.0)
    assert fast(a) == _double_sum(a) == 90.0


def test_no_jit_selects_numpy(monkeypatch):
    monkeypatch.setenv(jit.NO_JIT_ENV, "1")
    assert jit.compiled(_double_sum) is None
