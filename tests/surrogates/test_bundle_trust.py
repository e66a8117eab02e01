"""Who else could have written a bundle: refused before its pickles are read (ssh StrictModes)."""

from __future__ import annotations

import os
import re
import shutil

import pytest

from hpcds1mpi.errors import ModelError
from hpcds1mpi.surrogates.bundle import load_bundle, train_bundle
from tests.surrogates.test_bundle import make_runs

#: A user id that is neither root nor the one running the tests.
STRANGER = 4242


@pytest.fixture(scope="module")
def small():
    return train_bundle(make_runs(), n_members=1, use_embedding=False, threads=1)


@pytest.fixture
def saved(small, tmp_path):
    return small.save(tmp_path / "m")


def _umask(mask: int):
    old = os.umask(mask)
    return lambda: os.umask(old)


@pytest.mark.parametrize("mask", [0o022, 0o002, 0o077])
def test_a_bundle_saved_with_a_usual_umask_loads(small, tmp_path, mask):
    """What ``train`` and ``learn`` write (Bundle.save) loads back, per-user groups (002)
    included: group write on one's own files is not another user's write."""
    restore = _umask(mask)
    try:
        path = small.save(tmp_path / "m")
    finally:
        restore()
    assert load_bundle(path).targets == small.targets


def test_the_shipped_bundle_and_a_copy_of_it_load(tmp_path):
    assert load_bundle(None).targets
    from hpcds1mpi import SHIPPED_MODEL

    copy = shutil.copytree(SHIPPED_MODEL, tmp_path / "copy")  # what the test suites do
    assert load_bundle(copy).targets


@pytest.mark.parametrize("where", ["members.pkl", "manifest.json", "."])
def test_a_world_writable_file_or_folder_is_refused_before_anything_is_read(saved, where,
                                                                           monkeypatch):
    target = saved / where
    target.chmod(target.stat().st_mode | 0o002)
    import pickle

    monkeypatch.setattr(pickle, "load", lambda *_: pytest.fail("members.pkl was unpickled"))
    label = "the folder" if where == "." else where
    fix = re.escape(f"chmod -R o-w {saved}")
    with pytest.raises(ModelError, match=rf"{label} is writable by every user \(mode 0\d+\).*"
                                         rf"runs code when loaded.*{fix}"):
        load_bundle(saved)


def test_a_link_to_a_world_writable_file_is_judged_by_that_file(saved, tmp_path):
    outside = tmp_path / "members.pkl"
    shutil.move(saved / "members.pkl", outside)
    (saved / "members.pkl").symlink_to(outside)
    assert load_bundle(saved).model.members_
    outside.chmod(0o666)
    with pytest.raises(ModelError, match="members.pkl is writable by every user"):
        load_bundle(saved)


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                    reason="giving a file to another user needs root")
def test_another_users_group_writable_file_is_refused_and_their_read_only_one_loads(saved):
    """A colleague's bundle is theirs to trust or not; one their whole group may rewrite is
    not: anyone in it could have put code there."""
    os.chown(saved / "members.pkl", STRANGER, -1)
    (saved / "members.pkl").chmod(0o644)
    assert load_bundle(saved).model.members_
    (saved / "members.pkl").chmod(0o664)
    with pytest.raises(ModelError, match=r"members.pkl belongs to user \S+ and is writable by "
                                         r"its group \(mode 0664\).*chmod -R g-w"):
        load_bundle(saved)
    (saved / "members.pkl").chmod(0o644)
    os.chown(saved, STRANGER, -1)
    saved.chmod(0o775)
    with pytest.raises(ModelError, match="the folder belongs to user"):
        load_bundle(saved)
