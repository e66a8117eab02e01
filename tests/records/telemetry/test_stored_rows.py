"""Declared table lengths checked against stored data before a column is read (s27 tester P,
defect 5: a 6.6 MB file whose columns declared 2^40 rows asked numpy for 8 TiB)."""

from __future__ import annotations

import time

import h5py
import numpy as np
import pytest

from hpcds1mpi.errors import TelemetryError
from hpcds1mpi.records import telemetry
from tests.records.telemetry.rows import run_row


def _file(tmp_path, runs: int = 3):
    path = tmp_path / "t.h5"
    telemetry.append(path, [run_row(i) for i in range(runs)])
    return path


def _redeclare(path, table: str, rows: int, **layout):
    """Every column of ``table`` replaced by an empty one that declares ``rows`` rows."""
    with h5py.File(path, "a") as f:
        group = f[table]
        for name in list(group):
            dtype = group[name].dtype
            del group[name]
            group.create_dataset(name, shape=(rows,), dtype=dtype, **layout)


def _refused(path, *phrases):
    before = path.read_bytes()
    started = time.monotonic()
    for read in (telemetry.read_runs, telemetry.load,
                 lambda p: telemetry.TelemetryWriter(p, resume=True).open()):
        with pytest.raises(TelemetryError) as info:
            read(path)
        text = str(info.value)
        assert text.startswith(f"{path}: ") and "\n" not in text
        for phrase in phrases:
            assert phrase in text
    assert time.monotonic() - started < 10  # refused from the header, nothing allocated
    assert path.read_bytes() == before


@pytest.mark.parametrize("table", ["runs", "rank_repeats"])
def test_chunked_columns_declaring_2_pow_40_rows_are_refused_in_one_line(tmp_path, table):
    path = _file(tmp_path)
    _redeclare(path, table, 2 ** 40, chunks=(1 << 16,), maxshape=(None,))
    _refused(path, "damaged", f"{table}/", "declares 1099511627776 rows",
             "chunks that hold them are stored", "restore it from a copy")


def test_a_contiguous_column_longer_than_its_stored_bytes_is_refused(tmp_path):
    path = _file(tmp_path)
    _redeclare(path, "repeats", 10 ** 9)  # contiguous, never written: no bytes allocated
    _refused(path, "damaged", "repeats/", "declares 1000000000 rows", "bytes that hold them")


def test_one_column_declaring_more_rows_than_the_others_is_refused_before_reading(tmp_path):
    path = _file(tmp_path)
    with h5py.File(path, "a") as f:
        del f["runs/runtime_s"]
        f["runs"].create_dataset("runtime_s", data=np.arange(3.0), chunks=(1,),
                                 maxshape=(None,))
        f["runs/runtime_s"].resize((2 ** 40,))  # 3 chunks stored of 2^40 declared
    _refused(path, "runs/runtime_s declares 1099511627776 rows", "only 3 of the")


def test_unequal_declared_lengths_are_refused(tmp_path):
    path = _file(tmp_path)
    with h5py.File(path, "a") as f:
        del f["runs/runtime_s"]
        f["runs/runtime_s"] = np.arange(5.0)
    _refused(path, "columns of unequal length", "runtime_s 5")


def test_compressed_columns_of_repeated_values_still_read_whole(tmp_path):
    """A real column of one repeated value compresses to almost nothing: chunks are counted,
    not bytes, so it is not taken for an unbacked one."""
    path = _file(tmp_path)
    rows = 50_000
    with h5py.File(path, "a") as f:
        group = f["repeats"]
        for name in list(group):
            del group[name]
        values = {"machine_id": np.array(["m1"] * rows, dtype=object),
                  "run_id": np.array(["r000"] * rows, dtype=object),
                  "repeat": np.zeros(rows, dtype=np.int64),
                  "wall_s": np.full(rows, 0.5)}
        for name, data in values.items():
            dtype = h5py.string_dtype("utf-8") if data.dtype == object else data.dtype
            group.create_dataset(name, data=data, dtype=dtype, chunks=(4096,),
                                 compression="gzip", compression_opts=9, shuffle=True)
        group.attrs["columns"] = list(values)
        # far fewer bytes than rows x 8: a byte count would have refused it
        assert group["wall_s"].id.get_storage_size() < rows * 8 / 20
    store = telemetry.layout.read_snapshot(path)
    assert len(store.detail["repeats"][("m1", "r000")]) == rows


def test_a_table_too_large_for_the_available_memory_is_refused(tmp_path, monkeypatch):
    from hpcds1mpi.records import available_memory

    path = _file(tmp_path)
    monkeypatch.setattr(available_memory, "available_bytes", lambda: 1000)
    before = path.read_bytes()
    with pytest.raises(TelemetryError, match="too large to read here") as info:
        telemetry.read_runs(path)
    assert "GB is available" in str(info.value) and "more memory" in str(info.value)
    assert "\n" not in str(info.value) and path.read_bytes() == before


def test_virtual_and_external_columns_are_refused(tmp_path):
    path = _file(tmp_path)
    elsewhere = tmp_path / "elsewhere.bin"
    elsewhere.write_bytes(b"\0" * 24)
    with h5py.File(path, "a") as f:
        del f["runs/runtime_s"]
        f["runs"].create_dataset("runtime_s", shape=(3,), dtype="f8",
                                 external=[(str(elsewhere), 0, 24)])
    _refused(path, "runtime_s declares 3 rows but keeps its values in external files")
    with h5py.File(path, "a") as f:
        del f["runs/runtime_s"]
        source = f.create_dataset("source", data=np.arange(3.0))
        layout = h5py.VirtualLayout(shape=(3,), dtype="f8")
        layout[:] = h5py.VirtualSource(source)
        f["runs"].create_virtual_dataset("runtime_s", layout)
    _refused(path, "runtime_s declares 3 rows but is a virtual dataset")


def test_the_shipped_telemetry_files_still_read_every_row():
    from pathlib import Path

    files = sorted(Path(__file__).resolve().parents[3].glob("data/*/*.h5"))
    if not files:
        pytest.skip("no shipped telemetry in this checkout")
    for path in files[:4]:
        with h5py.File(path, "r") as f:
            declared = {t: f[t]["run_id" if "run_id" in f[t] else "source_file"].shape[0]
                        for t in f}
        store = telemetry.layout.read_snapshot(path)
        assert len(store.runs) == declared["runs"]
        for table in ("repeats", "ranks", "rank_repeats"):
            assert sum(map(len, store.detail[table].values())) == declared[table]
