"""Why ``advise --rewrite`` writes nothing although a layout is recommended (one line each).

Lines too long to read: what they ask for is not known, so a rewrite could ask twice (a long
``select`` kept beside an added one). No launch line recognised: the program may start its own
ranks (GPAW's ``gpaw -P 2``), whose count new directives do not change, so a rewritten layout
fails with "not enough slots" (s29 tester B1); a rewrite that keeps the layout (the time
limit, the partition) is still written. A launch line whose rank, node or CPU count is not
known here (``srun -n $SLURM_ARRAY_TASK_ID``): a new allocation could hold less than the step
asks (s38 tester D4). Another launch line whose own count the new layout's job cannot hold
(``mpirun.openmpi -np 2`` kept below the edited ``-np 1`` of a ``--ntasks=1`` job): the rewrite
edits the line advise read only, so that line would stop the job (s48 tester O8).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hpcds1mpi.launch.script_reading import MAX_LINE_CHARS, unread_lines

if TYPE_CHECKING:  # pragma: no cover
    from hpcds1mpi.config import Configuration
    from hpcds1mpi.launch.job_script import JobScript, Launch


def rewrite_refusal(script: "JobScript", asked: "Configuration", picked: "Configuration"
                    ) -> str:
    """Why the rewrite of ``script`` from the ``asked`` layout to ``picked`` is refused, or
    "" when it may be written."""
    unread = unread_lines(script)
    if unread:
        many = len(unread) > 1
        return (f"--rewrite refused: line{'s' if many else ''} "
                f"{', '.join(map(str, unread[:5]))} {'are' if many else 'is'} over "
                f"{MAX_LINE_CHARS:,} characters and not read, so a rewrite cannot know what it "
                "changes; shorten the line (fewer select chunks, a shorter argument list) and "
                "run advise again")
    kept = (asked.nodes, asked.ranks_per_node, asked.threads)
    if kept == (picked.nodes, picked.ranks_per_node, picked.threads):
        return ""
    if script.launch is None:
        from hpcds1mpi.launch.script_unlaunched import layout_refusal

        return layout_refusal(script)
    return unresolved_counts(script) or other_launch_refusal(script, asked, picked)


#: A launch line's counts that decide what its step asks of the allocation.
_COUNTS = ("ntasks", "ntasks-per-node", "nodes", "cpus-per-task")


def unresolved_counts(script: "JobScript") -> str:
    """Why a new layout is refused under a launch line whose rank, node or CPU count is not
    known here ("" when they are all known): ``srun -n $SLURM_ARRAY_TASK_ID`` asks what the
    job's array index is when it runs, so a rewritten allocation may hold fewer than it asks
    and Slurm refuses the step (s38 tester D4: array task 2 failed)."""
    from hpcds1mpi.launch.script_options import to_int

    launch = script.launch
    unknown = [opt for name in _COUNTS if (opt := launch.options.get(name)) is not None
               and opt.value is not None and (launch.kind == "slurm" or name != "nodes")
               and to_int(launch.value(name, launch.scope)) is None]
    if not unknown:
        return ""
    said = ", ".join(f"{launch.launcher} {script.text[o.span[0]:o.span[1]]}" for o in unknown)
    array = " (the array task's index, which differs from task to task)" if any(
        "ARRAY_TASK" in (o.value or "") for o in unknown) else ""
    return (f"--rewrite refused: line {launch.line}'s {said} is not known until the job "
            f"runs{array}, so a new allocation could hold fewer tasks or CPUs than the step "
            "asks, and Slurm would refuse it; the script keeps its layout (write the count as a "
            "number, or change the directives by hand for the largest count it takes)")


def _asked(launch: "Launch", name: str) -> int | None:
    """``launch``'s own count ``name`` where written as a number or a variable of the
    script's; None where absent, unknown, or the scheduler's (``$SLURM_NTASKS``), which
    follows the rewritten directives."""
    from hpcds1mpi.launch.script_edits import SCHEDULER_VAR_RE
    from hpcds1mpi.launch.script_options import to_int

    opt = launch.options.get(name)
    if opt is None or opt.value is None or (opt.raw and SCHEDULER_VAR_RE.match(
            opt.raw.strip("\"'"))):
        return None
    return to_int(launch.value(name, launch.scope))


def _holds(layout: "Configuration", ranks: int | None) -> dict[str, int]:
    """What ``layout``'s job holds of each of :data:`_COUNTS`; CPUs per rank counted over
    the step's ``ranks`` (None: all the job's), as srun fits a step's CPUs in the job's."""
    tasks = layout.nodes * layout.ranks_per_node
    return {"ntasks": tasks, "ntasks-per-node": layout.ranks_per_node, "nodes": layout.nodes,
            "cpus-per-task": tasks * layout.threads // min(ranks or tasks, tasks)}


#: How :func:`other_launch_refusal` names each count.
_SAID = {"ntasks": "ranks", "ntasks-per-node": "ranks per node", "nodes": "nodes",
         "cpus-per-task": "CPUs per rank"}


def other_launch_refusal(script: "JobScript", asked: "Configuration",
                         picked: "Configuration") -> str:
    """Why the rewrite from ``asked`` to ``picked`` is refused for a launch line other than
    the one it edits (``script.launch``) whose own count of ranks, ranks per node, nodes or
    CPUs ``asked``'s job holds (its tasks: the directives', where they say) and ``picked``'s
    does not ("" when there is none; a line that already asks more is left as it is): Open MPI's
    mpirun would stop (not enough slots), Slurm refuse the step, MPICH's ranks share the
    job's CPUs (s48 tester O8: the job ran, its rewrite failed "not enough slots")."""
    from hpcds1mpi.decide.script_functions import running_launches
    from hpcds1mpi.launch.step_fit import job_tasks

    for launch in running_launches(script):
        if launch is script.launch:
            continue
        counts = {k: n for k in _COUNTS if (launch.kind == "slurm" or k not in (
            "nodes", "cpus-per-task")) and (n := _asked(launch, k))}
        was, new = (_holds(x, counts.get("ntasks")) for x in (asked, picked))
        was["ntasks"] = job_tasks(script) or was["ntasks"]  # the directives', not the launch's
        over = [f"{n} {_SAID[k]} where the recommended layout has {new[k]}"
                for k, n in counts.items() if new[k] < n <= was[k]]
        if not over:
            continue
        written = " ".join(script.written(launch.options[k]) for k in counts)
        return (f"--rewrite refused: line {launch.line}'s `{launch.launcher} {written}` asks "
                f"{'; '.join(over)}, and --rewrite edits line {script.launch.line}'s launch "
                f"only: line {launch.line} would stop the rewritten job (not enough slots, a "
                "step Slurm refuses) or crowd its CPUs; the script keeps its layout (drop that "
                "line's count so that it takes the job's, or change it by hand)")
    return ""
