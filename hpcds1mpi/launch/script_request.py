"""What a job script asks for once its launch line is read over its directives.

A launch line overrides the allocation for its step: ``srun -n 32 -c 4 --gpus-per-task=1``,
``mpirun -np 64 --map-by ppr:16:node:pe=2``, ``mpiexec -n 8 -ppn 4 -d 2``, ``aprun -n 8 -N 4
-d 2`` (a step's GPUs: :mod:`hpcds1mpi.launch.script_gpus`). Threads per rank come from the
program's own thread option where it is known (:func:`program_threads`: ``hpcds1mpi run`` /
``sweep``'s ``--threads N``, ``run``'s default of 1 without it, or the word where the
program's measured command has ``{threads}``), else ``OMP_NUM_THREADS`` where the script sets
it (on the launch line or before it; without a launch line, before the line that runs the
program: :mod:`hpcds1mpi.launch.script_unlaunched`), else PBS's ``ompthreads``, else the CPUs
per task, else one.

The launched program asks for a problem size (:func:`size_from`; its precision and device:
:mod:`hpcds1mpi.launch.script_knobs`), and for an MPI:
:mod:`hpcds1mpi.launch.script_mpi_check` says when the script's ``mpirun`` / ``mpiexec`` is of
another MPI family than the program's.
"""

from __future__ import annotations

import os
import re
import shlex
from typing import TYPE_CHECKING, NamedTuple, Sequence

from hpcds1mpi.launch.exec_wrappers import is_wrapper, program_index, read_wrappers
from hpcds1mpi.launch.options_aside import aside_hits
from hpcds1mpi.launch.script_gpus import read_step_gpus
from hpcds1mpi.launch.script_options import DIGITS, SIZE_DIGITS, range_note, to_int
from hpcds1mpi.launch.script_unlaunched import program_line, unlaunched_note

if TYPE_CHECKING:  # pragma: no cover
    from hpcds1mpi.launch.job_script import JobScript, Launch

#: The values a launch line may override, as JobScript attribute names.
FIELDS = ("nodes", "ntasks", "ntasks_per_node", "cpus_per_task", "threads", "gpus_per_node")


def snapshot(script: "JobScript") -> None:
    """Keep what the directives alone ask for, so another launch line can be read later."""
    script.base = ({f: getattr(script, f) for f in FIELDS},
                   {k: list(v) for k, v in script.lines.items()})


def _count(script: "JobScript", launch: "Launch", name: str, key: str) -> int | None:
    opt = launch.options.get(name)
    if opt is None or opt.value is None:
        return None
    value = to_int(launch.value(name, launch.scope))
    if value is None:
        script.note(f"line {opt.line}: {launch.launcher} {name} {opt.value!r} could not be "
                    "resolved; the directives' value is used")
    else:
        script.where(key, opt.line)
        if ranged := range_note(opt.line, f"{launch.launcher} {name}", opt.value):
            script.note(ranged)
    return value


def _threads_from_env(script: "JobScript", launch: "Launch | None") -> int | None:
    """OMP_NUM_THREADS as ``launch`` sets it or the script sets it before; without a launch
    line, as set before the line that runs the program (s29 tester B1: `export
    OMP_NUM_THREADS=1` before `gpaw -P 2 ...` was "neither OMP_NUM_THREADS nor CPUs per
    task are set")."""
    if launch is not None and "OMP_NUM_THREADS" in launch.env:
        value, opt = launch.env["OMP_NUM_THREADS"]
        line = opt.line
    else:
        found = program_line(script) if launch is None else None
        until = launch.line if launch is not None else found[0] if found else float("inf")
        before = [s for s in script.settings
                  if s.name == "OMP_NUM_THREADS" and s.line <= until]
        if not before:
            return None
        value, line = before[-1].resolved, before[-1].line
    threads = to_int(value)
    if threads is None:
        script.note(f"line {line}: OMP_NUM_THREADS could not be resolved; threads taken from "
                    "the CPUs per task")
    else:
        script.where("threads", line)
    return threads


def resolve_launch(script: "JobScript", launch: "Launch | None" = None) -> None:
    """Set what ``script`` asks for from its directives and ``launch`` (default: the first
    launch line), noting whatever could not be resolved."""
    if script.base is None:
        snapshot(script)
    values, lines = script.base
    for name, value in values.items():
        setattr(script, name, value)
    script.lines = {k: list(v) for k, v in lines.items()}
    script.step_gpus = None
    launch = launch or (script.launches[0] if script.launches else None)
    script.launch = launch
    if launch is None:
        script.note(unlaunched_note(script))
    else:
        _apply(script, launch)
    env_threads = _threads_from_env(script, launch)
    own = program_threads(script, launch)
    if own is not None:  # the program's own thread option is what its ranks run, whatever
        # OMP_NUM_THREADS (or PBS's ompthreads, which sets it) says
        other = (f"OMP_NUM_THREADS={env_threads}" if env_threads else
                 f"ompthreads={script.threads}" if script.scheduler == "pbs" and script.threads
                 else None)
        told = env_threads or script.threads
        if other and told != own.threads and own.add_at is not None:
            script.note(f"line {launch.line}: hpcds1mpi run without --threads runs "
                        f"{own.threads} thread per rank (its default), whatever {other} says; "
                        f"read so (pass --threads {told} to run {told})")
        elif other and told != own.threads:
            script.note(f"line {launch.line}: the program's {own.said} is read as the "
                        f"threads per rank, not {other}")
        script.threads = own.threads
        script.where("threads", launch.line)
    elif env_threads:
        script.threads = env_threads
    elif not script.threads:
        script.threads = script.cpus_per_task or 1
        if not script.cpus_per_task:
            script.note("neither OMP_NUM_THREADS nor CPUs per task are set; one thread per "
                        "rank assumed")


