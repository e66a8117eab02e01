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


def test_a_link_into_a_closed_folder_names_that_folder_as_the_path_itself_does(open_folder):
    """s35 tester R8: ``telemetry show /tmp/link.h5`` (a link to /srv/proj/priv/t.h5) said
    "its owner and mode unknown ... (chmod g+r)": no path, no owner. A link in the name's
    middle leads there too."""
    closed = os.path.join(open_folder, "pr iv")
    os.mkdir(closed, 0o700)
    target = os.path.join(closed, "t.h5")
    open(target, "w").close()
    direct = as_nobody(denied_line, target)[1]
    reason = direct.split(": permission denied (", 1)[1]
    assert reason.startswith(f"you cannot enter the folder {closed}: owner root, group root, "
                             f"mode drwx------); ask its owner to let you in (chmod o+x "
                             f"'{closed}')"), direct
    link, folder_link = os.path.join(open_folder, "t.h5"), os.path.join(open_folder, "dir")
    os.symlink(target, link)
    os.symlink(closed, folder_link)
    for through in (link, os.path.join(folder_link, "t.h5")):
        assert as_nobody(denied_line, through) == ("returned", (
            f"{through}: permission denied (it is {target} through a symbolic link; {reason}"))


def test_a_path_with_a_newline_is_shown_escaped_on_one_line(open_folder):
    """R8: the newline was printed raw, the one-line error on two lines; the chmod it
    suggests reads back as the folder in bash."""
    import subprocess

    closed = os.path.join(open_folder, "a\nb")
    os.mkdir(closed, 0o700)
    target = os.path.join(closed, "t.h5")
    kind, line = as_nobody(denied_line, target, "telemetry file")
    assert kind == "returned" and "\n" not in line, line
    escaped = f"$'{open_folder}/a\\nb"
    assert line.startswith(f"telemetry file {escaped}/t.h5': permission denied (you cannot "
                           f"enter the folder {escaped}': owner root"), line
    chmod = line.split("(chmod ", 1)[1].split(")")[0]
    said = subprocess.run(["bash", "-c", f"printf '%s' {chmod.split(' ', 1)[1]}"],
                          capture_output=True, check=True).stdout
    assert said == os.fsencode(closed)

