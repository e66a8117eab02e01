"""The bundle's files: what is written, saving in place, damaged or missing files refused."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from hpcds1mpi.errors import ModelError, WriteError
from hpcds1mpi.surrogates.bundle import train_bundle
from hpcds1mpi.surrogates.bundle_files import (BUNDLE_FORMAT, FRAME_COLUMNS, LEVELS_FILE,
                                               MANIFEST, PROBLEM_LEVELS, TRAINING_DATA,
                                               TRAINING_FRAME, TRAINING_MATRIX, read_bundle)
from tests.surrogates.test_bundle import make_runs
from tests.test_atomic import fill, small_disk  # noqa: F401 (fixture)


@pytest.fixture(scope="module")
def small():
    return train_bundle(make_runs(), n_members=2, use_embedding=False, threads=1,
                        sources=["runs.h5"])


def test_files_written_and_read_back(small, tmp_path):
    path = small.save(tmp_path / "m")
    assert {p.name for p in path.iterdir()} == {MANIFEST, "members.pkl", TRAINING_DATA,
                                                TRAINING_MATRIX, LEVELS_FILE, TRAINING_FRAME,
                                                "README.txt"}
    manifest = json.loads((path / MANIFEST).read_text())
    assert manifest["format_version"] == BUNDLE_FORMAT and manifest["embedding"] is None
    model, read_manifest, where = read_bundle(path)
    assert where == path and read_manifest["data_hash"] == small.manifest["data_hash"]
    assert len(model.members_) == len(small.model.members_)
    # Absolute regression (train's default) and no noise recorded: no problem_levels.json.
    assert not model.levels_ and not (path / PROBLEM_LEVELS).exists()
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
    assert (path / LEVELS_FILE).is_file()  # carried over with the rows it describes
    assert (path / TRAINING_FRAME).is_file()
    loaded.save(tmp_path / "copy")  # another place: the training rows travel along
    assert (tmp_path / "copy" / TRAINING_DATA).is_file()
    assert (tmp_path / "copy" / LEVELS_FILE).is_file()


def test_a_folder_named_tilde_is_that_folder_not_home(small, tmp_path, monkeypatch):
    """``--out=~/m`` reaches us unexpanded (bash expands no ``~`` after ``=``): the bundle is
    ``./~/m``, written, read and linked there; pandas and pyarrow expand a path's leading
    ``~`` (s39 tester D4: "bundle not written" naming $HOME, a valid bundle refused as
    "training data unreadable")."""
    from hpcds1mpi.surrogates.bundle import load_bundle
    from hpcds1mpi.surrogates.levels import _frame_columns

    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(tmp_path)
    path = small.save(Path("~") / "m")
    assert (tmp_path / "~" / "m" / TRAINING_DATA).is_file() and not list(home.iterdir())
    loaded = load_bundle(Path("~") / "m")
    assert len(loaded.training_frame()) == small.manifest["n_rows"]
    assert len(loaded.training_data()) == small.manifest["n_rows"]
    assert "workload" in _frame_columns(loaded)
    loaded.save(Path("~") / "copy")  # learn's save elsewhere: the rows travel along
    assert (tmp_path / "~" / "copy" / TRAINING_DATA).is_file() and not list(home.iterdir())
    assert path == Path("~") / "m"


def _without_hashes(path):
    """The bundle at ``path`` as written before its manifest recorded the files' hashes."""
    manifest = json.loads((path / MANIFEST).read_text())
    manifest.pop("files", None)
    (path / MANIFEST).write_text(json.dumps(manifest))


@pytest.mark.parametrize("damage, message", [
    (lambda p: (p / "members.pkl").write_bytes(b"not a pickle"),
     "members.pkl does not match its manifest"),
    (lambda p: (p / TRAINING_DATA).unlink(), "training_data.parquet is missing"),
    (lambda p: (_without_hashes(p), (p / "members.pkl").write_bytes(b"not a pickle")),
     "incomplete or damaged"),
    (lambda p: (_without_hashes(p), (p / TRAINING_DATA).unlink()),
     "training_data.parquet missing"),
    (lambda p: (p / MANIFEST).write_text("{"), "unreadable"),
])
def test_damaged_bundle_is_refused(small, tmp_path, damage, message):
    path = small.save(tmp_path / "m")
    damage(path)
    with pytest.raises(ModelError, match=message):
        read_bundle(path)


