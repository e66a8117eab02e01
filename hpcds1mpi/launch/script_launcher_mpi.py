"""Whether the launcher of a batch script we write can start its program as one job.

:func:`check_script` reads the program's MPI here (the machine writing the script:
:func:`~hpcds1mpi.launch.mpi_family.program_mpi`) and refuses, in one line naming the
cluster-file key to set, an ``srun --mpi`` plugin that cannot wire it up or an ``mpiexec`` /
``mpirun`` of the other MPI family (:func:`~hpcds1mpi.launch.mpi_family.check_launcher` is
the same judgement for a launch made here).
"""

from __future__ import annotations

import os
import shutil

from hpcds1mpi.errors import ConfigError
from hpcds1mpi.launch.exec_wrappers import program_index
from hpcds1mpi.launch.mpi_family import (candidates, launcher_family, library_file,
                                         openmpi_pmi2_refusal, pmix_refusal, program_mpi)
from hpcds1mpi.launch.mpi_names import FAMILY_NAMES, LAUNCHER_NAMES, MPICH, OPENMPI
from hpcds1mpi.launch.rank_program import rank_environment


def check_script(program_tokens: list[str], launcher, path: str | None = None,
                 runs=lambda found: None) -> None:
    """Refuse a batch script whose launcher cannot start its program as one job.

    Only where the program is found here (the machine writing the script) and its MPI is read:
    Open MPI under ``srun`` needs ``--mpi=pmix`` unless its installation has a Slurm PMI
    component (:func:`openmpi_pmi2_refusal`; Debian's has none and aborts in ``MPI_Init``
    under ``--mpi=pmi2``, as the test Slurm shows), any MPI under ``--mpi=none`` has no
    wire-up, and an ``mpiexec``/``mpirun`` found here must be of the program's family: a path,
    or a bare name looked up on ``path`` (the PATH the job will have; None: not known here).
    ``runs``: the launcher a script found as the launcher runs, of path -> path or None
    (:func:`~hpcds1mpi.launch.given_launcher.wrapped_launcher`; s32 tester X2).

    Raises:
        ConfigError: one line naming the program's MPI and the cluster-file key to set.
    """
    command = getattr(launcher, "command", "")
    # s47 tester K8: a wrapper's bare program (run.sh's `exec python3`) is found on the PATH
    # the ranks get, which Open MPI's mpirun written by its path puts its prefix's bin first on
    env = None if getattr(launcher, "name", "") == "srun" or not command else rank_environment(
        command, tuple(getattr(launcher, "args", ())), dict(os.environ))
    program = program_mpi(program_tokens, env)
    want = program.family
    if want not in (OPENMPI, MPICH):
        return
    name = os.path.basename(program_tokens[program_index(program_tokens)])
    head = f"{name} is linked against {FAMILY_NAMES[want]} ({program.evidence})"
    if getattr(launcher, "name", "") == "srun":
        mpi = getattr(launcher, "mpi", "")
        if want == OPENMPI and not mpi.startswith("pmix") and (
                mpi in ("", "none") or (why := openmpi_pmi2_refusal(program))):
            because = f"{why}, so " if mpi not in ("", "none") else ""
            raise ConfigError(f"{head}; {because}srun --mpi={mpi or 'none'} cannot start it as "
                              "one job: set mpi = \"pmix\" in the cluster file (or launcher = "
                              "\"mpirun\" with mpiexec = its mpirun)")
        if mpi in ("", "none"):
            raise ConfigError(f"{head}; srun --mpi=none gives its ranks no wire-up: set "
                              "mpi = \"pmi2\" in the cluster file")
        if why := pmix_refusal(program, mpi):
            raise ConfigError(f"{head}; {why}: set mpi = \"pmi2\" in the cluster file")
        return
    found = command
    if "/" not in command:  # a bare mpiexec/mpirun is whatever the job's PATH gives there
        # s31 tester P1: on Debian the bare mpiexec is Open MPI's orterun, and an MPICH program
        # ran as two 1-rank copies: checked where the job's PATH is this one
        found = shutil.which(command, path=path) if path else None
        if found is None:
            return
    family = launcher_family(found) if os.path.exists(found) else None
    # s32 tester X2: a script around a launcher (OpenCoarrays' cafrun) is of the family of the
    # launcher it runs; one that is no launcher at all: script_launcher.check_launch
    runs = runs(found) if family is None and os.path.exists(found) else None
    family = launcher_family(runs) if runs else family
    if family in (OPENMPI, MPICH) and family != want:
        others = candidates(want, exclude=found, library=library_file(program))
        real = os.path.realpath(found)  # a link (s36 tester M2), a module's bin (M1)
        link = f", a link to {real}" if real != found else ""
        if found != command:
            command = f"{command} (here {found}{link})"
        elif link:
            command = f"{command} ({link[2:]})"
        if runs:
            command = f"{command} (a script that runs {runs})"
        # both keys: a cluster file's mpiexec without launcher is unused under Slurm (s36 M2)
        kind = "mpirun" if os.path.basename(getattr(launcher, "command", "")).startswith(
            "mpirun") else "mpiexec"
        beside = _beside_launcher(program_tokens, found, family)
        raise ConfigError(f"{head} but the script's {command} is {LAUNCHER_NAMES[family]}: set "
                          f"launcher = \"{kind}\" and mpiexec = "
                          f"\"{others[0] if others else 'its launcher'}\" in the cluster file"
                          + (f", or run {name} as {beside}, linked against "
                             f"{FAMILY_NAMES[family]} (recommend: give --program with that "
                             "path)" if beside else ""))


def _beside_launcher(tokens: list[str], launcher: str, family: str) -> str:
    """The file named as ``tokens``' program in the folder of ``launcher``'s real file, where
    it is of the launcher's ``family`` (Debian's /usr/bin/python3 beside orterun: the fix that
    works, s47 tester K8, where another MPI's launcher runs the venv's python3 that lacks the
    program's modules); "" where there is none."""
    at = program_index(tokens)
    beside = os.path.join(os.path.dirname(os.path.realpath(launcher)),
                          os.path.basename(tokens[at]))
    if beside == tokens[at] or not os.path.isfile(beside) or not os.access(beside, os.X_OK):
        return ""
    return beside if program_mpi([*tokens[:at], beside, *tokens[at + 1:]]).family == family \
        else ""
