"""Another program's HDF5 file named as --out (s33 tester B1): refused with what to do."""

from __future__ import annotations

import hashlib

import h5py
import pytest

from hpcds1mpi.errors import TelemetryError
from hpcds1mpi.records.telemetry.other_programs import identity
from hpcds1mpi.records.telemetry.writer import TelemetryWriter


@pytest.mark.parametrize("resume", [True, False])
def test_a_programs_own_hdf5_file_is_refused_saying_to_give_another_out(tmp_path, resume):
    path = tmp_path / "out.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("x", data=[1.0, 2.0])
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    with pytest.raises(TelemetryError) as exc:
        TelemetryWriter(path, resume=resume).open()
    words = str(exc.value)
    assert "HDF5 file of another program" in words and "give another --out" in words
    assert "\n" not in words and "--resume to continue" not in words
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.h5"]


def test_the_writer_tells_a_file_another_program_wrote(tmp_path):
    path = tmp_path / "t.h5"
    writer = TelemetryWriter(path).open()
    assert writer.written_by_another() == "" and identity(path) is not None
    with open(path, "r+b") as fh:  # truncated in place, as h5py's "w" mode does
        fh.truncate(0)
    assert writer.written_by_another() == "rewrote"
    writer.rescue(tmp_path / "kept.h5")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept.h5", "t.h5"]
    assert path.stat().st_size == 0  # left as the program left it
