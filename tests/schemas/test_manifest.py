"""The bundle manifest's schema: the shipped one passes; damaged ones are one line naming the key."""

from __future__ import annotations

import json
import shutil

import pytest

from hpcds1mpi.errors import ModelError
from hpcds1mpi.schemas.manifest import Manifest, check_manifest
from tests.helpers import REPO

SHIPPED = REPO / "hpcds1mpi" / "data" / "default_model"


def _shipped() -> dict:
    return json.loads((SHIPPED / "manifest.json").read_text())


def test_the_shipped_manifest_passes():
    checked = check_manifest(_shipped(), "manifest.json")
    assert isinstance(checked, Manifest) and checked.format_version == 1


def test_optional_keys_may_be_missing():
    manifest = _shipped()
    for key in ("use_baseline", "member_features", "sources", "metrics", "packages"):
        manifest.pop(key)
    assert check_manifest(manifest, "m").use_baseline is False


@pytest.mark.parametrize("change, message", [
    (lambda m: m.pop("family"), "m.json: missing required key 'family'"),
    (lambda m: m.update(bogus=1), "m.json: unknown key bogus (known: format_version, created"),
    (lambda m: m.update(n_members="5"), "n_members must be an integer, got '5'"),
    (lambda m: m.update(n_members=0), "n_members must be >= 1"),
    (lambda m: m.update(use_embedding="no"), "use_embedding must be true or false"),
    (lambda m: m.update(targets=[]), "targets must have at least 1 item(s)"),
    (lambda m: m.update(targets=["runtime_s", 3]), "targets[1] must be a string"),
    (lambda m: m.update(size_range={"gemm": [1.0]}), "size_range.gemm must have at least 2"),
    # s47 tester M5: reversed, recommend recursed from one edge to the other (RecursionError)
    (lambda m: m.update(size_range={"gemm": [64, 16]}),
     "size_range.gemm: [64, 16] is reversed: the smallest measured size comes first"),
    (lambda m: m.update(feature_spec=[]), "feature_spec must be a table"),
    (lambda m: m.update(partitions={"p": 3}), "partitions.p must be a table"),
    (lambda m: m.update(member_learning_rate=0.0), "member_learning_rate"),
    (lambda m: m.update(member_learning_rate="fast"), "member_learning_rate"),
])
def test_a_damaged_manifest_is_one_line_naming_the_key(change, message):
    manifest = _shipped()
    change(manifest)
    with pytest.raises(ModelError) as info:
        check_manifest(manifest, "m.json")
    text = str(info.value)
    assert message in text and "retrain" in text and "\n" not in text


def test_not_an_object_is_refused():
    for doc in ([], "x", 3, None):
        with pytest.raises(ModelError, match="not a JSON object"):
            check_manifest(doc, "m.json")


@pytest.mark.parametrize("damage, message", [
    (lambda p: (p / "manifest.json").write_bytes(b"\x89PNG\r\n\x1a\n\x00\xff"), "unreadable"),
    (lambda p: (p / "manifest.json").write_text(json.dumps({**_shipped(), "family": 3})),
     "family must be a string, got 3"),
    (lambda p: (p / "manifest.json").write_text(
        json.dumps({k: v for k, v in _shipped().items() if k != "targets"})),
     "missing required key 'targets'"),
    (lambda p: (p / "manifest.json").write_text(json.dumps({**_shipped(), "size_range": {
        w: r[::-1] for w, r in _shipped()["size_range"].items()}})), "is reversed"),
])
def test_read_bundle_validates_the_manifest(tmp_path, damage, message):
    from hpcds1mpi.surrogates.bundle_files import read_bundle

    path = tmp_path / "model"
    shutil.copytree(SHIPPED, path)
    damage(path)
    with pytest.raises(ModelError, match=message.replace("(", r"\(")):
        read_bundle(path)


# -- the cheap check a bundle load uses (no pydantic when the manifest is sound) ----------

