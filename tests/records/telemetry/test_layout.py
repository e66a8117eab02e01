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

    from hpcds1mpi.records.telemetry import snapshot_write

    monkeypatch.setattr(snapshot_write, "_write_table", boom)
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


# ------------------------------------ a table read in part (s25 tester d, defects 1 and 2)


def _replace_column(f, column, values, dtype=None):
    group = f["runs"]
    del group[column]
    group.create_dataset(column, data=values, dtype=dtype)


_STR = h5py.string_dtype()


@pytest.mark.parametrize("change, detail", [
    # the first column cut short: the rows were counted from it, so 1 run was read
    (lambda f: _replace_column(f, "run_id", f["runs/run_id"][()][:1], _STR),
     "columns of unequal length"),
    (lambda f: f["runs"].__delitem__("run_id"), "column run_id missing"),
    (lambda f: f["runs"].__delitem__("runtime_s"), "column runtime_s missing"),
    (lambda f: _replace_column(f, "runtime_s", ["fast"] * 3, _STR), "runtime_s holds object"),
    (lambda f: _replace_column(f, "size", [[1, 2]] * 3), "size is not a column"),
    (lambda f: _replace_column(f, "run_id", ["r000"] * 3, _STR), "2 row(s) repeat the key"),
    (lambda f: f.__delitem__("machines"), "no machines table"),
    (lambda f: f["repeats"].__delitem__("machine_id"), "repeats: column machine_id missing"),
])
def test_a_table_that_does_not_read_whole_refuses_the_file(tmp_path, change, detail):
    """A damaged column must not give a shorter table: sweep --resume and merge rewrite the
    file from what was read, and the runs left out were lost for good."""
    path = tmp_path / "t.h5"
    telemetry.append(path, [run_row(0), run_row(1), run_row(2)])
    with h5py.File(path, "a") as f:
        change(f)
    before = path.read_bytes()
    for read in (telemetry.read_runs, lambda p: telemetry.TelemetryWriter(p, resume=True).open()):
        with pytest.raises(TelemetryError) as info:
            read(path)
        text = str(info.value)
        assert "a table of the telemetry file is damaged" in text and detail in text
        assert "restore it from a copy" in text and "\n" not in text
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.h5"]


def test_a_table_of_an_older_writer_without_newer_columns_still_reads(tmp_path):
    """Columns are only ever appended: a file without the newest ones (and its ``columns``
    attribute without them) is whole."""
    path = tmp_path / "t.h5"
    telemetry.append(path, [run_row(0), run_row(1)])
    with h5py.File(path, "a") as f:
        runs = f["runs"]
        for name in ("fom", "command", "source_file"):
            del runs[name]
        runs.attrs["columns"] = [n for n in runs.attrs["columns"]
                                 if n not in ("fom", "command", "source_file")]
        runs.create_dataset("from_a_newer_writer", data=[1, 2])
        runs.attrs["columns"] = [*runs.attrs["columns"], "from_a_newer_writer"]
    assert telemetry.read_runs(path)["run_id"].tolist() == ["r000", "r001"]


def test_h5py_errors_of_a_corrupted_file_are_one_line(tmp_path, monkeypatch):
    """h5py raises RuntimeError for some corruptions ("bad symbol table node signature")."""
    from hpcds1mpi.records.telemetry import layout

    path = tmp_path / "t.h5"
    telemetry.append(path, [run_row(0)])
    for error in (RuntimeError("Unable to synchronously check link existence (bad symbol "
                               "table node signature)"), KeyError("x"), ValueError("y"),
                  OSError("Unable to synchronously open object (addr overflow)")):
        def damaged(f, store, error=error):
            raise error

        monkeypatch.setattr(layout, "_read_tables", damaged)
        with pytest.raises(TelemetryError, match="damaged") as info:
            telemetry.read_runs(path)
        assert "restore it from a copy" in str(info.value) and "\n" not in str(info.value)


