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


# ------------------------------------------- tampered attributes and tables (issue #14)


def _tampered(tmp_path, change):
    path = tmp_path / "t.h5"
    telemetry.append(path, [run_row(0), run_row(1)])
    with h5py.File(path, "a") as f:
        change(f)
    return path


@pytest.mark.parametrize("change, message", [
    (lambda f: f.attrs.__setitem__("schema_version", "abc"),
     "schema_version must be an integer, got 'abc'"),
    (lambda f: f.attrs.__setitem__("schema_version", 1.5), "schema_version must be an integer"),
    (lambda f: f.attrs.__setitem__("attempts", "{"), "attempts: not JSON"),
    (lambda f: f.attrs.__setitem__("attempts", '[["m", "r"]]'), r"attempts\[0\]"),
    (lambda f: f.attrs.__setitem__("attempts", '[["m", "r", 0]]'), r"attempts\[0\]\[2\] must be >= 1"),
    (lambda f: f.attrs.__setitem__("attempts", "3"), "attempts must be a list"),
    (lambda f: f.attrs.__setitem__("created_at", float("nan")), "created_at must be a finite"),
    (lambda f: f.attrs.__setitem__("plan", "{not json"), "plan: not JSON"),
    (lambda f: f.attrs.__setitem__("last_launch_ranks", -2), "last_launch_ranks must be >= 1"),
])
def test_tampered_attributes_are_one_line_naming_the_attribute(tmp_path, change, message):
    path = _tampered(tmp_path, change)
    before = path.read_bytes()
    with pytest.raises(TelemetryError, match=message) as info:
        telemetry.read_runs(path)
    text = str(info.value)
    assert text.startswith(f"{path}: ") and "restore it" in text and "\n" not in text
    assert path.read_bytes() == before


def test_a_damaged_table_is_one_line(tmp_path):
    def shorten(f):
        del f["runs"]["status"]
        f["runs"]["status"] = ["ok"]  # one value for two runs

    path = _tampered(tmp_path, shorten)
    with pytest.raises(TelemetryError, match="a table of the telemetry file is damaged"):
        telemetry.read_runs(path)


def test_unknown_attributes_and_numpy_values_are_kept(tmp_path):
    path = _tampered(tmp_path, lambda f: f.attrs.__setitem__("from_a_newer_writer", 7))
    store = telemetry.layout.read_snapshot(path)
    assert store.attrs["from_a_newer_writer"] == 7 and len(store.runs) == 2
    assert all(n >= 1 for n in store.attempts.values())


def test_a_fifo_or_device_is_refused_not_waited_on(tmp_path):
    import os

    os.mkfifo(tmp_path / "t.h5")
    for path in (tmp_path / "t.h5", "/dev/zero"):
        with pytest.raises(TelemetryError, match="not a regular file"):
            telemetry.read_runs(path)
