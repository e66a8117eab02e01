"""The program a shell wrapper script runs, read from its text without running it.

A ``run.sh`` that sets up and ``exec``s the real program is the common way to start an
application; the MPI library that program loads is the one that counts (s29 tester E1: the
fingerprint of a ``#!/bin/sh`` wrapper's sweep had been the launcher's version line, so its runs
and the kernels' were refused as two machines). A wrong program is worse than none (a correct
launcher refused, a wrong one suggested: s29 R1), so a program is named only where the text
runs one unambiguously. Every simple command is read (lines split at ``;``, ``&&``, ``||``,
``|``, ``&``): the program is the one its top-level ``exec``s name (all the same program; an
``exec`` inside ``if``/``case``/a loop/a function or after ``[ ... ] &&`` gives None), else,
with no ``exec``, the one program other than set-up commands (``cd``, ``echo``, ``mv``, ...)
it runs, at top level and in the foreground. A relative program is read from the folder the
script cd'd to: its own (``cd "$(dirname "$0")"``) or a literal absolute one (s29 R4). A command
word built from variables, a second launcher, a relative program after any other ``cd``, or
text that cannot be split gives None: no guess.
"""

from __future__ import annotations

import os
import re

from hpcds1mpi.launch.wrapper_words import Op as _Op, tokens as _tokens

#: Shells whose scripts are read (``#!/bin/sh``, ``#!/usr/bin/env bash``).
SHELLS = re.compile(r"^(sh|bash|dash|ksh|mksh|zsh|ash)$")
#: Commands that set up a job and run no program: never a script's program (s29 R1: a
#: trailing `mv out.dat results/` or `sleep 1` had been read as the program). Shared with
#: :mod:`~hpcds1mpi.launch.script_unlaunched`, which looks for a program the same way.
SETUP_COMMANDS = frozenset((
    "export", "cd", "pushd", "popd", "source", ".", "module", "ml", "set", "setenv", "ulimit",
    "echo", "printf", "umask", "unset", "shift", "trap", "wait", "true", "false", ":", "local",
    "declare", "typeset", "readonly", "alias", "mkdir", "rm", "cp", "mv", "ln", "touch", "date",
    "hostname", "exit", "return", "break", "continue", "spack", "conda", "mamba", "micromamba",
    "[", "[[", "test", "read", "getopts", "type", "which", "sleep", "cat", "tee", "sync",
    "chmod", "let", "pwd", "ls", "scontrol", "squeue", "sacct", "nvidia-smi", "lscpu", "eval"))
#: Words that open a control structure, and the word that closes each.
_OPENERS = {"if": "fi", "while": "done", "until": "done", "for": "done", "select": "done",
            "case": "esac", "{": "}"}
#: Words that continue a structure: the command after them is inside it.
_INSIDE = frozenset(("then", "do", "else", "elif", "!"))
#: Tests: a command after `[ ... ] &&` or `||` runs or not as the test goes, as in an `if`
#: (ncurses's `[ $# = 0 ] && exec /bin/sh "$0" --error`).
_TESTS = frozenset(("[", "[[", "test", "command", "type", "which", "hash", "grep", "true",
                    "false"))
#: Launchers: a wrapper that starts one is a job of its own, not a rank's program.
LAUNCHERS = re.compile(r"^(mpiexec|mpirun|orterun|prterun|srun|aprun|jsrun|cafrun|charmrun"
                       r"|torchrun|horovodrun|deepspeed)(\.\S*)?$")
#: How a script names its own folder (as :func:`~.wrapper_words.tokens` reads it: quotes
#: dropped).
_OWN_FOLDER = re.compile(r"^(\$\(dirname (-- )?\$(\{?0\}?|\{BASH_SOURCE(\[0\])?\})\)"
                         r"|`dirname (-- )?\$\{?0\}?`|\$\{0%/\*\})")
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\[[^]]*\])?\+?=")
_NAME = re.compile(r"^[A-Za-z_][\w.:-]*$")
#: A variable's use: ``$mpirun``, ``${a[*]}``.
_USE = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)")
#: A redirection word (`2>&1`, `>log`, `<<EOF`); with nothing after the operator, its target
#: is the next word.
_REDIRECTION = re.compile(r"^[0-9]*(&>>|&>|>>|>&|>\||<<<|<<-?|<&|<>|<|>)(.*)$")


def is_shell_script(path: str) -> bool:
    """Whether ``path``'s ``#!`` line names a shell (directly or through env)."""
    from hpcds1mpi.launch.shebang import read_shebang

    found = read_shebang(path)
    if found is None:
        return False
    interpreter, argument = found
    if os.path.basename(interpreter) != "env":
        return bool(SHELLS.match(os.path.basename(interpreter)))
    words = [w for w in (argument or "").split() if not w.startswith("-") and "=" not in w]
    return bool(words) and bool(SHELLS.match(os.path.basename(words[0])))


