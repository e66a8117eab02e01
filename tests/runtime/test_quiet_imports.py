"""A library's import-time deprecation warnings never fail a command run with warnings as
errors, and the user's filters hold everywhere else (s32 tester T3)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

from tests.helpers import REPO


def under_warnings_as_errors(code: str, tmp_path=None) -> subprocess.CompletedProcess:
    """``code`` run by this Python in a fresh process with ``PYTHONWARNINGS=error``, as the
    user ran the command (every library imported anew)."""
    env = {**os.environ, "PYTHONWARNINGS": "error",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(tmp_path or ""), str(REPO)]))}
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env, cwd=REPO,
                          capture_output=True, text=True, timeout=300)


def test_only_the_import_is_quiet(tmp_path):
    (tmp_path / "warns_at_import.py").write_text(
        "import warnings\nwarnings.warn('old namespace', DeprecationWarning)\nVALUE = 1\n")
    proc = under_warnings_as_errors("""
        import warnings
        from hpcds1mpi.runtime.quiet_imports import import_warnings_ignored
        with import_warnings_ignored():
            from warns_at_import import VALUE
        assert VALUE == 1
        try:
            warnings.warn("ours", DeprecationWarning)
        except DeprecationWarning:
            print("the user's filter holds after the import")
        """, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "the user's filter holds after the import"


def test_without_it_such_an_import_fails_under_warnings_as_errors(tmp_path):
    """What the helper is for: the same import, bare, is a DeprecationWarning raised."""
    (tmp_path / "warns_at_import.py").write_text(
        "import warnings\nwarnings.warn('old namespace', DeprecationWarning)\n")
    proc = under_warnings_as_errors("import warns_at_import", tmp_path)
    assert proc.returncode == 1 and "DeprecationWarning: old namespace" in proc.stderr
