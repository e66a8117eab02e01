"""The journal beside a telemetry file: runs kept between snapshots, torn lines, crashed runs
and fault notes."""

from __future__ import annotations

import os

import h5py

from hpcds1mpi.records import telemetry
from tests.records.telemetry.rows import run_row


def test_journal_holds_runs_between_snapshots_and_torn_line_ignored(tmp_path):
    path = tmp_path / "t.h5"
    w = telemetry.TelemetryWriter(path, snapshot_every_s=3600).open()
    w.record(run_row(0))
    w.record(run_row(1))
    w.start(run_row(2))
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
        assert w2.start(run_row(2)) == 2
        w2.record(run_row(2))
    df = telemetry.read_runs(path)
    assert sorted(df["run_id"]) == ["r000", "r001", "r002"]
    assert (df["status"] == "ok").all()
    assert df.set_index("run_id").loc["r002", "attempt"] == 2


def test_unfinished_start_is_not_crashed_while_writer_alive(tmp_path):
    path = tmp_path / "t.h5"
    with telemetry.TelemetryWriter(path, snapshot_every_s=3600) as w:
        w.start(run_row(0))
        assert telemetry.writer_alive(path)
        assert len(telemetry.read_runs(path)) == 0  # running, not crashed
        w.record(run_row(0))
    assert not telemetry.writer_alive(path)


def test_fault_note_turns_crash_into_failed(tmp_path):
    path = tmp_path / "t.h5"
    w = telemetry.TelemetryWriter(path).open()
    w.start(run_row(0))
    telemetry.write_fault_note(path, "r000", 3, "ValueError: boom")
    os.close(w._journal_fd)
    os.close(w._lock_fd)
    df = telemetry.read_runs(path)
    assert df["status"].tolist() == ["failed"]
    assert "rank 3: ValueError: boom" in df["error"][0]
