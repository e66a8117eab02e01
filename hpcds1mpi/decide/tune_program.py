"""Where and how ``tune`` runs a user's program: its command split as the shell would, the
check that it can start, the folder and setup its sweep in the model ran it with (s37
tester G4), and the launcher its trials start it with."""

from __future__ import annotations

import os
import shlex


def program_tokens(program: str) -> list[str]:
    """``--program`` split as the shell would, its quotes checked.

    Raises:
        ConfigError: unbalanced quotes (exit 2).
    """
    from hpcds1mpi.errors import ConfigError

    try:
        return shlex.split(program)
    except ValueError as exc:
        raise ConfigError(f"--program: {exc} (check its quotes)") from None


def check_program(program: str, workdir: str | None, say) -> None:
    """Refuse a ``--program`` that cannot start (one relative to ``workdir``, the folder it
    runs in, is checked there by the pre-flight); ``say`` what
    :func:`~hpcds1mpi.launch.program.program_note` says of it."""
    from hpcds1mpi.launch.program import program_note
    from hpcds1mpi.measure.external import check_program as check_startable

    if note := program_note(program):
        say(f"note: {note}")
    tokens = program_tokens(program)
    relative = workdir is not None and not os.path.isabs(tokens[0] if tokens else "")
    if tokens and "{" not in tokens[0] and not (relative and "/" in tokens[0]):
        # (one relative to --workdir: the pre-flight checks it there)
        check_startable(tokens, option="--program")


#: The reading options tune's trials of a program take from the model's sweep where not given.
READ_OPTIONS = ("--time-regex", "--fom-regex", "--ranks-regex", "--fail-regex", "--output-file")


def model_readings(bundle, workload: str, program: str, given: dict, log) -> dict:
    """``given`` (tune's sweep options, None for one not given) for ``program`` with each of
    :data:`READ_OPTIONS` the user did not give taken from how the model's sweep read the
    program (:func:`~hpcds1mpi.surrogates.levels.recorded_measurement`), as its folder and
    launcher are taken, said in one line to ``log`` (s46 tester H7: the trials were timed by
    the launch's wall time beside a model of the program's own time, and the closing ``learn``
    refused them)."""
    from hpcds1mpi.surrogates.levels import bundle_levels, recorded_measurement

    from hpcds1mpi.decide.given_program import another_program_note

    levels = bundle_levels(bundle, workload)
    if levels is None or not levels.external or (levels.command and another_program_note(
            program_tokens(program), levels.command)):
        return given  # another program's output is not read by its regexes (said: B8)
    known = recorded_measurement(levels)[0]
    taken = {flag: known[key] for flag in READ_OPTIONS
             if given.get(flag) is None and known.get(key := flag[2:].replace("-", "_"))}
    if taken:
        log(f"reads {workload} as the model's sweep did, with "
            + " and ".join(f"{flag} {shlex.quote(value)}" for flag, value in taken.items())
            + f" (give {' / '.join(taken)} to read it otherwise)")
    return {**given, **taken}


def model_place(bundle, workload: str, program: str, workdir: str | None, setup: str | None,
                 log) -> tuple[str | None, str | None]:
    """The ``--workdir`` and ``--setup`` a tune of a program runs it with: the folder its
    sweep in the model ran it in, as recommend's script takes it
    (:func:`~hpcds1mpi.decide.measured_run.swept_place`), the user's own winning, said in
    ``log`` (s37 tester G4: every trial failed in the current folder, unsaid); the sweep's
    setup only said, with the option that runs it (shell code from the bundle).
    A program swept without ``--workdir`` in another folder than this one, whose command
    has relative paths, is said too (s37 tester G3). None: not used."""
    from hpcds1mpi.decide.measured_run import swept_place
    from hpcds1mpi.surrogates.levels import bundle_levels

    levels = bundle_levels(bundle, workload)
    if levels is None or not levels.external:
        return workdir, setup
    if said := other_command(levels, program):  # s40 tester B8: said before any run
        log(said)
    used_workdir, used_setup, taken, differ = swept_place(levels, workdir, setup)
    if "--setup" in taken:
        # A recorded setup is shell code from the bundle, matched to this program by its label
        # only: said with the option that runs it, never run unasked (s37 reviewer R2: tuning
        # another program of that label ran the model's setup).
        taken.remove("--setup")
        log(f"the model's sweep ran --setup {used_setup!r} before {workload}; it is not run "
            f"unasked: give --setup {shlex.quote(used_setup)} to run it")
        used_setup = ""
    if taken:
        shown = {"--workdir": used_workdir, "--setup": used_setup}
        log(f"runs {workload} as the model's sweep did, with "
            + " and ".join(f"{flag} {shown[flag]!r}" for flag in taken)
            + f" (give {' / '.join(taken)} to run it otherwise)")
    for line in differ:
        log(line)
    if not used_workdir and levels.swept_in and levels.swept_in != os.getcwd():
        from hpcds1mpi.launch.program_folder import relative_paths

        if relative_paths(program_tokens(program),
                          levels.swept_in if os.path.isdir(levels.swept_in) else None):
            log(f"the model's sweep ran {workload} in {levels.swept_in} (no --workdir), where "
                "its command's relative paths were read; they are read here: run tune there, "
                f"or give --workdir {levels.swept_in}")
    return used_workdir or None, used_setup or None


