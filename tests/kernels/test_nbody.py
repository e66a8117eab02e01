"""nbody's all-pairs forces: the compiled loop and the numpy fallback against a direct sum."""

from __future__ import annotations

import numpy as np
import pytest

from hpcds1mpi.kernels.base import relative_error
from hpcds1mpi.kernels.nbody import _pair_loop, accumulate_forces, particles, reference_forces
from hpcds1mpi.runtime import jit


def direct_forces(bodies: np.ndarray) -> np.ndarray:
    """Plain fp64 double loop over pairs (the textbook formula, nothing shared with the kernel)."""
    out = np.zeros((len(bodies), 3))
    for i in range(len(bodies)):
        diff = bodies[:, :3] - bodies[i, :3]
        dist2 = (diff ** 2).sum(axis=1) + 0.02 ** 2
        out[i] = (bodies[:, 3:4] * diff / dist2[:, None] ** 1.5).sum(axis=0)
    return out


@pytest.mark.parametrize("use_jit", [True, False])
@pytest.mark.parametrize("precision,dtype,tol", [("fp64", np.float64, 1e-12),
                                                 ("fp32", np.float32, 5e-5)])
@pytest.mark.parametrize("threads", [1, 2])
def test_forces_match_a_direct_sum(monkeypatch, use_jit, precision, dtype, tol, threads):
    if use_jit:
        monkeypatch.delenv(jit.NO_JIT_ENV, raising=False)
        if jit.compiled(_pair_loop, fastmath=True) is None:
            pytest.skip("numba is not installed")
    else:
        monkeypatch.setenv(jit.NO_JIT_ENV, "1")
    bodies = particles(3, 97)  # odd: uneven thread chunks
    want = direct_forces(bodies)
    cast = bodies.astype(dtype)
    acc = np.zeros((97, 3), dtype=dtype)
    accumulate_forces(np.ascontiguousarray(cast[:, :3]), cast, acc, threads=threads, same=True)
    assert acc.dtype == dtype
    assert relative_error(acc, want) < tol
    np.testing.assert_allclose(reference_forces(bodies, 0, 97), want, rtol=1e-10, atol=1e-12)


def test_forces_accumulate_over_source_blocks():
    """Sources arriving in blocks (the ring) sum to the all-at-once answer; self pairs add 0."""
    bodies = particles(4, 64)
    targets = np.ascontiguousarray(bodies[:16, :3])
    acc = np.zeros((16, 3))
    for lo in range(0, 64, 16):
        accumulate_forces(targets, bodies[lo:lo + 16], acc, same=lo == 0)
    assert relative_error(acc, direct_forces(bodies)[:16]) < 1e-12


def test_a_pair_pulls_equally_and_oppositely():
    pair = particles(2, 2)
    acc = np.zeros((2, 3))
    accumulate_forces(np.ascontiguousarray(pair[:, :3]), pair, acc, same=True)
    np.testing.assert_allclose(pair[0, 3] * acc[0], -pair[1, 3] * acc[1], rtol=1e-12)
    # attraction: body 0 is pulled towards body 1
    assert np.dot(acc[0], pair[1, :3] - pair[0, :3]) > 0