#: Shell wrappers read inside one another at most this deep (a script that runs itself).
DEPTH = 4


def wrapped_program(path: str) -> list[str] | None:
    """The command (program and arguments as written, a relative program made a path where
    the script cd'd) that the shell script ``path`` runs: its top-level ``exec``s' program,
    else the one program it runs; None when the script is not a shell script or its text does
    not run one program unambiguously (see the module docstring)."""
    found = _wrapped(path)
    return found[1] if found else None


def unwrapped(tokens: list[str], env: dict, cwd: str | None = None
              ) -> tuple[list[str], str] | None:
    """The command that ``tokens`` finally runs through shell wrappers (:func:`wrapped_program`,
    wrappers in wrappers :data:`DEPTH` deep), and how: "through the wrapper run.sh: its exec of
    app" ("" and ``tokens`` as given when ``tokens[0]``, found on ``env``'s PATH, is no shell
    script, or is named like Python: pyenv's shims are shell scripts); None where a wrapper's
    program is not named outright. The pre-flight's launcher check and the program sweep's
    fingerprint read a wrapper's program alike (s29 tester E1). ``cwd``: the folder it starts
    in, where relative paths are found (None: this one; s33 tester D3)."""
    import shutil

    from hpcds1mpi.launch.program_folder import in_folder
    from hpcds1mpi.launch.shebang import PYTHON_NAME

    said: list[str] = []
    for _ in range(DEPTH + 1):
        name = tokens[0] if tokens else ""
        path = in_folder(name, cwd) if "/" in name else (shutil.which(name, path=env.get("PATH")) if name
                                         else None)
        if not path or not os.path.isfile(path) or PYTHON_NAME.match(os.path.basename(path)) \
                or not is_shell_script(path):
            return tokens, ", ".join(said)
        found = _wrapped(path)
        if found is None:
            return None
        how, tokens = found
        said.append(f"through the wrapper {os.path.basename(path)}: its {how} {tokens[0]}")
    return None  # nested deeper than DEPTH


def launching_line(path: str) -> str | None:
    """The first command of the shell script ``path`` that starts an MPI launcher (``mpiexec
    -n 2 ./app "$1"``): a wrapper that starts its own ranks is a job of its own, and under
    the sweep's launcher each of its ranks would start that job again (s33 tester D5); None
    where it starts none, or is no shell script or cannot be read."""
    if not is_shell_script(path):
        return None
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read(MAX_WRAPPER_CHARS)
    except OSError:
        return None
    reading = _Reading(path)
    reading.text(text.partition("\n")[2])  # what was read before an unreadable part counts
    return reading.launching[0] if reading.launching else None


#: The most of a wrapper read; a longer one is not read at all, since its `exec` or last
#: command may lie past what was read (a 72 KB wrapper was read as its first command).
MAX_WRAPPER_CHARS = 65536


def _wrapped(path: str) -> tuple[str, list[str]] | None:
    """:func:`wrapped_program`'s command, after how the script runs it ("exec of", "last
    command")."""
    if not is_shell_script(path):
        return None
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read(MAX_WRAPPER_CHARS + 1)
    except OSError:
        return None
    if len(text) > MAX_WRAPPER_CHARS:  # its last command unread: no guess (s29 tester H7)
        return None
    reading = _Reading(path)
    if not reading.text(text.partition("\n")[2]):
        return None
    execs = [found for found in reading.found if found[0]]
    how, chosen = ("exec of", execs[:1]) if execs else ("last command", reading.found[-1:])
    if not chosen or any(program is None or not plain  # in an `if`, a loop, the background
                         for _, program, plain in execs or reading.found):
        return None
    if len({program[0] for _, program, _ in execs or reading.found}) != 1:
        return None  # two programs (s29 R1: `./hello; python3 post.py` was read as python3)
    return how, chosen[0][1]


