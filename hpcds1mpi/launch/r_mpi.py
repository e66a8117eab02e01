"""An R program's MPI package and that package's shared object, found without loading MPI.

An R program reaches MPI through a package that binds it: Rmpi (also under doMPI) or pbdMPI.
Its MPI is the one that package's shared object (``libs/Rmpi.so``) links, which
:mod:`~hpcds1mpi.launch.program_file_mpi` reads as it reads any ELF. Read here:

* **the R program**: ``Rscript [options] FILE``, ``R [options] -f FILE`` / ``--file=FILE``
  (``-e EXPR`` for either), or a script whose ``#!`` names ``Rscript`` or ``R`` (read as the
  kernel and env(1) read it: :func:`~hpcds1mpi.launch.shebang.shebang_command`);
* **the package it loads**: named in its text (``library(Rmpi)``, ``require(pbdMPI)``,
  ``Rmpi::``) or in the local files it reads in (``source("setup.R")``, ``sys.source``: a
  file in the run's folder, where R opens it, or beside the file that names it, where
  ``chdir = TRUE`` opens it; at most :data:`_MAX_DEPTH` files deep, read as
  :mod:`~hpcds1mpi.launch.local_sources` reads them, never run), or by
  ``--default-packages``; none named: unknown, no guess;
* **the package's file**: asked of that interpreter (``system.file``, which finds the package
  on its ``.libPaths()`` without loading it: MPI is not started, the program is not run), once
  per interpreter, options, environment and package.

Before this an ``Rscript mc.R`` read as Rscript's own ELF, which links no MPI, and an Open MPI
program ran under the venv's MPICH hydra as 1-rank copies recorded ok (s32 tester W1), as
did one loading Rmpi through ``source("setup_mpi.R")`` until its sources were read (s48
tester Q4).
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass

from hpcds1mpi.launch.interpreter_answer import marked_file, on_path
from hpcds1mpi.launch.local_sources import first_loaded

#: The R front ends that run an R program.
R_NAMES = ("Rscript", "R")
#: R packages that bind MPI -> the package whose shared object links the MPI library.
_BINDINGS = {"Rmpi": "Rmpi", "doMPI": "Rmpi", "pbdMPI": "pbdMPI"}
#: A package loaded by name: library(Rmpi), require("pbdMPI"), requireNamespace(...), Rmpi::f.
_LOADS = re.compile(r"\b(?:library|require|requireNamespace|loadNamespace|attachNamespace)"
                    r"\s*\(\s*(?:package\s*=\s*)?[\"'`]?(Rmpi|doMPI|pbdMPI)\b"
                    r"|\b(Rmpi|doMPI|pbdMPI)\s*:::?")
#: A file read in by name: source("setup.R"), sys.source(file = 'lib/mpi.R').
_SOURCES = re.compile(r"(?<![\w.])(?:sys\.)?source\s*\(\s*(?:file\s*=\s*)?[\"']([^\"']+)[\"']")
#: The deepest chain of sourced files followed below the program's own.
_MAX_DEPTH = 8
#: R's options that change where its packages are found, kept when R is asked for one.
_LIBRARY_OPTIONS = ("--vanilla", "--no-environ", "--no-site-file", "--no-init-file")
#: R front-end options that take the next word as their argument.
_R_ARGUMENT = ("-d", "--debugger", "-g", "--gui")
#: What starts the line in which R says where a package's shared object is.
_MARK = "hpcds1mpi-r-package:"


@dataclass(frozen=True)
class RProgram:
    """An R program: ``interpreter`` (the Rscript or R file that runs it), its ``options`` that
    change where packages are found, ``script`` (the program's file; "" for ``-e`` alone) and
    ``package`` (the MPI-binding package whose object links MPI; None: it names none)."""

    interpreter: str
    options: tuple[str, ...]
    script: str
    package: str | None


def r_program(words: list[str], env: dict, cwd: str | None = None) -> RProgram | None:
    """The R program ``words`` (a command past any exec-wrapper prefix, its first word the
    program) starts in the folder ``cwd`` (None: this one), its interpreter found on ``env``'s
    PATH; None when it is no R program."""
    if not words:
        return None
    name = os.path.basename(words[0])
    if name in R_NAMES:
        interpreter = on_path(words[0], env)
        return None if interpreter is None else _front_end(interpreter, words[1:], cwd=cwd)
    path = on_path(words[0], env)
    return r_script(path, env) if path else None


def r_script(path: str, env: dict) -> RProgram | None:
    """The R program the file ``path`` is: a script whose ``#!`` names Rscript or R, or an
    ``.R`` file without one (run by the Rscript on ``env``'s PATH, as ``Rscript FILE`` runs
    it); None otherwise."""
    from hpcds1mpi.launch.shebang import read_shebang, shebang_command

    if read_shebang(path) is None:
        if not path.endswith((".R", ".r")) or not os.path.isfile(path):
            return None
        interpreter = on_path("Rscript", env)
        return None if interpreter is None else _front_end(interpreter, [path])
    found = shebang_command(path, env)
    if found is None or os.path.basename(found[0][0]) not in R_NAMES:
        return None
    (interpreter, *line), _ = found
    words = [option for word in line for option in word.split()]
    return _front_end(interpreter, [*words, path], script=path)


def package_object(program: RProgram, env: dict) -> str | None:
    """The shared object of ``program``'s MPI package as its interpreter would load it; None
    when it names no package, or the interpreter does not have it (or cannot be asked)."""
    if program.package is None:
        return None
    return _package_object(program.interpreter, program.options, program.package,
                           tuple(sorted(env.items())))


def script_word(words: list[str]) -> str | None:
    """The program file an ``Rscript`` / ``R`` command names (``Rscript mc.R``, ``R --slave
    -f mc.R``), read from its words alone; None for another command or none named (``-e``)."""
    if not words or os.path.basename(words[0]) not in R_NAMES:
        return None
    return _arguments(os.path.basename(words[0]) == "Rscript", words[1:])[2] or None


def _front_end(interpreter: str, args: list[str], script: str = "",
               cwd: str | None = None) -> RProgram:
    """The R program ``interpreter`` (Rscript or R) runs given ``args`` (:func:`_arguments`)
    in the folder ``cwd`` (None: this one), ``script`` the file a ``#!`` line runs it for."""
    options, texts, named, loaded = _arguments(os.path.basename(interpreter) == "Rscript", args)
    script = script or named
    if cwd and script and not os.path.isabs(script):  # R opens it in its working folder
        script = os.path.join(cwd, script)
    run = os.path.abspath(cwd or os.curdir)

    def read(text: str, here: str) -> tuple[str | None, list[str]]:
        return _loaded(text, here, run)

    package, sourced = _loaded("\n".join(texts), run, run)  # -e code runs in the run's folder
    package = package or first_loaded([*sourced, *([script] if script else [])], read,
                                      _MAX_DEPTH)
    return RProgram(interpreter, options, script, package or loaded)


def _arguments(rscript: bool, args: list[str]) -> tuple[tuple[str, ...], list[str], str,
                                                         str | None]:
    """(the options that change where packages are found, the ``-e`` expressions, the program
    file: Rscript's first word that is no option, R's ``-f FILE`` / ``--file=FILE``; the MPI
    package ``--default-packages`` loads) of an R front end's words ``args``."""
    options: list[str] = []
    texts: list[str] = []
    script, loaded = "", None
    k = 0
    while k < len(args):
        word = args[k]
        if word == "--args":
            break
        if word == "-e" and k + 1 < len(args):
            texts.append(args[k + 1])
            k += 1
        elif not rscript and word == "-f" and k + 1 < len(args):
            script = args[k + 1]
            k += 1
        elif not rscript and word.startswith("--file="):
            script = word.split("=", 1)[1]
        elif word.startswith("--default-packages="):
            loaded = next((_BINDINGS[name] for name in word.split("=", 1)[1].split(",")
                           if name in _BINDINGS), loaded)
        elif word in _LIBRARY_OPTIONS:
            options.append(word)
        elif not rscript and word in _R_ARGUMENT:
            k += 1
        elif rscript and not word.startswith("-"):
            script = word
            break
        k += 1
    return tuple(options), texts, script, loaded


def _loaded(text: str, here: str, run: str) -> tuple[str | None, list[str]]:
    """(the first MPI-binding package R code ``text`` loads by name, outside whole-line
    comments; the local files it sources, found in the run's folder ``run`` — R opens a
    relative name there — or in the code's own folder ``here`` — ``chdir = TRUE`` does)."""
    sourced: list[str] = []
    for line in text.splitlines():
        if line.lstrip().startswith("#"):
            continue
        match = _LOADS.search(line)
        if match:
            return _BINDINGS[match.group(1) or match.group(2)], []
        for name in _SOURCES.findall(line):
            name = os.path.expanduser(name)
            sourced += [path for folder in dict.fromkeys((run, here))
                        if os.path.isfile(path := os.path.join(folder, name))]
    return None, sourced


@functools.lru_cache(maxsize=16)
def _package_object(interpreter: str, options: tuple[str, ...], package: str,
                    env: tuple[tuple[str, str], ...]) -> str | None:
    """The file of ``package``'s shared object as ``interpreter`` finds it on its
    ``.libPaths()`` (a sub-architecture's folder where R has one), asked without loading it."""
    expression = (f'a <- .Platform$r_arch; cat("\\n{_MARK}", system.file(if (nzchar(a)) '
                  f'file.path("libs", a) else "libs", paste0("{package}", '
                  f'.Platform$dynlib.ext), package = "{package}"), "\\n", sep = "")')
    quiet = [] if os.path.basename(interpreter) == "Rscript" else [
        "--slave", "--no-save", "--no-restore"]
    return marked_file([interpreter, *quiet, *options, "-e", expression], _MARK, dict(env))
