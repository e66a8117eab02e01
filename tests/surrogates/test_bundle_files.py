"""The bundle's files: what is written, saving in place, damaged or missing files refused."""

from __future__ import annotations

import json

import numpy as np
import pytest

from hpcds1mpi.errors import ModelError
from hpcds1mpi.surrogates.bundle import train_bundle
from hpcds1mpi.surrogates.bundle_files import (BUNDLE_FORMAT, MANIFEST, TRAINING_DATA,
                                               TRAINING_MATRIX, read_bundle)
from tests.surrogates.test_bundle import make_runs


@pytest.fixture(scope="module")
def small():
    return train_bundle(make_runs(), n_members=2, use_embedding=False, threads=1,
                        sources=["runs.h5"])


def test_files_written_and_read_back(small, tmp_path):
    path = small.save(tmp_path / "m")
    assert {p.name for p in path.iterdir()} == {MANIFEST, "members.pkl", TRAINING_DATA,
                                                TRAINING_MATRIX, "README.txt"}
    manifest = json.loads((path / MANIFEST).read_text())
    assert manifest["format_version"] == BUNDLE_FORMAT and manifest["embedding"] is None
    model, read_manifest, where = read_bundle(path)
    assert where == path and read_manifest["data_hash"] == small.manifest["data_hash"]
    assert len(model.members_) == len(small.model.members_)
    readme = (path / "README.txt").read_text()
    assert "MODELLED" in readme and "runs.h5" in readme
    assert np.load(path / TRAINING_MATRIX).shape[0] == small.manifest["n_rows"]


def test_saving_in_place_keeps_the_training_files(small, tmp_path):
    from hpcds1mpi.surrogates.bundle import load_bundle

    path = small.save(tmp_path / "m")
    loaded = load_bundle(path)
    before = (path / TRAINING_DATA).stat().st_mtime_ns
    loaded.save(path)
    assert (path / TRAINING_DATA).stat().st_mtime_ns == before
    loaded.save(tmp_path / "copy")  # another place: the training rows travel along
    assert (tmp_path / "copy" / TRAINING_DATA).is_file()


@pytest.mark.parametrize("damage, message", [
    (lambda p: (p / "members.pkl").write_bytes(b"not a pickle"), "incomplete or damaged"),
    (lambda p: (p / TRAINING_DATA).unlink(), "training_data.parquet missing"),
    (lambda p: (p / MANIFEST).write_text("{"), "unreadable"),
])
def test_damaged_bundle_is_refused(small, tmp_path, damage, message):
    path = small.save(tmp_path / "m")
    damage(path)
    with pytest.raises(ModelError, match=message):
        read_bundle(path)
