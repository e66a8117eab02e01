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


def test_a_snapshot_through_a_link_is_written_at_its_target_the_link_kept(tmp_path):
    """s33 tester C3: the rename replaced the link with a plain file and the target never got
    the runs; a dead writer's temporary beside the target goes, a live one's stays."""
    import subprocess
    import sys

    (tmp_path / "store").mkdir()
    real, link = tmp_path / "store" / "real.h5", tmp_path / "link.h5"
    link.symlink_to("store/real.h5")  # dangling: the first snapshot creates the target
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True).stdout.strip()
    dead = tmp_path / "store" / f".real.h5.tmp-{done}"
    live = tmp_path / "store" / f".real.h5.tmp-{os.getppid()}"
    for stale in (dead, live):
        stale.write_text("torn")
    snapshot_write.write_snapshot(link, _store())
    store = _store()
    store.add_run(run_row(1), {t: [] for t in telemetry.DETAIL_TABLES})
    snapshot_write.write_snapshot(link, store)
    assert link.is_symlink() and os.readlink(link) == "store/real.h5"
    assert len(telemetry.read_runs(real)) == 2
    assert sorted(os.listdir(real.parent)) == [live.name, "real.h5"]


def test_a_sweep_resumed_through_a_link_adds_its_runs_to_the_target(tmp_path):
    """``sweep --out link.h5 --resume`` (link.h5 -> store/real.h5) left link.h5 a plain file
    and store/real.h5 at its one earlier run (s33 tester C3)."""
    from tests.helpers import run_cli

    (tmp_path / "store").mkdir()
    real, link = tmp_path / "store" / "real.h5", tmp_path / "link.h5"
    plan = tmp_path / "p.toml"
    sweep = ('[sweep]\nmin_time = 0.0\nmax_repeats = 1\nnodes = [1]\nranks_per_node = [1]\n'
             'threads = [1]\nprecisions = ["fp64"]\nsizes = {}\n[[kernel]]\nname = "gemm"\n')
    plan.write_text(sweep.format("[32]"))
    args = ["sweep", "--plan", str(plan), "--no-progress"]
    assert run_cli([*args, "--out", str(real)], timeout=120).returncode == 0
    link.symlink_to("store/real.h5")
    plan.write_text(sweep.format("[32, 48]"))
    proc = run_cli([*args, "--out", str(link), "--resume"], timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert link.is_symlink() and sorted(telemetry.read_runs(real)["size"]) == [32, 48]
