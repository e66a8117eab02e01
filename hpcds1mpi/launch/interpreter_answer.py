"""Asking an interpreter (R, Ruby) where its MPI binding's shared object is, without loading it:
the interpreter is run with an expression that prints one marked line, and the file it names
is the answer (:mod:`~hpcds1mpi.launch.r_mpi`, :mod:`~hpcds1mpi.launch.ruby_mpi`; one reading
of the answer for both, s35 duplicates D1).
"""

from __future__ import annotations

import os
import shutil
import subprocess

#: Seconds an interpreter may take to answer (R starts in ~0.2 s; a loaded NFS home, more).
TIMEOUT_S = 30


def marked_file(argv: list[str], mark: str, env: dict) -> str | None:
    """The file named on ``argv``'s last output line starting with ``mark``, where it exits 0
    and that file exists; None otherwise (it cannot start, fails or names none)."""
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT_S,
                              env=env, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None
    said = [line[len(mark):] for line in proc.stdout.splitlines() if line.startswith(mark)]
    found = said[-1].strip() if said and proc.returncode == 0 else ""
    return found if found and os.path.isfile(found) else None


def on_path(word: str, env: dict) -> str | None:
    """The file ``word`` names: a path, or a name on ``env``'s PATH."""
    if not word or "$" in word:
        return None
    found = word if "/" in word else shutil.which(word, path=env.get("PATH"))
    return found if found and os.path.isfile(found) else None


__all__ = ["TIMEOUT_S", "marked_file", "on_path"]
