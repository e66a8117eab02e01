"""Writing a telemetry snapshot: storable strings, no torn temporary left behind."""

from __future__ import annotations

import os

import pytest

from hpcds1mpi.records import telemetry
from hpcds1mpi.records.telemetry import snapshot_write
from hpcds1mpi.records.telemetry.layout import Store
from tests.records.telemetry.rows import run_row


def test_a_name_with_bytes_that_are_not_utf8_is_stored_with_escapes():
    assert snapshot_write.storable(os.fsdecode(b"t\xff.h5")) == "t\\xff.h5"
    assert snapshot_write.storable("\ud800 lone") == "\\ud800 lone"  # no escaped byte
    assert snapshot_write.storable("é a\0b") == "é ab"


def test_a_snapshot_stopped_by_anything_leaves_no_temporary(tmp_path, monkeypatch):
    """Only OSError / RuntimeError had removed the temporary (in the writer): a
    UnicodeEncodeError or an interrupt left a .NAME.h5.tmp-PID that nothing removed."""
    store = Store()
    store.add_run(run_row(0), {t: [] for t in telemetry.DETAIL_TABLES})

    def stopped():
        raise KeyboardInterrupt

    monkeypatch.setattr(snapshot_write, "_test_pause_mid_write", stopped)
    with pytest.raises(KeyboardInterrupt):
        snapshot_write.write_snapshot(tmp_path / "t.h5", store)
    assert os.listdir(tmp_path) == []
