"""What other programs added to a telemetry file survives a rewrite, or the rewrite is refused
(s37 tester P1: sweep --resume and merge --out had dropped it without a word)."""

from __future__ import annotations

import h5py
import numpy as np
import pytest

from hpcds1mpi.errors import TelemetryError
from hpcds1mpi.records import telemetry
from tests.records.telemetry.rows import run_row


def _add_others(path):
    with h5py.File(path, "r+") as f:
        mine = f.create_group("mine")
        mine.create_dataset("x", data=[1, 2, 3], compression="gzip")
        mine.attrs["fixed"] = np.bytes_(b"abc")
        f["mine_link"] = h5py.SoftLink("/mine/x")
        f.attrs["axes"] = [1, 2, 3]  # an array: the rewrite had died of .item() on it
        f["runs"].attrs["note"] = "checked"
        f["runs/runtime_s"].attrs["units"] = "s"


def _check_others(path):
    with h5py.File(path, "r") as f:
        assert f["mine/x"][()].tolist() == [1, 2, 3]
        assert f["mine/x"].compression == "gzip"
        assert f["mine"].attrs["fixed"] == b"abc"
        assert f["mine"].attrs.get_id("fixed").dtype == np.dtype("S3")  # still fixed-length
        assert f.get("mine_link", getlink=True).path == "/mine/x"
        assert f.attrs["axes"].tolist() == [1, 2, 3]
        assert f["runs"].attrs["note"] == "checked"
        assert f["runs/runtime_s"].attrs["units"] == "s"


def test_adding_runs_keeps_what_another_program_added(tmp_path):
    path = tmp_path / "t.h5"
    telemetry.append(path, [run_row(0), run_row(1)])
    _add_others(path)
    telemetry.append(path, [run_row(2)])  # a resume: rewrites the file, several snapshots
    telemetry.append(path, [run_row(3)])
    _check_others(path)
    assert len(telemetry.read_runs(path)) == 4


def test_a_merge_into_an_existing_file_keeps_what_another_program_added(tmp_path):
    out, shard = tmp_path / "all.h5", tmp_path / "b.h5"
    telemetry.append(out, [run_row(0)])
    _add_others(out)
    telemetry.append(shard, [run_row(1, "m2")])
    assert telemetry.merge([shard], out)["added"] == 1
    _check_others(out)


def test_a_dataset_inside_a_table_is_refused_and_the_file_left_as_it_was(tmp_path):
    """Rows are added and reordered: another tool's per-row column cannot stay in line."""
    path, shard = tmp_path / "t.h5", tmp_path / "b.h5"
    telemetry.append(path, [run_row(0), run_row(1)])
    with h5py.File(path, "r+") as f:
        f["runs"].create_dataset("my_note", data=[1.0, 2.0])
    before = path.read_bytes()
    telemetry.append(shard, [run_row(2)])
    for write in (lambda: telemetry.append(path, [run_row(2)]),
                  lambda: telemetry.merge([shard], path)):
        with pytest.raises(TelemetryError, match=r"/runs/my_note .*move them out of the tables"):
            write()
        assert path.read_bytes() == before
    assert not telemetry.journal_path(path).exists()


def test_another_programs_root_attributes_keep_their_hdf5_types(tmp_path):
    """s37 reviewer R4: a rewrite rebuilt the root attributes from the store: an int32 came
    back int64, a fixed-length string variable-length, an empty and a compound one as text."""
    path = tmp_path / "t.h5"
    telemetry.append(path, [run_row(0)])
    compound = np.array([(1, 2.0)], dtype=[("a", "i4"), ("b", "f8")])[0]
    with h5py.File(path, "a") as f:
        f.attrs["fixed"] = np.bytes_(b"abc")
        f.attrs["empty"] = h5py.Empty("f8")
        f.attrs["i32"] = np.int32(7)
        f.attrs["c"] = compound
    telemetry.append(path, [run_row(1)])  # a rewrite
    with h5py.File(path, "r") as f:
        types = {k: str(f.attrs.get_id(k).dtype) for k in ("fixed", "empty", "i32", "c")}
        assert types == {"fixed": "|S3", "empty": "float64", "i32": "int32",
                         "c": "[('a', '<i4'), ('b', '<f8')]"}
        assert isinstance(f.attrs["empty"], h5py.Empty) and f.attrs["c"] == compound
        assert f.attrs["fixed"] == b"abc" and f.attrs["i32"] == 7
    assert len(telemetry.read_runs(path)) == 2