def test_a_string_format_version_names_the_real_problem(small, tmp_path):
    path = small.save(tmp_path / "m")
    manifest = json.loads((path / MANIFEST).read_text())
    manifest["format_version"] = str(BUNDLE_FORMAT)
    (path / MANIFEST).write_text(json.dumps(manifest))
    with pytest.raises(ModelError, match=r"format_version is '1', not a whole number") as err:
        read_bundle(path)
    assert "reads format" not in str(err.value)


def test_only_our_bundles_are_recognised_as_ours(small, tmp_path):
    from hpcds1mpi.surrogates.bundle_files import default_bundle_path, is_bundle

    path = small.save(tmp_path / "m")
    assert is_bundle(path) and is_bundle(default_bundle_path())
    user = tmp_path / "user"
    user.mkdir()
    (user / "README.txt").write_text("my notes")
    (user / MANIFEST).write_text('{"name": "my web app"}')
    assert not is_bundle(user)
    (user / MANIFEST).write_text((path / MANIFEST).read_text())  # a copied manifest ...
    assert not is_bundle(user)  # ... beside the user's own README is still not ours
    (path / "thesis.tex").write_text("a user's file inside a bundle folder")
    assert not is_bundle(path)
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / MANIFEST).write_bytes(b"\xff\xfe\x00binary")
    assert not is_bundle(tmp_path / "bin") and not is_bundle(tmp_path / "nowhere")


def digests(folder):
    import hashlib

    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.iterdir()}


def test_a_save_that_fails_half_way_leaves_the_old_bundle_whole(small, tmp_path, monkeypatch):
    from hpcds1mpi.surrogates import bundle_files

    path = small.save(tmp_path / "m")
    (path / "guard_calibration.json").write_text("{}")
    before = digests(path)

    def broken(obj, fh, *a, **k):  # the members pickle dies half-written
        fh.write(b"half a pickle")
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(bundle_files.pickle, "dump", broken)
    with pytest.raises(WriteError, match="Input/output error"):
        small.save(path)
    assert digests(path) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m"]  # no temporary folder left
    read_bundle(path)


def test_learn_style_save_in_place_keeps_calibrations_only_when_asked(small, tmp_path):
    from hpcds1mpi.surrogates.bundle import load_bundle

    path = small.save(tmp_path / "m")
    (path / "guard_calibration.json").write_text('{"kept": true}')
    load_bundle(path).save(path, keep=("guard_calibration.json",))
    assert (path / "guard_calibration.json").read_text() == '{"kept": true}'
    small.save(path)
    assert not (path / "guard_calibration.json").exists()


def test_disk_full_bundle_write_keeps_the_old_bundle(small, small_disk):
    path = small.save(small_disk / "m")
    before = digests(path)
    fill(small_disk, 16 * 1024)
    with pytest.raises(WriteError, match="disk is full") as err:
        small.save(path)
    assert err.value.exit_code == 1 and "\n" not in str(err.value)
    assert digests(path) == before and read_bundle(path)
    assert sorted(p.name for p in small_disk.iterdir()) == ["filler", "m"]