#: hpcds1mpi's own commands that take ``--threads N`` (threads per rank).
_OWN_COMMANDS = ("run", "sweep")
_OWN_START_RE = re.compile(r"(?<![\w.-])hpcds1mpi\s+(run|sweep)(?![\w-])")
#: ``--threads`` and its value as written; a variable counts as given (a second is an error)
_OWN_THREADS_RE = re.compile(r"(?<!\S)--threads(?:=|(?:[ \t]|\\\r?\n)+)([^\s;&|<>()]+)")
#: A word that takes the rewrite's threads with it: a value the scheduler fills in from the
#: directives, or the OMP_NUM_THREADS the rewrite sets.
_FOLLOWS_RE = re.compile(r"^\$\{?(SLURM_\w+|SRUN_\w+|PBS_\w+|NCPUS|OMP_NUM_THREADS)\}?$")


class ProgramValue(NamedTuple):
    """A count a launched program sets in its own arguments (its threads per rank, its ranks).

    Attributes:
        value: the number; said: how the script says it (``--threads 2``, ``-nk 2``).
        spans: where the number stands in the script's text, where it is written as digits.
        kept: words that give it through a variable of the script's own (``-ntomp $NT``),
            which a rewrite does not change.
        add_at: where a rewrite adds the option the program leaves at its default.
    """

    value: int
    said: str
    spans: list[tuple[int, int]]
    kept: list[str]
    #: where the option goes when the program takes its default (no ``--threads``), for a
    #: rewrite to write it; None where it is written (or cannot be added)
    add_at: int | None = None

    @property
    def threads(self) -> int:  # what a thread option's value is read as
        return self.value


#: ``hpcds1mpi run``'s threads per rank without ``--threads``, whatever OMP_NUM_THREADS says.
RUN_DEFAULT_THREADS = 1


def _own_threads(script: "JobScript", launch: "Launch") -> ProgramValue | None:
    """hpcds1mpi run / sweep's ``--threads N`` (the last one given, as its parser takes);
    ``run`` without it runs :data:`RUN_DEFAULT_THREADS` (a rewrite adds ``--threads`` after
    the ``run`` word), ``sweep`` without it is not known here (None)."""
    text = script.text
    # only the launch's own words: a comment or the next command (``; echo --threads 8``)
    # passes nothing to the program
    end = launch.spans[-1][1] if launch.spans else launch.span[1]
    word_starts = {start for start, _, _ in launch.spans}
    start = _OWN_START_RE.search(text, launch.span[1], end)
    found = [m for m in _OWN_THREADS_RE.finditer(text, start.end() if start else end, end)
             if m.start() in word_starts]
    if not found:
        if launch.args[:1] != ["run"] or len(launch.spans) < 2:
            return None
        return ProgramValue(RUN_DEFAULT_THREADS, "hpcds1mpi run without --threads", [], [],
                            add_at=launch.spans[1][1])
    return _given_threads(script, launch, found[-1])


def _given_threads(script: "JobScript", launch: "Launch", given: re.Match
                   ) -> ProgramValue | None:
    """``--threads``'s value as ``given`` matched it: digits (a rewrite replaces them), or a
    variable read through the script's own (left as written where it follows what a rewrite
    changes, ``$OMP_NUM_THREADS``; else kept and said); None where it is unknown here."""
    raw, at = given.group(1), given.start(1)
    inner = raw.strip("\"'")
    if inner.isdigit():
        start = at + raw.index(inner)
        return ProgramValue(int(inner), f"--threads {raw}", [(start, start + len(inner))], [])
    words = launch_words(launch)
    value = next((words[k] for k, (start, end, _) in enumerate(launch.spans[:len(words)])
                  if start <= at < end), "").removeprefix("--threads=")
    if not value.isdigit():
        if not _FOLLOWS_RE.match(inner):
            script.note(f"line {launch.line}: --threads {raw} could not be resolved; threads "
                        "taken from OMP_NUM_THREADS or the CPUs per task")
        return None
    return ProgramValue(int(value), f"--threads {raw}", [],
                        [] if _FOLLOWS_RE.match(inner) else [raw])


