"""Why ``advise --rewrite`` writes nothing although a layout is recommended (one line each).

Lines too long to read: what they ask for is not known, so a rewrite could ask twice (a long
``select`` kept beside an added one). No launch line recognised: the program may start its own
ranks (GPAW's ``gpaw -P 2``), whose count new directives do not change, so a rewritten layout
fails with "not enough slots" (s29 tester B1); a rewrite that keeps the layout (the time
limit, the partition) is still written. A launch line whose rank, node or CPU count is not
known here (``srun -n $SLURM_ARRAY_TASK_ID``): a new allocation could hold less than the step
asks (s38 tester D4).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hpcds1mpi.launch.script_reading import MAX_LINE_CHARS, unread_lines

if TYPE_CHECKING:  # pragma: no cover
    from hpcds1mpi.config import Configuration
    from hpcds1mpi.launch.job_script import JobScript


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
    return unresolved_counts(script)


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