def test_bit_rot_anywhere_is_refused_or_reads_every_run(tmp_path):
    """64 bytes flipped at offsets across a real file: each read refuses in one line or
    returns every run (a flip inside values changes values; rows are never dropped)."""
    from hpcds1mpi.records.telemetry import layout

    good = tmp_path / "good.h5"
    telemetry.append(good, [run_row(i) for i in range(6)])
    data = good.read_bytes()
    path = tmp_path / "t.h5"
    outcomes = {"refused": 0, "whole": 0}
    for offset in range(0, len(data), len(data) // 60):
        flipped = bytearray(data)
        flipped[offset:offset + 64] = bytes(b ^ 0xA5 for b in flipped[offset:offset + 64])
        path.write_bytes(bytes(flipped))
        try:
            store = layout.read_snapshot(path)
        except TelemetryError as exc:
            assert "\n" not in str(exc)
            outcomes["refused"] += 1
            continue
        assert len(store.runs) == 6, f"offset {offset}: {len(store.runs)} runs read"
        outcomes["whole"] += 1
    assert outcomes["refused"] > 5 and outcomes["whole"] > 5


def test_a_loop_of_links_is_one_line(tmp_path):
    loop = tmp_path / "loop.h5"
    loop.symlink_to(loop)
    with pytest.raises(TelemetryError, match="loop of symbolic links"):
        telemetry.read_runs(loop)


@pytest.mark.parametrize("form", ["fixed bytes", "variable bytes"])
def test_a_format_attribute_in_any_string_form_is_read(tmp_path, form):
    """s37 tester P10: a fixed-length ``format`` (C tools, np.bytes_) read as missing."""
    import numpy as np

    path = tmp_path / "t.h5"
    telemetry.append(path, [run_row(0)])
    with h5py.File(path, "r+") as f:
        name = telemetry.FORMAT_NAME
        if form == "fixed bytes":
            f.attrs["format"] = np.bytes_(name.encode())
        else:
            f.attrs.create("format", name.encode(), dtype=h5py.string_dtype("ascii"))
    assert len(telemetry.read_runs(path)) == 1
    telemetry.append(path, [run_row(1)])  # a writer's check of --out reads it too
    assert len(telemetry.read_runs(path)) == 2


def test_a_file_another_program_holds_open_for_writing_is_a_lock_error(tmp_path):
    """s37 tester P6: HDF5's own lock held by another program was exit 2, "fix the input"."""
    import subprocess
    import sys

    from hpcds1mpi.errors import LockError

    path = tmp_path / "t.h5"
    telemetry.append(path, [run_row(0)])
    holder = subprocess.Popen([sys.executable, "-c", "import h5py, sys\n"
                               f"f = h5py.File({str(path)!r}, 'r+')\nprint('open', flush=True)\n"
                               "sys.stdin.read()"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "open"
        for read in (telemetry.read_runs, lambda p: telemetry.append(p, [run_row(1)])):
            with pytest.raises(LockError, match="another program has it open for writing.*"
                               "then retry") as caught:
                read(path)
            assert caught.value.exit_code == 1
    finally:
        holder.communicate("")
    assert len(telemetry.read_runs(path)) == 1  # closed: the same call reads it


def test_a_file_system_without_locks_is_not_called_transient(tmp_path):
    from hpcds1mpi.errors import LockError
    from hpcds1mpi.records.telemetry.layout import hdf5_lock_error

    busy = OSError("Unable to synchronously open file (unable to lock file, errno = 11, error "
                   "message = 'Resource temporarily unavailable')")
    unsupported = OSError("Unable to synchronously open file (unable to lock file, errno = 38, "
                          "error message = 'Function not implemented')")
    assert isinstance(hdf5_lock_error("t.h5", busy), LockError)
    error = hdf5_lock_error("t.h5", unsupported)
    assert not isinstance(error, LockError) and "HDF5_USE_FILE_LOCKING=FALSE" in str(error)
    assert hdf5_lock_error("t.h5", OSError("truncated file")) is None
