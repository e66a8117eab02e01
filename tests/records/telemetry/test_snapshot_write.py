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


def _store() -> Store:
    store = Store()
    store.add_run(run_row(0), {t: [] for t in telemetry.DETAIL_TABLES})
    return store


def test_a_rewritten_snapshot_keeps_the_files_mode(tmp_path):
    """s32 tester T8: --resume and merge --out had turned a private 0600 file into 0644."""
    path = tmp_path / "t.h5"
    snapshot_write.write_snapshot(path, _store())
    os.chmod(path, 0o600)
    snapshot_write.write_snapshot(path, _store())
    assert path.stat().st_mode & 0o7777 == 0o600


def test_another_users_private_file_in_a_group_folder_stays_private(tmp_path):
    """s32 tester T8: a 0440 file of one user became 0644, readable by all, when another user
    of the group resumed it."""
    if os.geteuid() != 0:
        pytest.skip("needs root to stand in for the other user")
    folder = tmp_path / "group"
    folder.mkdir()
    os.chown(folder, -1, 65534)
    os.chmod(folder, 0o2770)
    path = folder / "t.h5"
    snapshot_write.write_snapshot(path, _store())
    os.chown(path, 65534, 65534)
    os.chmod(path, 0o440)
    snapshot_write.write_snapshot(path, _store())
    st = path.stat()
    assert (st.st_uid, st.st_gid, st.st_mode & 0o7777) == (0, 65534, 0o440)


def test_a_new_snapshot_follows_the_umask(tmp_path):
    old = os.umask(0o027)
    try:
        snapshot_write.write_snapshot(tmp_path / "t.h5", _store())
    finally:
        os.umask(old)
    assert (tmp_path / "t.h5").stat().st_mode & 0o7777 == 0o640
