"""fft on one rank (no transpose): the answer, the input kept intact, and its work model."""

from __future__ import annotations

import numpy as np
import pytest

from hpcds1mpi import kernels
from hpcds1mpi.config import Configuration
from hpcds1mpi.kernels.base import KernelContext, relative_error
from hpcds1mpi.kernels.fft import input_planes
from hpcds1mpi.measure import runner
from hpcds1mpi.runtime.mpi import TimedComm, get_mpi


@pytest.mark.parametrize("precision,tol", [("fp64", 1e-12), ("fp32", 1e-5)])
@pytest.mark.parametrize("threads", [1, 2])
def test_one_rank_matches_numpy_and_keeps_its_input(precision, tol, threads):
    kernel = kernels.get("fft")
    ctx = KernelContext(comm=TimedComm(get_mpi().COMM_SELF), precision=precision,
                        threads=threads)
    state = kernel.setup(ctx, 12)
    before = state.input.copy()
    want = np.fft.fftn(input_planes(0, 12, 0, 12))
    for _ in range(2):  # a second run sees the same input: the transforms work on a copy
        got = kernel.run(ctx, state)
        assert got.shape == (12, 12, 12)
        assert relative_error(got.view(got.real.dtype).astype(np.float64),
                              want.view(np.float64)) < tol
        np.testing.assert_array_equal(state.input, before)


def test_repeated_runs_through_the_runner_stay_correct():
    outcome = runner.execute(get_mpi().COMM_SELF, kernels.get("fft"), 10, Configuration(),
                             warmup=1, max_repeats=3, min_repeats=3)
    assert outcome.status == "ok", outcome.error
    assert len(outcome.wall) == 3


def test_one_rank_work_has_no_pack_and_no_messages():
    kernel = kernels.get("fft")
    one, two = kernel.work(64, 1), kernel.work(64, 2)
    item = 16
    assert one.bytes_moved == pytest.approx(4 * 2 * item * 64 ** 3)  # copy + 3 axis passes
    assert two.bytes_moved == pytest.approx(5 * 2 * item * 64 ** 3 / 2)  # + the pack
    assert one.messages == 0 and one.comm_bytes == 0
    assert one.memory_bytes == pytest.approx(2 * item * 64 ** 3)
