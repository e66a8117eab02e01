"""Threads per rank beyond the CPUs Slurm gives each task.

Slurm gives a task ``--cpus-per-task`` CPUs, one without it, whatever ``OMP_NUM_THREADS`` (or
the program's own thread option) says: ``#SBATCH -n 2`` with ``OMP_NUM_THREADS=2`` is placed
on one node of the 2-core test Slurm (``sbatch --test-only``: "using 2 processors on nodes
n1"; ``-n 4``: "4 processors on nodes n[1-2]"), its 2 ranks x 2 threads sharing 2 cores (a
real run: 4.87 s where 1 x 2 x 2 threads on 4 cores took 0.75 s). It had been read as 2 nodes
x 1 rank, and nothing was said (s45 tester B1). :meth:`JobScript.layout
<hpcds1mpi.launch.job_script.JobScript.layout>` packs the tasks as Slurm does;
:func:`threads_over_task` is the warning that the threads oversubscribe the task's CPUs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hpcds1mpi.launch.step_fit import OPEN_SHARE

if TYPE_CHECKING:  # pragma: no cover
    from hpcds1mpi.launch.job_script import JobScript


def threads_over_task(script: "JobScript", said: str | None, line: int | None) -> str:
    """The warning where a Slurm job's threads per rank (``said`` on ``line``: its
    ``OMP_NUM_THREADS=T`` or the program's own option) are more than the CPUs each task is
    given, "" otherwise (threads read from the CPUs per task, or a job given more of a node
    than its tasks ask: ``--exclusive``, ``--mincpus``)."""
    if script.scheduler != "slurm" or not said or any(
            name in script.directives for name in OPEN_SHARE):
        return ""
    threads, cpus = script.threads or 1, script.cpus_per_task or 1
    if threads <= cpus:
        return ""
    asked = f"--cpus-per-task={cpus}" if script.cpus_per_task else "no --cpus-per-task"
    return (f"{f'line {line}: ' if line else ''}{said} runs {threads} threads per rank, but "
            f"the job asks {asked}: Slurm gives each task {cpus} CPU{'s' if cpus > 1 else ''}, "
            f"and places the tasks by it: its {threads} threads oversubscribe them; ask "
            f"#SBATCH --cpus-per-task={threads}")
