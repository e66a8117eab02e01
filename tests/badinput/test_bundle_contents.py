"""Bundles whose files are well-formed but hold what no training writes (hashes rewritten to
match), and bundles other users could have written: refused in one line by every reader,
before a pickle is read where it is about who could have written it (s27 tester P, 2, 6, 9)."""

from __future__ import annotations

import hashlib
import json
import os
import pickle

import pytest

from tests.badinput.test_tampered import BUNDLE_READERS


def _members(bundle, value) -> None:
    """Pickle ``value`` into members.pkl and record its hash, as anyone editing a bundle can."""
    data = pickle.dumps(value)
    (bundle / "members.pkl").write_bytes(data)
    manifest = json.loads((bundle / "manifest.json").read_text())
    manifest["files"]["members.pkl"] = hashlib.sha256(data).hexdigest()
    (bundle / "manifest.json").write_text(json.dumps(manifest))


def _json(bundle, name: str, **change) -> None:
    doc = json.loads((bundle / name).read_text())
    doc.update(change)
    (bundle / name).write_text(json.dumps(doc))  # Infinity / NaN as Python writes them


@pytest.mark.parametrize("reader", list(BUNDLE_READERS))
@pytest.mark.parametrize("value", [0, {"runtime_s": 5}], ids=["int", "dict-of-int"])
def test_members_of_the_wrong_shape_are_refused(box, capsys, reader, value):
    _members(box.bundle, value)
    box.refused(capsys, BUNDLE_READERS[reader], 2, "cannot read model bundle",
                "members.pkl holds", "restore it")


class _Payload:
    """A pickle that runs a command when loaded."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


@pytest.mark.parametrize("reader", list(BUNDLE_READERS))
@pytest.mark.parametrize("where", ["members.pkl", "."], ids=["file", "folder"])
def test_a_world_writable_bundle_is_refused_before_its_pickle_runs(box, capsys, tmp_path,
                                                                   reader, where):
    marker = tmp_path / "ran"
    _members(box.bundle, _Payload(marker))
    target = box.bundle / where
    target.chmod(target.stat().st_mode | 0o002)
    label = "the folder" if where == "." else where
    box.refused(capsys, BUNDLE_READERS[reader], 2, f"{label} is writable by every user",
                "runs code when loaded", f"chmod -R o-w {box.bundle}")
    assert not marker.exists()


@pytest.mark.parametrize(("change", "fragments"), [
    ({"auto_threshold": float("inf"), "escalate_threshold": float("inf")},
     ("guard_calibration.json", "auto_threshold is inf")),
    ({"auto_threshold": -20, "escalate_threshold": -10},
     ("guard_calibration.json", "auto_threshold is -20")),
    ({"escalate_threshold": 0.5}, ("auto_threshold", "is above escalate_threshold 0.5")),
], ids=["infinite", "negative", "unordered"])
def test_impossible_guard_thresholds_are_refused(box, capsys, change, fragments):
    _json(box.bundle, "guard_calibration.json", **change)
    box.refused(capsys, BUNDLE_READERS["recommend"], 2, *fragments)


def test_a_confidence_coefficient_that_is_not_a_number_is_refused(box, capsys):
    doc = json.loads((box.bundle / "system1_calibration.json").read_text())
    _json(box.bundle, "system1_calibration.json",
          coef=[float("nan"), *doc["coef"][1:]])
    box.refused(capsys, BUNDLE_READERS["recommend"], 2, "system1_calibration.json",
                "coef holds nan, not a finite number")
