"""Which of a program's recorded command lines a script of a recommendation runs.

A program's runs may have run several command lines (two sweeps, one with ``-parallel``,
trained together or merged): the bundle keeps each with the configurations it ran
(:attr:`~hpcds1mpi.surrogates.levels.MeasuredLevels.command_configs`). A script runs the line
its picked configuration ran, not the line most runs ran (s30 tester O3: ``icoFoam -parallel``,
swept at 2 ranks, run at the 1 rank picked: "attempt to run parallel on 1 processor").
"""

from __future__ import annotations


def picked_command(bundle, levels, line: str, pick: dict | None,
                   size: float) -> tuple[str, str]:
    """(the command line a script of ``pick`` runs, a note or ""): ``line`` (the program's
    command, the one most runs ran) unless its runs ran several; then the one ``pick`` ran at
    the measured size nearest ``size``, else the nearest measured configuration's of as many
    ranks (:func:`~hpcds1mpi.surrogates.program_command.command_for`), said in the note."""
    if not line or pick is None or levels is None or not levels.other_commands:
        return line, ""
    from hpcds1mpi.surrogates.program_command import command_for

    commands = (levels.command, *levels.other_commands)
    configs = levels.command_configs
    if len(configs) != len(commands):  # a bundle older than the record: from its rows
        configs = _configs_from_rows(bundle, levels)
    if len(configs) != len(commands):
        return line, ""
    chosen, how = command_for(tuple(zip(commands, configs)), pick, size)
    others = "; ".join(repr(c) for c in commands if c != chosen)
    return chosen, (f"the script runs {chosen!r} ({how}); the runs of {levels.workload} "
                    f"also ran {others}")


def _configs_from_rows(bundle, levels) -> tuple:
    """``levels``' command configurations read from ``bundle``'s training rows; () when they
    cannot be read or their lines are not the bundle's."""
    from hpcds1mpi.surrogates.levels import levels_from_frame

    try:
        fresh = levels_from_frame(bundle.training_data()).get(levels.workload)
    except Exception:  # noqa: BLE001 - rows unreadable: the line most runs ran
        return ()
    if fresh is None or (fresh.command, *fresh.other_commands) != \
            (levels.command, *levels.other_commands):
        return ()
    return fresh.command_configs
