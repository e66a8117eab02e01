"""Ranks that each start a job of their own: N copies of a job, not one job of N ranks.

A make or shell driver that runs its own launcher (``abyss-pe np=2`` runs ``mpirun -np 2
ABYSS-P``) under the sweep's ``mpiexec -n 2`` ran twice, the copies racing on one folder's
files, and the failure was blamed on a missing file (s38 tester A6). What a driver's text says
cannot be read for every language (make, Perl, Python's ``subprocess``), so the launch's process
tree is watched instead: a job launcher started below a process of the program
(:attr:`~hpcds1mpi.measure.launch_tree.TreeSampler.rank_launcher`) at more than one rank stops
the sweep, as a rank count the program contradicts does
(:func:`~hpcds1mpi.measure.rank_count.check_rank_count`). At one rank the driver's own job is
one job, and runs.
"""

from __future__ import annotations

from hpcds1mpi.errors import LaunchError


def check_rank_copies(result: dict, label: str) -> None:
    """Raise where the ranks of a launch (``result``,
    :func:`~hpcds1mpi.measure.program_launch.launch_once`'s) each started a job launcher.

    Raises:
        LaunchError: one line naming the launcher line seen and what to sweep instead.
    """
    from hpcds1mpi.measure.printable import clipped, printable

    launched, ranks = result.get("rank_launcher") or "", result.get("ranks", 1)
    if not launched or ranks <= 1:
        return
    raise LaunchError(
        f"{label}: its ranks each started a launcher of their own "
        f"({clipped(printable(launched), 160)!r}), so the {ranks} ranks ran {ranks} copies of "
        f"that job, not one job of {ranks} ranks; nothing was recorded for it: sweep the "
        "program that launcher starts (its command without the launcher), or this command at "
        "one rank (--ranks-per-node 1) with its process count in its own options")
