"""What a job script asks for once its launch line is read over its directives.

A launch line overrides the allocation for its step: ``srun -n 32 -c 4``, ``mpirun -np 64
--map-by ppr:16:node:pe=2``, ``mpiexec -n 8 -ppn 4 -d 2``, ``aprun -n 8 -N 4 -d 2``. Threads
per rank come from a launched ``hpcds1mpi run`` / ``sweep``'s own ``--threads N``
(:func:`program_threads`), else ``OMP_NUM_THREADS`` where the script sets it (on the launch line
or before it), else PBS's ``ompthreads``, else the CPUs per task, else one.

The launched program asks for a problem size and a precision (:func:`size_from`,
:func:`precision_of`), and for an MPI: :mod:`hpcds1mpi.launch.script_mpi_check` says when the
script's ``mpirun`` / ``mpiexec`` is of another MPI family than the program's.
"""

from __future__ import annotations

import os
import re
import shlex
from typing import TYPE_CHECKING, Sequence

from hpcds1mpi.launch.directives import format_slurm_time
from hpcds1mpi.launch.script_options import SIZE_DIGITS, gpu_count, range_note, to_int

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


def _threads_from_env(script: "JobScript", launch: "Launch") -> int | None:
    if "OMP_NUM_THREADS" in launch.env:
        value, opt = launch.env["OMP_NUM_THREADS"]
        line = opt.line
    else:
        before = [s for s in script.settings
                  if s.name == "OMP_NUM_THREADS" and s.line <= launch.line]
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
    launch = launch or (script.launches[0] if script.launches else None)
    script.launch = launch
    if launch is None:
        script.note("no srun / mpirun / mpiexec line found; the directives alone are read")
    else:
        _apply(script, launch)
    env_threads = _threads_from_env(script, launch) if launch is not None else None
    own = program_threads(script, launch)
    if own is not None:  # hpcds1mpi's own --threads is what its ranks run, whatever OMP says
        if env_threads and env_threads != own[0]:
            script.note(f"line {launch.line}: the program's --threads {own[0]} is read as the "
                        f"threads per rank, not OMP_NUM_THREADS={env_threads}")
        script.threads = own[0]
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
_OWN_THREADS_RE = re.compile(r"(?<!\S)--threads(?:=|(?:[ \t]|\\\r?\n)+)(\d+)(?![^\s;&|])")


def program_threads(script: "JobScript", launch: "Launch | None"
                    ) -> tuple[int, tuple[int, int]] | None:
    """(N, where N stands in the script's text) for a launch of ``hpcds1mpi run`` / ``sweep``
    with ``--threads N`` (one whole number; the last one given, as the option parser takes);
    None for any other program."""
    if launch is None or stem(launch.program or launch.program_raw or "") != "hpcds1mpi" \
            or not launch.args or launch.args[0] not in _OWN_COMMANDS:
        return None
    text = script.text
    end = launch.span[1]
    for _ in range(launch.last_line - launch.line + 1):
        end = text.find("\n", end + 1)
        if end < 0:
            end = len(text)
            break
    start = _OWN_START_RE.search(text, launch.span[1], end)
    found = list(_OWN_THREADS_RE.finditer(text, start.end() if start else end, end))
    if not found:
        return None
    return int(found[-1].group(1)), found[-1].span(1)


def _apply(script: "JobScript", launch: "Launch") -> None:
    if launch.kind == "slurm":
        script.nodes = _count(script, launch, "nodes", "nodes") or script.nodes
        for name in ("gres", "gpus-per-node"):
            opt = launch.options.get(name)
            if opt is not None and opt.value:
                script.gpus_per_node = gpu_count(opt.value)
                script.where("gpus", opt.line)
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
    if launch.program is None:
        script.note(f"line {launch.line}: the program {launch.launcher} starts could not be "
                    "read")


def repeats_note(script: "JobScript", one_launch_s: int) -> str | None:
    """The note for a script that launches more than once (several launch lines, or one inside
    a loop), whose time limit a one-launch prediction must not replace; None when it launches
    once at most."""
    looped = [x.line for x in script.launches if x.in_loop]
    if len(script.launches) < 2 and not looped:
        return None
    where = f"line {looped[0]}, inside a loop" if len(script.launches) == 1 else \
        "lines " + line_list([x.line for x in script.launches]) + (
            f"; line {line_list(looped)} inside a loop" if looped else "")
    kept = f"its --time ({format_slurm_time(script.time_s)})" if script.time_s else \
        "its time limit as it is (none set: the partition's default)"
    other = (f"; --rewrite edits the launch options of line {script.launch.line} only"
             if script.launch is not None and len(script.launches) > 1 else "")
    return (f"the script launches more than once ({where}): the recommended walltime "
            f"({format_slurm_time(one_launch_s)}) covers one launch, so --rewrite keeps "
            f"{kept}; check it covers every launch{other}")


def line_list(numbers: Sequence[int], shown: int = 10) -> str:
    """``3, 5, 9`` — the first ``shown`` of them and how many more (a generated script may
    have thousands of launch lines; a note lists a few)."""
    more = len(numbers) - shown
    return ", ".join(map(str, numbers[:shown])) + (f" and {more} more" if more > 0 else "")


# ---- the program, its size and precision ----------------------------------------------------

