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
* a Ruby program (``ruby FILE``, an ``.rb`` file, a ``#!`` naming ruby:
  :mod:`~hpcds1mpi.launch.ruby_mpi`): the ruby-mpi binding it requires by name, whose
  extension ``mpi.so`` that ruby is asked for (without loading it) and read as above (s35
  tester A1: ``ruby reduce.rb`` read as ruby's ELF, "links no MPI library");
* a shell wrapper: the program it names outright
  (:func:`~hpcds1mpi.launch.wrapper_program.wrapped_program`), read as above.

An interpreter that loads its MPI at run time through a binding not read here (Perl, Julia,
Lua, Octave...: :data:`RUNTIME_MPI`) is never said to link no MPI: its MPI could not be read.
Anything else is unknown: no warning, no guess. A dynamic binary whose every library is found
and none is MPI is :attr:`FileMPI.without_mpi`: its ranks cannot be one job (s35 tester A2).
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
from dataclasses import dataclass, replace

from hpcds1mpi.launch.elf_libraries import elf_needed, needed_files
from hpcds1mpi.launch.exec_wrappers import program_index
from hpcds1mpi.launch.mpi_names import (MPI4PY_FILE, MPI_ABI, ProgramMPI, family_of_banner,
                                        family_of_soname)
from hpcds1mpi.launch.r_mpi import (R_NAMES, RProgram, package_object, r_program, r_script,
                                    script_word)
from hpcds1mpi.launch.ruby_mpi import (RUBY_NAME, RubyProgram, extension_file, ruby_program,
                                       ruby_script)
from hpcds1mpi.launch.ruby_mpi import script_word as ruby_script_word
from hpcds1mpi.launch.script_placeholders import program_at
from hpcds1mpi.launch.shebang import PYTHON_NAME, read_shebang, shebang_python

#: The most of a file read for a version banner (a static binary).
_MAX_READ = 256 << 20
#: Seconds an interpreter may take to say where its mpi4py is.
_TIMEOUT_S = 30
#: Interpreters whose programs load MPI at run time through a binding not read here
#: (Perl's Parallel::MPI, Julia's MPI.jl, Lua, Octave's MPI package...) -> the language: their
#: own ELF links no MPI, which says nothing of the program's (s35 tester A1).
RUNTIME_MPI = {"perl": "Perl", "julia": "Julia", "lua": "Lua", "luajit": "Lua",
               "octave": "Octave", "octave-cli": "Octave", "node": "JavaScript",
               "nodejs": "JavaScript", "java": "Java", "php": "PHP", "tclsh": "Tcl",
               "wish": "Tcl", "guile": "Guile", "racket": "Racket", "sbcl": "Lisp",
               "ocaml": "OCaml", "pwsh": "PowerShell", "ruby": "Ruby", "Rscript": "R",
               "R": "R"}
_VERSIONED = re.compile(r"[\d.]+$")


@dataclass(frozen=True)
class FileMPI:
    """A program file's MPI: ``family`` (None: unknown), ``evidence`` (how it was told, ""
    when unknown) and ``elf``: the ELF file whose libraries hold the MPI library (the
    binary, or a Python program's mpi4py extension; "" when none), which the PMI checks read."""

    family: str | None
    evidence: str = ""
    elf: str = ""
    #: a dynamic binary whose every library was found and none is MPI, read from its files
    #: (no interpreter): its ranks would run as independent copies (s35 tester A2)
    without_mpi: bool = False


def program_word(words: list[str]) -> str:
    """The word of a launched command whose file tells its MPI, past an exec-wrapper prefix
    (``env X=1``, ``nice``: s30 tester K1): a Python interpreter's own (``python3 app.py``,
    ``python3 -m gpaw``: its mpi4py), an R front end's program file (``Rscript mc.R``,
    ``R -f mc.R``: it tells the MPI package loaded) as the path it is (``./mc.R``: R opens it
    in the working folder, never on PATH; s32 tester W2), else the program's
    (:func:`~hpcds1mpi.launch.script_placeholders.program_at`). Past a profiler or
    debugger (``strace -f -o F ./app``, ``perf stat -e cycles ./app``) it is the program the
    tool runs, as the workload reading finds it (:mod:`~hpcds1mpi.launch.tool_wrappers`): the
    tool's own file says nothing of the job's MPI (s44 tester N6: 2 ranks of ``strace`` were
    warned of as independent copies); "" where no program is read past the tool."""
    words = past_tools(words[program_index(words):])
    if words and PYTHON_NAME.match(os.path.basename(words[0])):
        return words[0]
    if words and os.path.basename(words[0]) in R_NAMES:
        script = script_word(words)
        return words[0] if not script else script if "/" in script else f"./{script}"
    if words and RUBY_NAME.match(os.path.basename(words[0])):  # s35 tester A1
        script = ruby_script_word(words)
        return words[0] if not script else script if "/" in script else f"./{script}"
    return words[program_at(words)] if words else ""


def past_tools(words: list[str]) -> list[str]:
    """``words`` from the program their profilers and debuggers run (each tool's likeliest
    position, :func:`~hpcds1mpi.launch.tool_wrappers.program_positions`), past exec wrappers
    between them; [] where a tool's program cannot be read."""
    from hpcds1mpi.launch.tool_wrappers import is_tool, program_positions

    while words and is_tool(words[0]):
        positions = program_positions(words)
        words = words[positions[0]:] if positions else []
        words = words[program_index(words):]
    return words


def file_mpi(path: str, env: dict | None = None, depth: int = 0) -> FileMPI:
    """The MPI of the program file ``path`` (see the module docstring); ``env``: the
    environment its interpreter or wrapped program is found in (default: this process's)."""
    env = dict(os.environ if env is None else env)
    if PYTHON_NAME.match(os.path.basename(path)):  # pyenv's shims are shell scripts too
        return _python_mpi(path, (), env)
    if (r := r_script(path, env)) is not None:  # s32 tester W1
        return _r_mpi(r, env)
    if (ruby := ruby_script(path, env)) is not None:  # s35 tester A1
        return _ruby_mpi(ruby, env)
    if read_shebang(path) is None:
        return FileMPI(None) if runtime_language(path) else elf_mpi(path)
    from hpcds1mpi.launch.wrapper_program import is_shell_script, unwrapped

    if is_shell_script(path):  # through wrappers as the sweep's launcher check reads them
        inner = unwrapped([path], env)
        r = r_program(inner[0], env) if inner and inner[0] else None
        ruby = ruby_program(inner[0], env) if inner and inner[0] and r is None else None
        if r is not None or ruby is not None:
            got = _r_mpi(r, env) if r is not None else _ruby_mpi(ruby, env)
            return replace(got, evidence=f"it runs {os.path.basename((r or ruby).interpreter)}"
                                         f": {got.evidence}") if got.family else got
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
        unfound = False
        for name, via, file in needed_files(path):
            family = family_of_soname(name)
            if family is not None:
                through = f" through {' and '.join(via)}" if via else ""
                return (FileMPI(family, f"links {name}{through}", path)
                        if family != MPI_ABI else FileMPI(None))
            unfound = unfound or file is None
        if needed:  # every library found, none MPI: known to link none (s35 tester A2)
            return FileMPI(None, elf=path, without_mpi=not unfound)
        with open(path, "rb") as fh:
            family = family_of_banner(fh.read(_MAX_READ))
        return FileMPI(family, "a static binary with its MPI's version banner", path)
    except OSError:
        return FileMPI(None)


def interpreted_program_mpi(tokens: list[str], env: dict, cwd: str | None = None
                            ) -> ProgramMPI | None:
    """The MPI of the R or Ruby program ``tokens`` start (past any exec-wrapper prefix), as the
    sweep's launcher check takes it (``path``: the binding's shared object, whose libraries
    :func:`~hpcds1mpi.launch.mpi_family.library_file` follows); for another interpreter that
    loads MPI at run time (:data:`RUNTIME_MPI`) an unknown MPI that says so, never its own
    ELF's "links no MPI library" (s35 tester A1); None when ``tokens`` start none of these.
    ``cwd``: the folder the program starts in (None: this one), where a relative Ruby or R
    program file is read, and the files an R program sources."""
    if (found := ruby_program_mpi(tokens, env, cwd)) is not None:
        return found
    if (r := _r_program_mpi(tokens, env, cwd)) is not None:
        return r
    language = runtime_language(tokens[0]) if tokens else ""
    if not language:
        return None
    return ProgramMPI(None, f"{os.path.basename(tokens[0])} is an interpreter: its MPI could "
                            f"not be read (a {language} program loads it at run time)")


#: The name :func:`~hpcds1mpi.launch.mpi_family.program_mpi` asks by (s32), now R and Ruby.
def runtime_language(program: str) -> str:
    """The language of an interpreter that loads MPI at run time (:data:`RUNTIME_MPI`:
    ``perl``, ``julia``, ``ruby3.1``), "" for any other program."""
    name = os.path.basename(program)
    return RUNTIME_MPI.get(name) or RUNTIME_MPI.get(_VERSIONED.sub("", name), "")


def ruby_program_mpi(tokens: list[str], env: dict, cwd: str | None = None
                     ) -> ProgramMPI | None:
    """The MPI of the Ruby program ``tokens`` start in ``cwd``: its binding's extension's
    (:mod:`~hpcds1mpi.launch.ruby_mpi`); None when ``tokens`` start no Ruby program."""
    program = ruby_program(tokens, env, cwd)
    if program is None:
        return None
    name = os.path.basename(program.script) or "its -e code"
    if not program.binding:
        return ProgramMPI(None, f"{name} is a Ruby program that requires no MPI binding by "
                                "name (require \"mpi\"): its MPI could not be read")
    found = _ruby_mpi(program, env)
    if found.family is None:
        return ProgramMPI(None, f"{name} requires mpi, which {program.interpreter} does not "
                                "have (or its MPI cannot be read)")
    return ProgramMPI(found.family, found.evidence, found.elf)


def _ruby_mpi(program: RubyProgram, env: dict) -> FileMPI:
    """The MPI of a Ruby program: its binding's extension's (:func:`elf_mpi`); unknown, never
    "without MPI", where it loads none by name (it may at run time)."""
    return _binding_mpi(extension_file(program, env),
                        f"a Ruby program: the mpi binding of {program.interpreter}")


def _r_program_mpi(tokens: list[str], env: dict, cwd: str | None = None
                   ) -> ProgramMPI | None:
    """The MPI of the R program ``tokens`` start in ``cwd``; None when they start no R
    program."""
    program = r_program(tokens, env, cwd)
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
    return _binding_mpi(package_object(program, env),
                        f"an R program: the {program.package} of {program.interpreter}")


def _binding_mpi(shared: str | None, whose: str) -> FileMPI:
    """The MPI of an interpreter's MPI binding, its shared object ``shared`` (:func:`elf_mpi`;
    unknown where there is none or it links none), said as ``whose``'s."""
    found = elf_mpi(shared) if shared else FileMPI(None)
    if found.family is None:
        return FileMPI(None)
    return replace(found, evidence=f"{whose}, {shared}, {found.evidence}")


def _python_mpi(interpreter: str, options: tuple[str, ...], env: dict) -> FileMPI:
    """The MPI of ``interpreter``'s mpi4py: its extension's ELF (:func:`elf_mpi`)."""
    extension = _mpi4py_extension(interpreter, options, tuple(sorted(env.items())))
    if extension is None:
        return FileMPI(None)
    found = elf_mpi(extension)
    if found.family is None:
        return FileMPI(None)
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
