"""cg's compiled phases against the numpy phases, and the kernel against scipy's CG on both."""

from __future__ import annotations

import numpy as np
import pytest

from hpcds1mpi import kernels
from hpcds1mpi.config import Configuration
from hpcds1mpi.kernels import cg
from hpcds1mpi.measure import runner
from hpcds1mpi.runtime import jit
from hpcds1mpi.runtime.mpi import get_mpi


def _vectors(n: int, dtype):
    rng = np.random.default_rng(7)
    x, r, p = (rng.random((n, n, n)).astype(dtype) for _ in range(3))
    p_pad = np.zeros((n + 2, n + 2, n + 2), dtype=dtype)
    p_pad[1:-1, 1:-1, 1:-1] = p
    p_pad[0] = rng.random((n + 2, n + 2))  # ghost planes hold a neighbour's values
    p_pad[-1] = rng.random((n + 2, n + 2))
    p_pad[0, 0], p_pad[0, -1], p_pad[-1, 0], p_pad[-1, -1] = 0, 0, 0, 0
    p_pad[:, :, 0] = p_pad[:, :, -1] = p_pad[:, 0, :] = p_pad[:, -1, :] = 0
    return x, r, p, p_pad


@pytest.mark.parametrize("dtype,rtol", [(np.float64, 1e-12), (np.float32, 1e-5)])
@pytest.mark.parametrize("threads", [1, 2])
def test_compiled_phases_equal_the_numpy_phases(monkeypatch, dtype, rtol, threads):
    monkeypatch.delenv(jit.NO_JIT_ENV, raising=False)
    monkeypatch.setattr(cg, "CHUNK_BYTES", 8 * 9 * 9 * 2)  # several chunks of 2 planes
    n = 9
    fast = cg.LocalCG(np, dtype, n, n, threads)
    if fast.fused is None:
        pytest.skip("numba is not installed")
    monkeypatch.setenv(jit.NO_JIT_ENV, "1")
    slow = cg.LocalCG(np, dtype, n, n, threads)
    assert slow.fused is None
    results = []
    for local in (fast, slow):
        x, r, p, p_pad = _vectors(n, dtype)
        ap = np.empty_like(p)
        pap = local.apply_and_dot(p_pad, p, ap)
        rr = local.update_solution(0.3, x, r, p, ap)
        local.update_direction(dtype(0.7), p, r, p_pad)
        results.append((pap, rr, ap, x, r, p, p_pad))
    for got, want in zip(*results):
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol)
    # and A p is the 7-point Poisson matrix: check one interior point by hand
    x, r, p, p_pad = _vectors(n, dtype)
    ap = np.empty_like(p)
    fast.apply_and_dot(p_pad, p, ap)
    z, y, c = 4, 3, 5
    hand = (6 * p_pad[z + 1, y + 1, c + 1] - p_pad[z, y + 1, c + 1] - p_pad[z + 2, y + 1, c + 1]
            - p_pad[z + 1, y, c + 1] - p_pad[z + 1, y + 2, c + 1] - p_pad[z + 1, y + 1, c]
            - p_pad[z + 1, y + 1, c + 2])
    assert ap[z, y, c] == pytest.approx(hand, rel=rtol)


@pytest.mark.parametrize("no_jit", ["0", "1"])
@pytest.mark.parametrize("precision", ["fp64", "fp32"])
def test_kernel_matches_scipy_cg_on_both_paths(monkeypatch, no_jit, precision):
    monkeypatch.setenv(jit.NO_JIT_ENV, no_jit)
    kernel = kernels.get("cg")
    outcome = runner.execute(get_mpi().COMM_SELF, kernel, 11, Configuration(precision=precision),
                             warmup=1, max_repeats=2, min_repeats=2)
    assert outcome.status == "ok", outcome.error
    assert outcome.rel_error <= kernel.tolerance[precision]


def test_work_model_counts_the_compiled_phases():
    work = kernels.get("cg").work(40, 1)
    assert work.bytes_moved == pytest.approx(12 * 8 * 40 ** 3 * cg.DEFAULT_ITERATIONS)
    assert work.flops == pytest.approx(17 * 40 ** 3 * cg.DEFAULT_ITERATIONS)


@pytest.mark.parametrize("size", [1, 2])
def test_a_system_solved_exactly_before_the_last_iteration_is_ok(size):
    """N = 1 or 2 is solved in fewer than 50 iterations: the residual is exactly 0, and the
    next step divided by it (ZeroDivisionError, a failed run) in the kernel and the reference."""
    kernel = kernels.get("cg")
    outcome = runner.execute(get_mpi().COMM_SELF, kernel, size, Configuration(),
                             warmup=0, max_repeats=1, min_repeats=1)
    assert outcome.status == "ok", outcome.error
    assert outcome.rel_error <= kernel.tolerance["fp64"]
