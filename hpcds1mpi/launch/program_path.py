"""The file a program's bare name ran as in its sweep, which its job script runs by path.

A bare name (``python3 app.py``, ``lmp -in in.lj``) is looked up on the PATH of whoever runs
it. The sweep found ``python3`` in the venv it was started from, and read the program's MPI
from that interpreter's mpi4py; a job submitted from a shell without the venv ran
``/usr/bin/python3`` and failed with "No module named 'mpi4py'" (s41 tester D7), while a
kernel's script already puts its installation first on PATH. So the sweep records the file
(:func:`resolved`, the ``launch`` attribute's :data:`PROGRAM_PATH`), and the script runs it
by that path (:func:`by_swept_path`), or says why it cannot (not a file here any more).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil

#: The key of a program sweep's ``launch`` attribute (and of its ``launched_with``) holding
#: the absolute file its bare program name ran as ("" where it was given as a path).
PROGRAM_PATH = "program_path"


def resolved(tokens: list[str], env: dict | None = None) -> str:
    """The absolute file the program word of ``tokens`` (past an exec-wrapper prefix: the
    interpreter of ``python3 app.py``) is found as on ``env``'s PATH; "" where the word is a
    path (``./app``: the folder decides, recorded as ``swept_in``) or is not found."""
    from hpcds1mpi.launch.exec_wrappers import program_index

    if not tokens:
        return ""
    word = tokens[program_index(tokens)]
    if not word or "/" in word or "{" in word:
        return ""
    found = shutil.which(word, path=(env or os.environ).get("PATH"))
    return os.path.abspath(found) if found else ""


def by_swept_path(program: str, path: str) -> tuple[str, str]:
    """(``program`` with its bare program word written as ``path``, the note saying so) where
    the word is ``path``'s file name; (``program``, a note why not) where ``path`` is no
    file here; (``program``, "") where nothing was recorded or the word is another."""
    from hpcds1mpi.launch.exec_wrappers import program_index
    from hpcds1mpi.launch.script_placeholders import split_command

    words = split_command(program)
    if not path or not words:
        return program, ""
    at = program_index(words)
    word = words[at]
    if "/" in word or os.path.basename(path) != word:
        return program, ""
    if not os.path.isfile(path) or not os.access(path, os.X_OK):
        return program, (f"the sweep ran {word} as {path}, which is no program here now: the "
                         f"job runs the {word} its PATH finds (give --program with its path "
                         "to choose)")
    spans = list(re.finditer(r"\S+", program))
    if len(spans) != len(words) or spans[at].group() != word:  # quoting moved the words
        return program, (f"the sweep ran {word} as {path}; the job runs the {word} its PATH "
                         "finds (give --program with that path to run the same)")
    start, end = spans[at].span()
    return (program[:start] + shlex.quote(path) + program[end:],
            f"the script runs {word} as {path}, the one the sweep ran (a job's PATH may "
            "find another)")


__all__ = ["PROGRAM_PATH", "by_swept_path", "resolved"]
