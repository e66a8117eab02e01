"""Batch scripts for Slurm and PBS Pro: the assembly of the three roles (as ReFrame keeps them).

* **scheduler directives** — :mod:`hpcds1mpi.launch.directives`: the ``#SBATCH`` / ``#PBS``
  lines of a job (what the golden tests hold);
* **launcher tokens** — :mod:`hpcds1mpi.launch.launchers`: ``srun --nodes=N --ntasks=R
  --ntasks-per-node=r -c T --cpu-bind=cores ...`` or ``mpiexec -n R``;
* **assembly** — :func:`render_template`, the one renderer: the Jinja2 templates in
  ``jobscripts/`` join directives, site preamble, module loads, environment and the launch
  line. :func:`render` writes a job's script, :func:`render_calibration` a calibration sweep,
  :func:`render_tune` the job ``tune --submit`` submits.

The program follows :mod:`hpcds1mpi.launch.program`: placeholders filled by replacement, the
command line split with :mod:`shlex` and every token re-quoted with :func:`shlex.quote` (so
``$()``, backticks, ``;`` and quotes reach the program as literal characters and never run in
the job's shell), and the environment of the measured runs.

Every script rendered here carries, after its ``# Written by hpcds1mpi`` line, a checksum of
its other lines (:func:`seal`): a rerun of ``recommend -o`` or ``tune --submit`` replaces a
script of ours only while it is unchanged (:func:`script_state`), never one edited since.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

from hpcds1mpi.config import Configuration, check_fits
from hpcds1mpi.errors import ConfigError
from hpcds1mpi.launch.directives import (
    NAME, BatchJob, check_output_path, check_value, directives, job_name_with, memory_note)
from hpcds1mpi.launch.launchers import for_script
from hpcds1mpi.launch.program import (
    CONTROL_RE, no_control, program_precisions, program_tokens, quote_tokens)
from hpcds1mpi.launch.script_launcher import (
    LAUNCHED_WITH, check_launch, measured_cluster, retrain_hint)
from hpcds1mpi.launch.script_seal import (  # noqa: F401  (re-exported: callers import them here)
    MARK, SEAL, check_replace_script, script_state, seal, written_by_us)
from hpcds1mpi.launch.sweep_step import SweepStep

if TYPE_CHECKING:  # pragma: no cover
    from hpcds1mpi.cluster import Cluster, Partition

TEMPLATES = {"slurm": "slurm.sbatch.j2", "pbs": "pbs.pbs.j2",
             "calibration": "calibration.sbatch.j2", "tune": "tune.sbatch.j2",
             "campaign": "campaign.j2", "campaign-merge": "campaign-merge.j2"}


def _templates():
    import jinja2
    from importlib import resources

    from hpcds1mpi import config

    folder = resources.files("hpcds1mpi.jobscripts")
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(folder)),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,  # shell, not HTML: every value is validated/quoted in Python first
    )
    # train's minimum, as train applies it: a template states it, never a copy (s39 review)
    env.globals["min_ok_runs"] = config.MIN_OK_RUNS
    return env


#: The directive naming the queue, per scheduler (left out for the scheduler's default).
_QUEUE_DIRECTIVE = {"slurm": "#SBATCH --partition=", "pbs": "#PBS -q "}


def render_template(kind: str, job: BatchJob, scheduler: str = "slurm", *,
                    default_queue: bool = False, notes: Sequence[str] = (),
                    time_guessed: bool = False, **values) -> str:
    """The one renderer: template ``kind`` (a key of :data:`TEMPLATES`) with ``job``'s
    directives, preamble and modules and ``values``.

    ``default_queue``: no partition (queue) directive, so the scheduler's default takes the
    job (a place that names no real partition: this machine's). ``notes``: comment lines
    put under the header line. A Slurm script is kept within its partition's limits as Slurm
    states them (:func:`~hpcds1mpi.launch.partition_limits.keep_within`: ``time_guessed``, a time
    that is a budget, not an estimate, is cut to MaxTime) and carries the reservation of the
    allocation it is written in (:func:`allocation_reservation`)."""
    from hpcds1mpi import __version__

    lines = directives(job, scheduler)
    if default_queue:
        lines = [line for line in lines if not line.startswith(_QUEUE_DIRECTIVE[scheduler])]
    if scheduler == "slurm":  # s33 tester A3: scripts that pend forever
        from hpcds1mpi.launch.partition_limits import keep_within, limits_of

        queue = None if default_queue else job.queue()
        lines, cut = keep_within(lines, limits_of(queue), time_guessed=time_guessed,
                                 cpus_per_node=job.config.ranks_per_node * job.config.threads)
        reservation, said = allocation_reservation(queue, lines)
        lines, notes = lines + reservation, [*notes, *cut, *said]
    script = _templates().get_template(TEMPLATES[kind]).render(
        directives=lines, version=__version__, preamble=job.preamble(),
        modules=job.modules(), **values)
    return _with_comments(script, notes)


def allocation_reservation(queue: str | None, lines: Sequence[str]) -> tuple[list[str], list[str]]:
    """(``#SBATCH --reservation=R`` lines, notes) for a script written inside an allocation
    of reservation R (``SLURM_JOB_RESERVATION``) and sent to its partition or the default: its
    nodes are held for the reservation, so a script without it pends (ReqNodeNotAvail: s33
    tester A6). Nothing where the script names one already."""
    import os

    from hpcds1mpi.slurm_allocation import in_allocation

    name = os.environ.get("SLURM_JOB_RESERVATION", "").strip()
    if not name or any(line.startswith("#SBATCH --reservation") for line in lines) \
            or queue not in (None, os.environ.get("SLURM_JOB_PARTITION")) or not in_allocation():
        return [], []
    name = check_value(name, "reservation", NAME)
    return [f"#SBATCH --reservation={name}"], [
        f"--reservation={name}: the allocation this was written in holds that reservation"]


def _with_comments(script: str, notes: Sequence[str]) -> str:
    """``script`` with ``notes`` as ``# note: ...`` lines after its :data:`MARK` line."""
    if not notes:
        return script
    lines = script.splitlines(keepends=True)
    at = next((i for i, line in enumerate(lines) if line.startswith(MARK)), len(lines) - 1)
    added = [f"# note: {comment(note)}\n" for note in notes]
    return "".join(lines[:at + 1] + added + lines[at + 1:])


def comment(text: str) -> str:
    """``text`` made safe for a ``#`` comment line."""
    # Comments cannot break out of their line once control characters are gone.
    return CONTROL_RE.sub(" ", text)


def render(job: BatchJob, scheduler: str = "slurm", *, default_queue: bool = False,
           notes: Sequence[str] = (), folder: str | None = None, hint: str = "",
           setup: str | None = None, inputs: Sequence[str] = ()) -> str:
    """The whole batch script for ``job`` under ``scheduler`` (``slurm`` or ``pbs``);
    ``default_queue`` and ``notes`` as :func:`render_template` takes them, and a note on the
    memory the script asks for, or why it asks for none (:func:`memory_note`). ``folder``:
    where the program runs, relative to the submit folder (its sweep's ``--workdir``, filled:
    s29 tester A1; an absolute one is itself); the job checks it exists, as a calibration
    sweep does (with a ``setup``, which writes the input there, creates it, as the sweep did:
    s30 tester N7a), then enters it. ``hint``: added to a refusal of the launcher
    (:func:`~hpcds1mpi.launch.script_launcher.retrain_hint`). ``setup``: the sweep's
    ``--setup``, filled, run there through ``/bin/sh -c`` (as the sweep ran it) before the
    launch; the job stops if it fails. ``inputs``: the program's relative paths the job checks
    in ``folder`` before the launch (s37 tester G3)."""
    from hpcds1mpi.launch.bare_program import check_bare_program
    from hpcds1mpi.launch.mpi_family import check_script
    from hpcds1mpi.launch.program_there import check_program_there
    # bash's $'...' where the folder's name holds a newline (s39 tester D2)
    from hpcds1mpi.runtime.message_paths import shell_word

    memory = memory_note(job, scheduler)
    notes = [*notes, memory] if memory else notes
    launcher = job.launcher(scheduler)
    program = program_tokens(job.program, job.placeholder_values())
    check_program_there(program, folder, setup)  # s39 tester D3
    unfound = check_bare_program(program, launcher, job.cluster, scheduler, folder, setup)
    said = check_launch(program, launcher, job.cluster, hint, scheduler)  # refused, or said
    notes = [*notes, *(note for note in (unfound, said) if note)]
    tokens = launcher.tokens(job.config) + program
    # What the launcher adds on its own (Open MPI's thread binding) is said as a comment.
    launcher_notes = [f"# {comment(note)}" for note in launcher.notes(job.config)]
    path, where = _own_path(job, scheduler, program, launcher)
    environment = job.environment(scheduler)
    unset, unset_note = _site_binding_unset(environment, launcher)
    return seal(render_template(scheduler, job, scheduler, default_queue=default_queue,
                                notes=[*notes, *where, unset_note], summary=comment(job.summary),
                                path=path, environment=environment, unset=unset,
                                folder=shell_word(folder) if folder else "",
                                folder_where=where_missing(folder),
                                setup=shlex.quote(no_control(setup, "--setup"))
                                if setup else "",
                                inputs=[shlex.quote(no_control(i, "--program"))
                                        for i in inputs],
                                launch=quote_tokens(tokens),
                                launcher_lines=launcher_notes
                                + launcher.script_lines(job.config)))


def _site_binding_unset(environment, launcher) -> tuple[list[str], str]:
    """(the site binding variables the script unsets, its note): the measured runs had none
    of the submitting shell's (:mod:`~hpcds1mpi.runtime.site_binding`, s36 tester E2: a job
    submitted with OMP_PROC_BIND=close OMP_PLACES=cores ran both ranks on CPU 0)."""
    from hpcds1mpi.runtime.site_binding import script_unset

    exported = [name for name, _ in environment]
    unset = script_unset(exported)
    # the program rule exports its own OMP_PLACES where the launcher binds each rank's cores
    why = ("the measured runs ran without them" if "OMP_PLACES" in exported else
           f"the measured runs ran without them; {launcher.name} is not told to give each "
           "rank cores of its own, so they could pin every rank's threads to the same core")
    return unset, f"unsets the shell's {' '.join(unset)}: {why}"


def _own_path(job: BatchJob, scheduler: str, program: Sequence[str], launcher=None
              ) -> tuple[str, list[str]]:
    """(the folder the script puts first on PATH, quoted or "", notes on finding the program).

    The job does not get the PATH it was submitted with (:mod:`~hpcds1mpi.launch.own_install`):
    ``hpcds1mpi`` gets this installation's bin folder first, so the job finds it and its
    MPI's mpiexec; a launcher that runs another by bare name (Intel MPI's ``mpirun``) gets its
    own folder first, so that it runs the one beside it (s35 tester I4, review 1). A user's
    program is run as given; a bare name under PBS is said."""
    import os

    from hpcds1mpi.launch.given_launcher import bare_launcher
    from hpcds1mpi.launch.own_install import own_executable, path_export, runs_own_command

    if runs_own_command(program):
        return path_export(own_executable()[1], job), []
    command = getattr(launcher, "command", "") or ""
    if "/" in command and getattr(launcher, "name", "") != "srun" and \
            (bare := bare_launcher(command)) is not None:
        return path_export(os.path.dirname(bare[2]), job), []
    if scheduler == "pbs" and program and "/" not in program[0]:
        return "", [f"PBS does not give the job qsub's PATH (only as $PBS_O_PATH, unless "
                    f"qsub -V): write {program[0]}'s full path if the job's own PATH may not "
                    "find it"]
    return "", []


def where_missing(folder: str | None) -> str:
    """Where a script says a missing ``folder`` is missing: " in $PWD" (the submit folder),
    "" for an absolute one (s29 V1-2: it is itself, wherever the job is submitted from)."""
    import os.path

    return "" if folder and os.path.isabs(folder) else " in $PWD"


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
    first step (unless ``measure`` has a ``setup``: each step's sweep then creates them) (:func:`hpcds1mpi.decide.calibration_sweep.step_folders`, given by the caller:
    it reads the measure stage's folder rule).

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


def render_tune(args: Sequence[str], partition: "Partition", *, nodes: int, cores: int,
                time_limit_s: int, job_name: str, exe: str = "hpcds1mpi",
                bin_dir: str | None = None, cluster: "Cluster | None" = None,
                default_queue: bool = False, notes: Sequence[str] = ()) -> str:
    """The Slurm script ``tune --submit`` submits: ``hpcds1mpi tune ARGS`` run once in an
    allocation of ``nodes`` x ``cores`` tasks, launching each configuration itself with srun.

    Args:
        args: ``tune``'s arguments (without ``--submit``).
        partition: where it runs.
        nodes / cores: the allocation (nodes, tasks per node).
        time_limit_s: the job's time limit, s (at least 60).
        job_name: the scheduler's job name.
        exe: the ``hpcds1mpi`` to run.
        bin_dir: a folder put first on PATH (this Python's, so the job finds its MPI).
        cluster: site settings (account, QOS, modules, preamble); optional.
        default_queue / notes: as :func:`render_template` takes them (this machine's made-up
            partition name is left out: s34 tester U4).
    """
    job = BatchJob(config=Configuration(nodes, cores, 1), partition=partition,
                   program=[exe, "tune", *args], cluster=cluster, job_name=job_name,
                   time_limit_s=int(time_limit_s))
    job.validate()
    return seal(render_template("tune", job, "slurm", default_queue=default_queue, notes=notes,
                                path=shlex.quote(no_control(bin_dir, "folder")) if bin_dir
                                else "",
                                command=quote_tokens(program_tokens(job.program))))


def check_bash_syntax(script: str) -> None:
    """Run ``bash -n`` on a script; raise :class:`ConfigError` with bash's message if it fails."""
    import subprocess

    proc = subprocess.run(["bash", "-n"], input=script, capture_output=True, text=True,
                          timeout=30)
    if proc.returncode != 0:
        raise ConfigError(f"generated script fails bash -n: {proc.stderr.strip()}")
