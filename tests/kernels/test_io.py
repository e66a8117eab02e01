"""The io kernel on one rank: a checkpoint that cannot be written is one line naming the file
and the reason, and leaves no file behind."""

from __future__ import annotations

import os

import pytest

from hpcds1mpi import kernels
from hpcds1mpi.config import Configuration
from hpcds1mpi.errors import WriteError
from hpcds1mpi.kernels.base import KernelContext
from hpcds1mpi.measure import runner
from hpcds1mpi.runtime.mpi import TimedComm, get_mpi


def test_a_full_workdir_is_one_line_with_the_file_and_the_reason_and_leaves_nothing(small_disk):
    """h5py's error had been cut at a line break in its time stamp (no path, no "No space
    left on device"), and the partial checkpoint stayed in the workdir (GBs at real sizes)."""
    kernel = kernels.get("io")
    ctx = KernelContext(comm=TimedComm(get_mpi().COMM_SELF), precision="fp64",
                        extra={"workdir": str(small_disk)})
    state = kernel.setup(ctx, 1 << 19)  # 4 MiB of fp64 on a 2 MiB disk
    with pytest.raises(WriteError) as got:
        kernel.run(ctx, state)
    line = str(got.value)
    assert "\n" not in line and "No space left on device" in line
    assert state.paths[0] in line and "workdir" in line
    assert os.listdir(small_disk) == []


def test_an_interrupted_run_leaves_no_checkpoint(tmp_path, monkeypatch):
    from hpcds1mpi.kernels import io

    kernel = kernels.get("io")
    ctx = KernelContext(comm=TimedComm(get_mpi().COMM_SELF), precision="fp64",
                        extra={"workdir": str(tmp_path)})
    state = kernel.setup(ctx, 1000)

    def interrupted(h5py, path, out):
        raise KeyboardInterrupt

    monkeypatch.setattr(io, "_read", interrupted)
    with pytest.raises(KeyboardInterrupt):
        kernel.run(ctx, state)
    assert os.listdir(tmp_path) == []


def test_a_checkpoint_round_trip_is_exact_and_leaves_nothing(tmp_path):
    outcome = runner.execute(get_mpi().COMM_SELF, kernels.get("io"), 70001, Configuration(),
                             warmup=1, max_repeats=2, min_repeats=2,
                             extra={"workdir": str(tmp_path)})
    assert outcome.status == "ok" and outcome.rel_error == 0.0, outcome.error
    assert os.listdir(tmp_path) == []
