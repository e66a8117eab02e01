"""Whether a job script's program, given as a path (``./app``), is there where the job runs it.

A script that enters a folder of this machine (the one its program's sweep ran in, or an
absolute ``--workdir``) runs a relative program path from there; one that is not there, or not
executable, fails in the job. ``sweep`` refuses the same path in one line; ``recommend --emit
--program './nonexist {size}'`` had written the script, with a note that the job "checks the
folder and them first", exit 0 (s39 tester D3; ``--program "./my app {size}"``, a name with a
space left unquoted, ran ``./my``). :func:`check_program_there` refuses it before the script is
written. A folder that is not here (another machine's, or one relative to the submit folder)
cannot be looked in: the job checks it, as before.
"""

from __future__ import annotations

import os
from typing import Sequence

from hpcds1mpi.errors import ConfigError


def check_program_there(program: Sequence[str], folder: str | None,
                        setup: str | None = None) -> None:
    """Refuse ``program`` (the launch line's words from the program on, placeholders filled)
    whose path is missing or not executable in ``folder``, where the job runs it.

    Only a folder given as an absolute path that exists here is looked in; with a ``setup``
    (run there first, it may put the program there) a relative path is not checked.

    Raises:
        ConfigError: the program is not there, or not an executable file.
    """
    from hpcds1mpi.launch.exec_wrappers import program_past_wrappers
    from hpcds1mpi.launch.own_install import runs_own_command

    if not program or not folder or not os.path.isabs(folder) or not os.path.isdir(folder) \
            or runs_own_command(program):
        return
    try:
        tokens, name, _ = program_past_wrappers(list(program), None, "--program")
    except ConfigError:
        return  # refused where the launch line is checked, in its own words
    if "/" not in name or (setup and not os.path.isabs(name)):
        return  # a bare name is the launcher's to find (bare_program)
    found = os.path.join(folder, name)
    if os.path.isfile(found) and os.access(found, os.X_OK):
        return
    where = "" if os.path.isabs(name) else f" in {folder!r} (the folder the job runs it in)"
    if os.path.exists(found):
        raise ConfigError(f"--program: {name!r} is not an executable file{where}; chmod +x "
                          "it, or start it through its interpreter, e.g. 'python3 app.py'")
    raise ConfigError(f"--program: program {name!r} not found{where}; give the path of an "
                      f"executable{_unquoted_space(tokens, folder)}")


def _unquoted_space(tokens: Sequence[str], folder: str) -> str:
    """", quoted: ..." where the program's word and the words after it, joined by spaces,
    name an existing file (``./my app`` given unquoted); else ""."""
    import shlex

    for end in range(2, len(tokens) + 1):
        name = " ".join(tokens[:end])
        if os.path.isfile(os.path.join(folder, name)):
            return f" (a name with a space is quoted: --program \"{shlex.quote(name)} ...\")"
    return ""


def words_where_run(program: Sequence[str], folder: str | None) -> tuple[list[str], str]:
    """(``program``'s words with its relative path joined to ``folder``, where the job runs
    it, for the checks that read its file: its MPI against the launcher; a note, "" for
    none). s46 tester J2: ``./probe`` was read in this shell's folder, so the same command
    was refused or written depending on where it was typed. Where ``folder`` is not here
    (another machine's, or relative to a submit folder that is not this one), the note says
    the file was not read, rather than "./probe not found"."""
    from hpcds1mpi.launch.exec_wrappers import program_past_wrappers

    words = list(program)
    if not words or not folder:
        return words, ""
    try:
        tokens, name, _ = program_past_wrappers(words, None, "--program")
    except ConfigError:
        return words, ""  # refused where the launch line is checked, in its own words
    if "/" not in name or os.path.isabs(name):
        return words, ""  # a bare name is found on PATH; an absolute one is itself
    at = len(words) - len(tokens)
    joined = [*words[:at], os.path.normpath(os.path.join(os.path.abspath(folder), name)),
              *words[at + 1:]]
    if os.path.isdir(folder):
        return joined, ""
    return joined, (f"{name}'s MPI is not checked against the launcher: the folder the job "
                    f"runs it in, {folder!r}, is not on this machine")
