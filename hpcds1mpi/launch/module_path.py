"""The PATH a job has after its module lines, asked of the module system itself.

A bare ``mpirun`` after ``module load openmpi`` is whichever launcher the module puts first on
PATH (s36 tester M1: a cluster file's ``modules = ["openmpi"]`` before ``mpirun`` ran an MPICH
program as two 1-rank copies, and nothing was checked). Where every line before the launch is
the module system's own — sourcing its init file (Lmod, Environment Modules), ``module
use/load/unload/swap/purge/...``, ``ml`` — or leaves PATH alone (``set -e``, ``export
NAME=VALUE``, ``cd``), those lines are run in ``bash --noprofile --norc`` with this process's
environment, as the job would run them, and the PATH they leave is read (Lmod answers in a
tenth of a second; only the module system runs). A script may be anyone's, so a sourced file
is run only where it is a module system's init file by its exact path, and a ``module use``
folder only where no other user could have written it or the modules loaded from it
(:mod:`~hpcds1mpi.launch.module_trust`; s36 review 1: a ``source`` of any file under a folder
named ``modules/`` had run it). Any other line (a site's own script, ``conda activate``, ``$``
expansions) is not run here: the PATH is unknown, and why is said.
"""

from __future__ import annotations

import functools
import os
import re
import subprocess
from collections.abc import Mapping, Sequence

from hpcds1mpi.launch.module_trust import changeable_by_others, init_file, module_folders_why

#: ``module`` sub-commands that only change the environment (not ``save``, which writes).
_MODULE_VERBS = frozenset({"use", "unuse", "load", "add", "try-load", "try-add", "unload",
                           "rm", "del", "purge", "swap", "switch", "sw", "restore", "reset"})
#: ``ml`` words that write or print rather than load (``ml NAME`` loads NAME).
_ML_OTHER = frozenset({"save", "s", "savelist", "sl", "describe", "mcc", "spider", "avail",
                       "av", "list", "show", "help", "keyword", "whatis"})
#: Shell syntax that makes a module line more than a plain command with plain words.
_SHELL_SYNTAX = re.compile(r"[;&|<>()`$\\*?\[\]{}!~#'\"]")
#: Syntax that makes any line more than one simple command (a list, a group, a substitution).
_COMPOUND = re.compile(r"[;&|(){}`]|\$\(|<<")
#: Words that change the shell itself (its variables, functions, PATH) or start a compound
#: command: a line beginning with one is not known to leave PATH alone.
_SHELL_CHANGING = frozenset({
    "source", ".", "eval", "export", "declare", "typeset", "readonly", "local", "unset",
    "alias", "enable", "builtin", "exec", "hash", "shopt", "trap", "conda", "mamba",
    "micromamba", "spack", "activate", "if", "then", "else", "elif", "fi", "for", "while",
    "until", "do", "done", "case", "esac", "function", "select"})
_ASSIGNMENT = re.compile(r"([A-Za-z_]\w*)=\S*")
#: What the subshell prints its PATH after, apart from the module system's own output.
_MARK = "@hpcds1mpi-job-path@"
_TIMEOUT_S = 30


def _kind(line: str, env: Mapping[str, str]) -> str | None:
    """"run" (a module system's line that changes the environment), "skip" (a line that
    leaves PATH alone: a comment, ``set -e``, a plain assignment, a command run in a child
    process), or None (not known to)."""
    text = line.strip()
    if not text or text.startswith("#"):
        return "skip"
    words = text.split()
    plain = not _SHELL_SYNTAX.search(text)
    if words[0] in ("source", ".") and len(words) == 2 and plain and os.path.isfile(words[1]) \
            and init_file(words[1], env):
        return "run"
    if words[0] in ("module", "ml"):
        loads = (words[1] in _MODULE_VERBS if words[0] == "module" and len(words) > 1
                 else words[0] == "ml" and (len(words) == 1 or words[1] not in _ML_OTHER))
        return ("run" if plain else None) if loads else "skip"
    if _COMPOUND.search(text):
        return None
    if words[0] == "export":
        words = words[1:] or ["PATH="]  # `export` alone lists; PATH= stands for unknown
        return "skip" if all((m := _ASSIGNMENT.fullmatch(w)) and "PATH" not in m.group(1)
                             for w in words) else None
    while words and (m := _ASSIGNMENT.fullmatch(words[0])):  # NAME=VALUE [command]
        if len(words) == 1 and "PATH" in m.group(1):
            return None
        words = words[1:]
    # `MODULEPATH=/x module load y`: a module command in another environment, not run
    return None if words and (words[0] in _SHELL_CHANGING or words[0] in ("module", "ml")) \
        else "skip"


