"""The one ``#!`` reader: as the kernel and env(1) read the line, and the launcher check and
the sweep's fingerprint agree on what a script runs (they had two readers: duplicates D1)."""

from __future__ import annotations

import os
import sys

import pytest

from hpcds1mpi.launch import mpi_family
from hpcds1mpi.launch.shebang import read_shebang, shebang_python
from hpcds1mpi.measure import program_mpi


def _script(tmp_path, line: str):
    path = tmp_path / "prog"
    path.write_text(line + "\nfrom mpi4py import MPI\n")
    path.chmod(0o755)
    return str(path)


def _env():
    return dict(os.environ, PATH=f"{os.path.dirname(sys.executable)}:{os.environ['PATH']}")


def test_the_line_splits_once_after_the_interpreter(tmp_path):
    assert read_shebang(_script(tmp_path, "#!/bin/sh")) == ("/bin/sh", None)
    assert read_shebang(_script(tmp_path, "#! /usr/bin/env  python3 -u \r")) == \
        ("/usr/bin/env", "python3 -u")
    assert read_shebang(_script(tmp_path, "no shebang")) is None
    assert read_shebang(str(tmp_path / "missing")) is None


@pytest.mark.parametrize("line, runs_python", [
    ("#!/usr/bin/env python3", True),
    ("#!{python} -s", True),
    ("#!/usr/bin/env -S PYTHONNOUSERSITE=1 python3 -E", True),
    # env is given "python3 -u" as one word (no -S): it finds no such program, runs nothing.
    ("#!/usr/bin/env python3 -u", False),
    ("#!/bin/sh", False),
    ("#!/usr/bin/env bash", False),
])
def test_the_launcher_check_and_the_fingerprint_read_a_script_alike(tmp_path, line, runs_python):
    path = _script(tmp_path, line.format(python=sys.executable))
    env = _env()
    assert (shebang_python(path, env) is not None) is runs_python
    checked = mpi_family.program_mpi([path], env)
    fingerprint = program_mpi.program_mpi_library([path], env, "mpiexec")
    if runs_python:
        assert checked.family == "mpich" and "mpi4py" in checked.evidence
        assert program_mpi.UNREAD not in fingerprint
    else:
        assert checked.family is None and "cannot be read" in checked.evidence
        # Not read: the launcher's installation's library stands in, said to be assumed
        # (s29 tester E1), or the launcher's line, marked unread.
        assert fingerprint == "unknown" or program_mpi.UNREAD in fingerprint \
            or fingerprint.endswith(program_mpi.ASSUMED)


def test_the_shebang_options_and_environment_reach_the_probe(tmp_path):
    # -I (isolated) drops PYTHONPATH: an mpi4py found only there is not the script's.
    fake = tmp_path / "site"
    (fake / "mpi4py").mkdir(parents=True)
    (fake / "mpi4py" / "__init__.py").write_text("raise ImportError('not this one')\n")
    env = dict(_env(), PYTHONPATH=str(fake))
    plain = _script(tmp_path, f"#!{sys.executable}")
    assert mpi_family.program_mpi([plain], env).family is None  # the fake one is imported
    isolated = tmp_path / "isolated"
    isolated.write_text(f"#!{sys.executable} -I\nfrom mpi4py import MPI\n")
    isolated.chmod(0o755)
    assert mpi_family.program_mpi([str(isolated)], env).family == "mpich"


def test_the_command_of_any_interpreter_is_read_alike(tmp_path):
    """The reader under shebang_python, which R scripts' readers take too (s32 tester W1)."""
    from hpcds1mpi.launch.shebang import shebang_command

    env = {"PATH": os.environ["PATH"]}
    line = "#!/usr/bin/env -S R_LIBS=/opt/r sh -e"
    assert shebang_command(_script(tmp_path, line), env) == (
        ["/usr/bin/sh" if os.path.exists("/usr/bin/sh") else "/bin/sh", "-e"],
        {**env, "R_LIBS": "/opt/r"})
    assert shebang_command(_script(tmp_path, "#!/bin/sh -e"), env) == (["/bin/sh", "-e"], env)
    assert shebang_command(_script(tmp_path, "#!/usr/bin/env no-such-program-x"), env) is None
    assert shebang_command(_script(tmp_path, "print(1)"), env) is None
