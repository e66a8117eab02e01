"""``hpcds1mpi learn``: where the retrained bundle may go, and a failure that costs nothing.

The happy path (train then learn, member features kept) is in ``test_train.py``.
"""

from __future__ import annotations

import json
import shutil

import pytest

from tests.commands.test_train import (assert_one_line_error, saved_bundle,  # noqa: F401
                                       sha256s, user_folder, write)
from tests.helpers import run_cli
from tests.surrogates.test_bundle import make_runs
from tests.test_atomic import fill, small_disk  # noqa: F401 (fixture)


@pytest.fixture
def model(tmp_path, saved_bundle):  # noqa: F811
    path = tmp_path / "model"
    shutil.copytree(saved_bundle, path)
    return path


def more_runs(tmp_path):
    runs = make_runs(seed=3)
    return write(tmp_path / "more.h5", runs[runs["size"] == 96])


@pytest.mark.parametrize("force", [[], ["--force"]], ids=["plain", "force"])
def test_learn_refuses_an_out_that_is_not_a_bundle(tmp_path, model, force):
    more = more_runs(tmp_path)
    out = user_folder(tmp_path / "mine")
    before = sha256s(tmp_path)
    proc = run_cli(["learn", "--model", str(model), "--telemetry", more, "--out", str(out),
                    "--threads", "1", *force], timeout=120)
    assert_one_line_error(proc, "is not empty and not a hpcds1mpi bundle; choose another --out")
    assert proc.returncode == 2 and sha256s(tmp_path) == before


def test_learn_replaces_another_bundle_only_with_force(tmp_path, model):
    more = more_runs(tmp_path)
    other = tmp_path / "other"
    shutil.copytree(model, other)
    before = sha256s(tmp_path)
    proc = run_cli(["learn", "--model", str(model), "--telemetry", more, "--out", str(other),
                    "--threads", "1"], timeout=120)
    assert_one_line_error(proc, "already holds a hpcds1mpi bundle; pass --force")
    assert proc.returncode == 2 and sha256s(tmp_path) == before


def test_learn_in_place_keeps_the_calibrations(tmp_path, model):
    more = more_runs(tmp_path)
    (model / "guard_calibration.json").write_text('{"kept": 1}')
    proc = run_cli(["learn", "--model", str(model), "--telemetry", more, "--threads", "1"],
                   timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert (model / "guard_calibration.json").read_text() == '{"kept": 1}'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model", "more.h5"]


def test_learn_on_a_full_disk_keeps_the_old_bundle_whole(tmp_path, saved_bundle,  # noqa: F811
                                                         small_disk):  # noqa: F811
    more = more_runs(tmp_path)
    model = small_disk / "model"
    shutil.copytree(saved_bundle, model)
    fill(small_disk, 16 * 1024)
    before = sha256s(small_disk)
    proc = run_cli(["learn", "--model", str(model), "--telemetry", more, "--threads", "1"],
                   timeout=300)
    assert_one_line_error(proc, "disk is full")
    assert proc.returncode == 1 and sha256s(small_disk) == before
    assert sorted(p.name for p in small_disk.iterdir()) == ["filler", "model"]


def test_learn_keeps_the_members_learning_rate(tmp_path, model):
    """A bundle whose recipe chose its members' learning rate (ranking_cv.BUDGETS) is retrained
    at that rate, not at the default's."""
    manifest = json.loads((model / "manifest.json").read_text())
    trees = manifest["member_trees_and_learning_rate"][0]
    manifest.update(member_learning_rate=0.3, member_trees_and_learning_rate=[trees, 0.3])
    (model / "manifest.json").write_text(json.dumps(manifest))
    proc = run_cli(["learn", "--model", str(model), "--telemetry", more_runs(tmp_path),
                    "--threads", "1"], timeout=300)
    assert proc.returncode == 0, proc.stderr
    after = json.loads((model / "manifest.json").read_text())
    assert after["member_learning_rate"] == 0.3
    assert after["member_trees_and_learning_rate"] == [trees, 0.3]