_SUFFIX_RE = re.compile(r"\.(x|exe|out|py|sh|bin)$")
#: Interpreters whose first argument that is no option is the program (``python3 app.py``).
_INTERPRETER_RE = re.compile(r"^(python[0-9.]*|pypy[0-9.]*|bash|sh|perl|Rscript|julia|ruby|node)$")
PRECISIONS = ("fp64", "fp32", "bf16")


def stem(word: str) -> str:
    """A program word's name: no folder, no ``.x`` / ``.exe`` / ``.out`` / ``.py`` / ...."""
    return _SUFFIX_RE.sub("", os.path.basename(word.rstrip("/")))


def program_at(words: Sequence[str]) -> int:
    """The index of the program among a command's words: the first, or for an interpreter
    (``python3 -u app.py``) its first argument that is no option."""
    for k, word in enumerate(words):
        if k == 0 and _INTERPRETER_RE.match(os.path.basename(word)):
            continue
        if k == 0 or not word.startswith("-"):
            return k
    return 0


def split_command(command: str) -> list[str]:
    """A recorded command line's words (shell quoting), [] when it cannot be split."""
    try:
        return shlex.split(command)
    except ValueError:
        return []


def _lined_up(launch: "Launch", tokens: list[str]) -> list[tuple[str, str]] | None:
    """(recorded word, launched word) pairs from the program's name on (a wrapper or an
    interpreter before it in the script skipped); None when the two differ in length."""
    if not tokens:
        return None
    at = program_at(tokens)
    words = [w for w in [launch.program or launch.program_raw, *launch.args] if w]
    starts = [i for i, w in enumerate(words) if stem(w) == stem(tokens[at])]
    if not starts or len(words) - starts[0] != len(tokens) - at:
        return None
    return list(zip(tokens[at:], words[starts[0]:]))


def _pattern(token: str, group: str = "") -> str:
    """A recorded word as a regex: ``{size}`` as ``group`` (when given), other placeholders
    as any word."""
    pattern = re.escape(token)
    if group:
        pattern = pattern.replace(re.escape("{size}"), group)
    return re.sub(r"\\\{\w+\\\}", r"\\S+", pattern)


def size_from(launch: "Launch", template: str | None) -> int | None:
    """The problem size in the launched command: ``--size N`` / ``--size=N``, or the place
    of ``{size}`` in the program's recorded command line (``./app {size} 40``)."""
    args = launch.args
    for k, word in enumerate(args):
        if word == "--size" and k + 1 < len(args) and re.fullmatch(SIZE_DIGITS, args[k + 1]):
            return int(args[k + 1])
        if word.startswith("--size=") and re.fullmatch(SIZE_DIGITS, word[7:]):
            return int(word[7:])
    tokens = split_command(template or "")
    for token, word in _lined_up(launch, tokens) or ():
        if "{size}" in token:
            m = re.fullmatch(_pattern(token, f"({SIZE_DIGITS})"), word)
            if m:
                return int(m.group(1))
    return _size_after_option(launch, tokens)


def _size_after_option(launch: "Launch", tokens: list[str]) -> int | None:
    """The size where the recorded command gives it as an option's value (``-var x {size}``,
    ``--n {size}``, ``--n={size}``) and the launched command has that option, other options
    added or left out (LAMMPS measured with ``-log none``, launched without it: the size had
    not been read); None when the size is only positional (``./app {size} 40``: another
    argument count may be another form of the program) or the option's values differ."""
    if not tokens:
        return None
    at = program_at(tokens)
    words = [w for w in [launch.program or launch.program_raw, *launch.args] if w]
    starts = [i for i, w in enumerate(words) if stem(w) == stem(tokens[at])]
    if not starts:
        return None
    words, found = words[starts[0] + 1:], set()
    recorded = tokens[at + 1:]
    for j, token in enumerate(recorded):
        options = [k for k in range(max(0, j - 3), j + 1) if recorded[k].startswith("-")]
        if "{size}" not in token or not options:
            continue
        context = [re.compile(_pattern(t)) for t in recorded[options[-1]:j]]  # ``--n={size}``: []
        size = re.compile(_pattern(token, f"({SIZE_DIGITS})"))
        for i in range(len(context), len(words)):
            m = size.fullmatch(words[i])
            if m and all(c.fullmatch(w) for c, w in zip(context, words[i - len(context):i])):
                found.add(int(m.group(1)))
    return found.pop() if len(found) == 1 else None


def fits_command(launch: "Launch", template: str) -> int:
    """How well the launched command fits a recorded one: 2 its every word (placeholders any
    value), 1 its size alone (:func:`size_from`), 0 neither."""
    pairs = _lined_up(launch, split_command(template))
    if pairs and all(re.fullmatch(_pattern(t), w) for t, w in pairs[1:]):
        return 2
    return 1 if size_from(launch, template) is not None else 0


def precision_of(script: "JobScript", launch: "Launch | None") -> tuple[str, bool]:
    """(precision, whether the script says it): ``--precision X`` or HPCDS1MPI_PRECISION."""
    if launch is not None:
        for k, word in enumerate(launch.args[:-1]):
            if word == "--precision" and launch.args[k + 1] in PRECISIONS:
                return launch.args[k + 1], True
        env = launch.env.get("HPCDS1MPI_PRECISION")
        if env and env[0] in PRECISIONS:
            return env[0], True
    for s in script.settings:
        if s.name == "HPCDS1MPI_PRECISION" and s.resolved in PRECISIONS:
            return s.resolved, True
    return "fp64", False
