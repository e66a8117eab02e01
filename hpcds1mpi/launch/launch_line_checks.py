"""Every check of a job script's launch lines, and the MPI family an ``mpirun`` line launches.

:func:`launch_checks` runs, on each launch line, :mod:`~hpcds1mpi.launch.script_mpi_check`'s
checks of the launcher against the program's MPI (each program and launcher said once), the
host lists and a rank's one-core binding; :func:`launch_family` reads which MPI an ``mpirun`` /
``mpiexec`` line starts, from its name or files, which the binding and host checks share.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from hpcds1mpi.launch.mpi_installation import LAUNCHER_FILE_NAMES, launcher_file_family
from hpcds1mpi.launch.mpi_names import MPICH, OPENMPI
from hpcds1mpi.launch.script_folder import launch_folder
from hpcds1mpi.launch.script_mpi_check import (first_env_line, mpi_mismatch, named_file,
                                               program_file_family, srun_check)

if TYPE_CHECKING:  # pragma: no cover
    from hpcds1mpi.launch.job_script import JobScript, Launch


def launch_family(script: "JobScript", launch: "Launch | None",
                  job_folder: str | None = None) -> str | None:
    """The MPI family (:data:`~hpcds1mpi.launch.mpi_names.OPENMPI` / ``MPICH``) of an
    ``mpirun`` / ``mpiexec`` line: from the launcher's name (``mpirun.openmpi``, ``orterun``);
    where the job's folder is given, from the launcher's file, else the program's (the files
    ``advise`` reads for its launcher warning, nothing run). None when nothing says."""
    if launch is None or launch.kind != "mpi":
        return None
    # the same lookup as the MPI warning's, so the warning and the binding agree
    from hpcds1mpi.launch.script_placeholders import program_at

    named = LAUNCHER_FILE_NAMES.get(os.path.basename(launch.launcher))
    if named is not None or job_folder is None:
        return named
    path_var = None if first_env_line(script.text) < launch.line else os.environ.get("PATH")
    folder = launch_folder(script, launch, job_folder)
    launcher = named_file(script.text[launch.span[0]:launch.span[1]].strip("\"'"), folder,
                      path_var)
    family = launcher_file_family(launcher) if launcher else None
    if family is None:
        words = [launch.program or "", *launch.args]
        program = named_file(words[program_at(words)], folder, path_var)
        family = program_file_family(program)[0] if program else None
    return family if family in (OPENMPI, MPICH) else None


def launch_checks(script: "JobScript", cwd: str, env: dict | None = None,
                  skip: frozenset = frozenset(), measured: tuple | None = None
                  ) -> tuple[list[str], list[str]]:
    """(warnings, notes) on the MPI of every launch line of ``script``: :func:`mpi_mismatch`
    and :func:`srun_check`, each (program, launcher) pair said once, at its first line; a host
    list of the script's own (:func:`~hpcds1mpi.launch.script_hosts.host_list_warning`) or
    spelled as its MPI refuses (:mod:`~hpcds1mpi.launch.host_spelling`) and a
    binding of one core for a rank's threads
    (:func:`~hpcds1mpi.launch.script_thread_binding.one_core_warning`) warned of, and Open
    MPI's mpirun starting more ranks than the job has tasks on a line other than the one read
    (:func:`~hpcds1mpi.launch.mpirun_slots.other_launch_slots`), and hydra's on any line,
    which runs them on the job's CPUs (:func:`~hpcds1mpi.launch.mpirun_slots.shared_cpus`).
    ``skip``:
    the lines whose program is not the measured one
    (:func:`~hpcds1mpi.launch.measured_program.other_program`), whose MPI is not checked: a
    launcher fitting the wrong interpreter's MPI would fail the same way (s32 tester U2). No
    launcher is run; the module-system lines before a launch are, as :func:`mpi_mismatch`
    says. ``measured``: (the measured program's line, the MPI its sweep ran it with or None:
    :mod:`~hpcds1mpi.launch.recorded_mpi`, which stands in where its file does not tell)."""
    from hpcds1mpi.launch.host_spelling import host_warnings
    from hpcds1mpi.launch.mpirun_slots import other_launch_slots, shared_cpus
    from hpcds1mpi.launch.script_thread_binding import one_core_warning

    seen: set = set()
    warnings, notes = [], []
    line, recorded = measured or (None, None)
    for launch in script.launches:
        ours = recorded if launch.line == line else None
        if launch.line in skip:
            pass
        elif found := (mpi_mismatch(script, launch, cwd, env, seen=seen, recorded=ours)
                     or srun_check(script, launch, cwd, env, seen=seen, recorded=ours)):
            (warnings if found[0] == "warning" else notes).append(found[1])
        named = launch_family(script, launch, cwd)  # a host spelling by the sweep's MPI too
        warnings += [w for w in (*host_warnings(script, launch, named or (
                                     ours.family if ours else None)),
                                 one_core_warning(script, launch, named),
                                 other_launch_slots(script, launch, named),
                                 shared_cpus(script, launch, named)) if w]
    return warnings, notes
