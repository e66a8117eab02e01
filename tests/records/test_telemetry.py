"""The telemetry store: round trip, schema checks, journal crash safety, lock, merge."""

from __future__ import annotations

import math
import multiprocessing
import os
import time

import h5py
import pytest

from hpcds1mpi.records import telemetry
from hpcds1mpi.errors import LockError, TelemetryError

CONTRACT = ["run_id", "machine_id", "workload", "size", "nodes", "ranks_per_node", "ranks",
            "threads", "device", "precision", "status", "error", "runtime_s", "runtime_min_s",
            "runtime_max_s", "repeats", "noise", "mpi_fraction", "cpu_s", "peak_rss_mb",
            "gpu_busy_s", "gpu_peak_mem_mb", "energy_j", "avg_power_w", "energy_source",
            "rel_error", "work_flops", "work_bytes", "comm_messages", "comm_bytes",
            "mem_bytes_per_rank", "partition", "cores_per_node", "memory_gb", "gpus_per_node"]


def _row(i: int, machine: str = "m1", status: str = "ok", **kw) -> dict:
    row = {"run_id": f"r{i:03d}", "machine_id": machine, "workload": "stencil", "size": 64 + i,
           "nodes": 1, "ranks_per_node": 2, "ranks": 2, "threads": 1, "device": "cpu",
           "precision": "fp64", "status": status, "error": "", "runtime_s": 0.5 + i,
           "repeats": 3, "energy_source": "modelled", "finished_at": time.time()}
    row.update(kw)
    return row


def test_contract_columns_present_and_in_order():
    names = [n for n, _ in telemetry.RUN_COLUMNS]
    assert names[: len(CONTRACT)] == CONTRACT


def test_round_trip_with_detail(tmp_path):
    path = tmp_path / "t.h5"
    with telemetry.TelemetryWriter(path) as w:
        w.machine({"machine_id": "m1", "cpu_model": "X", "physical_cores": 2})
        for i in range(3):
            w.start(_row(i))
            w.record(_row(i), {"repeats": [{"machine_id": "m1", "run_id": f"r{i:03d}",
                                            "repeat": k, "wall_s": 0.1 * k} for k in range(3)]})
    assert not telemetry.journal_path(path).exists()
    assert not telemetry.lock_path(path).exists()
    df = telemetry.read_runs(path)
    assert list(df.columns[: len(CONTRACT)]) == CONTRACT
    assert list(df["run_id"]) == ["r000", "r001", "r002"]
    assert df["runtime_s"].tolist() == [0.5, 1.5, 2.5]
    assert math.isnan(df["gpu_busy_s"][0])  # missing floats are NaN, not 0
    assert (df["attempt"] == 1).all()
    reps = telemetry.read_detail(path, "repeats")
    assert len(reps) == 9 and reps["wall_s"].max() == pytest.approx(0.2)
    machines = telemetry.read_machines(path)
    assert machines["cpu_model"].tolist() == ["X"]
    with h5py.File(path) as f:
        assert f.attrs["schema_version"] == telemetry.SCHEMA_VERSION


def test_existing_file_refused_without_resume_and_untouched(tmp_path):
    path = tmp_path / "t.h5"
    telemetry.append(path, [_row(0)])
    before = path.read_bytes()
    with pytest.raises(TelemetryError, match="--resume"):
        telemetry.TelemetryWriter(path).open()
    assert path.read_bytes() == before


def test_non_hdf5_and_wrong_schema_refused_untouched(tmp_path):
    text = tmp_path / "notes.h5"
    text.write_text("hello")
    with pytest.raises(TelemetryError, match="not an HDF5"):
        telemetry.TelemetryWriter(text, resume=True).open()
    assert text.read_text() == "hello"
    wrong = tmp_path / "wrong.h5"
    telemetry.append(wrong, [_row(0)])
    with h5py.File(wrong, "a") as f:
        f.attrs["schema_version"] = 99
    before = wrong.read_bytes()
    with pytest.raises(TelemetryError, match="schema_version 99"):
        telemetry.TelemetryWriter(wrong, resume=True).open()
    with pytest.raises(TelemetryError, match="schema_version"):
        telemetry.read_runs(wrong)
    assert wrong.read_bytes() == before
    other = tmp_path / "other.h5"
    with h5py.File(other, "w") as f:
        f["x"] = [1, 2]
    with pytest.raises(TelemetryError, match="not an hpcds1mpi telemetry"):
        telemetry.read_runs(other)


def test_journal_holds_runs_between_snapshots_and_torn_line_ignored(tmp_path):
    path = tmp_path / "t.h5"
    w = telemetry.TelemetryWriter(path, snapshot_every_s=3600).open()
    w.record(_row(0))
    w.record(_row(1))
    w.start(_row(2))
    # Simulate a kill mid-write: a torn line at the end of the journal, no close().
    with open(telemetry.journal_path(path), "ab") as fh:
        fh.write(b'{"event": "run", "row": {"run_id": "r9')
    os.close(w._journal_fd)
    os.close(w._lock_fd)  # the process "died": its lock goes with it
    with h5py.File(path) as f:
        assert len(f["runs/run_id"]) == 0  # only the journal has them
    df = telemetry.read_runs(path)
    assert sorted(df["run_id"]) == ["r000", "r001", "r002"]
    assert df.set_index("run_id").loc["r002", "status"] == "crashed"
    # Resume folds everything in; a new start of the crashed run counts attempt 2.
    with telemetry.TelemetryWriter(path, resume=True) as w2:
        assert w2.crashed_on_open == [("m1", "r002")]
        assert w2.start(_row(2)) == 2
        w2.record(_row(2))
    df = telemetry.read_runs(path)
    assert sorted(df["run_id"]) == ["r000", "r001", "r002"]
    assert (df["status"] == "ok").all()
    assert df.set_index("run_id").loc["r002", "attempt"] == 2


