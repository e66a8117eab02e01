"""The threads knob takes effect: BLAS and torch report the requested count inside the run.

Runs in-process on ``COMM_SELF`` (one rank). Timing (2 threads faster than 1) is the
benchmark's job (benchmarks/kernels.py), not a test's.
"""

from __future__ import annotations

import pytest

from hpcds1mpi.measure import runner
from hpcds1mpi.config import Configuration
from hpcds1mpi.kernels import get


@pytest.fixture(scope="module")
def comm_self():
    from hpcds1mpi.runtime.mpi import get_mpi

    return get_mpi().COMM_SELF


def _usable_cpus() -> int:
    from hpcds1mpi.runtime.binding import initial_cpus

    return len(initial_cpus())


def test_blas_default_is_not_one_thread():
    """The fault the limit must correct: left alone, BLAS would use more than one thread
    (otherwise the threads=1 assertion below could not fail)."""
    if _usable_cpus() < 2:
        pytest.skip("one usable CPU: BLAS defaults to one thread, nothing to limit")
    import numpy  # noqa: F401 - loads the BLAS pool

    assert runner.observed_blas_threads() >= 2


@pytest.mark.parametrize("threads", [1, 2])
def test_gemm_blas_threads_follow_the_knob(comm_self, threads):
    if threads > _usable_cpus():
        pytest.skip(f"{threads} threads need {threads} CPUs")
    outcome = runner.execute(comm_self, get("gemm"), 96, Configuration(threads=threads),
                             max_repeats=1)
    assert outcome.status == "ok", outcome.error
    assert outcome.blas_threads == threads


def test_thread_limits_apply_and_restore():
    """The helper itself: inside the block BLAS reports the limit, afterwards the default."""
    before = runner.observed_blas_threads()
    with runner.thread_limits(1):
        assert runner.observed_blas_threads() == 1
    assert runner.observed_blas_threads() == before


@pytest.mark.parametrize("threads", [1, 2])
def test_mltrain_torch_threads_follow_the_knob(comm_self, threads):
    if threads > _usable_cpus():
        pytest.skip(f"{threads} threads need {threads} CPUs")
    import torch

    # Start from a different count, so a runner that forgot torch would be caught.
    other = 2 if threads == 1 else 1
    torch.set_num_threads(other)
    outcome = runner.execute(comm_self, get("mltrain"), 16, Configuration(threads=threads),
                             max_repeats=1)
    assert outcome.status == "ok", outcome.error
    assert outcome.torch_threads == threads
    assert torch.get_num_threads() == other  # restored after the run


def test_gemm_bf16_torch_threads_follow_the_knob(comm_self):
    """bf16 gemm multiplies in torch: torch's pool must be limited too."""
    import torch

    torch.set_num_threads(2)
    outcome = runner.execute(comm_self, get("gemm"), 64,
                             Configuration(threads=1, precision="bf16"), max_repeats=1)
    assert outcome.status == "ok", outcome.error
    assert outcome.torch_threads == 1
