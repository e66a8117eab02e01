"""Ending an in-process sweep: the one-line error of a failed telemetry write."""

from __future__ import annotations

import errno

from hpcds1mpi.errors import OutputError, WriteError
from hpcds1mpi.measure.sweep_abort import sweep_storage_error


def test_wording_a_storage_error_never_raises_one_of_its_own(tmp_path):
    """s32 tester T1: rank 0 worded the error by looking for the file's journal, whose name
    was too long: that raised again, past the bcast the other ranks waited in (a hang)."""
    out = str(tmp_path / ("k" * 300 + ".h5"))
    error = sweep_storage_error(OSError(errno.ENOSPC, "No space left on device"), out)
    assert isinstance(error, WriteError) and "nothing was written" in str(error)
    error = sweep_storage_error(OSError(errno.ENAMETOOLONG, "File name too long", out), out)
    assert isinstance(error, OutputError) and "choose a shorter --out" in str(error)
