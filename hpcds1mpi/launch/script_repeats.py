"""The note for a script that launches more than once: its time limit is kept.

A recommended walltime covers one launch of the program; a script with several launch lines, or
one inside a ``for`` / ``while`` / ``until`` loop, would be killed by it, so ``--rewrite`` keeps
the script's own time limit and :func:`repeats_note` says so, in the script's scheduler's form.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from hpcds1mpi.launch.directives import format_time_limit

if TYPE_CHECKING:  # pragma: no cover
    from hpcds1mpi.launch.job_script import JobScript


def repeats_note(script: "JobScript", one_launch_s: int | None,
                 launches: Sequence | None = None) -> str | None:
    """The note for a script that launches more than once (several launch lines, or one inside
    a loop), whose time limit a one-launch prediction must not replace; None when it launches
    once at most. ``launches``: those the script runs (None: every launch line)."""
    launches = script.launches if launches is None else launches
    looped = [x.line for x in launches if x.in_loop]
    if len(launches) < 2 and not looped:
        return None
    where = f"line {looped[0]}, inside a loop" if len(launches) == 1 else \
        "lines " + line_list([x.line for x in launches]) + (
            f"; line {line_list(looped)} inside a loop" if looped else "")
    limit = "--time" if script.scheduler == "slurm" else "walltime"
    kept = f"its {limit} ({format_time_limit(script.time_s, script.scheduler)})" \
        if script.time_s else "its time limit as it is (none set: the partition's default)"
    other = (f"; --rewrite edits the launch options of line {script.launch.line} only"
             if script.launch is not None and len(launches) > 1 else "")
    return (f"the script launches more than once ({where}): the recommended walltime "
            f"({format_time_limit(one_launch_s, script.scheduler) if one_launch_s else '?'}) "
            "covers one launch, so "
            f"--rewrite keeps {kept}; check it covers every launch{other}")


def line_list(numbers: Sequence[int], shown: int = 10) -> str:
    """``3, 5, 9`` — the first ``shown`` of them and how many more (a generated script may
    have thousands of launch lines; a note lists a few)."""
    more = len(numbers) - shown
    return ", ".join(map(str, numbers[:shown])) + (f" and {more} more" if more > 0 else "")
