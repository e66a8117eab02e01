"""The bad-input suite's harness: call the CLI in-process, read what it said, check the verdict.

``invoke`` runs :func:`hpcds1mpi.cli.main` with an argv list in this process (fast: no
interpreter start, no re-import) and returns the exit code and what was written to stdout and
stderr. Anything other than ``SystemExit`` escaping ``main`` is a traceback a user would have
seen: it propagates and fails the test with that traceback.

The verdicts (``assert_usage``, ``assert_runtime``, ``assert_refused``): the exit code is the
one the error classes promise (2 usage, 1 runtime; hpcds1mpi/errors.py), stderr is exactly one
line starting ``hpcds1mpi: error:``, it names the cause (fragments), and no "Traceback".
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path


PREFIX = "hpcds1mpi: error:"
#: The shipped bundle: copied and tampered with, never changed in place.
SHIPPED_BUNDLE = Path(__file__).resolve().parents[2] / "hpcds1mpi" / "data" / "default_model"


@dataclass
class Result:
    code: int
    out: str
    err: str

    @property
    def err_lines(self) -> list[str]:
        return [line for line in self.err.splitlines() if line.strip()]


class Launched(Exception):
    """Raised by the tripwires: a bad input got as far as launching real work."""


def invoke(capsys, argv: list[str]) -> Result:
    """Run ``hpcds1mpi ARGV`` in-process; return its exit code, stdout and stderr."""
    from hpcds1mpi.cli import main

    capsys.readouterr()  # drop whatever fixtures printed
    code = 0
    try:
        main([str(a) for a in argv])
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    captured = capsys.readouterr()
    return Result(code, captured.out, captured.err)


def assert_refused(res: Result, code: int, *fragments: str) -> str:
    """``res`` is a refusal with exit ``code``, one stderr line holding every fragment."""
    assert "Traceback" not in res.err, res.err
    assert res.code == code, f"exit {res.code}, expected {code}; stderr: {res.err[:600]!r}; " \
                             f"stdout: {res.out[-300:]!r}"
    lines = res.err_lines
    assert len(lines) == 1, f"expected one stderr line, got {len(lines)}: {res.err[:600]!r}"
    line = lines[0]
    assert line.startswith(PREFIX), line[:300]
    assert len(line) > len(PREFIX) + 10, line  # says something
    for fragment in fragments:
        assert fragment.lower() in line.lower(), f"{fragment!r} not in {line[:400]!r}"
    return line


def assert_usage(res: Result, *fragments: str) -> str:
    return assert_refused(res, 2, *fragments)


def assert_runtime(res: Result, *fragments: str) -> str:
    return assert_refused(res, 1, *fragments)


def snapshot(root: Path) -> dict[str, str]:
    """sha256 of every file under ``root`` (symlinks by target name), by relative path."""
    digests = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in filenames:
            path = Path(dirpath) / name
            rel = str(path.relative_to(root))
            if path.is_symlink():
                digests[rel] = "link:" + os.readlink(path)
                continue
            try:
                digests[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
            except OSError as exc:  # unreadable on purpose (chmod 000)
                digests[rel] = f"unreadable:{exc.errno}"
        for name in dirnames:
            digests[str((Path(dirpath) / name).relative_to(root)) + "/"] = "dir"
    return digests


def assert_unchanged(before: dict[str, str], after: dict[str, str]) -> None:
    """Every file that was there is byte-identical, and a refused command left nothing new."""
    changed = sorted(k for k in before if k in after and before[k] != after[k])
    lost = sorted(k for k in before if k not in after)
    new = sorted(k for k in after if k not in before)
    assert not changed and not lost and not new, (
        f"files changed {changed[:5]}, lost {lost[:5]}, new {new[:5]}")

