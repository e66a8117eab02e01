"""What a job script asks for once its launch line is read over its directives.

A launch line overrides the allocation for its step: ``srun -n 32 -c 4``, ``mpirun -np 64
--map-by ppr:16:node:pe=2``, ``mpiexec -n 8 -ppn 4 -d 2``, ``aprun -n 8 -N 4 -d 2``. Threads
per rank come from ``OMP_NUM_THREADS`` where the script sets it (on the launch line or before
it), else PBS's ``ompthreads``, else the CPUs per task, else one.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from hpcds1mpi.launch.script_options import gpu_count, range_note, to_int

if TYPE_CHECKING:  # pragma: no cover
    from hpcds1mpi.launch.script_reading import JobScript, Launch

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
    if env_threads:
        script.threads = env_threads
    elif not script.threads:
        script.threads = script.cpus_per_task or 1
        if not script.cpus_per_task:
            script.note("neither OMP_NUM_THREADS nor CPUs per task are set; one thread per "
                        "rank assumed")


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
