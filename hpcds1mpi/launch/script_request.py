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

The launched program asks for a problem size
(:func:`~hpcds1mpi.launch.script_placeholders.size_from`, where its measured command has
``{size}``; its precision and device: :mod:`hpcds1mpi.launch.script_knobs`), and for an MPI:
:mod:`hpcds1mpi.launch.script_mpi_check` says when the script's ``mpirun`` / ``mpiexec`` is of
another MPI family than the program's.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, NamedTuple

from hpcds1mpi.launch.script_gpus import read_step_gpus
from hpcds1mpi.launch.script_options import DIGITS, range_note, to_int
from hpcds1mpi.launch.script_placeholders import (launch_words, own_command_at,
                                                 placeholder_words, stem)
from hpcds1mpi.launch.script_unlaunched import program_line, unlaunched_note
from hpcds1mpi.launch.task_threads import threads_over_task

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
        before = [s for s in script.settings_before(launch, found[0] if found else 10 ** 9)
                  if s.name == "OMP_NUM_THREADS"]
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
    said = None  # how the threads per rank are told, and where, when not by the CPUs
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
        elif other and told != own.threads and own_command_at(launch) is None:
            from hpcds1mpi.launch.thread_mismatch import disagreement_warning

            # a job that may stop at once (GROMACS's mdrun), never measured: a warning (s37 G2)
            script.warn(disagreement_warning(launch.line, launch.program or launch.program_raw
                                             or "", own.said, own.threads, other, told))
        elif other and told != own.threads:
            script.note(f"line {launch.line}: the program's {own.said} is read as the "
                        f"threads per rank, not {other}")
        script.threads = own.threads
        script.where("threads", launch.line)
        said = (own.said, launch.line)
    elif env_threads:
        script.threads = env_threads
        said = (f"OMP_NUM_THREADS={env_threads}", script.lines["threads"][-1])
    elif not script.threads:
        script.threads = script.cpus_per_task or 1
        if not script.cpus_per_task:
            script.note("neither OMP_NUM_THREADS nor CPUs per task are set; one thread per "
                        "rank assumed")
    if said is not None and (over := threads_over_task(script, *said)):
        script.warn(over)  # Slurm gives a task 1 CPU without -c (s45 tester B1)


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


def _own_threads(script: "JobScript", launch: "Launch", at: int = 0) -> ProgramValue | None:
    """hpcds1mpi run / sweep's ``--threads N`` (the last one given, as its parser takes),
    its ``hpcds1mpi`` word at index ``at`` of the launch's words; ``run`` without it runs
    :data:`RUN_DEFAULT_THREADS` (a rewrite adds ``--threads`` after the ``run`` word),
    ``sweep`` without it is not known here (None)."""
    text = script.text
    # only the launch's own words: a comment or the next command (``; echo --threads 8``)
    # passes nothing to the program
    end = launch.spans[-1][1] if launch.spans else launch.span[1]
    word_starts = {start for start, _, _ in launch.spans}
    begin = launch.spans[at][0] if 0 < at < len(launch.spans) else launch.span[1]
    start = _OWN_START_RE.search(text, begin, end)
    found = [m for m in _OWN_THREADS_RE.finditer(text, start.end() if start else end, end)
             if m.start() in word_starts]
    if not found:
        if launch_words(launch)[at + 1:at + 2] != ["run"] or len(launch.spans) < at + 2:
            return None
        return ProgramValue(RUN_DEFAULT_THREADS, "hpcds1mpi run without --threads", [], [],
                            add_at=launch.spans[at + 1][1])
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
    if (at := own_command_at(launch)) is not None:  # past a container or profiler (F8)
        if launch_words(launch)[at + 1:at + 2] in ([c] for c in _OWN_COMMANDS):
            return _own_threads(script, launch, at)
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
    job = script.nodes, script.ntasks, script.ntasks_per_node  # the slots mpirun fills
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
    filled = None  # (hosts, ranks on the fullest) where mpirun fills slots
    if launch.kind == "mpi":
        from hpcds1mpi.launch.script_slot_fill import (every_slot, host_file_note,
                                                       host_list_ranks, per_socket_note,
                                                       ranks_per_host, round_robin,
                                                       slot_fill, wrapped_per_node)

        per_socket_note(script, launch)

        # a host list without -n: a rank on each slot (s42), or K on each host (s43)
        if ranks is None and (ranks := host_list_ranks(launch, per_node)):
            script.ntasks = ranks
            script.where("ranks", launch.options["host"].line)
        per_node = ranks_per_host(launch, per_node, ranks, job[0])
        host_file_note(script, launch, per_node)
        # -n alone: slots filled node after node (s40 tester A8), or -rr's deal (s44 R5)
        if not per_node and ranks and (filled := (slot_fill(script, launch, ranks, *job)
                                                  or every_slot(script, launch, ranks)
                                                  or round_robin(script, launch, ranks,
                                                                 job[0]))):
            per_node = filled[1]
        # -ppn K with more ranks than the hosts hold at K: hydra deals round again (s44 O6)
        elif per_node and ranks and (filled := wrapped_per_node(script, launch, ranks,
                                                                per_node, job[0])):
            per_node = filled[1]
    if per_node:
        script.ntasks_per_node = per_node
        if ranks and launch.kind != "slurm":  # mpirun places -np ranks at -ppn per node
            script.nodes = filled[0] if filled else -(-ranks // per_node)  # uneven: its hosts
    if cpus:
        script.cpus_per_task = cpus
        if launch.kind != "slurm" and not script.threads:
            script.threads = cpus
    if launch.kind == "slurm":
        read_step_gpus(script, launch)
    if launch.program is None:
        script.note(f"line {launch.line}: the program {launch.launcher} starts could not be "
                    "read")
