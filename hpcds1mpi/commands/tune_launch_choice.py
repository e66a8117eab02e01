"""How ``tune``'s trials are launched, from its command line, checked as the sweep checks
them before any trial: a ``--program``'s launch choice and readings, the pre-flight of its
launcher, and ``--mpi`` (srun's plugin; s42: tune had none, so only a cluster file's ``mpi``
set it). The command line wins over the cluster file, which wins over the plugin a
``--model``'s sweep recorded (:mod:`hpcds1mpi.decide.tune_launch`).
"""

from __future__ import annotations

import os


def check_mpi_option(mpi: str | None) -> None:
    """Refuse a ``--mpi`` srun could not be given (characters beyond letters, digits, ``_``
    and ``-``), before anything runs; whether srun has it is checked once the launcher is
    known (:func:`check_kernel_plugin`, or a program's pre-flight).

    Raises:
        ConfigError: a bad value (exit 2).
    """
    if mpi is not None:
        from hpcds1mpi.errors import ConfigError
        from hpcds1mpi.launch.launchers import Srun

        if not mpi:
            raise ConfigError("--mpi is empty; give srun's plugin: pmix, pmi2 or none "
                              "(see srun --mpi=list)")
        Srun(mpi)


def refuse_mpi_under_chosen_launcher(mpi: str | None, launcher: str | None, choice, kind: str
                                     ) -> None:
    """Refuse ``--mpi`` where the trials' launcher ``kind`` (``--launcher``, else ``choice``'s,
    else ``kind``: what the trials run under, "srun" in a submitted job) is not srun, naming
    what starts the ranks (:func:`~hpcds1mpi.launch.preflight.refuse_unused_plugin`); the same
    rule before ``--submit`` as in the job (s44 review R3: the job had failed on it).

    Raises:
        ConfigError: ``--mpi`` given where srun does not start the trials' ranks (exit 2).
    """
    from hpcds1mpi.launch.preflight import refuse_unused_plugin

    kind = (choice.launcher if choice is not None else None) or launcher or kind
    if kind != "srun":
        refuse_unused_plugin(mpi, "--launcher mpiexec" if launcher == "mpiexec"
                             else choice.started_by(launcher) if choice is not None else kind)


def check_kernel_plugin(mpi: str) -> None:
    """A kernel's trials under ``srun --mpi=MPI`` (``--mpi`` given): refused, as ``sweep
    --launch --mpi`` is, where srun has no such plugin or it cannot start this Python's
    mpi4py as one job.

    Raises:
        ConfigError: no such plugin in ``srun --mpi=list``, or one the kernels' MPI cannot
            use (exit 2).
    """
    import shutil

    from hpcds1mpi.launch import launchers
    from hpcds1mpi.launch.kernel_launcher_check import check_kernel_launcher
    from hpcds1mpi.launch.preflight import check_srun

    launch = launchers.local("srun", mpi=mpi)
    check_srun(shutil.which("srun") or "srun", launch, dict(os.environ), one_rank=False)
    check_kernel_launcher(launch, f"--mpi {mpi}", command="tune")


def program_launch(program: str | None, *, launcher, mpi, cluster_file, partition,
                   given: dict):
    """The launch choice and readings of ``--program`` (None, None for a kernel), checked as
    the sweep checks them (:class:`~hpcds1mpi.launch.preflight.LaunchChoice`,
    :class:`~hpcds1mpi.measure.readings.Readings`). ``mpi``: ``--mpi`` (None: not given),
    over the cluster file's ``mpi``.

    Raises:
        ConfigError: one of :data:`PROGRAM_OPTIONS` with ``--kernel``; a bad ``--mpiexec``,
            ``--launcher-args``, regex, ``--output-file``, ``--workdir`` or ``--setup``
            (exit 2).
    """
    from hpcds1mpi.errors import ConfigError

    if program is None:
        wrong = [name for name, value in given.items() if value is not None]
        if wrong:
            raise ConfigError(f"{', '.join(wrong)} applies to --program only (a kernel runs "
                              f"as hpcds1mpi sweep under the launcher): drop "
                              f"{'them' if len(wrong) > 1 else 'it'} or give --program")
        return None, None
    from hpcds1mpi.launch.preflight import LaunchChoice

    readings = program_readings(given)
    if given["--workdir"] is not None:
        from hpcds1mpi.launch.program import no_control

        no_control(given["--workdir"], "--workdir")
    from hpcds1mpi.measure.setup_command import check_setup

    check_setup(given["--setup"])
    from hpcds1mpi.launch.script_placeholders import split_command

    choice = LaunchChoice.of(launcher=launcher, mpi=mpi, mpiexec=given["--mpiexec"],
                             launcher_args=given["--launcher-args"], cluster_file=cluster_file,
                             partition=partition, program=split_command(program) or None)
    return choice, readings


def program_readings(given: dict):
    """The :class:`~hpcds1mpi.measure.readings.Readings` of tune's ``given`` reading options.

    Raises:
        ConfigError: a bad regex or ``--output-file`` (exit 2).
    """
    from hpcds1mpi.measure.readings import Readings

    return Readings.of(time_regex=given["--time-regex"], fom_regex=given["--fom-regex"],
                       ranks_regex=given["--ranks-regex"], fail_regex=given["--fail-regex"],
                       output_file=given["--output-file"])


def preflight_trials(choice, program: str, size: int, start, space, part, workdir, log,
                     evaluate):
    """The sweep's pre-flight before any trial: the program can start, ``space``'s nodes are
    reached, its MPI matches the launcher, and (more than one rank anywhere in ``space``) the
    2-rank probe is one job;
    returns ``evaluate`` saying first what the launcher adds (the trials' sweeps are quiet).

    Raises:
        ConfigError: the program cannot be started, or ``space`` has more nodes than the
            launcher reaches (exit 2).
        LaunchError: the launcher cannot start it as one job (exit 1).
    """
    from hpcds1mpi.decide.tune_program import trial_launcher
    from hpcds1mpi.decide.tune_space import check_reachable
    from hpcds1mpi.launch import preflight
    from hpcds1mpi.measure import external
    from hpcds1mpi.measure.external_plan import format_command
    from hpcds1mpi.measure.plan import RunSpec

    spec = RunSpec("program", size, start)
    launch = trial_launcher(choice, part)
    env = {**os.environ, **launch.environment(start)}
    tokens = format_command(program, spec)
    external.check_program(tokens, env, external.workdir_of(workdir, spec), option="--program")
    check_reachable(space, launch, env)  # up front, as the sweep's (s35 fixer L3)
    most = max(c.ranks for c in space.configs)
    for line in preflight.check(launch, choice, tokens, env, most):
        log(line)
    return preflight.say_notes(launch, log, then=evaluate)


__all__ = ["check_kernel_plugin", "check_mpi_option", "preflight_trials", "program_launch"]
