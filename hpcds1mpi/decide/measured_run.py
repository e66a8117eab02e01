"""A recommended job's script runs its program the way the program's sweep ran it: in the
sweep's ``--workdir`` folder for the recommended configuration (s29 tester A1: OpenFOAM swept
in ``cases/{size}-{ranks}``, pre-decomposed per configuration, got a script run in the submit
folder, which has no ``system/controlDict``), and with the sweep's launcher where no cluster
file names one (s29 tester B4: meep swept with Open MPI's ``mpirun`` was refused for srun),
after the sweep's ``--setup`` for that configuration (an OpenFOAM case decomposed for its rank
count). All are read from the program's levels in the bundle
(:class:`~hpcds1mpi.surrogates.levels.MeasuredLevels`: ``measured_with``, ``launched_with``);
a kernel, or a bundle that recorded neither, runs as before. ``tune --program --model`` takes
the same ``--workdir`` and ``--setup`` (:func:`swept_place`; s37 tester G4: its every trial
failed in the current folder).

A program swept without ``--workdir`` ran in the sweep's own folder (``swept_in``): a command
with relative paths (``nwchem nw/h2o-3.nw``) is run there, the job checking them first (s37
tester G3: submitted from another folder, the job exited 127); where the bundle does not
record that folder, a warning says how to submit it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class MeasuredRun:
    """How a job script runs the picked configuration of a program.

    Attributes:
        cluster: the cluster the script is written with (the pick's own, or a copy with the
            launcher the sweep used: :func:`hpcds1mpi.launch.script_launcher.measured_cluster`).
        folder: where the program runs, relative to the submit folder; None: that folder.
        notes: one line each, for the script's ``# note:`` lines and the user.
        hint: added to a refusal of the script's launcher: "", or that a model trained again
            records the launcher (the bundle records none: s29 V1-8;
            :func:`~hpcds1mpi.launch.script_launcher.retrain_hint`).
        setup: the sweep's ``--setup`` filled for the configuration, run in ``folder`` before
            the launch; None: none.
        setup_s: seconds the job's time limit adds for the setup (its longest measured
            ``setup_s`` for the pick, else for the program: s30 tester O1); 0: none known.
        setup_from: where ``setup_s`` comes from, for the script's summary comment.
        inputs: the program's relative paths the job checks in ``folder`` before the launch
            (the folder its sweep ran in, no ``--workdir``: s37 tester G3); () none.
        program: the program as the script runs it: its bare name written as the file the
            sweep ran (:mod:`~hpcds1mpi.launch.program_path`, s41 tester D7); None: as given.
    """

    cluster: object
    folder: str | None = None
    notes: tuple = ()
    hint: str = ""
    setup: str | None = None
    setup_s: float = 0.0
    setup_from: str = ""
    inputs: tuple = ()
    program: str | None = None


def swept_place(levels, workdir: str | None = None, setup: str | None = None
                ) -> tuple[str, str, list[str], list[str]]:
    """The ``--workdir`` and ``--setup`` a program runs with as its sweep ran it: the ones
    ``levels`` (its :class:`~hpcds1mpi.surrogates.levels.MeasuredLevels`; None: none known)
    record, each one the user gave (``workdir``, ``setup``; None: not given) winning.

    Returns:
        (the workdir, "" for none; the setup, "" for none; the options taken from the record,
        e.g. ``["--workdir"]``; one line per option given that differs from the record).
    """
    swept = (getattr(levels, "measured_with", None) or {}) if levels is not None else {}
    used, taken, differ = {}, [], []
    for key, given in (("workdir", workdir), ("setup", setup)):
        recorded = str(swept.get(key) or "")
        flag = f"--{key}"
        if given is None:
            used[key] = recorded
            taken += [flag] if recorded else []
            continue
        used[key] = given
        if given != recorded:
            differ.append(f"your {flag} {given!r} is used, not the model's sweep's "
                          + (repr(recorded) if recorded else "(none)"))
    return used["workdir"], used["setup"], taken, differ


def measured_run(rec, scheduler: str, program: str | None = None, bundle=None) -> MeasuredRun:
    """How the script of ``rec``'s pick under ``scheduler`` runs its program (``rec.picked``
    must be set): its sweep's folder, setup and launcher (see the module docstring).
    ``program``: the command the script runs (placeholders unfilled; None: a kernel's).
    ``bundle``: the model, whose runs say whether the sweep met outputs an earlier run left in
    the folder the job runs in (:func:`earlier_outputs`); None: not read."""
    from hpcds1mpi.decide.calibration_folders import is_current_folder
    from hpcds1mpi.launch.script_launcher import measured_cluster, names_launcher, retrain_hint
    from hpcds1mpi.surrogates.program_launcher import launch_for
    from hpcds1mpi.measure.workdirs import folder_of

    cluster = rec.clusters.get(rec.picked.label)
    levels = rec.program_levels
    if levels is None:
        return MeasuredRun(cluster)
    notes = []
    workdir, setup, _, _ = swept_place(levels)
    setup = setup or None
    folder = folder_of(workdir, rec.picked.choice.config(), rec.size) if workdir else None
    if is_current_folder(folder):  # --workdir '.': the submit folder, nothing to create (N5)
        folder = None
    inputs = ()
    if not workdir and levels.external and program:  # s37 tester G3
        folder, inputs, note = _swept_folder(levels, program, rec.picked.choice.config(),
                                             rec.size)
        notes += [note] if note else []
    if folder and workdir:  # never created: an empty folder would lack the program's input
        import os.path

        # An absolute folder is itself wherever the job is submitted from (s29 V1-2).
        where = ("" if os.path.isabs(folder) else
                 ", in the folder you submit from: create it there")
        said = (f"the job runs the program in {folder!r} (its sweep's --workdir {workdir!r} "
                "for this configuration)")
        notes.append(f"{said}, created if missing for the --setup to prepare" if setup else
                     f"{said}{where or ': create it'} with the program's input before you "
                     "submit; the job checks it first")  # with --setup: as the sweep (N7a)
    hint = retrain_hint(bool(levels.launched_with), cluster)
    # Pooled sweeps of several launchers: the one of the pick's runs, said (s31 tester P6).
    launch, several = launch_for(levels.launched_with, rec.picked.choice.config().label())
    if several and not names_launcher(cluster):
        notes.append(several if measured_cluster(cluster, scheduler, launch)[1] else
                     f"{several}; it is not found here, or is what the script writes anyway "
                     "(set launcher / mpiexec in a --cluster file to choose one)")
    cluster, launch_note = measured_cluster(cluster, scheduler, launch,
                                            _read_where_run(program, folder))
    if launch_note:
        notes.append(f"the script {launch_note}")
    if setup:
        from hpcds1mpi.measure.setup_command import filled_setup

        setup = filled_setup(setup, rec.picked.choice.config(), rec.size)
        notes.append(f"the job runs the sweep's --setup {setup!r} first (for this "
                     "configuration), and stops if it fails")
    setup_s, setup_from = setup_time(levels, rec.picked.choice.config())
    if program and launch:  # its bare name as the file the sweep ran (s41 tester D7)
        from hpcds1mpi.launch.program_path import PROGRAM_PATH, by_swept_path

        program, said = by_swept_path(program, launch.get(PROGRAM_PATH) or "")
        notes += [said] if said else []
    notes += [said] if bundle is not None and (said := earlier_outputs(bundle, rec.workload,
                                                                       folder)) else []
    return MeasuredRun(cluster, folder, tuple(notes), hint=hint, setup=setup, setup_s=setup_s,
                       setup_from=setup_from, inputs=inputs, program=program)


def earlier_outputs(bundle, workload: str, folder: str | None) -> str:
    """A warning where ``workload``'s sweep, in ``bundle``'s runs, measured in fresh folders
    because its program refused outputs a run left in ``folder`` (None: the submit folder, this
    one), where the job runs it: the outputs the sweep left there, if still there, stop the job
    at once (s48 tester Q1: ExaML's job failed in 3 s on its sweep's run ID); "" where none
    did."""
    import os

    from hpcds1mpi.decide.workload_rows import workload_rows
    from hpcds1mpi.measure.repeat_folders import refused_in

    rows = workload_rows(bundle, workload)
    if rows is None or "error" not in rows:
        return ""
    here = os.path.abspath(folder or ".")
    if not any(refused_in(str(error)) == here for error in rows["error"]):
        return ""
    # what the sweep met, not what is there now: the user may have removed them since, and
    # the rows do not name them (s48 review RY5)
    return (f"warning: its sweep met earlier outputs in {here}, which the program refuses "
            "(so it was measured in fresh folders), and left its own there: if they are still "
            "there when the job starts, the program stops at once; remove them, or name the "
            "outputs per run")


def _read_where_run(program: str | None, folder: str | None) -> str | None:
    """``program`` with its relative path as the job finds it in ``folder``, for the notes
    that read its MPI (s46 tester J2: read in this shell's folder, it was "not found")."""
    import shlex

    from hpcds1mpi.launch.program_there import words_where_run

    try:
        return shlex.join(words_where_run(shlex.split(program), folder)[0]) \
            if program and folder else program
    except ValueError:
        return program  # refused where the launch line is made


def _swept_folder(levels, program: str, config, size: int) -> tuple[str | None, tuple, str]:
    """(the folder a script runs a program swept without ``--workdir`` in, None: the submit
    folder; the relative paths it checks there; the note or warning, "" for none).

    The command's relative paths were read from the folder its sweep ran in: the script goes
    there (``levels.swept_in``) where the command has any. A bundle that does not record it
    (telemetry older than s37) gets a warning naming them and the fix (s37 tester G3)."""
    import os

    from hpcds1mpi.errors import ConfigError
    from hpcds1mpi.launch.program import placeholder_values, program_tokens
    from hpcds1mpi.launch.program_inputs import input_paths

    values = placeholder_values(config, size)
    try:
        tokens = program_tokens(program, values)
    except ConfigError:
        return None, (), ""  # the script's own checks refuse it in one line
    swept_in = levels.swept_in
    paths = input_paths(program, values, swept_in if swept_in and os.path.isdir(swept_in)
                        else None if swept_in else os.getcwd(), levels.swept_from,
                        _measured_values(levels),
                        bool((levels.measured_with or {}).get("setup")))
    if not paths:
        return None, (), ""
    shown = ", ".join(paths[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")
    if swept_in is None:
        return None, (), (f"warning: the model does not record the folder its sweep ran "
                          f"{os.path.basename(tokens[0])} in (telemetry older than that "
                          f"record, or sweeps in several folders), and the command reads "
                          f"{shown} relative to the folder the job starts in: submit the "
                          "script from the folder the sweep ran in, or add `cd THAT_FOLDER` "
                          "above its launch line (a model trained on a new sweep records it)")
    if not os.path.isdir(swept_in):
        # Another machine's folder (a model trained elsewhere): the job starts where it is
        # submitted, said (s37 reviewer R5: the job had stopped on a laptop's path). A name
        # with a newline is this machine's folder too: the script's cd writes it as $'...'
        # (s39 tester D2: it had been called "not a folder here", and the cd left out).
        return None, (), (f"warning: the model's sweep ran {os.path.basename(tokens[0])} in "
                          f"{swept_in!r}, not a folder here, and the command reads {shown} "
                          "relative to the folder the job starts in: submit the script from "
                          "the folder holding them, or add `cd THAT_FOLDER` above its launch "
                          "line")
    missing = [path for path in paths if not os.path.exists(os.path.join(swept_in, path))]
    if missing:  # s48 tester Q7: "where its inputs (aln4000.binary, ...) are", it was not
        return swept_in, tuple(paths), _missing_inputs(swept_in, paths, missing)
    return swept_in, tuple(paths), (
        f"the job runs the program in {swept_in!r}, the folder its sweep ran it in (no "
        f"--workdir), where its inputs ({shown}) are; it checks the folder and them first "
        "(edit the cd line to run it elsewhere)")


def _missing_inputs(swept_in: str, paths: list[str], missing: list[str]) -> str:
    """The warning of :func:`_swept_folder` where some of the inputs ``paths`` the job checks
    in ``swept_in`` are ``missing`` there now."""
    def shown(names):
        return ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")

    there = [path for path in paths if path not in missing]
    one = len(missing) == 1
    return (f"warning: the job runs the program in {swept_in!r}, the folder its sweep ran it "
            f"in (no --workdir), where its input{'' if one else 's'} {shown(missing)} "
            f"{'is' if one else 'are'} missing now"
            + (f" ({shown(there)} {'is' if len(there) == 1 else 'are'} there)" if there else "")
            + f": create {'it' if one else 'them'} there before the job starts, or the job's "
            "own check of its inputs stops it before the launch")


def _measured_values(levels) -> list[dict]:
    """The placeholder values of every run ``levels`` record (``command_configs``)."""
    from hpcds1mpi.surrogates.program_command import RUN_KEYS

    out = []
    for runs in levels.command_configs or ():
        for run in runs:
            values = dict(zip(RUN_KEYS, run))
            values.pop("ok", None)
            try:
                values["ranks"] = int(values["nodes"]) * int(values["ranks_per_node"])
            except (KeyError, TypeError, ValueError):
                continue
            out.append(values)
    return out


def setup_time(levels, config) -> tuple[float, str]:
    """(seconds a job of ``config`` must allow for its program's sweep ``--setup``, which the
    job runs first; where they come from, in words): its longest measured for ``config``, else
    for the program (s30 tester O1). (0, "") without a setup, or where ``levels`` (a bundle from
    before they were kept) record none. The one rule of recommend's script and advise's
    proposed limit (s31: advise's added none)."""
    from hpcds1mpi.surrogates.setup_times import setup_allowance

    if levels is None or not (getattr(levels, "measured_with", None) or {}).get("setup"):
        return 0.0, ""
    return setup_allowance(getattr(levels, "setup_s", None), config.label())
