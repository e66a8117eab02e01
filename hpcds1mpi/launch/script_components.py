"""Scripts that are several jobs or several programs in one, refused in one line.

``advise`` reads one request and one program per launch line. A Slurm heterogeneous job
(``#SBATCH hetjob``, ``packjob`` before Slurm 20.02; ``srun --het-group``) is several requests,
each its own nodes and tasks; an MPMD launch (``mpirun -np 1 ./a : -np 3 ./b``, the same
``:`` for mpiexec, aprun and srun; ``srun --multi-prog``; Open MPI's ``--app`` and Hydra's
``-configfile`` files) starts several programs. Read as one, the first part's counts were
taken for the whole and a rewrite scaled only that part (s29 tester D2). Only the script's
counted directives and its commands are looked at, never its comments or here-document
bodies (D6: a comment naming ``--het-group`` refused a script sbatch accepts).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hpcds1mpi.errors import ConfigError

if TYPE_CHECKING:  # pragma: no cover
    from hpcds1mpi.launch.job_script import Launch
    from hpcds1mpi.launch.script_options import Word

#: A directive line's first word that splits a Slurm job into components.
COMPONENT_SPLITS = ("hetjob", "packjob")
#: srun options that launch on one component of a heterogeneous job.
_HET_OPTIONS = ("--het-group", "--pack-group")
#: MPI launcher options that read the programs from a file (Open MPI, Hydra / Intel MPI).
_PROGRAM_FILES = ("app", "configfile")


def _heterogeneous(where: str) -> ConfigError:
    return ConfigError(f"{where}: this is a heterogeneous job (#SBATCH hetjob / srun "
                       "--het-group): its components ask for different nodes and tasks; "
                       "advise each component as a script of its own")


def check_directive_words(first_word: str, number: int) -> None:
    """Refuse a counted ``#SBATCH`` line that splits the job into components."""
    if first_word in COMPONENT_SPLITS:
        raise _heterogeneous(f"line {number}")


def check_one_program(launch: "Launch", words: "list[Word]", program_start: int) -> None:
    """Refuse a launch line that starts several programs or runs on one component of a
    heterogeneous job: one line saying what it is and what to do. ``words`` follow the
    launcher; those before ``program_start`` (a text offset) are the launcher's options."""
    where, name = f"line {launch.line}", launch.launcher
    said = {o.lstrip("-").split("=", 1)[0] for o in (w.text for w in words
                                                       if w.start < program_start)}
    if launch.kind == "slurm" and said & {o.lstrip("-") for o in _HET_OPTIONS}:
        raise _heterogeneous(where)
    several = "advise reads one program per launch line: advise a script that launches one " \
        "program on all ranks"
    if any(w.text == ":" for w in words):  # every launcher takes a lone ':' as the next program
        raise ConfigError(f"{where}: {name} ... : ... is an MPMD launch (several programs, "
                          f"split at ':'); {several}")
    if launch.kind == "slurm" and "multi-prog" in launch.options:
        raise ConfigError(f"{where}: srun --multi-prog runs the programs its file names, one "
                          f"per task range (MPMD); {several}")
    if launch.kind == "mpi" and (found := [o for o in _PROGRAM_FILES if o in launch.options]):
        raise ConfigError(f"{where}: {name} -{found[0]} reads the programs from a file (MPMD); "
                          f"{several}")
