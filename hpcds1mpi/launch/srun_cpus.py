"""The CPUs an ``srun`` step gives each task, which depends on the Slurm release.

Slurm 22.05's srun stopped reading ``SLURM_CPUS_PER_TASK`` (its release notes: "srun will no
longer read in SLURM_CPUS_PER_TASK ... specify --cpus-per-task on your srun calls, or set the
new SRUN_CPUS_PER_TASK"), so a step without ``-c`` gets one CPU per task whatever the job's
``--cpus-per-task``; from 23.11 sbatch and salloc export ``SRUN_CPUS_PER_TASK`` and srun takes
the job's value again (:data:`FIRST_NOT_INHERITING`, :data:`INHERITING_AGAIN`). The release is
the local ``srun --version``'s, where the job is submitted (:func:`slurm_release`).

One CPU per task matters where the step binds each task to its CPUs (``--cpu-bind=cores``,
``SLURM_CPU_BIND``, ``--hint=nomultithread``, ``--exact``): the task's threads then share one
core (test Slurm 22.05.8, job ``-c 2``: ``srun --cpu-bind=cores`` ran on ``Cpus_allowed_list 0``,
``srun -c 2 --cpu-bind=cores`` on ``0-1``; an unbound ``srun`` on ``0-1``). ``advise`` gives
such a layout no prediction (:func:`shared_core_problem`), and says why ``--rewrite`` adds
``srun -c`` (:func:`adds_srun_c`, :func:`srun_c_note`).
"""

from __future__ import annotations

import re
import shutil
from typing import TYPE_CHECKING, NamedTuple

from hpcds1mpi.launch.script_options import to_int

if TYPE_CHECKING:  # pragma: no cover
    from hpcds1mpi.launch.job_script import JobScript, Launch

#: The first release whose srun does not take the job's --cpus-per-task.
FIRST_NOT_INHERITING = (22, 5)
#: The first release whose sbatch exports SRUN_CPUS_PER_TASK, so srun takes it again.
INHERITING_AGAIN = (23, 11)
#: The releases in between, as the lines say them.
RANGE_SAID = "Slurm 22.05 to 23.02"
#: ``--cpu-bind`` / ``SLURM_CPU_BIND`` types that bind a task to its own CPUs.
_BINDS_OWN = ("cores", "threads", "rank", "map_cpu", "mask_cpu", "rank_ldom")
#: ``--hint`` values that bind tasks to cores.
_HINTS = ("nomultithread", "compute_bound", "memory_bound")


class Release(NamedTuple):
    """A Slurm release: (major, minor) and the version as ``srun --version`` wrote it."""

    number: tuple[int, int]
    text: str


def slurm_release() -> Release | None:
    """The release of the ``srun`` on PATH (None: no srun, or no version in its answer)."""
    from hpcds1mpi.launch.launcher_discovery import version_text

    path = shutil.which("srun")
    m = re.search(r"(\d+)\.(\d+)(?:\.\d+)?", version_text(path) or "") if path else None
    return Release((int(m.group(1)), int(m.group(2))), m.group(0)) if m else None


def inherits(release: Release | None) -> bool | None:
    """Whether ``release``'s srun takes the job's --cpus-per-task (None: release unknown)."""
    if release is None:
        return None
    return not FIRST_NOT_INHERITING <= release.number < INHERITING_AGAIN


class StepCpus(NamedTuple):
    """What an srun step gives each task: ``cpus`` (None: it depends on the unknown release),
    ``job``: the job's --cpus-per-task, ``release``: the local Slurm, where it was asked."""

    cpus: int | None
    job: int
    release: Release | None = None


def _srun_cpus_setting(script: "JobScript", launch: "Launch") -> tuple[bool, int | None]:
    """(whether SRUN_CPUS_PER_TASK reaches the step, its value)."""
    if "SRUN_CPUS_PER_TASK" in launch.env:
        return True, to_int(launch.env["SRUN_CPUS_PER_TASK"][0])
    before = [s for s in script.settings_before(launch)
              if s.name == "SRUN_CPUS_PER_TASK"]
    return (True, to_int(before[-1].resolved)) if before else (False, None)


def step_cpus(script: "JobScript", launch: "Launch") -> StepCpus:
    """The CPUs ``launch`` (an srun step) gives each task: its ``-c``, else
    SRUN_CPUS_PER_TASK, else the job's --cpus-per-task where the local release takes it, else
    one; the release is asked only where the answer depends on it."""
    job = (script.base[0]["cpus_per_task"] if script.base else script.cpus_per_task) or 1
    if "cpus-per-task" in launch.options:
        return StepCpus(to_int(launch.value("cpus-per-task", launch.scope)), job)
    given, value = _srun_cpus_setting(script, launch)
    if given:
        return StepCpus(value, job)
    if job == 1:
        return StepCpus(1, job)
    release = slurm_release()
    taken = inherits(release)
    return StepCpus(None if taken is None else job if taken else 1, job, release)


