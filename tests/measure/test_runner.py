"""The runner: the threads knob takes effect (BLAS and torch report the requested count inside
the run), repeats follow min_repeats / min_time / max_repeats, and the statuses it decides.

Runs in-process on ``COMM_SELF`` (one rank). Timing (2 threads faster than 1) is the
benchmark's job (benchmarks/kernels.py), not a test's.
"""

from __future__ import annotations

import pytest

from hpcds1mpi.config import Configuration
from hpcds1mpi.kernels import get
from hpcds1mpi.measure import runner
from tests.helpers import REPO


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


# ---------------------------------------------------------------------------------- statuses
# The fault kernels on COMM_SELF: every status the runner decides by itself, and the repeats.


@pytest.fixture(scope="module")
def faults():
    from hpcds1mpi import kernels

    kernels.load_plugin(str(REPO / "tests" / "fault_kernels.py"))
    return kernels.get


def test_ok_run_repeats_until_min_repeats_and_min_time(comm_self, faults):
    ok = runner.execute(comm_self, faults("fault_sleep"), 1, Configuration(), min_repeats=2,
                        max_repeats=5)
    assert (ok.status, ok.error, ok.rel_error) == ("ok", "", 0.0)
    assert len(ok.wall) == len(ok.rank_wall) == len(ok.rank_mpi) == 2
    assert all(w >= 0.001 for w in ok.wall) and ok.rank_cpu >= 0
    # 20 ms a repeat: min_time 0.05 s is reached after the 3rd repeat at the latest.
    timed = runner.execute(comm_self, faults("fault_sleep"), 20, Configuration(),
                           min_time=0.05, max_repeats=10)
    assert 2 <= len(timed.wall) <= 3 and sum(timed.wall) >= 0.05
    capped = runner.execute(comm_self, faults("fault_sleep"), 1, Configuration(),
                            min_time=100.0, max_repeats=2)
    assert len(capped.wall) == 2


def test_each_measured_repeat_is_told_as_it_begins(comm_self, faults):
    """Rank 0's watchdog hears when each measured repeat begins, never a warm-up: what a
    configuration's timeout cut short bounds one run (s41 tester D16)."""
    import time

    began = []
    before = time.monotonic()
    ok = runner.execute(comm_self, faults("fault_sleep"), 1, Configuration(), warmup=2,
                        min_repeats=3, max_repeats=3, on_repeat=began.append)
    assert len(began) == len(ok.wall) == 3 and before <= began[0] <= began[1] <= began[2]


def test_wrong_failed_and_unsupported(comm_self, faults):
    wrong = runner.execute(comm_self, faults("fault_wrong"), 1, Configuration(), max_repeats=1)
    assert wrong.status == "wrong" and "relative error" in wrong.error
    unchecked = runner.execute(comm_self, faults("fault_wrong"), 1, Configuration(),
                               max_repeats=1, check=False)
    assert unchecked.status == "ok" and unchecked.rel_error != unchecked.rel_error  # NaN
    corrupted = runner.execute(comm_self, faults("fault_sleep"), 1, Configuration(),
                               max_repeats=1, corrupt=True)
    assert corrupted.status == "wrong"
    failed = runner.execute(comm_self, faults("fault_raise_all"), 1, Configuration(),
                            max_repeats=1)
    assert failed.status == "failed"
    assert failed.error == "RuntimeError: injected failure on every rank (rank 0)"
    bf16 = runner.execute(comm_self, faults("fault_sleep"), 1, Configuration(precision="bf16"),
                          max_repeats=1)
    assert bf16.status == "unsupported" and not bf16.wall
