"""Batch scripts for Slurm and PBS Pro: the assembly of the three roles (as ReFrame keeps them).

* **scheduler directives** — :mod:`hpcds1mpi.launch.directives`: the ``#SBATCH`` / ``#PBS``
  lines of a job (what the golden tests hold);
* **launcher tokens** — :mod:`hpcds1mpi.launch.launchers`: ``srun --nodes=N --ntasks=R
  --ntasks-per-node=r -c T --cpu-bind=cores ...`` or ``mpiexec -n R``;
* **assembly** — :func:`render_template`, the one renderer: the Jinja2 templates in
  ``jobscripts/`` join directives, site preamble, module loads, environment and the launch
  line. :func:`render` writes a job's script, :func:`render_tune` the job ``tune --submit``
  submits, :func:`hpcds1mpi.launch.calibration_script.render_calibration` a calibration sweep.

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
from typing import TYPE_CHECKING, Sequence

from hpcds1mpi.config import Configuration
from hpcds1mpi.errors import ConfigError
from hpcds1mpi.launch.directives import NAME, BatchJob, check_value, directives, memory_note
from hpcds1mpi.launch.program import CONTROL_RE, no_control, program_tokens, quote_tokens
from hpcds1mpi.launch.script_launcher import check_launch, retrain_hint
from hpcds1mpi.launch.script_seal import (  # noqa: F401  (re-exported: callers import them here)
    MARK, SEAL, check_replace_script, script_state, seal, written_by_us)

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
    from hpcds1mpi.launch.script_launcher_mpi import check_script
    from hpcds1mpi.launch.program_there import check_program_there, words_where_run
    from hpcds1mpi.launch.self_launching import check_script_program
    # bash's $'...' where the folder's name holds a newline (s39 tester D2)
    from hpcds1mpi.runtime.message_paths import shell_word

    memory = memory_note(job, scheduler)
    notes = [*notes, memory] if memory else notes
    launcher = job.launcher(scheduler)
    program = program_tokens(job.program, job.placeholder_values())
    check_program_there(program, folder, setup)  # s39 tester D3
    check_script_program(program, folder, job.config.ranks_per_node)  # s46 tester H8
    unfound = check_bare_program(program, launcher, job.cluster, scheduler, folder, setup)
    # its file read where the job runs it, not in this shell's folder (s46 tester J2)
    checked, unread = words_where_run(program, folder)
    said = check_launch(checked, launcher, job.cluster, hint, scheduler)  # refused, or said
    notes = [*notes, *(note for note in (unfound, said, unread) if note)]
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
