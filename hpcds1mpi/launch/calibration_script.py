"""The calibration sweep's batch script: a few configurations measured, one job step each,
into telemetry (:func:`render_calibration`), assembled by
:func:`~hpcds1mpi.launch.scripts.render_template` as every other script of ours.
:mod:`hpcds1mpi.decide.calibration_sweep` chooses the steps.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

from hpcds1mpi.config import Configuration, check_fits
from hpcds1mpi.errors import ConfigError
from hpcds1mpi.launch.directives import (
    NAME, BatchJob, check_output_path, check_value, job_name_with)
from hpcds1mpi.launch.launchers import for_script
from hpcds1mpi.launch.program import program_precisions, program_tokens, quote_tokens
from hpcds1mpi.launch.script_launcher import (
    LAUNCHED_WITH, check_launch, measured_cluster, retrain_hint)
from hpcds1mpi.launch.script_seal import seal
from hpcds1mpi.launch.scripts import comment, render_template
from hpcds1mpi.launch.sweep_step import SweepStep

if TYPE_CHECKING:  # pragma: no cover
    from hpcds1mpi.cluster import Cluster, Partition


@dataclass
class CalibrationStep:
    """One configuration of a calibration sweep and why it was chosen."""

    config: Configuration
    reason: str = ""


def calibration_step_tokens(step: Configuration, workload: str, size: int, telemetry: str,
                            program: str | Sequence[str] | None = None,
                            cluster: "Cluster | None" = None,
                            cores: int | None = None, measure: dict | None = None,
                            timeout: float | None = None) -> list[str]:
    """The command measuring one configuration in a calibration job (one step); ``cores``
    per node place an Open MPI ``mpirun``'s threads (:func:`for_script`); ``measure``: a
    program's reading options, as its earlier sweep used them (:class:`SweepStep`);
    ``timeout``: the step sweep's ``--timeout`` (None: the sweep's default).

    A built-in kernel runs as ``srun ... hpcds1mpi sweep --kernel ...`` (in-process on the
    step's ranks); a user's program as ``hpcds1mpi sweep --command ...``, which launches the
    program with srun itself (:class:`~hpcds1mpi.launch.sweep_step.SweepStep`).
    """
    check_value(workload, "workload", NAME)
    check_output_path(telemetry)
    return SweepStep(workload, size, program=program, measure=measure, timeout=timeout).command(
        step, for_script("slurm", cluster, cores), telemetry)


def _allocation(steps: Sequence[CalibrationStep], partition: "Partition") -> Configuration:
    # The allocation covers every step: the most nodes, the most ranks per node, and enough
    # CPUs per task that the widest step (ranks x threads per node) fits; whole nodes.
    most_ranks = max(s.config.ranks_per_node for s in steps)
    most_cores = max(s.config.ranks_per_node * s.config.threads for s in steps)
    return Configuration(
        nodes=max(s.config.nodes for s in steps),
        ranks_per_node=most_ranks,
        threads=max(1, min(-(-most_cores // most_ranks), partition.cores_per_node // most_ranks)),
    )


#: What a calibration sweep's job name adds to the job's own (``decide/recommendation.py``).
CALIBRATION_SUFFIX = "-calib"


def _calibration_job_name(job_name: str) -> str:
    # The job's own name is checked as given; "-calib" then fits whatever its length.
    if job_name.endswith(CALIBRATION_SUFFIX) and len(job_name) > len(CALIBRATION_SUFFIX):
        return job_name_with(job_name[:-len(CALIBRATION_SUFFIX)], CALIBRATION_SUFFIX)
    return job_name


def _program_steps(steps: Sequence[CalibrationStep], program) -> list[CalibrationStep]:
    """``steps`` as a program is measured: a command without ``{precision}`` runs the same
    computation whatever the label, so it is measured at fp64 alone, as ``sweep --command``
    and ``tune --program`` measure it (steps that then coincide are measured once)."""
    from dataclasses import replace

    allowed = program_precisions(SweepStep("program", 1, program=program).command_line())
    if allowed is None:
        return list(steps)
    kept, seen = [], set()
    for step in steps:
        config, reason = step.config, step.reason
        if config.precision not in allowed:
            config = replace(config, precision=allowed[0])
            reason = (f"{reason}; " if reason else "") + \
                f"measured at {allowed[0]}: the command takes no {{precision}}"
        if config.label() not in seen:
            seen.add(config.label())
            kept.append(replace(step, config=config, reason=reason))  # its runtime kept
    return kept


def check_calibration_workload(workload: str, program) -> None:
    """Refuse (ConfigError), in one line, a calibration sweep that could measure nothing: of no
    ``program``, and a workload that is no built-in kernel, which ``sweep --kernel`` refuses,
    or a kernel's option deck, whose options it cannot give."""
    from hpcds1mpi.kernels import declaring, is_kernel

    if program is None and (kernel := declaring(workload)) and kernel != workload:
        raise ConfigError(f"no calibration sweep for {workload!r}: it is kernel {kernel} measured "
                          "with kernel options (a plan's [[kernel]] extra), which sweep --kernel "
                          "cannot give (s41 tester D1); measure the steps with hpcds1mpi sweep "
                          f"--plan FILE whose [[kernel]] has name = \"{kernel}\" and those "
                          "options in extra, then hpcds1mpi learn")
    if program is None and not is_kernel(workload):
        raise ConfigError(
            f"no calibration sweep for {workload!r}: it is not a built-in kernel (hpcds1mpi "
            "kernels), so sweep --kernel cannot measure it; give your program's command with "
            "--program \"./app --n {size}\" to get a sweep of it (as hpcds1mpi sweep --command "
            "measures programs), or measure it yourself with sweep --command, then hpcds1mpi "
            "learn")


def render_calibration(steps: Sequence[CalibrationStep], partition: "Partition", workload: str,
                       size: int, *, cluster: "Cluster | None" = None,
                       program: str | Sequence[str] | None = None,
                       telemetry: str = "calibration.h5", job_name: str = "hpcds1mpi-calib",
                       time_limit: int = 3600, output: str | None = None,
                       reason: str = "", measure: dict | None = None,
                       notes: Sequence[str] = (), default_queue: bool = False,
                       new_machine: bool | None = None, folders=None) -> str:
    """A Slurm script that measures a few configurations, one job step each, into telemetry.

    The allocation is sized for the largest step; each step asks srun for exactly its own
    nodes, ranks and threads, with the program rule's environment. A failing step does not end
    the sweep (a failure the sweep records is itself a measurement), but a job in which every
    step failed measured nothing, and exits 1.

    A built-in kernel is measured with ``sweep --kernel``; anything else only as a program
    (``program``: ``sweep --command``), at fp64 alone when its command takes no
    ``{precision}``, and read as ``measure`` says (its earlier sweep's ``--time-regex``,
    ``--workdir``, ...: the steps must measure what the model learned), and launched as its
    sweep launched it where no cluster file names a launcher (``measure``'s
    :data:`~hpcds1mpi.launch.script_launcher.LAUNCHED_WITH`, said in a note). A ``job_name`` ending
    in ``-calib`` is shortened before the suffix where the whole would pass the length limit.
    ``notes``, ``default_queue``: as :func:`render_template` takes them. ``new_machine``:
    whether the runs are of a machine the model was not trained on (its comment then names
    ``train``, else ``learn``; None: both, as not known). ``folders``: steps -> the template's
    values for the steps' ``--workdir`` folders, which the script lists and checks before its
    first step (unless ``measure`` has a ``setup``: each step's sweep then creates them)
    (:func:`hpcds1mpi.decide.calibration_sweep.step_folders`, given by the caller: it reads the
    measure stage's folder rule).

    Raises:
        ConfigError: no steps, a bad size, a workload that is neither a kernel nor given as a
            program, or a value not allowed in a batch script.
    """
    if not steps:
        raise ConfigError("a calibration sweep needs at least one configuration")
    if not isinstance(size, int) or size <= 0:
        raise ConfigError(f"size must be a positive integer, got {size!r}")
    check_calibration_workload(workload, program)
    measure = dict(measure or {})
    launch = measure.pop(LAUNCHED_WITH, None)
    hint = retrain_hint(bool(launch), cluster) if launch is not None else ""
    # The steps launch the program as its sweep did, as a pick's script does (s29 V2-5).
    cluster, launch_note = measured_cluster(cluster, "slurm", launch)
    notes = [*notes, f"each step {launch_note}"] if launch_note else notes
    if program is not None:
        steps = _program_steps(steps, program)
    gpu_ranks = [s.config.ranks_per_node for s in steps if s.config.device == "gpu"]
    job = BatchJob(config=_allocation(steps, partition), partition=partition, program=["true"],
                   cluster=cluster, job_name=_calibration_job_name(job_name),
                   time_limit_s=time_limit, output=output,
                   exclusive=True, gpus=max(gpu_ranks) if gpu_ranks else 0)
    if program is not None:  # each step's sweep would refuse the launcher in the job
        from hpcds1mpi.launch import program as program_rule

        check_launch(program_tokens(program, program_rule.placeholder_values(
            steps[0].config, size)), job.launcher("slurm"), cluster, hint)
    from hpcds1mpi.launch.own_install import own_executable, path_export

    rendered_steps = []
    for step in steps:
        check_fits(step.config, partition)
        tokens = calibration_step_tokens(step.config, workload, size, telemetry, program,
                                         cluster, partition.cores_per_node, measure,
                                         timeout=getattr(step, "timeout_s", None))
        env = job.launcher("slurm").environment(step.config)
        rendered_steps.append({
            "label": step.config.label(),
            "reason": comment(step.reason),
            "environment": " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items()),
            "launch": quote_tokens(tokens),
        })
    return seal(render_template("calibration", job, "slurm", default_queue=default_queue,
                                notes=notes, time_guessed=True, reason=comment(reason),
                                # every step runs hpcds1mpi: this one, whatever the job's PATH
                                path=path_export(own_executable()[1], job),
                                workload=workload, size=int(size),
                                telemetry=shlex.quote(telemetry), steps=rendered_steps,
                                **(folders(steps) if folders is not None else {}),
                                # its sweep makes the folders its --setup fills (s30 N7a)
                                step_setup=bool(measure.get("setup")),
                                # undefined in the template when not known: both commands
                                **({} if new_machine is None else {"new_machine": new_machine})))
