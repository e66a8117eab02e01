"""A program's command lines read back from its recorded launches: one per command line its
rows ran, the one most rows ran first."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from hpcds1mpi.surrogates.program_command import (TEMPLATE_COLUMN, command_of, commands_of,
                                                  launched_words)


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


@pytest.mark.parametrize("command, sizes", [
    ("nwchem.mpich s{size}.nw", (2, 4, 6)),
    ("nwchem.mpich input_{size}.nw", (2, 4)),
    ("pw.x -i w{size}.in", (8, 16)),  # another number of digits
    ("nwchem.mpich basis2/s{size}.nw", (2, 4)),  # the literal 2 stays
    ("./app mesh{size}x{size}.dat", (32, 64)),
    ("./app s{size}.nw", (1, 12)),  # 1 is not the 1 of 12
])
def test_a_size_inside_a_word_is_put_back(command, sizes):
    """``s{size}.nw`` was read as three command lines (s2.nw, s4.nw, s6.nw): recommend wrote
    the size-2 input for size 5, train said the sweep ran 3 command lines, and advise could
    not read the size of ``srun nwchem.mpich s5.nw`` (s27 tester Q 2)."""
    rows = pd.DataFrame(swept(command, sizes))
    assert commands_of(rows) == (command,)


def test_the_sweeps_own_command_is_kept_where_the_rows_carry_it():
    """At one size the lines cannot show where the size is; the sweep's template (its plan's
    command, on the rows as ``command_template``) can. A template that does not fill to a
    row's line (another sweep's, in a merged file) is not used for it."""
    nwchem = "nwchem.mpich s{size}.nw"
    one_size = pd.DataFrame(swept(nwchem, (2,)))
    assert commands_of(one_size) == ("nwchem.mpich s2.nw",)
    assert commands_of(one_size.assign(**{TEMPLATE_COLUMN: nwchem})) == (nwchem,)
    other = pd.DataFrame(swept(GMX, (25, 30))).assign(**{TEMPLATE_COLUMN: nwchem})
    assert commands_of(other) == (GMX,)  # reconstructed: the template is not its command
    quoted = "./app --title 'a b' -n {threads} in{size}"
    rows = pd.DataFrame(swept(quoted, (3,), (1, 2))).assign(**{TEMPLATE_COLUMN: quoted})
    assert commands_of(rows) == (quoted,)
    mixed = pd.concat([one_size.assign(**{TEMPLATE_COLUMN: nwchem}),
                       pd.DataFrame(swept(nwchem, (4, 6)))], ignore_index=True)
    assert commands_of(mixed) == (nwchem,)  # an older file's rows join the same line
    older = pd.concat([pd.DataFrame(swept(nwchem, (2,))),
                       pd.DataFrame(swept(nwchem, (4,))).assign(**{TEMPLATE_COLUMN: nwchem})])
    assert commands_of(older) == (nwchem,)  # not 'nwchem.mpich s2.nw' as a second line


def test_an_exec_wrapper_prefix_and_its_size_are_kept():
    """s30 tester K1: `env POISSON_N={size} /usr/bin/python3 poisson_cfg.py` was recorded as
    `/usr/bin/python3 poisson_cfg.py`, and recommend wrote a job without the size."""
    rows = swept("env POISSON_N={size} /usr/bin/python3 poisson_cfg.py", (128, 256))
    assert command_of(pd.DataFrame(rows)) == "env POISSON_N={size} /usr/bin/python3 poisson_cfg.py"
    given = [dict(r, **{TEMPLATE_COLUMN: "nice -n 5 env N={size} ./app"}) for r in swept(
        "nice -n 5 env N={size} ./app", (128,))]
    assert command_of(pd.DataFrame(given)) == "nice -n 5 env N={size} ./app"


def test_the_script_runs_the_line_its_pick_ran_not_the_line_most_runs_ran():
    """s30 tester O3: 'icoFoam' swept at 1 rank, 'icoFoam -parallel' at 2 (and more runs): a
    script of the 1-rank pick ran 'mpirun -n 1 icoFoam -parallel' ("attempt to run parallel
    on 1 processor"). Each line keeps the configurations it ran; the pick's is chosen."""
    import pandas as pd

    from hpcds1mpi.surrogates.levels import MeasuredLevels, levels_from_frame
    from hpcds1mpi.surrogates.program_command import command_for, command_runs

    def row(ranks, size, command):
        return {"workload": "cav", "kind": "external", "status": "ok", "size": size,
                "nodes": 1, "ranks_per_node": ranks, "ranks": ranks, "threads": 1,
                "device": "cpu", "precision": "fp64",
                "command": f"mpirun -n {ranks} {command}"}

    rows = pd.DataFrame([row(1, 20, "icoFoam"), row(2, 20, "icoFoam -parallel"),
                         row(2, 30, "icoFoam -parallel"), row(1, 30, "icoFoam"),
                         row(2, 40, "icoFoam -parallel")])
    lines = command_runs(rows)
    assert [line for line, _ in lines] == ["icoFoam -parallel", "icoFoam"]
    one = {"nodes": 1, "ranks_per_node": 1, "threads": 1, "device": "cpu", "precision": "fp64"}
    assert command_for(lines, one, 25) == ("icoFoam", "the line this configuration ran")
    assert command_for(lines, {**one, "ranks_per_node": 2}, 25)[0] == "icoFoam -parallel"
    # never measured at 1 rank x 2 threads: the nearest configuration of 1 rank
    assert command_for(lines, {**one, "threads": 2}, 25) == (
        "icoFoam", "the line the nearest measured configuration of as many ranks ran")
    assert command_for(lines, {**one, "ranks_per_node": 4}, 25)[0] == "icoFoam -parallel"
    level = levels_from_frame(rows)["cav"]  # kept in the bundle, and read back
    again = MeasuredLevels.from_dict(json.loads(json.dumps(level.as_dict())))
    assert again.command_configs == level.command_configs
    assert len(level.command_configs) == 2 and level.command == "icoFoam -parallel"


def test_an_empty_argument_of_the_measured_command_is_kept():
    """Before, ``''`` was lost from the recorded command, and recommend --emit (Slurm, PBS,
    the calibration sweep) ran the program with one argument fewer than measured (s39 tester
    D6)."""
    assert launched_words("mpiexec -n 2 ./app 100 '{a,b}' '' end") == [
        "./app", "100", "{a,b}", "", "end"]
    rows = pd.DataFrame([dict(workload="br", kind="external", size=float(size), ranks=1,
                              ranks_per_node=1, threads=1, status="ok", started_at="",
                              command=f"/usr/bin/mpiexec -n 1 ./app {size} '' ' ' end")
                         for size in (100, 200)])
    assert command_of(rows) == "./app {size} '' ' ' end"
