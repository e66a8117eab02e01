"""Rewriting a user's batch script to another layout, touching only the lines that must change.

Every value :mod:`hpcds1mpi.launch.script_reading` read keeps its place in the text, so a
rewrite replaces values where they stand (``--nodes=8`` becomes ``--nodes=4``, ``-n 256`` in
``srun -n 256`` becomes ``-n 64``, ``export OMP_NUM_THREADS=1`` becomes ``=2``) and adds a line
only where the script says nothing the scheduler would need (a ``--cpus-per-task`` directive,
an ``OMP_NUM_THREADS`` export, ``setenv`` under csh). Every other byte stays as it was. PBS
requests: :mod:`hpcds1mpi.launch.pbs_rewrite`; the edits themselves:
:mod:`hpcds1mpi.launch.script_edits`. The thread counts the tool's own scripts export beside
``OMP_NUM_THREADS`` follow it, and an ``mpirun``'s core set per rank (``--map-by ...:PE=T``)
follows the threads: :mod:`hpcds1mpi.launch.script_binding`; Intel MPI's ``I_MPI_PIN*`` values
fit to the new layout: :mod:`hpcds1mpi.launch.script_intel_pinning`. A value the scheduler
fills in (``$SLURM_CPUS_PER_TASK``) is left alone: the directive it comes from changes.
GPU requests (directives and an ``srun`` step's) take the new GPU count, other GRES kept; a
layout without GPUs removes them (a line whose only option it was goes). The program's own
thread option changes where it is known (``hpcds1mpi run --threads``, added where ``run``
takes its default of one thread, or the word where its measured command has ``{threads}``);
elsewhere :func:`threads_note` says it is kept. So do its
rank counts where its measured command has ``{ranks}`` / ``{ranks_per_node}`` / ``{nodes}``
(``pw.x -nk {ranks}``); elsewhere :func:`ranks_note` names the arguments that equal the old
rank count, which stay as written.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from hpcds1mpi.launch.directives import format_slurm_time
from hpcds1mpi.launch.pbs_rewrite import pbs_directives
from hpcds1mpi.launch.mpi_names import MPICH
from hpcds1mpi.launch.script_binding import added_binding, remap, unbinds_ranks
from hpcds1mpi.launch.script_thread_binding import hydra_bind_value
from hpcds1mpi.launch.script_edits import (SCHEDULER_VAR_RE, Change, Edits, directive_line,
                                           drop_option, drop_setting, env_value_at)
from hpcds1mpi.launch.script_intel_pinning import intel_pinning_edits
from hpcds1mpi.launch.script_gpus import GPU_OPTIONS
from hpcds1mpi.launch.script_options import GPU_GRES, gpu_items, whole
from hpcds1mpi.launch.script_placeholders import (inner_program_at, launch_words,
                                                 own_command_at, placeholder_words, stem)
from hpcds1mpi.launch.script_request import program_threads, program_value
from hpcds1mpi.launch.srun_cpus import adds_srun_c

if TYPE_CHECKING:  # pragma: no cover
    from hpcds1mpi.launch.job_script import JobScript


@dataclass(frozen=True)
class Layout:
    """What the rewritten script asks for."""

    nodes: int
    ranks_per_node: int
    threads: int
    gpus_per_node: int = 0
    time_s: int | None = None
    partition: str | None = None
    cores_per_node: int | None = None  # where Open MPI's ranks get T cores each, or none
    memory_mib: int | None = None  # per node: a --mem (--mem-per-cpu) raised to the need's ask


def _gpu_value(value: str, option: str, count: int) -> str:
    """``value`` of ``option`` (``gpu:a100:4``, ``lscratch:200,gpu:4``, ``a100:4``, ``4``) with
    its GPUs set to ``count``: the first GPU item takes the count (its type and socket binding
    kept), the others go, and so does every GPU item when ``count`` is 0; other GRES stay.
    "" when nothing is left."""
    items = value.split(",")
    gpu = [k for k, _ in gpu_items(value, option)]
    for k in gpu:
        if k != gpu[0] or not count:
            items[k] = None
            continue
        core, binding = re.fullmatch(r"([^(]*)(\(.*)?", items[k]).groups()
        fields = core.split(":")
        named = fields[0] in GPU_GRES
        if len(fields) > (1 if named or option == "gres" else 0) and whole(fields[-1]) is not None:
            fields[-1] = str(count)
        else:
            fields.append(str(count))
        items[k] = ":".join(fields) + (binding or "")
    return ",".join(x for x in items if x is not None)


def _gpus(e: Edits, options: dict, to: Layout, directive: bool) -> list[str]:
    """Set the GPU options among ``options`` (a directive's or an srun step's) to ``to``'s
    GPUs; the names of those that asked for a GPU."""
    names = [n for n in GPU_OPTIONS if n in options and options[n].value
             and gpu_items(options[n].value, n)]
    for name in names:
        opt = options[name]
        count = {"gpus": to.nodes * to.gpus_per_node,
                 "gpus-per-task": max(1, to.gpus_per_node // to.ranks_per_node)}.get(
                     name, to.gpus_per_node)
        value = _gpu_value(opt.value, name, count if to.gpus_per_node else 0)
        if not value:
            drop_option(e, opt, directive)
        elif directive:
            e.put(opt, value, "--" + name)
        else:
            e.launch_value(opt, value, "--" + name)
    return names


def _slurm(e: Edits, script: "JobScript", to: Layout) -> None:
    d, new = script.directives, []
    for name, value in (("nodes", to.nodes), ("ntasks-per-node", to.ranks_per_node)):
        if name in d:
            e.put(d[name], value, "--" + name)
        elif name == "nodes" or "ntasks" not in d:  # --nodes with --ntasks places them
            new.append(f"--{name}={value}")
    if "ntasks" in d:
        e.put(d["ntasks"], to.nodes * to.ranks_per_node, "--ntasks")
    if "cpus-per-task" in d:
        e.put(d["cpus-per-task"], to.threads, "--cpus-per-task")
    elif to.threads > 1:
        new.append(f"--cpus-per-task={to.threads}")
    gpus = _gpus(e, d, to, directive=True)
    if not gpus and to.gpus_per_node:
        new.append(f"--gpus-per-node={to.gpus_per_node}")
    if to.time_s:
        if "time" in d:
            e.put(d["time"], format_slurm_time(to.time_s), "--time")
        else:
            new.append(f"--time={format_slurm_time(to.time_s)}")
    if to.memory_mib and "mem" in d:  # only a --mem below the need is raised (s40 D12)
        e.put(d["mem"], f"{to.memory_mib}M", "--mem")
    elif to.memory_mib and "mem-per-cpu" in d:  # over the CPUs it gives a node (s41 B8)
        cpus = to.ranks_per_node * to.threads  # --ntasks-per-node x --cpus-per-task written
        e.put(d["mem-per-cpu"], f"{-(-to.memory_mib // cpus)}M", "--mem-per-cpu")
    if to.partition and "partition" in d:
        e.put(d["partition"], to.partition, "--partition")
    elif to.partition:  # the job would go to the default partition, not the one advised
        new.append(f"--partition={to.partition}")
    if new:
        e.insert(directive_line(script), "".join(f"#SBATCH {x}\n" for x in new))


def _launch(e: Edits, script: "JobScript", to: Layout, family: str | None) -> bool:
    """Edit the launch line; True when it sets OMP_NUM_THREADS itself."""
    launch = script.launch
    if launch is None:
        return False
    o = launch.options
    values = {"nodes": to.nodes, "ntasks": to.nodes * to.ranks_per_node,
              "ntasks-per-node": to.ranks_per_node, "cpus-per-task": to.threads}
    for name, value in values.items():
        if name in o and (launch.kind == "slurm" or name != "nodes"):
            e.launch_value(o[name], value, "--" + name)
    if "map-by" in o and o["map-by"].value:
        mapped = remap(o["map-by"].value, to.ranks_per_node, to.threads)
        if mapped:
            e.launch_value(o["map-by"], mapped, "--map-by")
        else:  # ``--map-by :PE=2`` to one thread: nothing left to map by
            drop_option(e, o["map-by"], directive=False)
    binding = added_binding(script, to, family)
    if binding is not None:  # Open MPI would give each rank one core for all its threads
        e.insert(launch.options_at, " " + " ".join(binding.tokens))
    if family == MPICH and (bound := hydra_bind_value(launch, to.threads)):
        e.launch_value(o["bind-to"], bound, "-bind-to")  # T cores a rank (s31 tester P3)
    if launch.kind == "slurm":
        _gpus(e, o, to, directive=False)  # a step's GPUs must stay within the job's
        _srun_mpi(e, launch, getattr(script, "srun_mpi_fix", None))
    own = program_threads(script, launch)  # the program's own threads option (--threads N)
    if own is not None and own.threads != to.threads:
        e.edits += [(*span, str(to.threads)) for span in own.spans]
        if own.add_at is not None:  # ``hpcds1mpi run`` without --threads runs one thread
            e.insert(own.add_at, f" --threads {to.threads}")
    for key, count in rank_counts(to).items():  # ``pw.x -nk {ranks}``: the program's own
        given = program_value(script, launch, key)
        if given is not None and given.value != count:
            e.edits += [(*span, str(count)) for span in given.spans]
    if adds_srun_c(script, to.threads):  # srun 22.05 to 23.02 take no -c from the job
        e.insert(launch.span[1], f" -c {to.threads}")
    for name in _COMPANION_COUNTS:
        if name in launch.env and launch.env[name][0] == str(script.threads):
            _launch_env(e, script, name, to)
    if "OMP_NUM_THREADS" in launch.env:
        _launch_env(e, script, "OMP_NUM_THREADS", to)
        return True
    return False


def _srun_mpi(e: Edits, launch, plugin: str | None) -> None:
    """Give ``srun`` the ``--mpi`` plugin its program's MPI needs, where advise's check found
    the line's own cannot start it (``script.srun_mpi_fix``, set by
    :func:`hpcds1mpi.decide.advise_launch.launch_notes`; s32 tester U5: the rewrite kept
    ``srun meep`` under MpiDefault=pmi2 and the job failed in MPI_Init)."""
    if not plugin:
        return
    if "mpi" in launch.options and launch.options["mpi"].value:
        e.launch_value(launch.options["mpi"], plugin, "--mpi")
    else:  # before the program's words: an option of srun's, not the program's
        e.insert(launch.span[1], f" --mpi={plugin}")


def _launch_env(e: Edits, script: "JobScript", name: str, to: Layout) -> None:
    """Set variable ``name`` of the launch line (``-x NAME=2``, ``env NAME=2``, hydra's
    ``-genv NAME 2``) to the threads, unless the scheduler fills it in."""
    value, opt = script.launch.env[name]
    at = env_value_at(script.text, name, opt)
    if at and not SCHEDULER_VAR_RE.match(script.text[at[0]:at[1]].strip("\"'")) \
            and value != str(to.threads):
        e.edits.append((*at, str(to.threads)))


#: Thread counts the tool's own scripts export beside OMP_NUM_THREADS
#: (:func:`hpcds1mpi.launch.program.environment`): each follows the threads where it equals
#: the script's old thread count (a BLAS held at 1 thread under OpenMP threads is a choice).
_COMPANION_COUNTS = ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "HPCDS1MPI_THREADS")
#: OpenMP thread placement, right only where each rank has cores of its own.
_PLACEMENT = ("OMP_PLACES", "OMP_PROC_BIND")


def _last_settings(script: "JobScript", names) -> dict:
    """The last setting of each of ``names`` before the launch line, by name."""
    return {s.name: s for s in script.settings_before(script.launch) if s.name in names}


def _companions(e: Edits, script: "JobScript", to: Layout, family: str | None) -> None:
    """The thread variables beside OMP_NUM_THREADS: the counts follow the threads, and the
    OpenMP placement goes where the rewritten launch no longer gives ranks cores of their
    own (as ``recommend`` writes neither there)."""
    launch_env = script.launch.env if script.launch is not None else {}
    for name, setting in _last_settings(script, _COMPANION_COUNTS).items():
        if name not in launch_env and setting.resolved == str(script.threads) \
                and not SCHEDULER_VAR_RE.match(setting.value) \
                and setting.resolved != str(to.threads):
            e.edits.append((*setting.value_span, str(to.threads)))
    if unbinds_ranks(script, to, family):
        for setting in _last_settings(script, _PLACEMENT).values():
            drop_setting(e, setting)


def _omp(e: Edits, script: "JobScript", to: Layout) -> None:
    launch = script.launch
    last = _last_settings(script, ("OMP_NUM_THREADS",)).get("OMP_NUM_THREADS")
    if last is not None:
        if not SCHEDULER_VAR_RE.match(last.value) and last.resolved != str(to.threads):
            e.edits.append((*last.value_span, str(to.threads)))
    elif launch is not None and (to.threads > 1 or program_threads(script, launch) is None) \
            and not (script.scheduler == "pbs" and script.select):
        # one thread too: an OpenMP program left unset runs a thread per CPU it sees (under
        # mpirun, every CPU of the node: s38 tester D3), and its sweep ran with it set
        line_start = script.text.rfind("\n", 0, launch.span[0]) + 1
        e.insert(line_start, f"setenv OMP_NUM_THREADS {to.threads}\n" if _csh(script) else
                 f"export OMP_NUM_THREADS={to.threads}\n")


def _csh(script: "JobScript") -> bool:
    """Whether the script runs under csh / tcsh (``#!/bin/csh -f``, ``#!/usr/bin/env tcsh``),
    which sets variables with ``setenv`` (``export`` is no csh command)."""
    first = script.text.split("\n", 1)[0]
    return first.startswith("#!") and any(
        os.path.basename(word) in ("csh", "tcsh") for word in first[2:].split()[:2])


def rewrite(script: "JobScript", to: Layout, family: str | None = None
            ) -> tuple[str, list[Change]]:
    """The script's text asking for ``to``, and the lines that changed.

    Only the directives, the launch line and the thread variables change (their counts,
    and the OpenMP placement where ranks lose their own cores); every other line is kept
    byte for byte. ``family``: the launch line's MPI where known
    (:func:`~hpcds1mpi.launch.launch_line_checks.launch_family`): Open MPI's ``mpirun`` gets the
    binding a rank's threads need (:func:`~hpcds1mpi.launch.script_binding.added_binding`).
    """
    e = Edits(script)
    (_slurm if script.scheduler == "slurm" else pbs_directives)(e, script, to)
    if not _launch(e, script, to, family):
        _omp(e, script, to)
    _companions(e, script, to, family)
    intel_pinning_edits(e, script, to, family)  # I_MPI_PIN* fit to the layout (s35 tester I2)
    return e.apply(), e.changes()


#: Arguments that look like a program's own thread count (``-ntomp 2``, ``--nthreads=4``):
#: named in the note when the rewrite cannot know they set threads.
_THREAD_OPTION_RE = re.compile(r"^--?(ntomp|nt|n?threads?|num[-_]?threads|omp[-_]?threads)"
                               r"(=[0-9]+)?$", re.I)


def threads_note(script: "JobScript", to: Layout) -> str | None:
    """The note for a rewrite that changes the threads per rank of a program that may set
    its own in its arguments, which the rewrite does not change (None when it changes them,
    or the threads stay): the program's measured command does not show which argument
    carries ``{threads}``, or gives it through a variable of the script's."""
    launch = script.launch
    if launch is None or launch.program is None or to.threads == script.threads:
        return None
    plural = "s" if to.threads > 1 else ""
    own = program_threads(script, launch)
    if own is not None:
        if not own.kept:
            return None
        return (f"line {launch.line}: the program's threads come from {', '.join(own.kept)}, "
                f"which --rewrite does not change: set it to {to.threads}, or the job runs "
                f"{own.threads} thread{'s' if own.threads > 1 else ''} per rank")
    if own_command_at(launch) is not None:
        return None
    words, at = launch_words(launch), inner_program_at(launch) or 0  # past a container or
    name, args = stem(words[at]), words[at + 1:]  # profiler: its program's (s42 tester F8)
    said = next((a + ("" if "=" in a or k + 1 >= len(args) else f" {args[k + 1]}")
                 for k, a in enumerate(args) if _THREAD_OPTION_RE.match(a)), None)
    if said is None and script.command and "{threads}" not in script.command:
        return None  # s31 tester P7: the measured command (./heat {size} 100) takes no threads
    option = f"{name}'s own thread option ({said})" if said else \
        f"a thread option in {name}'s arguments, if it has one"
    carriers = thread_carriers(script, to)
    listed = ", ".join(carriers[:-1]) + " and " + carriers[-1] if len(carriers) > 1 else \
        "".join(carriers)
    sets = (f"it sets {to.threads} thread{plural} per rank in {listed} only"
            if carriers else "it sets no thread count (the scheduler's default of 1 CPU per "
            "task stands)")
    return (f"line {launch.line}: --rewrite does not change {option}: {sets}, and the job "
            f"runs with the program's option as it is; set it to {to.threads} by hand")


def thread_carriers(script: "JobScript", to: Layout) -> list[str]:
    """What gives the ranks their threads in ``script`` rewritten to ``to``, as written there
    (```--cpus-per-task=1```, ```-genv OMP_NUM_THREADS 1```): read back from
    the rewritten text, so a note says what the rewrite did (s29 tester D1: it claimed an
    OMP_NUM_THREADS it had not set). Only those that give ``to``'s threads, or take them from
    the scheduler (``$SLURM_CPUS_PER_TASK``)."""
    from hpcds1mpi.launch.script_reading import read_script
    from hpcds1mpi.launch.script_request import resolve_launch

    text = rewrite(script, to)[0]
    again = read_script(text)
    if script.launch is not None and script.launch in script.launches:
        resolve_launch(again, again.launches[script.launches.index(script.launch)])
    wanted = str(to.threads)

    def said(opt, value) -> str | None:
        value = (value or "").strip("\"'")
        if value != wanted and not SCHEDULER_VAR_RE.match(value):
            return None
        return f"`{' '.join(text[opt.span[0]:opt.span[1]].split())}`"

    found = [said(again.directives[k], again.directives[k].value)
             for k in ("cpus-per-task", "l:ompthreads") if k in again.directives]
    found += [said(opt, opt.value) for k, opt in again.select.items() if k == "ompthreads"]
    launch = again.launch
    if launch is not None:
        if "cpus-per-task" in launch.options:
            found.append(said(launch.options["cpus-per-task"],
                              launch.options["cpus-per-task"].value))
        if "OMP_NUM_THREADS" in launch.env:
            value, opt = launch.env["OMP_NUM_THREADS"]
            at = env_value_at(text, "OMP_NUM_THREADS", opt)
            found.append(said(opt, text[at[0]:at[1]] if at else value))
        elif last := _last_settings(again, ("OMP_NUM_THREADS",)).get("OMP_NUM_THREADS"):
            found.append(f"`OMP_NUM_THREADS={last.value}`"
                         if last.resolved == wanted or SCHEDULER_VAR_RE.match(last.value)
                         else None)
    return [x for x in found if x]


def rank_counts(layout: Layout) -> dict[str, int]:
    """The rank counts of ``layout`` by the name of their placeholder in a measured command."""
    return {"ranks": layout.nodes * layout.ranks_per_node,
            "ranks_per_node": layout.ranks_per_node, "nodes": layout.nodes}


#: A word that is a count: ``2``, ``--npool=2``.
_COUNT_RE = re.compile(r"^(?:--?[\w.-]+=)?([0-9]+)$")


def ranks_note(script: "JobScript", to: Layout, was: Layout) -> str | None:
    """The note for a rewrite from ``was``'s rank counts to ``to``'s that leaves the
    program's own arguments which may depend on them as written (a pool or decomposition
    count must fit the ranks: ``pw.x -nk 2`` refuses 1 rank): those the measured command
    fills with ``{ranks}`` / ``{ranks_per_node}`` / ``{nodes}`` but the script gives through
    a variable of its own; else, where it has none of these, every number equal to an old
    count that changes (1 is left out: it fits any count). None when there is none, or the
    counts stay."""
    launch = script.launch
    new, old = rank_counts(to), rank_counts(was)
    if launch is None or launch.program is None or new == old \
            or own_command_at(launch) is not None:
        return None
    command = script.command or ""
    if any("{" + key + "}" in command for key in new):
        kept = [(given, new[key]) for key in new if new[key] != old[key]
                and (given := program_value(script, launch, key)) and given.kept]
        return "; ".join(f"line {launch.line}: the program's {given.said} comes from "
                         f"{', '.join(given.kept)}, which --rewrite does not change: set it "
                         f"to {count}" for given, count in kept) or None
    placed = {k for key in re.findall(r"\{(\w+)\}", command)
              for k, _ in placeholder_words(launch, command, key, r"\S+")}
    words = [launch.program, *launch.args]
    # an old count that changes, by its value; one node's total and per-node counts are one
    counts = {old[k]: k for k in ("ranks_per_node", "ranks") if old[k] != new[k] and old[k] > 1}
    said, key = [], None
    for k in range(1, len(words)):
        m = _COUNT_RE.match(words[k])
        value = int(m.group(1)) if m else None
        if value not in counts or k in placed or key not in (None, counts[value]):
            continue  # one note names one count: words equal to the other are left out
        option = words[k - 1] if words[k].isdigit() and words[k - 1].startswith("-") else ""
        if not _THREAD_OPTION_RE.match(option or words[k]):  # threads_note speaks of those
            said.append(f"{option} {words[k]}".strip())
            key = counts[value]
    if not said:
        return None
    def counted(count: int) -> str:
        return f"{count} rank{'s' if count > 1 else ''}" + (
            " per node" if key == "ranks_per_node" else "")

    one = len(said) == 1
    return (f"line {launch.line}: {os.path.basename(launch.program)}'s {', '.join(said[:4])} "
            f"{'equals' if one else 'equal'} the script's {counted(old[key])} and "
            f"{'stays' if one else 'stay'} as written; the rewrite runs {counted(new[key])}, "
            f"which {'it' if one else 'they'} may no longer fit (a pool or decomposition count "
            f"must divide the ranks): set {'it' if one else 'them'} by hand, or sweep the "
            f"program with {'it' if one else 'them'} as {{{key}}} so --rewrite sets "
            f"{'it' if one else 'them'}")
