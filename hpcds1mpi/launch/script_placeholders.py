"""Where a job script's launch line gives what the program's measured command has as a
placeholder: the launched program lined up with its recorded command line.

The measured command (``./app {size} 40``, ``env POISSON_N={size} python3 poisson.py``,
``gmx_mpi mdrun -ntomp {threads}``) is matched word by word where the two line up, else as an
option's value with other options added or left out, else with options set aside
(:mod:`~hpcds1mpi.launch.options_aside`); the program's word is found past an exec-wrapper
prefix (:mod:`~hpcds1mpi.launch.exec_wrappers`) or an interpreter. :func:`size_from` reads the
problem size, :func:`placeholder_words` any placeholder (the threads a program sets itself and
its precision and device: :mod:`~hpcds1mpi.launch.script_request`,
:mod:`~hpcds1mpi.launch.script_knobs`), :func:`fits_command` how well a launch fits a
recorded command. Split out of ``script_request``, which had reached the module size limit
(s31 review M5).
"""

from __future__ import annotations

import os
import re
import shlex
from typing import TYPE_CHECKING, Sequence

from hpcds1mpi.launch.exec_wrappers import is_wrapper, program_index, read_wrappers
from hpcds1mpi.launch.named_values import named_hits
from hpcds1mpi.launch.options_aside import aside_hits
from hpcds1mpi.launch.script_options import SIZE_DIGITS

if TYPE_CHECKING:  # pragma: no cover
    from hpcds1mpi.launch.job_script import Launch

_SUFFIX_RE = re.compile(r"\.(x|exe|out|py|sh|bin)$")
#: Interpreters whose first argument that is no option is the program (``python3 app.py``).
_INTERPRETER_RE = re.compile(r"^(python[0-9.]*|pypy[0-9.]*|bash|sh|perl|Rscript|julia|ruby|node)$")
#: Per interpreter other than Python's (``launch/python_mpi_use.PYTHON_VALUED``): its options
#: taking the next word as their value (``bash -o pipefail run.sh``, ``julia -t 4 app.jl``).
_VALUED_OPTIONS = {"bash": ("-o", "-O", "+o", "+O"), "sh": ("-o", "+o"),
                   "julia": ("-t", "--threads", "-p", "--procs", "-L", "--load", "-J",
                             "--sysimage", "-C", "--cpu-target", "--project"),
                   "node": ("-r", "--require", "--import", "--loader"), "ruby": ("-I", "-r")}


def stem(word: str) -> str:
    """A program word's name: no folder, no ``.x`` / ``.exe`` / ``.out`` / ``.py`` / ...."""
    return _SUFFIX_RE.sub("", os.path.basename(word.rstrip("/")))


def program_at(words: Sequence[str]) -> int:
    """The index of the program among a command's words: the first past an exec-wrapper prefix
    (:mod:`~hpcds1mpi.launch.exec_wrappers`), or for an interpreter its first non-option, the
    value of an option taking one skipped (``python3 -W ignore app.py``: ``ignore`` had been
    read as the program, s41 review F8)."""
    start = program_index(list(words))
    if not (start < len(words) and (name := _INTERPRETER_RE.match(os.path.basename(words[start])))):
        return start
    valued = _interpreter_valued(name[1])
    k = start + 1
    while k < len(words):
        if not words[k].startswith("-"):
            return k
        k += 2 if words[k] in valued else 1
    return start


def _interpreter_valued(interpreter: str) -> tuple[str, ...]:
    """The options of ``interpreter`` (a name :data:`_INTERPRETER_RE` matches) that take the
    next word as their value."""
    from hpcds1mpi.launch.python_mpi_use import PYTHON_VALUED

    if interpreter.startswith(("python", "pypy")):
        return PYTHON_VALUED
    return _VALUED_OPTIONS.get(interpreter, ())


def split_command(command: str) -> list[str]:
    """A recorded command line's words (shell quoting), [] when it cannot be split."""
    try:
        return shlex.split(command)
    except ValueError:
        return []


def launch_words(launch: "Launch") -> list[str]:
    """The launched program's word and its arguments, ``$`` expanded where known (index k is
    ``launch.spans[k]``); [] when no program was read."""
    if not launch.program_raw:
        return []
    return [launch.program or launch.program_raw, *launch.args]


def inner_program_at(launch: "Launch") -> int | None:
    """The index in :func:`launch_words` of the program ``launch`` runs past its container
    runners and tools (``apptainer exec IMG ./app``, ``valgrind -q ./app``): 0 where it runs
    none; None where no program is read past them (an image that runs its own)."""
    from hpcds1mpi.launch.tool_wrappers import program_starts

    starts = program_starts(launch_words(launch))
    return starts[0] if starts else None