_WRONG = (None, True, 0, -1, 1.5, float("nan"), "x", "", [], ["a"], [1, 2], {}, {"a": 1},
          {"a": [1, 2]}, {"a": {"b": 1}}, {"a": "b"}, [1.0, float("inf")])


def test_the_cheap_check_accepts_only_what_the_schema_accepts():
    """For every key and a spread of values of every type: wherever the cheap check says
    sound, the schema agrees (it may send more to the schema, never less)."""
    from hpcds1mpi.schemas.manifest import manifest_is_sound

    assert manifest_is_sound(_shipped())
    tried = sound = 0
    for key in _shipped():
        for value in _WRONG:
            manifest = {**_shipped(), key: value}
            tried += 1
            if manifest_is_sound(manifest):
                sound += 1
                check_manifest(manifest, "m.json")  # must not raise
    assert sound < tried / 2  # most of these are damage, and were sent to the schema


@pytest.mark.parametrize("change, message", [
    (lambda m: m.pop("family"), "m.json: missing required key 'family'"),
    (lambda m: m.update(bogus=1), "m.json: unknown key bogus"),
    (lambda m: m.update(n_members=0), "n_members must be >= 1"),
    (lambda m: m.update(size_range={"gemm": [1.0]}), "size_range.gemm must have at least 2"),
    (lambda m: m.update(size_range={"gemm": [64, 16.5]}), "size_range.gemm: [64, 16.5] is "
     "reversed"),
])
def test_the_fast_check_gives_the_schemas_message(change, message):
    from hpcds1mpi.schemas.manifest import check_manifest_fast

    manifest = _shipped()
    change(manifest)
    with pytest.raises(ModelError, match="retrain") as info:
        check_manifest_fast(manifest, "m.json")
    assert message in str(info.value)


@pytest.mark.parametrize("change, message", [
    (lambda m: m.pop("embedding"), "missing required key 'embedding'"),
    (lambda m: m.update(use_embedding=True, embedding=None),
     "embedding is null but use_embedding is true"),
    (lambda m: m.update(files={"members.pkl": "not-a-hash"}), "files.members.pkl"),
])
def test_what_the_loader_needs_is_required(change, message):
    """A manifest without ``embedding`` while ``use_embedding`` was true crashed recommend
    (shapes (6,34) vs (42,)) and gave mobo an xgboost stack dump."""
    from hpcds1mpi.schemas.manifest import check_manifest_fast, manifest_is_sound

    manifest = _shipped()
    change(manifest)
    assert not manifest_is_sound(manifest)
    with pytest.raises(ModelError) as info:
        check_manifest_fast(manifest, "m.json")
    assert message in str(info.value) and "\n" not in str(info.value)


def test_the_shipped_manifest_records_its_files_hashes():
    from hpcds1mpi.schemas.manifest import manifest_is_sound
    from hpcds1mpi.surrogates.bundle_files import file_hashes

    manifest = _shipped()
    assert manifest_is_sound(manifest)
    assert manifest["files"] == file_hashes(SHIPPED)


def test_a_bundles_measured_inputs_are_known_and_checked():
    """s48 tester O4: train keeps each program's input stamps (``measured_inputs``); a bundle
    holding them loads (either check), one whose entry is damaged is refused in one line."""
    from hpcds1mpi.schemas.manifest import check_manifest_fast, manifest_is_sound

    stamps = {"app": {"files": {"/w/in1.txt": [[14, 100.0, "a" * 64]]}, "until": 120.0}}
    manifest = {**_shipped(), "measured_inputs": stamps}
    assert manifest_is_sound(manifest)
    assert check_manifest(manifest, "m.json").measured_inputs == stamps
    for damaged in ([], {"app": []}, {"app": "x"}):
        with pytest.raises(ModelError, match="measured_inputs") as info:
            check_manifest_fast({**manifest, "measured_inputs": damaged}, "m.json")
        assert "\n" not in str(info.value)
