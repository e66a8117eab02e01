"""The MPI a job script's program file uses, for ``advise``'s launcher check.

Read as the sweep reads a program's MPI (:func:`hpcds1mpi.launch.mpi_family.program_mpi`,
:mod:`hpcds1mpi.measure.program_mpi`), so a Python program gets the warning an ELF one gets
(s29 tester B2: GPAW, ``#!/usr/bin/python3``, had none under ``srun --mpi=pmi2`` while Meep had):

* an ELF binary: the MPI library in its ``NEEDED`` entries or its libraries' in turn (files
  read as the loader would, :func:`~hpcds1mpi.launch.elf_libraries.needed_tree`), else a
  static binary's version banner;
* a Python program (a ``python`` word, or a ``#!`` naming Python, read as the kernel and
  env(1) read it: :mod:`~hpcds1mpi.launch.shebang`): its interpreter's mpi4py. The one thing
  run: that interpreter, asked where its ``mpi4py.MPI`` extension is (``find_spec``: MPI is not
  loaded, the program is not run), whose ELF is then read as above;
* an R program (``Rscript FILE``, ``R -f FILE``, an ``.R`` file, a ``#!`` naming Rscript or
  R: :mod:`~hpcds1mpi.launch.r_mpi`): the MPI package it loads by name (Rmpi, pbdMPI), whose
  shared object the interpreter is asked for (without loading it) and read as above (s32
  tester W1: ``Rscript mc.R`` read as Rscript's ELF, which links no MPI);
* a shell wrapper: the program it names outright
  (:func:`~hpcds1mpi.launch.wrapper_program.wrapped_program`), read as above.

Anything else is unknown: no warning, no guess.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from dataclasses import dataclass, replace

from hpcds1mpi.launch.elf_libraries import elf_needed, needed_tree
from hpcds1mpi.launch.exec_wrappers import program_index
from hpcds1mpi.launch.mpi_names import (MPI4PY_FILE, MPI_ABI, ProgramMPI, family_of_banner,
                                        family_of_soname)
from hpcds1mpi.launch.r_mpi import (R_NAMES, RProgram, package_object, r_program, r_script,
                                    script_word)
from hpcds1mpi.launch.script_placeholders import program_at
from hpcds1mpi.launch.shebang import PYTHON_NAME, read_shebang, shebang_python

#: The most of a file read for a version banner (a static binary).
_MAX_READ = 256 << 20
#: Seconds an interpreter may take to say where its mpi4py is.
_TIMEOUT_S = 30


@dataclass(frozen=True)
class FileMPI:
    """A program file's MPI: ``family`` (None: unknown), ``evidence`` (how it was told, ""
    when unknown) and ``elf``: the ELF file whose libraries hold the MPI library (the
    binary, or a Python program's mpi4py extension; "" when none), which the PMI checks read."""

    family: str | None
    evidence: str = ""
    elf: str = ""


def program_word(words: list[str]) -> str:
    """The word of a launched command whose file tells its MPI, past an exec-wrapper prefix
    (``env X=1``, ``nice``: s30 tester K1): a Python interpreter's own (``python3 app.py``,
    ``python3 -m gpaw``: its mpi4py), an R front end's program file (``Rscript mc.R``,
    ``R -f mc.R``: it tells the MPI package loaded) as the path it is (``./mc.R``: R opens it
    in the working folder, never on PATH; s32 tester W2), else the program's
    (:func:`~hpcds1mpi.launch.script_placeholders.program_at`)."""
    words = words[program_index(words):]
    if words and PYTHON_NAME.match(os.path.basename(words[0])):
        return words[0]
    if words and os.path.basename(words[0]) in R_NAMES:
        script = script_word(words)
        return words[0] if not script else script if "/" in script else f"./{script}"
    return words[program_at(words)] if words else ""


def file_mpi(path: str, env: dict | None = None, depth: int = 0) -> FileMPI:
    """The MPI of the program file ``path`` (see the module docstring); ``env``: the
    environment its interpreter or wrapped program is found in (default: this process's)."""
    env = dict(os.environ if env is None else env)
    if PYTHON_NAME.match(os.path.basename(path)):  # pyenv's shims are shell scripts too
        return _python_mpi(path, (), env)
    if (r := r_script(path, env)) is not None:  # s32 tester W1
        return _r_mpi(r, env)
    if read_shebang(path) is None:
        return elf_mpi(path)
    from hpcds1mpi.launch.wrapper_program import is_shell_script, unwrapped

    if is_shell_script(path):  # through wrappers as the sweep's launcher check reads them
        inner = unwrapped([path], env)
        r = r_program(inner[0], env) if inner and inner[0] else None
        if r is not None:
            got = _r_mpi(r, env)
            return replace(got, evidence=f"it runs {os.path.basename(r.interpreter)}: "
                                         f"{got.evidence}") if got.family else got
        found = _on_path(inner[0][0], env) if inner and inner[0] else None
        if found is None or depth > 1:  # unwrapped ends at a program: no shell script again
            return FileMPI(None)
        got = file_mpi(found, env, depth + 1)
        return replace(got, evidence=f"it runs {os.path.basename(found)}: {got.evidence}"
                       ) if got.family else got
    python = shebang_python(path, env)
    if python is None:
        return FileMPI(None)
    (interpreter, *options), python_env = python
    return _python_mpi(interpreter, tuple(options), python_env)


def elf_mpi(path: str) -> FileMPI:
    """The MPI of an ELF file: the MPI library its ``NEEDED`` names, or that the libraries it
    needs name in theirs (ScaLAPACK, PETSc, parallel HDF5), else a static binary's version
    banner; unknown for no ELF, no MPI found, or the MPI-5 ABI (its implementation is
    whichever library the loader finds)."""
    try:
        needed = elf_needed(path)
        if needed is None:
            return FileMPI(None)
        for name, via in needed_tree(path):
            family = family_of_soname(name)
            if family is not None:
                through = f" through {' and '.join(via)}" if via else ""
                return (FileMPI(family, f"links {name}{through}", path)
                        if family != MPI_ABI else FileMPI(None))
        if needed:
            return FileMPI(None)
        with open(path, "rb") as fh:
            family = family_of_banner(fh.read(_MAX_READ))
        return FileMPI(family, "a static binary with its MPI's version banner", path)
    except OSError:
        return FileMPI(None)


def r_program_mpi(tokens: list[str], env: dict) -> ProgramMPI | None:
    """The MPI of the R program ``tokens`` start (past any exec-wrapper prefix), as the sweep's
    launcher check takes it (``path``: the MPI package's shared object, whose libraries
    :func:`~hpcds1mpi.launch.mpi_family.library_file` follows); None when ``tokens`` start no R
    program."""
    program = r_program(tokens, env)
    if program is None:
        return None
    name = os.path.basename(program.script)
    if program.package is None:
        what = (f"{name} is an R program that" if program.script else
                "an R command that names no program file (-e, R CMD, stdin) and")
        return ProgramMPI(None, f"{what} loads no MPI package by name (library(Rmpi), "
                                "library(pbdMPI))")
    found = _r_mpi(program, env)
    if found.family is None:
        return ProgramMPI(None, found.evidence or f"{name or 'its -e code'} loads "
                          f"{program.package}, which {program.interpreter} does not have (or "
                          "its MPI cannot be read)")
    return ProgramMPI(found.family, found.evidence, found.elf)


def _r_mpi(program: RProgram, env: dict) -> FileMPI:
    """The MPI of an R program: its MPI package's shared object's (:func:`elf_mpi`)."""
    shared = package_object(program, env)
    found = elf_mpi(shared) if shared else FileMPI(None)
    if found.family is None:
        return found
    return replace(found, evidence=f"an R program: the {program.package} of "
                                   f"{program.interpreter}, {shared}, {found.evidence}")


def _python_mpi(interpreter: str, options: tuple[str, ...], env: dict) -> FileMPI:
    """The MPI of ``interpreter``'s mpi4py: its extension's ELF (:func:`elf_mpi`)."""
    extension = _mpi4py_extension(interpreter, options, tuple(sorted(env.items())))
    if extension is None:
        return FileMPI(None)
    found = elf_mpi(extension)
    if found.family is None:
        return found
    return replace(found, evidence=f"a Python program: the mpi4py of {interpreter}, "
                                   f"{extension}, {found.evidence}")


@functools.lru_cache(maxsize=16)
def _mpi4py_extension(interpreter: str, options: tuple[str, ...],
                      env: tuple[tuple[str, str], ...]) -> str | None:
    """The file of ``interpreter``'s ``mpi4py.MPI`` extension, found without importing it
    (importing it loads MPI); None when it has no mpi4py or cannot be asked. Asked once per
    interpreter, options and environment (a script launches the same Python many times)."""
    try:
        proc = subprocess.run([interpreter, *options, "-c", MPI4PY_FILE],
                              capture_output=True, text=True, timeout=_TIMEOUT_S,
                              env=dict(env), stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None
    extension = proc.stdout.strip()
    return extension if proc.returncode == 0 and os.path.isfile(extension) else None


def _on_path(word: str, env: dict) -> str | None:
    """The file ``word`` names: a path, or a name on ``env``'s PATH."""
    if not word or "$" in word:
        return None
    found = word if "/" in word else shutil.which(word, path=env.get("PATH"))
    return found if found and os.path.isfile(found) else None
