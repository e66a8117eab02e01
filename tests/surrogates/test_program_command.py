"""A program's command lines read back from its recorded launches: one per command line its
rows ran, the one most rows ran first."""

from __future__ import annotations

import pandas as pd

from hpcds1mpi.surrogates.program_command import command_of, commands_of


def swept(command: str, sizes, threads=(1,), at: str = "") -> list[dict]:
    """Rows as ``sweep --command`` records them (mpiexec and the filled-in program)."""
    return [dict(workload="gromacs", kind="external", size=float(size), ranks_per_node=rpn,
                 ranks=rpn, threads=t, status="ok", started_at=at,
                 command=f"/usr/bin/mpirun.openmpi -n {rpn} --allow-run-as-root "
                         + command.format(size=size, threads=t))
            for size in sizes for rpn in (1, 2) for t in threads]


GMX = "gmx_mpi mdrun -s /w/{size}/topol.tpr -nsteps 300 -deffnm run"
NTOMP = "gmx_mpi mdrun -s /w/{size}/topol.tpr -nsteps 300 -ntomp {threads} -deffnm run"


def test_rows_of_two_command_lines_give_both_the_most_run_first():
    """Before, ``learn`` with a sweep that added ``-ntomp {threads}`` left the program no
    command at all (""), and advise no longer knew it or its size."""
    rows = pd.DataFrame(swept(GMX, (25, 30, 40), (1, 2)) + swept(NTOMP, (35,), (1, 2)))
    assert commands_of(rows) == (
        "gmx_mpi mdrun -s /w/{size}/topol.tpr -nsteps 300 -deffnm run",
        "gmx_mpi mdrun -s /w/35/topol.tpr -nsteps 300 -ntomp {threads} -deffnm run")
    assert command_of(rows) == commands_of(rows)[0]


def test_a_word_that_varies_with_nothing_makes_another_command_line():
    """Another -nsteps is another computation: its own command line, not a merged one."""
    rows = pd.DataFrame(swept(GMX, (25, 30)) + swept(GMX.replace("300", "100"), (25, 30, 40)))
    assert commands_of(rows) == ("gmx_mpi mdrun -s /w/{size}/topol.tpr -nsteps 100 -deffnm run",
                                 "gmx_mpi mdrun -s /w/{size}/topol.tpr -nsteps 300 -deffnm run")


def test_equal_counts_put_the_one_run_last_first_and_unreadable_lines_are_skipped():
    rows = swept(GMX, (25,)) + swept(NTOMP, (25,)) + [
        dict(workload="gromacs", kind="external", size=25.0, command="mpiexec -n 1 'unbalanced")]
    assert commands_of(pd.DataFrame(rows))[0].endswith("-ntomp 1 -deffnm run")
    assert commands_of(pd.DataFrame(rows[:1] + rows[-1:])) == (
        "gmx_mpi mdrun -s /w/25/topol.tpr -nsteps 300 -deffnm run",)
    assert commands_of(pd.DataFrame(rows[-1:])) == () and command_of(pd.DataFrame(rows[-1:])) == ""