def binding(script: "JobScript", launch: "Launch") -> str | None:
    """What binds each task of ``launch`` to its own CPUs, as written (``--cpu-bind=cores``,
    ``SLURM_CPU_BIND=cores``, ``--hint=nomultithread``, ``--exact``); None: nothing does (the
    tasks run on all the job's CPUs of their node, unless the site binds by default)."""
    o = launch.options
    for name in ("exact", "exclusive"):  # a step's --exclusive is --exact
        if name in o:
            return f"--{name}"
    said = [(f"--cpu-bind={o['cpu-bind'].value}", o["cpu-bind"].value)] if "cpu-bind" in o \
        else []
    if not said:
        env = launch.env.get("SLURM_CPU_BIND")
        before = [s for s in script.settings_before(launch)
                  if s.name == "SLURM_CPU_BIND"]
        value = env[0] if env else before[-1].resolved if before else None
        said = [(f"SLURM_CPU_BIND={value}", value)] if value else []
    for written, value in said:
        kinds = re.split(r"[,:=]", (value or "").lower())
        return written if any(k in _BINDS_OWN for k in kinds) else None
    hint = o.get("hint") or script.directives.get("hint")
    if hint is not None and (hint.value or "").lower() in _HINTS:
        return f"--hint={hint.value}"
    return None


def shared_core_problem(script: "JobScript", launch: "Launch | None", threads: int) -> str:
    """Why the asked layout gets no prediction where ``launch`` binds each task to fewer CPUs
    than its ``threads`` (they share them), "" otherwise (or where it depends on a release
    not known here: :func:`unknown_release_note`)."""
    if launch is None or launch.kind != "slurm" or threads <= 1:
        return ""
    bound = binding(script, launch)
    got = step_cpus(script, launch)
    if bound is None or got.cpus is None or got.cpus >= threads:
        return ""
    why = (f"srun {got.release.text} here, as every srun of {RANGE_SAID}, takes no "
           f"--cpus-per-task={got.job} from the job" if got.release is not None
           and got.job > got.cpus else f"the step gives each task {got.cpus}")
    return (f"line {launch.line}: {bound} binds each task to its {_plural(got.cpus)}, which "
            f"its {threads} threads share ({why}); no prediction: give srun -c {threads} (or "
            "export SRUN_CPUS_PER_TASK=$SLURM_CPUS_PER_TASK before it)")


def _plural(cpus: int) -> str:
    return f"{cpus} CPU{'s' if cpus != 1 else ''}"


def unknown_release_note(script: "JobScript", launch: "Launch | None", threads: int) -> str:
    """The note where the asked layout holds only on some releases, and the local one is not
    known (no srun here): "" otherwise."""
    if launch is None or launch.kind != "slurm" or threads <= 1:
        return ""
    got = step_cpus(script, launch)
    bound = binding(script, launch)
    if got.cpus is not None or bound is None:
        return ""
    return (f"line {launch.line}: on {RANGE_SAID} srun does not take the job's "
            f"--cpus-per-task={got.job}, and {bound} then binds each task to 1 CPU, which its "
            f"{threads} threads share (no srun here says which Slurm runs the job); read as "
            f"{threads} threads on cores of their own: give srun -c {threads} to be sure")


def adds_srun_c(script: "JobScript", threads: int) -> bool:
    """Whether a rewrite to ``threads`` per rank adds ``-c`` to the script's srun: on every
    release where the step says no CPUs per task itself, so the script runs the same on any."""
    launch = script.launch
    return (launch is not None and launch.kind == "slurm" and threads > 1
            and "cpus-per-task" not in launch.options and not _srun_cpus_setting(script,
                                                                                launch)[0])


def srun_c_note(script: "JobScript", threads: int) -> str | None:
    """Why the rewrite adds ``-c`` to the srun line (None where it adds none)."""
    if not adds_srun_c(script, threads):
        return None
    release = slurm_release()
    here = "" if release is None else (
        f"; {release.text} here is one of them" if not inherits(release) else
        f"; {release.text} here takes it, so the line keeps the script right on the others")
    return (f"line {script.launch.line}: --rewrite adds -c {threads} to srun: srun of "
            f"{RANGE_SAID} takes no --cpus-per-task from the job, and gives each task 1 CPU "
            f"without it (its {threads} threads would share one core where tasks are bound)"
            f"{here}")
