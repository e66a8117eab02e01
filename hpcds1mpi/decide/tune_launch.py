"""The launcher ``tune --model`` starts a program with where the user names none: the one the
program's sweep in the model ran it with, as ``recommend --emit``'s script launches it
(:func:`~hpcds1mpi.launch.script_launcher.measured_cluster`).

s42 tester E5: a program swept under ``srun --mpi=pmix`` (Open MPI on Slurm) got a script
launching it so from recommend, but tune defaulted to pmi2 in the same allocation and refused
it, with a cluster file its only way out. ``--launcher`` (another kind), ``--mpiexec``,
``--launcher-args``, ``--mpi`` and a cluster file that names a launcher (its ``mpi`` too,
``"pmi2"`` included) still win.
"""

from __future__ import annotations


def model_launch(choice, bundle, workload: str, program: str, launcher: str | None,
                 given: dict, cluster_file, partition, submit: bool, log):
    """The launch choice tune's trials of ``program`` use: ``choice``, or the model's launcher
    of the program, said in one line to ``log``.

    Args:
        choice: the :class:`~hpcds1mpi.launch.preflight.LaunchChoice` of the command line and
            cluster file.
        bundle: the model; ``workload``: the program's label in it.
        launcher: ``--launcher`` (None: not given); ``given``: the sweep options tune took
            (``--mpiexec``, ``--launcher-args``, ...) and its ``--mpi``.
        submit: ``--submit``: where no ``--launcher`` is given, the trials launch with srun
            there and inside an allocation.

    The recorded launcher is taken where it is of the kind the trials use: srun's ``--mpi``
    and arguments under srun, an ``mpiexec``'s file and arguments under ``--launcher
    mpiexec`` (one swept under ``mpirun`` is not run by it inside an allocation unasked:
    tune would then tune this node only).
    """
    from hpcds1mpi.cluster import resolve_cluster
    from hpcds1mpi.launch.launcher_discovery import in_slurm
    from hpcds1mpi.launch.script_launcher import measured_cluster, names_launcher
    from hpcds1mpi.surrogates.levels import bundle_levels
    from hpcds1mpi.surrogates.program_launcher import launch_for

    if choice is None or given.get("--mpiexec") or given.get("--mpi") \
            or given.get("--launcher-args") is not None:
        return choice
    levels = bundle_levels(bundle, workload)
    recorded = getattr(levels, "launched_with", None) if levels is not None else None
    if not levels or not levels.external or not isinstance(recorded, dict):
        return choice
    cluster = resolve_cluster(cluster_file, partition)
    launch, several = launch_for(recorded, "")  # several: the one that ran the most runs
    if not launch or names_launcher(cluster):
        return choice
    kind = "srun" if launch.get("launcher") == "srun" else "mpiexec"
    # the kind of launcher the trials use is tune's (srun reaches the allocation's nodes,
    # mpiexec this one): only the recorded one's settings are taken, for the same kind
    if (launcher or ("srun" if submit or in_slurm() else None)) != kind:
        return choice
    measured, note = measured_cluster(cluster, "slurm", launch, program)
    if not note:
        return choice
    from hpcds1mpi.errors import ConfigError
    from hpcds1mpi.launch.preflight import LaunchChoice
    from hpcds1mpi.launch.script_placeholders import split_command

    try:
        taken = LaunchChoice.of(
            launcher=launcher, mpi=measured.mpi if kind == "srun" else None,
            mpiexec=measured.mpiexec if kind == "mpiexec" else None,
            launcher_args=measured.launcher_args or None, cluster_file=cluster_file,
            partition=partition, program=split_command(program) or None)
    except ConfigError:  # not startable here: the choice's own checks say what to do
        return choice
    said = note.split(" (no cluster file", 1)[0]
    pooled = " (of its pooled sweeps' launchers, the one of the most runs)" if several else ""
    log(f"each trial of {workload} {said}{pooled} (recorded in the model; give --launcher, "
        "--mpi, --mpiexec or --launcher-args, or a --cluster file's launcher / mpi, to "
        "launch otherwise)")
    return taken


__all__ = ["model_launch"]
