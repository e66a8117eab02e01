"""A recommended job's script runs its program the way the program's sweep ran it: in the
sweep's ``--workdir`` folder for the recommended configuration (s29 tester A1: OpenFOAM swept
in ``cases/{size}-{ranks}``, pre-decomposed per configuration, got a script run in the submit
folder, which has no ``system/controlDict``), and with the sweep's launcher where no cluster
file names one (s29 tester B4: meep swept with Open MPI's ``mpirun`` was refused for srun),
after the sweep's ``--setup`` for that configuration (an OpenFOAM case decomposed for its rank
count). All are read from the program's levels in the bundle
(:class:`~hpcds1mpi.surrogates.levels.MeasuredLevels`: ``measured_with``, ``launched_with``);
a kernel, or a bundle that recorded neither, runs as before."""

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
    """

    cluster: object
    folder: str | None = None
    notes: tuple = ()
    hint: str = ""
    setup: str | None = None
    setup_s: float = 0.0
    setup_from: str = ""


def measured_run(rec, scheduler: str) -> MeasuredRun:
    """How the script of ``rec``'s pick under ``scheduler`` runs its program (``rec.picked``
    must be set): its sweep's folder, setup and launcher (see the module docstring)."""
    from hpcds1mpi.decide.calibration_folders import is_current_folder
    from hpcds1mpi.launch.script_launcher import measured_cluster, names_launcher, retrain_hint
    from hpcds1mpi.surrogates.program_launcher import launch_for
    from hpcds1mpi.measure.workdirs import folder_of

    cluster = rec.clusters.get(rec.picked.label)
    levels = rec.program_levels
    if levels is None:
        return MeasuredRun(cluster)
    notes = []
    workdir = (levels.measured_with or {}).get("workdir") or ""
    folder = folder_of(workdir, rec.picked.choice.config(), rec.size) if workdir else None
    if is_current_folder(folder):  # --workdir '.': the submit folder, nothing to create (N5)
        folder = None
    setup = (levels.measured_with or {}).get("setup") or None
    if folder:  # never created: an empty folder would lack the program's input
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
    cluster, launch_note = measured_cluster(cluster, scheduler, launch)
    if launch_note:
        notes.append(f"the script {launch_note}")
    if setup:
        from hpcds1mpi.measure.setup_command import filled_setup

        setup = filled_setup(setup, rec.picked.choice.config(), rec.size)
        notes.append(f"the job runs the sweep's --setup {setup!r} first (for this "
                     "configuration), and stops if it fails")
    setup_s, setup_from = setup_time(levels, rec.picked.choice.config())
    return MeasuredRun(cluster, folder, tuple(notes), hint=hint, setup=setup, setup_s=setup_s,
                       setup_from=setup_from)


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
