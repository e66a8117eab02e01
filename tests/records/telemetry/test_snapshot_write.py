"""Writing a telemetry snapshot: storable strings, no torn temporary left behind."""

from __future__ import annotations

import os
import shutil
import subprocess

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


def test_every_column_is_written_with_its_units(tmp_path):
    """s37 left: no column dataset had a ``units`` attribute (docs/telemetry.md had them)."""
    import h5py

    from hpcds1mpi.records.telemetry.units import column_units

    path = tmp_path / "t.h5"
    snapshot_write.write_snapshot(path, _store())
    with h5py.File(path, "r") as f:
        assert f["runs/runtime_s"].attrs["units"] == "s"
        assert f["runs/peak_rss_mb"].attrs["units"] == "MiB"
        for table, columns in telemetry.TABLES.items():
            for name, kind in columns:
                assert f[table][name].attrs["units"] == column_units(table, name, kind)


@pytest.mark.skipif(not shutil.which("h5repack"), reason="h5repack (hdf5-tools) not installed")
def test_a_new_file_survives_h5repack_gzip_and_reads_the_same(tmp_path):
    """s37 left: ``h5repack -f GZIP=6`` (HDF5 1.10.8) failed on the empty provenance and
    detail datasets (contiguous, 0 long: no chunk fits them). The repacked file reads as the
    original, units kept, and a resume rewrites it."""
    import h5py

    path, packed = tmp_path / "t.h5", tmp_path / "packed.h5"
    snapshot_write.write_snapshot(path, _store())
    done = subprocess.run(["h5repack", "-f", "GZIP=6", str(path), str(packed)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr + done.stdout
    assert telemetry.read_runs(packed).equals(telemetry.read_runs(path))
    with h5py.File(packed, "r") as f:
        assert f["runs/runtime_s"].compression == "gzip"
        assert f["provenance/merged_at"].attrs["units"].startswith("s since 1970")
    store = telemetry.read_snapshot(packed)
    assert not store.foreign  # the units are ours, not another program's
    snapshot_write.write_snapshot(packed, store, keep_foreign=True)
    assert telemetry.read_runs(packed).equals(telemetry.read_runs(path))


def test_a_file_written_before_the_units_reads_and_gains_them_when_rewritten(tmp_path):
    import h5py

    path = tmp_path / "t.h5"
    snapshot_write.write_snapshot(path, _store())
    with h5py.File(path, "r+") as f:  # as every file before session 38
        for table in telemetry.TABLES:
            for column in f[table].values():
                del column.attrs["units"]
    store = telemetry.read_snapshot(path)
    assert len(store.runs) == 1 and not store.foreign
    snapshot_write.write_snapshot(path, store, keep_foreign=True)
    with h5py.File(path, "r") as f:
        assert f["runs/energy_j"].attrs["units"] == "J"