def test_unfinished_start_is_not_crashed_while_writer_alive(tmp_path):
    path = tmp_path / "t.h5"
    with telemetry.TelemetryWriter(path, snapshot_every_s=3600) as w:
        w.start(_row(0))
        assert telemetry.writer_alive(path)
        assert len(telemetry.read_runs(path)) == 0  # running, not crashed
        w.record(_row(0))
    assert not telemetry.writer_alive(path)


def test_fault_note_turns_crash_into_failed(tmp_path):
    path = tmp_path / "t.h5"
    w = telemetry.TelemetryWriter(path).open()
    w.start(_row(0))
    telemetry.write_fault_note(path, "r000", 3, "ValueError: boom")
    os.close(w._journal_fd)
    os.close(w._lock_fd)
    df = telemetry.read_runs(path)
    assert df["status"].tolist() == ["failed"]
    assert "rank 3: ValueError: boom" in df["error"][0]


def _hold_lock(path, ready, stop):
    with telemetry.TelemetryWriter(path, resume=True):
        ready.set()
        stop.wait(30)


def test_second_writer_gets_lock_error(tmp_path):
    path = tmp_path / "t.h5"
    ctx = multiprocessing.get_context("fork")
    ready, stop = ctx.Event(), ctx.Event()
    proc = ctx.Process(target=_hold_lock, args=(str(path), ready, stop))
    proc.start()
    try:
        assert ready.wait(30)
        before = path.read_bytes()
        with pytest.raises(LockError, match="another process"):
            telemetry.TelemetryWriter(path, resume=True).open()
        assert path.read_bytes() == before
    finally:
        stop.set()
        proc.join(30)
    telemetry.TelemetryWriter(path, resume=True).open().close()  # free again


def test_merge_idempotent_with_provenance(tmp_path):
    a, b, out = tmp_path / "a.h5", tmp_path / "b.h5", tmp_path / "all.h5"
    telemetry.append(a, [_row(0, "m1"), _row(1, "m1", status="crashed")])
    telemetry.append(b, [_row(0, "m2"), _row(1, "m1", finished_at=time.time() + 5)])
    first = telemetry.merge([a, b], out)
    assert first["rows"] == 3
    again = telemetry.merge([a, b], out)
    assert again["rows"] == 3 and again["added"] == 0
    df = telemetry.read_runs(out).set_index(["machine_id", "run_id"])
    assert df.loc[("m1", "r001"), "status"] == "ok"  # finished beats crashed
    assert df.loc[("m1", "r001"), "source_file"] == "b.h5"
    assert df.loc[("m2", "r000"), "source_file"] == "b.h5"
    assert df.loc[("m1", "r000"), "source_file"] == "a.h5"
    with h5py.File(out) as f:
        sources = [s.decode() for s in f["provenance/source_file"][()]]
    assert sorted(sources) == ["a.h5", "b.h5"]


def test_snapshot_is_atomic_when_killed_mid_write(tmp_path, monkeypatch):
    path = tmp_path / "t.h5"
    telemetry.append(path, [_row(0)])
    store = telemetry.load(path)
    store.add_run(_row(1))

    def boom(*a, **k):
        raise KeyboardInterrupt("killed mid-write")

    from hpcds1mpi.records.telemetry import layout

    monkeypatch.setattr(layout, "_write_table", boom)
    with pytest.raises(KeyboardInterrupt):
        telemetry.write_snapshot(path, store)
    assert telemetry.read_runs(path)["run_id"].tolist() == ["r000"]


def test_cli_show_export_merge(tmp_path):
    from tests.helpers import run_cli

    a, b, out = tmp_path / "a.h5", tmp_path / "b.h5", tmp_path / "all.h5"
    telemetry.append(a, [_row(0), _row(1)])
    telemetry.append(b, [_row(2, "m2")])
    proc = run_cli(["telemetry", "merge", str(a), str(b), "--out", str(out)], timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "3 runs (3 added" in proc.stdout
    proc = run_cli(["telemetry", "merge", str(a), str(b), "--out", str(out)], timeout=60)
    assert "3 runs (0 added, 0 replaced, 3 already there)" in proc.stdout
    proc = run_cli(["telemetry", "show", str(out)], timeout=60)
    assert proc.returncode == 0 and "3 runs" in proc.stdout and "stencil" in proc.stdout
    csv = tmp_path / "runs.csv"
    proc = run_cli(["telemetry", "export", str(out), "--out", str(csv)], timeout=60)
    assert proc.returncode == 0, proc.stderr
    import pandas as pd

    assert len(pd.read_csv(csv)) == 3
    bad = tmp_path / "bad.txt"
    bad.write_text("x")
    proc = run_cli(["telemetry", "show", str(bad)], timeout=60)
    assert proc.returncode != 0 and "not an HDF5" in proc.stderr and "Traceback" not in proc.stderr
