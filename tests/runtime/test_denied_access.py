"""The one line for a path another user's permissions close: which folder or file, whose,
and what to do (s34 tester U1, U5)."""

from __future__ import annotations

import grp  # noqa: F401 - imported here: the child cannot read root's Python to import them
import os
import pwd  # noqa: F401
import shutil
import stat  # noqa: F401
import tempfile

import pytest

from hpcds1mpi.runtime.denied_access import closed_folder, denied_line
from tests.other_user import as_other_user

#: Tests that become another user: only root can (CI runs as root).
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="becomes another user: needs root")
pytestmark = needs_root


@pytest.fixture
def open_folder():
    """A fresh folder every user may enter (pytest's tmp_path is under root's 0700 folder)."""
    folder = tempfile.mkdtemp(prefix="hpcds1mpi-denied-", dir="/tmp")
    os.chmod(folder, 0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def as_nobody(body, *args):
    """``body(*args)`` as nobody (:func:`tests.other_user.as_other_user`: a forked child; what
    it needs is imported first): ("returned", value) or ("raised", "Class: message")."""
    kind, value = as_other_user(body, *args)
    return ("returned", value) if kind == "ok" else ("raised", f"{kind}: {value}")


def test_a_closed_folder_is_named_with_its_owner_and_the_chmod_that_opens_it(open_folder):
    closed = os.path.join(open_folder, "priv")
    os.mkdir(closed, 0o700)
    target = os.path.join(closed, "cluster.toml")
    open(target, "w").close()
    kind, line = as_nobody(denied_line, target)
    assert kind == "returned", line
    assert line.startswith(f"{target}: permission denied (you cannot enter the folder {closed}: "
                           "owner root, group root, mode drwx------); ask its owner to let you "
                           f"in (chmod o+x {closed})")
    assert as_nobody(closed_folder, target) == ("returned", closed)
    assert as_nobody(closed_folder, os.path.join(open_folder, "x")) == ("returned", None)


def test_an_unreadable_file_asks_for_read_access(open_folder):
    target = os.path.join(open_folder, "manifest.json")
    open(target, "w").close()
    os.chmod(target, 0o600)
    assert as_nobody(denied_line, target, "model bundle file") == ("returned", (
        f"model bundle file {target}: permission denied (you may not read it: owner root, "
        "group root, mode -rw-------); ask its owner to grant read access "
        f"(chmod o+r {target}) or use a copy you can read"))


def test_an_output_in_a_folder_not_writable_says_to_choose_another(open_folder):
    _, line = as_nobody(denied_line, os.path.join(open_folder, "out.h5"))
    assert f"you may not create files in the folder {open_folder}" in line
    assert "choose a folder you can write" in line


def test_another_users_file_in_a_sticky_folder_is_said_so(open_folder):
    """s34 review: a replace of another user's file in a 1777 folder read "refused although
    its mode allows you; check its ACLs", naming our temporary; now the file replaced and why."""
    from hpcds1mpi.runtime.denied_access import path_error_line

    os.chmod(open_folder, 0o1777)
    theirs = os.path.join(open_folder, "out.csv")
    with open(theirs, "w") as fh:
        fh.write("x")
    os.chmod(theirs, 0o666)

    def replace_it():
        tmp = os.path.join(open_folder, ".out.csv.tmp")
        with open(tmp, "w") as fh:
            fh.write("y")
        try:
            os.replace(tmp, theirs)
        except OSError as exc:
            return path_error_line(exc)
        return "replaced"

    kind, line = as_nobody(replace_it)
    assert kind == "returned" and line.startswith(f"{theirs}: permission denied (it is another "
                                                  "user's file in a sticky folder ("), line
    assert "only its owner may replace or remove" in line