def own_command_at(launch: "Launch") -> int | None:
    """The index in :func:`launch_words` of the ``hpcds1mpi`` word ``launch`` runs, directly
    or past container runners and tools (``apptainer exec IMG hpcds1mpi run ...``: its
    ``--threads`` had been left as written and blamed on the runner, s42 tester F8); None
    where it runs another program."""
    from hpcds1mpi.launch.tool_wrappers import program_starts

    words = launch_words(launch)
    return next((k for k in program_starts(words) if stem(words[k]) == "hpcds1mpi"), None)


def _lined_up(launch: "Launch", tokens: list[str]) -> list[tuple[str, str, int]] | None:
    """(recorded word, launched word, its index in :func:`_words`) from the program's name
    on (a wrapper or an interpreter before it in the script skipped); None when the two
    differ in length."""
    start, words, at = _program_in(launch, tokens)
    if start is None or len(words) - start != len(tokens) - at:
        return None
    return [(t, words[start + j], start + j) for j, t in enumerate(tokens[at:])]


def _program_in(launch: "Launch", tokens: list[str]) -> tuple[int | None, list[str], int]:
    """(index of the recorded program's word among the launched words or None, those words,
    the program's index in ``tokens``)."""
    at = program_at(tokens) if tokens else 0
    words = launch_words(launch)
    starts = [i for i, w in enumerate(words) if tokens and stem(w) == stem(tokens[at])]
    return (starts[0] if starts else None), words, at


def word_pattern(token: str, key: str = "", group: str = "") -> str:
    """A recorded word as a regex: ``{key}`` as ``group`` (when given), other placeholders
    as any word."""
    pattern = re.escape(token)
    if key:
        pattern = pattern.replace(re.escape("{" + key + "}"), group)
    return re.sub(r"\\\{\w+\\\}", r"\\S+", pattern)


def placeholder_words(launch: "Launch", template: str | None, key: str, value: str
                      ) -> list[tuple[int, re.Match]]:
    """Where the launched command gives what its measured command line (``template``) has as
    ``{key}``: (index in :func:`_words`, the word's match, the value as group 1) of each such
    word. Word by word where the two line up (``./app {size} 40``), else as an option's value
    (``-var x {size}``, ``-ntomp {threads}``) with other options added or left out.

    Args:
        value: the regex of a value (``[0-9]+``).
    """
    tokens = split_command(template or "")
    return _lined_hits(launch, tokens, key, value) or _trailing_hits(
        launch, tokens, key, value) or _after_option(launch, tokens, key, value) or _aside_hits(
        launch, tokens, key, value) or _named_hits(launch, tokens, key, value)


def _lined_hits(launch: "Launch", tokens: list[str], key: str, value: str
                ) -> list[tuple[int, re.Match]]:
    hits = []
    for token, word, k in _lined_up(launch, tokens) or ():
        if "{" + key + "}" in token:
            m = re.fullmatch(word_pattern(token, key, f"({value})"), word)
            if m:
                hits.append((k, m))
    return hits


def _trailing_hits(launch: "Launch", tokens: list[str], key: str, value: str
                   ) -> list[tuple[int, re.Match]]:
    """``{key}``'s words where the launched command is the recorded one, every word matching
    (placeholders any value), followed by extra arguments (s33 tester B8: ``h5write.py 1200
    result.h5`` for ``h5write.py {size}`` was "pass --size"); [] where the recorded words also
    match at a later place of the launched ones with another value (``./app 1200 300`` for
    ``./app {size}``: 1200 or 300 cannot be told)."""
    start, words, at = _program_in(launch, tokens)
    recorded, wanted = tokens[at + 1:], "{" + key + "}"
    given = [] if start is None else words[start + 1:]
    if len(given) <= len(recorded) or not any(wanted in t for t in recorded):
        return []  # no extra words: _lined_hits' case
    patterns = [re.compile(word_pattern(t, key, f"({value})")) for t in recorded]
    readings = {}  # offset of the recorded words among the launched ones -> their hits
    for offset in range(len(given) - len(recorded) + 1):
        found = [p.fullmatch(w) for p, w in zip(patterns, given[offset:])]
        if all(found):
            readings[offset] = [(start + 1 + offset + j, m) for j, (t, m) in
                                enumerate(zip(recorded, found)) if wanted in t]
    values = {m.groups() for hits in readings.values() for _, m in hits}
    return readings[0] if 0 in readings and len(values) == 1 else []


def size_from(launch: "Launch", template: str | None) -> int | None:
    """The problem size in the launched command: ``--size N`` / ``--size=N``, or the place
    of ``{size}`` in the program's recorded command line (``./app {size} 40``); None where
    the places of ``{size}`` give several values (:func:`size_values`)."""
    values = size_values(launch, template)
    return values[0] if len(values) == 1 else None