def program_threads(script: "JobScript", launch: "Launch | None") -> ProgramValue | None:
    """The threads a launched program sets itself: ``hpcds1mpi run`` / ``sweep``'s
    ``--threads N``, or the word where the program's measured command line
    (``script.command``) has ``{threads}`` (``gmx_mpi mdrun ... -ntomp {threads}``); None for
    any other program, or where the launched command does not show one value there."""
    if launch is None:
        return None
    if stem(launch.program or launch.program_raw or "") == "hpcds1mpi":
        if launch.args and launch.args[0] in _OWN_COMMANDS:
            return _own_threads(script, launch)
        return None
    return program_value(script, launch, "threads")


def program_value(script: "JobScript", launch: "Launch", key: str) -> ProgramValue | None:
    """The number the launched command gives where its measured command line
    (``script.command``) has ``{key}`` (``pw.x -nk {ranks}``, ``-ntomp {threads}``), where
    it stands and which words give it through the script's variables; None where the
    measured command has no ``{key}`` or the launched one does not show one value there."""
    if not script.command or "{" + key + "}" not in script.command:
        return None
    hits = [(k, m) for k, m in placeholder_words(launch, script.command, key, DIGITS)
            if k < len(launch.spans)]
    groups = [(k, m, g) for k, m in hits for g in range(1, m.re.groups + 1)]
    if len({int(m.group(g)) for k, m, g in groups}) != 1:
        return None
    words = launch_words(launch)
    spans, kept = [], []
    for k, m, g in groups:
        start, _, raw = launch.spans[k]
        if raw == words[k]:  # written as it reads: the digits can be replaced in place
            spans.append((start + m.start(g), start + m.end(g)))
        elif not _FOLLOWS_RE.match(raw.strip("\"'")) and raw not in kept:
            kept.append(raw)
    k, m = hits[0]
    said = " ".join(words[max(0, k - 1):k + 1]) if m.group(0) == m.group(1) else words[k]
    return ProgramValue(int(m.group(1)), said, spans, kept)


def _apply(script: "JobScript", launch: "Launch") -> None:
    if launch.kind == "slurm":
        script.nodes = _count(script, launch, "nodes", "nodes") or script.nodes
    ranks = _count(script, launch, "ntasks", "ranks")
    if ranks:
        script.ntasks = ranks
    per_node = _count(script, launch, "ntasks-per-node", "ranks")
    cpus = _count(script, launch, "cpus-per-task", "threads")
    mapping = launch.options.get("map-by")
    if mapping is not None and mapping.value:
        m = re.match(r"ppr:(\d+):node(?::pe=(\d+))?", mapping.value, re.I)
        if m:
            per_node = int(m.group(1))
            cpus = int(m.group(2)) if m.group(2) else cpus
            script.where("ranks", mapping.line)
    if per_node:
        script.ntasks_per_node = per_node
        if ranks and launch.kind != "slurm":  # mpirun places -np ranks at -ppn per node
            script.nodes = -(-ranks // per_node)
    if cpus:
        script.cpus_per_task = cpus
        if launch.kind != "slurm" and not script.threads:
            script.threads = cpus
    if launch.kind == "slurm":
        read_step_gpus(script, launch)
    if launch.program is None:
        script.note(f"line {launch.line}: the program {launch.launcher} starts could not be "
                    "read")


# ---- the program, its size and precision ----------------------------------------------------

_SUFFIX_RE = re.compile(r"\.(x|exe|out|py|sh|bin)$")
#: Interpreters whose first argument that is no option is the program (``python3 app.py``).
_INTERPRETER_RE = re.compile(r"^(python[0-9.]*|pypy[0-9.]*|bash|sh|perl|Rscript|julia|ruby|node)$")
PRECISIONS = ("fp64", "fp32", "bf16")


def stem(word: str) -> str:
    """A program word's name: no folder, no ``.x`` / ``.exe`` / ``.out`` / ``.py`` / ...."""
    return _SUFFIX_RE.sub("", os.path.basename(word.rstrip("/")))


def program_at(words: Sequence[str]) -> int:
    """The index of the program among a command's words: the first past an exec-wrapper prefix
    (:mod:`~hpcds1mpi.launch.exec_wrappers`), or for an interpreter its first non-option."""
    start = program_index(list(words))
    for k, word in enumerate(words[start:], start):
        if k == start and _INTERPRETER_RE.match(os.path.basename(word)):
            continue
        if k == start or not word.startswith("-"):
            return k
    return start


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
    return _lined_hits(launch, tokens, key, value) or _after_option(
        launch, tokens, key, value) or _aside_hits(launch, tokens, key, value)


def _lined_hits(launch: "Launch", tokens: list[str], key: str, value: str
                ) -> list[tuple[int, re.Match]]:
    hits = []
    for token, word, k in _lined_up(launch, tokens) or ():
        if "{" + key + "}" in token:
            m = re.fullmatch(word_pattern(token, key, f"({value})"), word)
            if m:
                hits.append((k, m))
    return hits


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