class _Reading:
    """One pass over a wrapper's text: each simple command that runs a program, as
    ``(is an exec, program or None where not named outright, at top level in the foreground)``,
    and the folder the script has cd'd to ("" where it started, None where unknowable)."""

    def __init__(self, script: str):
        self.own = os.path.dirname(os.path.abspath(script))
        self.found: list[tuple[bool, list[str] | None, bool]] = []
        self.launching: list[str] = []  # commands that start a launcher (:func:`launching_line`)
        self.launcher_vars: dict[str, str] = {}  # variables that hold a launcher: its name
        self.stack: list[str] = []
        self.cwd: str | None = ""
        self.skip = ""  # "for", "case" or "function": words that are no command
        self.pattern = self.array = self.function = False
        self.tested = False  # the and-or list read so far holds a test (:data:`_TESTS`)

    def text(self, text: str) -> bool:
        """Read ``text`` line by line; False where it cannot be read (a quote left open, an
        unbalanced structure, a here-document never closed)."""
        pending, heredoc = "", None
        for raw in text.split("\n"):
            if heredoc is not None:
                heredoc = None if raw.strip() == heredoc else heredoc
                continue
            if raw.endswith("\\") and not raw.lstrip().startswith("#"):
                pending += raw[:-1]  # a continued line
                continue
            tokens = _tokens(pending + raw)
            pending = ""
            if tokens is None or not self.line(tokens):
                return False
            words = [t for t in tokens if not isinstance(t, _Op)]
            heredoc = next((m.group(2) or (words[k + 1] if k + 1 < len(words) else "")
                            for k, w in enumerate(words)
                            if (m := _REDIRECTION.match(w)) and m.group(1).startswith("<<")
                            and m.group(1) != "<<<"), None)
        return not self.stack and heredoc is None and not pending

    def line(self, tokens: list[str]) -> bool:
        """Read one line's tokens: structures opened and closed, each simple command kept."""
        words: list[str] = []
        for token in tokens:
            if isinstance(token, _Op):
                if token in ("&&", "||") and words[:1] == ["[["] and "]]" not in words:
                    words.append(token)  # `[[ a && b ]]` is one test
                elif token == "(" and self.pattern or token == "|" and self.pattern:
                    continue  # `(a|b)` case patterns
                elif token == ")" and self.pattern:
                    words, self.pattern = [], False
                elif token == "(" and words and _ASSIGNMENT.match(words[-1]) \
                        and words[-1].endswith("="):
                    self.array = True  # `ARGS=(-n 4)`
                elif token == "(" and (words or self.function):
                    if not (self.function or _NAME.match(words[0]) and len(words) == 1):
                        return False  # `<(cmd)` and the like: not read
                    words, self.function = [], True  # `name() {`, `function name() {`
                elif token == "(":
                    self.stack.append("(")
                elif token == ")" and (self.array or self.function):
                    self.array = self.function = False
                elif token == ")":
                    if self.stack[-1:] != ["("]:
                        return False
                    self.command(words, token)
                    words = []
                    self.stack.pop()
                else:
                    self.command(words, token)
                    self.tested = token in ("&&", "||") and (
                        self.tested or bool(words) and words[0] in _TESTS)
                    words, self.skip = [], ""
                    self.pattern = token == ";;" and self.stack[-1:] == ["case"]
            elif self.array or self.pattern:
                if token == "esac" and self.pattern and not words:
                    if not self.close(token):
                        return False
                    self.pattern = False
                elif self.pattern:
                    words.append(token)
            elif self.skip:
                if self.skip == "case" and token == "in":
                    self.skip, self.pattern = "", True
                elif self.skip == "function":
                    self.skip, self.function = "", True  # its name
            elif self.function and token == "{":
                self.stack.append(token)  # `function name {`
                self.function = False
            elif words:
                words.append(token)
            elif token in _OPENERS:
                self.stack.append(token)
                self.skip = token if token in ("for", "select", "case") else ""
            elif token in ("fi", "done", "esac", "}"):
                if not self.close(token):
                    return False
            elif token == "function":
                self.skip = "function"
            elif token not in _INSIDE:
                words.append(token)
        self.command(words, None)
        self.skip, self.tested = "", False
        return True

    def close(self, word: str) -> bool:
        """Close the innermost structure with ``word``; False where it does not close it."""
        if not self.stack or _OPENERS.get(self.stack[-1]) != word:
            return False
        self.stack.pop()
        return True

    def command(self, words: list[str], after: str | None) -> None:
        """Keep the program of the simple command ``words`` (followed by ``after``), or follow
        its ``cd``; set-up commands and assignments run none."""
        kept, skip = [], False
        for word in words:  # redirections are not the command's words
            match = _REDIRECTION.match(word)
            if not skip and not match:
                kept.append(word)
            skip = bool(match and not match.group(2))
        self._launcher_values(kept)
        while kept and _ASSIGNMENT.match(kept[0]):
            kept = kept[1:]
        if not kept or kept == ["exec"]:  # `exec >log 2>&1`: no program
            return
        plain = not self.stack and after != "&" and not self.tested
        if kept[0] in ("cd", "pushd", "popd"):
            self.cwd = self._cd(kept[1:]) if plain and kept[0] == "cd" else None
        elif kept[0] not in SETUP_COMMANDS and not (kept[0] == "command" and kept[1:2] in (["-v"],
                                                                                     ["-V"])):
            self.found.append((kept[0] == "exec", self._program(kept), plain))

    def _launcher_values(self, kept: list[str]) -> None:
        """Follow the variables that hold a launcher (``mpirun=/usr/bin/mpiexec``, ``a[0]=
        "'$mpirun'"``, also under ``eval`` / ``export``), and keep as launching a command run
        through one — ``$MPIRUN -n 2 ./app``, ``eval "${a[*]}"`` —: FreeFem++'s ``ff-mpirun``
        builds its mpiexec line in an array and evals it (s46 tester H5, H8)."""
        words = kept[1:] if kept[:1] and kept[0] in ("eval", "export", "local", "declare",
                                                     "typeset", "readonly") else kept
        for word in words:
            if not _ASSIGNMENT.match(word):
                break
            name, value = word.split("=", 1)
            name, value = name.split("[")[0].rstrip("+"), value.strip("'\" ")
            held = self._held(value) or (value if LAUNCHERS.match(
                os.path.basename(value.split()[0] if value.split() else "")) else None)
            if held:
                self.launcher_vars[name] = held
            elif "[" not in word.split("=", 1)[0]:
                self.launcher_vars.pop(name, None)  # set to another value
        if not kept or words is not kept and kept[0] != "eval" or _ASSIGNMENT.match(kept[0]):
            return
        head = " ".join(kept[1:]) if kept[0] == "eval" else kept[0]
        if (held := self._held(head)) and (kept[0] == "eval" or head.startswith("$")):
            self.launching.append(f"{held} (through {' '.join(kept)})")

    def _held(self, text: str) -> str | None:
        """The launcher a variable that ``text`` starts with holds, None where none does."""
        use = _USE.match(text.strip("'\" "))
        return self.launcher_vars.get(use.group(1)) if use else None

    def _cd(self, args: list[str]) -> str | None:
        while args and args[0] in ("-P", "-L", "-e", "--"):
            args = args[1:]
        return self._into(self.cwd, args[0]) if len(args) == 1 else None  # `cd`: $HOME

    def _into(self, cwd: str | None, target: str) -> str | None:
        """The folder a ``cd target`` from ``cwd`` enters: the script's own folder (s29 R4:
        ``cd "$(dirname "$0")"``) or a literal absolute one; None where unknowable."""
        if match := _OWN_FOLDER.match(target):
            target = self.own + target[match.end():]
        if not target or "$" in target or "`" in target or target[0] in "-~":
            return None
        if os.path.isabs(target):
            return os.path.normpath(target)
        return os.path.normpath(os.path.join(cwd, target)) if cwd else None

    def _program(self, words: list[str]) -> list[str] | None:
        """The command ``words`` run, without ``exec`` (``-a NAME``, ``-c``, ``-l``), ``env``
        (``-u NAME``, ``-C DIR``, ``-i``, ``--``, ``VAR=x``), ``time`` and the like, its program
        made a path where the script cd'd (s29 R4); None when its program is named by a
        variable, is a launcher, or is missing."""
        from hpcds1mpi.launch.exec_wrappers import is_wrapper, read_wrappers

        rest, cwd = list(words), self.cwd
        while rest:
            if _ASSIGNMENT.match(rest[0]) or rest[0] in ("command", "builtin"):
                rest = rest[1:]
            elif rest[0] == "exec":
                rest = rest[1:]
                while rest and rest[0].startswith("-"):
                    if rest[0] == "--":
                        rest = rest[1:]
                        break
                    rest = rest[2:] if "a" in rest[0] else rest[1:]
            elif is_wrapper(rest[0]):  # env, time, nice, numactl, ...: the one reader's words
                found = read_wrappers(rest)
                if found is None:
                    return None  # `env -S STRING` splits a string of its own
                if found.chdir:
                    cwd = self._into(cwd, found.chdir)
                rest = rest[found.program_at:]
            else:
                break
        if not rest or rest[0] == "eval":
            return None
        name = rest[0]
        if match := _OWN_FOLDER.match(name):
            name = self.own + name[match.end():]
        if "$" not in name and "`" not in name and LAUNCHERS.match(os.path.basename(name)):
            self.launching.append(" ".join(words))
        if "$" in name or "`" in name or LAUNCHERS.match(os.path.basename(name)):
            return None
        if "/" in name and not os.path.isabs(name) and cwd != "":
            if cwd is None:
                return None  # relative to a folder the script cd'd to, unknowable (s29 R4)
            name = os.path.normpath(os.path.join(cwd, name))
        return [name, *rest[1:]]