def test_training_frame_view_equals_the_parquet_rows_and_old_bundles_still_read(small, tmp_path):
    """recommend reads the rows' frame from training_frame.npz (no parquet reader): the same
    frame as the parquet's columns, text with missing cells included; a bundle without the
    file (written before it existed) reads the parquet; a damaged one is one line."""
    import pandas as pd

    from hpcds1mpi.surrogates.bundle import load_bundle

    path = small.save(tmp_path / "m")
    rows = pd.read_parquet(path / TRAINING_DATA)
    want = rows[[c for c in FRAME_COLUMNS if c in rows.columns]]
    pd.testing.assert_frame_equal(load_bundle(path).training_frame(), want)
    assert want["error"].isna().any() or (want["error"] == "").any()
    _without_hashes(path)  # an older bundle: no hashes, no frame file
    (path / TRAINING_FRAME).unlink()
    pd.testing.assert_frame_equal(load_bundle(path).training_frame(), want)
    (path / TRAINING_FRAME).write_bytes(b"PK\x03\x04 not a zip")
    with pytest.raises(ModelError, match="training_frame.npz: unreadable"):
        load_bundle(path).training_frame()


# ------------------------------------------------------------------------------------------
# damaged training matrix; files that do not belong together


@pytest.mark.parametrize("damage", ["truncated", "empty", "directory"])
def test_an_unreadable_training_matrix_is_one_line_naming_it(small, tmp_path, damage):
    """A cut training_matrix.npy was a ValueError traceback, a directory IsADirectoryError,
    an empty one an EOFError the CLI took for Ctrl-C (exit 130, "aborted")."""
    from hpcds1mpi.surrogates.bundle import load_bundle

    path = small.save(tmp_path / "m")
    file = path / TRAINING_MATRIX
    data = file.read_bytes()
    file.unlink()
    if damage == "truncated":
        file.write_bytes(data[: len(data) // 2])
    elif damage == "empty":
        file.write_bytes(b"")
    else:
        file.mkdir()
    _without_hashes(path)  # an old bundle: the matrix is read, not refused by its hash
    with pytest.raises(ModelError) as info:
        load_bundle(path).training_matrix()
    text = str(info.value)
    assert TRAINING_MATRIX in text and "hpcds1mpi train" in text and "restore" in text
    assert "\n" not in text


def test_every_model_file_s_hash_is_recorded(small, tmp_path):
    from hpcds1mpi.surrogates.bundle_files import HASHED_FILES, file_hashes

    path = small.save(tmp_path / "m")
    files = json.loads((path / MANIFEST).read_text())["files"]
    assert files == file_hashes(path)
    assert set(files) == {p.name for p in path.iterdir()} & set(HASHED_FILES)
    assert {"members.pkl", TRAINING_DATA, TRAINING_MATRIX, TRAINING_FRAME} <= set(files)
    # saved again in place (learn): the carried training files are recorded too
    small.save(path)
    assert json.loads((path / MANIFEST).read_text())["files"] == file_hashes(path)


@pytest.fixture(scope="module")
def other():
    runs = make_runs()
    runs["runtime_s"] = runs["runtime_s"] * 3.0
    return train_bundle(runs, n_members=2, use_embedding=False, threads=1, seed=1)


@pytest.mark.parametrize("name", ["members.pkl", TRAINING_DATA, TRAINING_FRAME])
def test_another_bundle_s_file_copied_in_is_refused(small, other, tmp_path, name):
    """Another bundle's members.pkl or embedding.npz copied in answered differently, exit 0."""
    import shutil

    path, foreign = small.save(tmp_path / "m"), other.save(tmp_path / "o")
    shutil.copy(foreign / name, path / name)
    with pytest.raises(ModelError) as info:
        read_bundle(path)
    assert str(info.value) == (f"bundle {path}: {name} does not match its manifest: retrain "
                               "(`hpcds1mpi train`) or restore it")


def test_a_file_the_manifest_does_not_record_is_refused(small, tmp_path):
    import shutil

    path = small.save(tmp_path / "m")
    shutil.copy(path / TRAINING_FRAME, path / "size_neighbours.npz")
    with pytest.raises(ModelError, match="size_neighbours.npz does not match its manifest"):
        read_bundle(path)


def test_a_foreign_pickle_is_refused_before_it_is_unpickled(small, tmp_path):
    """The hash is compared before pickle.load: a members.pkl that runs code on load (the
    tester's hostile bundle) never runs in a bundle whose manifest recorded its files."""
    import os
    import pickle

    path = small.save(tmp_path / "m")
    marker = tmp_path / "pwned"

    class Hostile:
        def __reduce__(self):
            return (os.system, (f"touch {marker}",))

    (path / "members.pkl").write_bytes(pickle.dumps(Hostile()))
    with pytest.raises(ModelError, match="members.pkl does not match its manifest"):
        read_bundle(path)
    assert not marker.exists()


def test_a_bundle_written_before_the_hashes_still_loads(small, tmp_path):
    path = small.save(tmp_path / "m")
    manifest = json.loads((path / MANIFEST).read_text())
    del manifest["files"]
    (path / MANIFEST).write_text(json.dumps(manifest))
    model, read_manifest, _ = read_bundle(path)
    assert "files" not in read_manifest and len(model.members_) == len(small.model.members_)


def _with_members(path, members):
    """The bundle at ``path`` with ``members`` pickled into members.pkl and its manifest's
    hash of it rewritten to match (as anyone who edits a bundle can)."""
    import hashlib
    import pickle

    data = pickle.dumps(members)
    (path / "members.pkl").write_bytes(data)
    manifest = json.loads((path / MANIFEST).read_text())
    manifest["files"]["members.pkl"] = hashlib.sha256(data).hexdigest()
    (path / MANIFEST).write_text(json.dumps(manifest))


@pytest.mark.parametrize(("members", "said"), [
    (0, "holds a value of type int"),
    ({"runtime_s": 5}, "holds members for 'runtime_s'"),
    ("all", "holds a value of type str"),
    (None, "holds a value of type NoneType"),
], ids=["int", "other-targets", "text", "none"])
def test_members_of_the_wrong_shape_are_refused_in_one_line(small, tmp_path, members, said):
    """A members.pkl whose hash matches but that holds no target -> members lists ended in an
    AttributeError / TypeError traceback at the first prediction (s27 tester P, 6)."""
    from hpcds1mpi.surrogates.bundle import load_bundle

    path = small.save(tmp_path / "m")
    _with_members(path, members)
    line = re.escape(f"cannot read model bundle {path}: members.pkl {said}, not a list of "
                     "fitted members for each of")
    with pytest.raises(ModelError, match=line):
        load_bundle(path)


def test_members_lists_of_the_wrong_kind_are_refused(small, tmp_path):
    from hpcds1mpi.surrogates.bundle import load_bundle

    path = small.save(tmp_path / "m")
    good = small.model.members_
    for members, said in (({t: 5 for t in good}, "a value of type int for"),
                          ({t: [] for t in good}, "no member for"),
                          ({t: [1, 2] for t in good},
                           r"a \w+ member of type int, which cannot predict")):
        _with_members(path, members)
        with pytest.raises(ModelError, match=f"members.pkl holds {said}"):
            load_bundle(path)
    _with_members(path, good)
    assert load_bundle(path).model.members_.keys() == good.keys()


def test_a_bundle_file_another_user_may_not_read_asks_for_access_not_a_retrain(small):
    """s34 tester U5: a 0600 manifest in a folder others may enter was "unreadable ...;
    retrain the bundle"; reading it needs the owner's permission, not a new bundle."""
    import os
    import shutil
    import tempfile

    from tests.runtime.test_denied_access import as_nobody

    if os.geteuid() != 0:
        pytest.skip("becomes another user: needs root")
    shared = tempfile.mkdtemp(prefix="hpcds1mpi-bundle-", dir="/tmp")
    try:
        os.chmod(shared, 0o755)
        path = small.save(os.path.join(shared, "m"))
        os.chmod(path, 0o755)
        for file in path.iterdir():
            os.chmod(file, 0o644)
        os.chmod(path / MANIFEST, 0o600)
        kind, said = as_nobody(read_bundle, path)
    finally:
        shutil.rmtree(shared, ignore_errors=True)
    assert kind == "raised" and said.startswith(
        f"ModelError: model bundle file {path / MANIFEST}: permission denied (you may not "
        "read it: owner root")
    assert "retrain" not in said
