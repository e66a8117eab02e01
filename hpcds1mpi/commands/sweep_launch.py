"""How ``sweep --launch N`` starts the kernel sweep: its launcher, srun plugin, mpiexec and the
user's launcher options (``--launcher-args``, else the cluster file's ``launcher_args``),
chosen and checked as a ``--command`` sweep's are, before anything launches.

The cluster file's ``launcher_args`` had been read (an option the sweep owns, ``-np``, refused)
and never used (s41, s42 left); now they go after the launcher's own options, as the program
sweep's do. An option that sets what the sweep sets is refused in one line naming it: the
rank count is ``--launch N``'s, the ranks per node and threads each configuration's.
"""

from __future__ import annotations

import shlex

import click


def launch_sweep(ranks: int, argv: list[str], out: str | None, *, launcher: str | None,
                 mpi_plugin: str | None, launcher_args: str | None, cluster_file: str | None,
                 partition: str | None) -> int:
    """Check the launch, then :func:`~hpcds1mpi.measure.supervise.supervise` the sweep ``argv``
    (without the supervisor's options) on ``ranks`` ranks; returns its exit status.

    Raises:
        ConfigError: a bad ``--launch``, no ``--out``, a launcher option the sweep owns, or a
            launcher that cannot start this Python's mpi4py; nothing was launched.
    """
    from hpcds1mpi.cluster import launch_settings, srun_mpi
    from hpcds1mpi.errors import ConfigError
    from hpcds1mpi.launch import launchers
    from hpcds1mpi.launch.kernel_launcher_check import check_kernel_launcher
    from hpcds1mpi.launch.preflight import LaunchChoice, refuse_unused_plugin
    from hpcds1mpi.measure.supervise import supervise

    if ranks < 1:
        raise ConfigError("--launch needs a positive number of ranks")
    if not out:
        raise ConfigError("--out is required")
    given = launcher_args if launcher_args is not None else \
        launch_settings(cluster_file, partition)["launcher_args"]
    _refuse_rank_count(given, "--launcher-args" if launcher_args is not None
                       else "the cluster file's launcher_args")
    site_mpi = srun_mpi(cluster_file, default="")
    mpi = mpi_plugin if mpi_plugin is not None else site_mpi or "pmi2"
    # s42: the cluster file's launcher and mpiexec, checked, as a --command sweep's
    choice = LaunchChoice.of(launcher=launcher, mpi=mpi, launcher_args=launcher_args,
                             cluster_file=cluster_file, partition=partition)
    refuse_unused_plugin(mpi_plugin, choice.started_by(launcher))  # s44
    if choice.said:
        click.echo(f"note: {choice.said}", err=True)
    # s33 tester A9: the kernels' mpi4py under a plugin it cannot use had ended "exited 16"
    check_kernel_launcher(launchers.local(choice.launcher, mpi=mpi, mpiexec=choice.mpiexec,
                                          args=choice.args),
                          f"--mpi {mpi}" if mpi_plugin is not None else
                          f'mpi = "{mpi}" in the --cluster file' if site_mpi
                          else "the default", mpiexec_from="mpiexec in the --cluster file")
    return supervise(ranks, argv, out, launcher=choice.launcher, mpi=mpi,
                     mpiexec=choice.mpiexec, args=choice.args)


def _refuse_rank_count(text: str, what: str) -> None:
    """Refuse launcher options ``text`` (from ``what``) that set the rank count, which
    ``--launch N`` sets, naming it (the other options the sweep owns are refused by
    :func:`~hpcds1mpi.launch.launchers.parse_args`, naming theirs)."""
    from hpcds1mpi.errors import ConfigError
    from hpcds1mpi.launch.owned_options import owned_option

    try:
        words = shlex.split(text or "")
    except ValueError:
        return  # its quoting is refused by parse_args, in its own words
    found = owned_option(words)
    if found and found[1] == "the rank count":
        raise ConfigError(f"{what} {found[0]!r} sets the rank count, which sweep --launch N "
                          "sets (N ranks, each configuration's from --nodes x "
                          f"--ranks-per-node); remove it from {what}; nothing was launched")
