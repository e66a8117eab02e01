"""The note on a job script's launch line whose program's MPI nothing tells: not its file (a
shell script that chooses its binary in an ``if``, as Debian's ``HYPHYMPI`` does), nor the
model's sweep (:mod:`~hpcds1mpi.launch.recorded_mpi`: an ``srun`` sweep, pooled sweeps of
several launchers, a model trained before launchers were recorded). ``advise`` says that the
line's launcher is not checked, and how the sweep ran it, unless the line launches it so
(s42 tester E4: it said nothing). Files are read, nothing is run.
"""

from __future__ import annotations

import os
import shutil
from typing import TYPE_CHECKING

from hpcds1mpi.launch.recorded_mpi import RecordedMPI

if TYPE_CHECKING:  # pragma: no cover
    from hpcds1mpi.launch.job_script import JobScript, Launch


def same_launch(recorded: RecordedMPI, launcher: str, plugin: str | None) -> bool:
    """Whether a script's launcher (its file, or ``srun`` with ``plugin``) is the recorded one."""
    if recorded.launcher.startswith("srun"):
        return launcher == "srun" and recorded.launcher == (
            f"srun --mpi={plugin}" if plugin else "srun")
    found = shutil.which(recorded.launcher) or recorded.launcher
    return launcher != "srun" and os.path.realpath(launcher) == os.path.realpath(found)


def unchecked_note(line: int, name: str, recorded: RecordedMPI | None) -> str:
    """The note for a launch line whose program's MPI neither its file nor the model tells."""
    said = (f"the model records only that {recorded.evidence}" if recorded is not None
            else "the model records no one launcher its sweep ran it with")
    fix = (f": launch it as measured ({recorded.launcher})" if recorded is not None
           and recorded.launcher else ": check that a job of it runs as one (its rank count)")
    return (f"line {line}: {name}'s MPI cannot be read from its file and {said}, so this "
            f"line's launcher is not checked{fix}")


def unread_launch(script: "JobScript", launch: "Launch", cwd: str, env: dict | None,
                  recorded: RecordedMPI | None) -> str | None:
    """The note on ``launch`` (an ``mpirun``/``mpiexec`` or ``srun`` line) whose program's MPI
    its file does not tell and the model's sweep does not either (``recorded`` without a
    family, or None: :func:`unchecked_note`); None where one
    tells, the program is not found here, or the line launches it as its sweep did."""
    from hpcds1mpi.launch.program_file_mpi import file_mpi
    from hpcds1mpi.launch.script_folder import launch_folder
    from hpcds1mpi.launch.script_mpi_check import _srun_plugin, named_file, ranks_program

    if launch.kind not in ("mpi", "slurm") or (recorded is not None and recorded.family):
        return None
    env = os.environ if env is None else env
    program = ranks_program(script, launch, cwd, env)[1]
    if program is None:
        return None
    read = file_mpi(program, env)
    if read.family is not None or read.without_mpi:
        return None
    if launch.kind == "slurm":
        plugin_of = _srun_plugin(launch, env)
        launcher, plugin = "srun", plugin_of[0] if plugin_of else None
    else:
        launcher = named_file(script.text[launch.span[0]:launch.span[1]].strip("\"'"),
                          launch_folder(script, launch, cwd), env.get("PATH")) or ""
        plugin = None
    if recorded is not None and launcher and same_launch(recorded, launcher, plugin):
        return None
    return unchecked_note(launch.line, os.path.basename(program), recorded)