def size_values(launch: "Launch", template: str | None) -> list[int]:
    """Every value the launched command gives its size, first seen first: ``--size N``, else
    each place of ``{size}`` in the recorded command line (``-da_grid_x {size} -da_grid_y
    {size}``, ``--grid={size}x{size}``); several: which one is the size is not guessed (s29
    tester C3: ``-da_grid_x 120 -da_grid_y 480`` was read as size 120)."""
    args = launch.args
    for k, word in enumerate(args):
        if word == "--size" and k + 1 < len(args) and re.fullmatch(SIZE_DIGITS, args[k + 1]):
            return [int(args[k + 1])]
        if word.startswith("--size=") and re.fullmatch(SIZE_DIGITS, word[7:]):
            return [int(word[7:])]
    hits = placeholder_words(launch, template, "size", SIZE_DIGITS)
    values = [int(m.group(g)) for _, m in hits for g in range(1, m.re.groups + 1)]
    return list(dict.fromkeys(values + _assigned_values(launch, split_command(template or ""))))


def _assigned_values(launch: "Launch", tokens: list[str]) -> list[int]:
    """The sizes given where the measured command's exec-wrapper prefix has ``NAME={size}``
    (``env POISSON_N={size} ...``): ``NAME`` as the launch line sets it (``env NAME=320``,
    ``-x NAME=320``), else as the script does before it (``export``) (s30 tester K1)."""
    found, values = read_wrappers(tokens) if tokens and is_wrapper(tokens[0]) else None, []
    for name, recorded, _ in found.assigned if found else ():  # not one `env -u` removes
        given = launch.env[name][0] if name in launch.env else None if launch.wrapper_cleared \
            or name in launch.wrapper_unset else launch.scope.get(name)  # (s30 tester R6)
        if "{size}" in recorded and given is not None and (m := re.fullmatch(
                word_pattern(recorded, "size", f"({SIZE_DIGITS})"), given)):
            values += [int(v) for v in m.groups()]
    return values


def _aside_hits(launch: "Launch", tokens: list[str], key: str, value: str
                ) -> list[tuple[int, re.Match]]:
    """:func:`~hpcds1mpi.launch.options_aside.aside_hits` from the program's word on (s30
    tester K2: ``poisson.py 320 --pc gamg`` for ``poisson.py {size}``)."""
    start, words, at = _program_in(launch, tokens)
    return [] if start is None else [(start + 1 + i, m) for i, m in aside_hits(
        words[start + 1:], tokens[at + 1:], key, value, word_pattern)]


def _named_hits(launch: "Launch", tokens: list[str], key: str, value: str
                ) -> list[tuple[int, re.Match]]:
    """:func:`~hpcds1mpi.launch.named_values.named_hits` from the program's word on (s32
    tester U4: ``meep res=18 T=20 wg.ctl`` for ``meep res={size} wg.ctl``)."""
    start, words, at = _program_in(launch, tokens)
    return [] if start is None else [(start + 1 + i, m) for i, m in named_hits(
        words[start + 1:], tokens[at + 1:], key, value, word_pattern)]


def _after_option(launch: "Launch", tokens: list[str], key: str, value: str
                  ) -> list[tuple[int, re.Match]]:
    """The words that give ``{key}`` where the recorded command has it as an option's value
    (``-var x {size}``, ``--n {size}``, ``--n={size}``) and the launched command has that
    option, other options added or left out (LAMMPS measured with ``-log none``, launched
    without it: the size had not been read); [] when it is only positional (``./app {size}
    40``: another argument count may be another form of the program)."""
    start, words, at = _program_in(launch, tokens)
    if start is None:
        return []
    first, found = start + 1, []
    recorded = tokens[at + 1:]
    for j, token in enumerate(recorded):
        options = [k for k in range(max(0, j - 3), j + 1) if recorded[k].startswith("-")]
        if "{" + key + "}" not in token or not options:
            continue
        # ``--n={size}``: no context words
        context = [re.compile(word_pattern(t)) for t in recorded[options[-1]:j]]
        wanted = re.compile(word_pattern(token, key, f"({value})"))
        for i in range(first + len(context), len(words)):
            m = wanted.fullmatch(words[i])
            if m and all(c.fullmatch(w) for c, w in zip(context, words[i - len(context):i])):
                found.append((i, m))
    return found


def fits_command(launch: "Launch", template: str) -> int:
    """How well the launched command fits a recorded one: 2 its every word (placeholders any
    value), 1 its size alone (:func:`size_from`), 0 neither."""
    pairs = _lined_up(launch, split_command(template))
    if pairs and all(re.fullmatch(word_pattern(t), w) for t, w, _ in pairs[1:]):
        return 2
    return 1 if size_from(launch, template) is not None else 0