def _not_run(line: str) -> str:
    """Why a line :func:`_kind` leaves unknown is not run, in words: a module command joined
    to other shell (s45 tester E4: ``module load paraview 2>/dev/null || true`` was called
    "not a module command"), else none."""
    words = line.split()
    own = next((k for k, word in enumerate(words) if not _ASSIGNMENT.fullmatch(word)), 0)
    if words[own] not in ("module", "ml"):
        return "is not a module command"
    if own:  # `MODULEPATH=/x module load y`
        return f"is a module command run with variables of its own ({' '.join(words[:own])!r})"
    rest = next((k for k, word in enumerate(words) if _SHELL_SYNTAX.search(word)), len(words))
    return f"is a module command combined with other shell ({' '.join(words[rest:])!r})"


def job_path(lines: Sequence[str], env: Mapping[str, str] | None = None
             ) -> tuple[str | None, str]:
    """(the PATH ``lines`` leave, "") where they are all module-system lines or leave PATH
    alone, else (None, why it is not known: the line not run, or the one that failed here).
    ``env``: the environment the job starts with (None: this process's)."""
    env = dict(os.environ if env is None else env)
    if any("<<" in line for line in lines):  # a here-document's lines are no commands
        return None, "a here-document comes first, so the lines are not run here"
    kinds = [(line.strip(), _kind(line, env)) for line in lines]
    if unknown := next((line for line, kind in kinds if kind is None), None):
        if unknown.split()[0] in ("source", "."):
            return None, (f"{unknown!r} sources no module system's init file (Lmod's, "
                          "Environment Modules'), so it is not run here")
        return None, f"{unknown!r} {_not_run(unknown)}, so it is not run here"
    run = tuple(line for line, kind in kinds if kind == "run")
    if not run:
        return env.get("PATH"), ""
    if why := _changeable(run):
        return None, why
    if not (run[0].split()[0] in ("source", ".") or "BASH_FUNC_module%%" in env
            or "BASH_FUNC_ml%%" in env or env.get("BASH_ENV")):
        # nothing defines `module` in a non-interactive bash: not run, the answer is known
        return None, f"no module command here for {run[0]!r} (no module system initialised)"
    return _asked(run, tuple(sorted(env.items())))


def _changeable(run: Sequence[str]) -> str:
    """Why module-system lines ``run`` are not run here: a file they read that another user
    could have written (:mod:`~hpcds1mpi.launch.module_trust`; s36 review 1), else ""."""
    sourced = [line for line in run if line.split()[0] in ("source", ".")]
    for line in sourced:
        if why := changeable_by_others(line.split()[1]):
            return f"{line!r} is not run here: {why}, so another user could have written it"
    module_lines = [line.split() for line in run if line not in sourced]
    if why := module_folders_why(module_lines):
        return (f"the module lines are not run here: {why}, so another user could have "
                "written the modules they load")
    return ""


@functools.lru_cache(maxsize=32)
def _asked(lines: tuple[str, ...], env: tuple[tuple[str, str], ...]) -> tuple[str | None, str]:
    """:func:`job_path` for module-system ``lines``, run once per process for each."""
    script = "\n".join(f"{line} || exit {100 + at}" for at, line in enumerate(lines))
    script += f"\nprintf '\\n{_MARK}%s\\n' \"$PATH\"\n"
    try:
        proc = subprocess.run(["bash", "--noprofile", "--norc", "-c", script],
                              capture_output=True, text=True, timeout=_TIMEOUT_S,
                              env=dict(env), stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError) as exc:
        return None, f"the module lines could not be run here ({exc})"
    found = [ln[len(_MARK):] for ln in proc.stdout.splitlines() if ln.startswith(_MARK)]
    if proc.returncode == 0 and found:
        return found[-1], ""
    failed = lines[proc.returncode - 100] if 100 <= proc.returncode < 100 + len(lines) else ""
    if proc.returncode == 127 or "command not found" in proc.stderr:
        return None, "no module command here (no module system initialised) for " + (
            repr(failed) if failed else "the module lines")
    return None, f"{failed!r} failed here" if failed else "the module lines failed here"