def model_label(bundle, program: str) -> str | None:
    """The workload ``bundle`` measured ``program`` as: the one program whose command lines
    hold it (:func:`~hpcds1mpi.decide.unmeasured_command.command_difference` finds none);
    None where none or several do. A model knowing ``python3 app.py`` as ``python3`` (an
    older tune's label) had gone unused under the file-name label ``app.py`` (s41 review F7)."""
    from hpcds1mpi.decide.unmeasured_command import command_difference
    from hpcds1mpi.surrogates.levels import bundle_levels

    words, found = program_tokens(program), set()
    for workload in sorted(getattr(bundle, "workloads", ())):
        if (levels := bundle_levels(bundle, workload)) is None:
            continue
        lines = [line for line in (levels.command, *levels.other_commands) if line]
        if any(not command_difference(words, line) for line in lines):
            found.add(workload)
    return found.pop() if len(found) == 1 else None


def other_command(levels, program: str) -> str:
    """One line where ``program`` is not a command ``levels``' runs ran
    (:func:`~hpcds1mpi.decide.unmeasured_command.command_difference`): tune starts from, and
    compares with, that command's predictions, and learning its runs into the model would
    pool two programs under one label, whose "measured" answers then mix both (s40 tester
    B8); "" where it is one of them."""
    from hpcds1mpi.decide.unmeasured_command import command_difference

    lines = [line for line in (levels.command, *levels.other_commands) if line]
    differences = [command_difference(program_tokens(program), line) for line in lines]
    if not differences or not all(differences):
        return ""
    return (f"--program is not the command the model measured as {levels.workload} "
            f"({lines[0]!r}): {differences[0]}; its start and the predictions are that "
            f"command's, and learning these runs into the model would pool the two under one "
            f"label: give --label a new name (then train on the runs) to keep them apart")


def trial_launcher(choice, part):
    """The launcher the trials' sweeps use (``measure/external.py``): --overcommit above the
    allocation's usable cores, not the node's (s31 reviewer: the pre-flight, given the node's,
    never said the --overcommit the trials add inside a partial allocation)."""
    return choice.launcher_for(part.usable_cores_per_node)


def trials_launcher(out: str, choice, part, submit: bool) -> dict | None:
    """The launcher tune's trials of a program will start it with (:func:`trial_launcher`:
    ``choice``'s, else srun inside an allocation, ``--submit``'s job included), as the
    ``launch`` attribute records it, where ``out`` exists for them to add to: its runs must
    have been measured under it, as a sweep's ``--resume`` checks (s40 review G5: only the
    first trial's sweep checked it, after the launch probe, in the sweep's words). None where
    ``out`` is new or the launcher is not known yet (tune refuses that later)."""
    import dataclasses

    from hpcds1mpi.errors import LaunchError
    from hpcds1mpi.launch.launcher_discovery import in_slurm

    if choice is None or not os.path.isfile(out):
        return None
    kind = choice.launcher or ("srun" if submit or in_slurm() else None)
    if kind is None:
        return None
    trial = dataclasses.replace(choice, launcher=kind)
    try:
        return trial.describe(trial_launcher(trial, part))
    except LaunchError:  # no mpiexec: said where tune looks for one
        return None
