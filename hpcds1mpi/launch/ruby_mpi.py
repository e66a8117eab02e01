"""A Ruby program's MPI binding and that binding's extension, found without loading MPI.

A Ruby program reaches MPI through the ruby-mpi binding (``require "mpi"``), whose C
extension ``mpi.so`` links the MPI library; :mod:`~hpcds1mpi.launch.program_file_mpi` reads
that extension as it reads any ELF. Read here:

* **the Ruby program**: ``ruby [switches] FILE`` (``-e CODE`` too), or a script whose ``#!``
  names ``ruby`` (read as the kernel and env(1) read it:
  :func:`~hpcds1mpi.launch.shebang.shebang_command`);
* **whether it loads the binding**: ``require "mpi"`` / ``require 'mpi'`` (or ``load``) in
  its text or in the local files it requires (``require_relative``, ``require "./x"``, a file
  beside it), read as :mod:`~hpcds1mpi.launch.local_sources` reads them; ``-rmpi`` on its
  command line; none named: unknown, no guess;
* **the extension's file**: asked of that ruby (the first ``mpi.so`` on its ``$LOAD_PATH``,
  else its gems': what ``require`` finds, nothing required: MPI is not started, the program
  is not run), once per interpreter, switches and environment.

Before this ``ruby reduce.rb`` read as ruby's own ELF, "links no MPI library", and the sweep
launched the Open MPI program with the venv's MPICH hydra: every run crashed in MPI_Init
(s35 tester A1).
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass

from hpcds1mpi.launch.interpreter_answer import marked_file, on_path
from hpcds1mpi.launch.local_sources import first_loaded

#: A Ruby interpreter's file name: ``ruby``, ``ruby3.1``.
RUBY_NAME = re.compile(r"ruby[\d.]*$")
#: The binding loaded by name: require "mpi", require('mpi'), load "mpi.so".
_LOADS_MPI = re.compile(r"""^\s*(?:require|load)\s*\(?\s*["']mpi(?:\.so|\.bundle)?["']""")
#: A file the program requires or loads: require_relative "lib/x", require "./x", load "x.rb".
_REQUIRES = re.compile(r"""^\s*(require_relative|require|load)\s*\(?\s*["']([^"']+)["']""")
#: Ruby switches that take the next word when not attached (``-I lib``, ``-r mpi``).
_WITH_ARGUMENT = ("-I", "-r", "-C", "-E", "-e", "--encoding")
#: What starts the line in which ruby says where the extension is.
_MARK = "hpcds1mpi-ruby-extension:"
#: Asked of the ruby: the first mpi.<DLEXT> on $LOAD_PATH, else a gem's (nothing required).
_WHERE = ('x = "mpi." + RbConfig::CONFIG["DLEXT"]; '
          'f = $LOAD_PATH.map { |d| File.join(d.to_s, x) }.find { |p| File.file?(p) }; '
          'f ||= (Gem.find_files(x).first rescue nil); '
          f'print "\\n{_MARK}", f.to_s, "\\n"')


@dataclass(frozen=True)
class RubyProgram:
    """A Ruby program: ``interpreter`` (the ruby file that runs it), its ``options`` that change
    where libraries are found (``-I DIR``), ``script`` (its file; "" for ``-e`` alone) and
    ``binding``: whether it loads the MPI binding by name."""

    interpreter: str
    options: tuple[str, ...]
    script: str
    binding: bool


def ruby_program(words: list[str], env: dict, cwd: str | None = None) -> RubyProgram | None:
    """The Ruby program ``words`` (a command past any exec-wrapper prefix, its first word the
    program) starts in the folder ``cwd`` (None: this one), its interpreter found on ``env``'s
    PATH; None when it is no Ruby program."""
    if not words:
        return None
    if RUBY_NAME.match(os.path.basename(words[0])):
        interpreter = on_path(words[0], env)
        return None if interpreter is None else _front_end(interpreter, words[1:], cwd)
    path = on_path(words[0], env)
    return ruby_script(path, env) if path else None


def ruby_script(path: str, env: dict) -> RubyProgram | None:
    """The Ruby program the file ``path`` is: a script whose ``#!`` names ruby, or an ``.rb``
    file without one (the script of ``ruby FILE``, run by the ruby on ``env``'s PATH); None
    otherwise."""
    from hpcds1mpi.launch.shebang import read_shebang, shebang_command

    if read_shebang(path) is None:
        if not path.endswith(".rb") or not os.path.isfile(path):
            return None
        interpreter = on_path("ruby", env)
        return None if interpreter is None else _front_end(interpreter, [path])
    found = shebang_command(path, env)
    if found is None or not RUBY_NAME.match(os.path.basename(found[0][0])):
        return None
    (interpreter, *line), _ = found
    words = [option for word in line for option in word.split()]
    return _front_end(interpreter, [*words, path])


def script_word(words: list[str]) -> str | None:
    """The program file a ``ruby`` command names (``ruby -Ilib app.rb``), from its words alone;
    None for another command or none named (``-e``)."""
    if not words or not RUBY_NAME.match(os.path.basename(words[0])):
        return None
    return _switches(words[1:])[2] or None


def extension_file(program: RubyProgram, env: dict) -> str | None:
    """The file of the MPI binding's extension as ``program``'s ruby would load it; None when
    it loads none by name, or the ruby has none (or cannot be asked)."""
    if not program.binding:
        return None
    # RUBYOPT may itself say -rmpi, which would load MPI in the asking ruby
    env = {k: v for k, v in env.items() if k != "RUBYOPT"}
    return _extension(program.interpreter, program.options, tuple(sorted(env.items())))


def _front_end(interpreter: str, args: list[str], cwd: str | None = None) -> RubyProgram:
    """The Ruby program ``interpreter`` runs given ``args`` (:func:`_switches`) in ``cwd``."""
    options, texts, script, required = _switches(args)
    binding = required or any(_LOADS_MPI.search(line) for text in texts
                              for line in text.splitlines())
    if cwd and script and not os.path.isabs(script):  # ruby opens it in its working folder
        script = os.path.join(cwd, script)
        options = tuple(o if os.path.isabs(o[2:]) else f"-I{os.path.join(cwd, o[2:])}"
                        for o in options)
    if not binding and script:
        binding = _loads_binding(script, [o[2:] for o in options])
    return RubyProgram(interpreter, options, script, binding)


def _switches(args: list[str]) -> tuple[tuple[str, ...], list[str], str, bool]:
    """(the ``-I DIR`` switches, the ``-e`` code, the program file: the first word that is no
    switch, whether ``-rmpi`` requires the binding) of a ruby command's words ``args``."""
    options: list[str] = []
    texts: list[str] = []
    required = False
    k = 0
    while k < len(args):
        word = args[k]
        if word == "--" or not word.startswith("-") or word == "-":
            script = args[k + 1] if word == "--" and k + 1 < len(args) else word
            return tuple(options), texts, "" if script == "-" else script, required
        value = None
        if word in _WITH_ARGUMENT and k + 1 < len(args):
            value, k = args[k + 1], k + 1
        elif word[:2] in ("-I", "-r", "-e") and len(word) > 2:
            value = word[2:]
        flag = word[:2]
        if flag == "-I" and value is not None:
            options.append(f"-I{value}")
        elif flag == "-r" and value is not None:
            required = required or value in ("mpi", "mpi.so")
        elif flag == "-e" and value is not None:
            texts.append(value)
        k += 1
    return tuple(options), texts, "", required


def _loads_binding(script: str, include: list[str]) -> bool:
    """Whether the Ruby file ``script``, or a local file it requires (beside it, or in an
    ``-I`` folder), loads the binding by name."""
    def read(text: str, here: str) -> tuple[bool | None, list[str]]:
        named: list[str] = []
        for line in text.splitlines():
            if _LOADS_MPI.search(line):
                return True, []
            if (match := _REQUIRES.search(line)) is not None:
                named += _local_files(match.group(1), match.group(2), here, include)
        return None, named

    return first_loaded([script], read) is not None


def _local_files(how: str, name: str, here: str, include: list[str]) -> list[str]:
    """The files a ``require_relative`` / ``require`` / ``load`` of ``name`` may read among the
    program's own: beside the requiring file ``here``, or in an ``-I`` folder."""
    folders = [here] if how == "require_relative" or name.startswith(".") else [here, *include]
    names = [name] if name.endswith(".rb") else [name, f"{name}.rb"]
    return [os.path.abspath(os.path.join(folder, n)) for folder in folders for n in names
            if os.path.isfile(os.path.join(folder, n))]


@functools.lru_cache(maxsize=16)
def _extension(interpreter: str, options: tuple[str, ...],
               env: tuple[tuple[str, str], ...]) -> str | None:
    """The extension file ``interpreter`` (with ``options``) finds for ``require "mpi.so"``."""
    return marked_file([interpreter, *options, "-e", _WHERE], _MARK, dict(env))
