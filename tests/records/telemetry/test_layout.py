"""The HDF5 layout: the runs-table contract, format and schema checks, atomic snapshots."""

from __future__ import annotations

import h5py
import pytest

from hpcds1mpi.errors import TelemetryError
from hpcds1mpi.records import telemetry
from tests.records.telemetry.rows import CONTRACT, run_row


def test_contract_columns_present_and_in_order():
    names = [n for n, _ in telemetry.RUN_COLUMNS]
    assert names[: len(CONTRACT)] == CONTRACT


def test_non_hdf5_and_wrong_schema_refused_untouched(tmp_path):
    text = tmp_path / "notes.h5"
    text.write_text("hello")
    with pytest.raises(TelemetryError, match="not an HDF5"):
        telemetry.TelemetryWriter(text, resume=True).open()
    assert text.read_text() == "hello"
    wrong = tmp_path / "wrong.h5"
    telemetry.append(wrong, [run_row(0)])
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


def test_snapshot_is_atomic_when_killed_mid_write(tmp_path, monkeypatch):
    path = tmp_path / "t.h5"
    telemetry.append(path, [run_row(0)])
    store = telemetry.load(path)
    store.add_run(run_row(1))

    def boom(*a, **k):
        raise KeyboardInterrupt("killed mid-write")

    from hpcds1mpi.records.telemetry import layout

    monkeypatch.setattr(layout, "_write_table", boom)
    with pytest.raises(KeyboardInterrupt):
        telemetry.write_snapshot(path, store)
    assert telemetry.read_runs(path)["run_id"].tolist() == ["r000"]
