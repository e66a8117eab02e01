"""A launcher the user names (``--mpiexec``, a cluster file's ``mpiexec``): checked to be one.

:func:`check_mpiexec` refuses one that is no MPI launcher. A launcher's family is read from its ``--version``
(:func:`~hpcds1mpi.launch.mpi_family.launcher_family`), which a script around a launcher answers
itself: OpenCoarrays' ``cafrun`` prints its own banner and ends in ``"${CAFRUN}" -n N prog``,
``CAFRUN="/usr/bin/mpiexec"`` written in it (s32 tester X1). :func:`wrapped_launcher` reads the
launcher such a script runs from its text (no option of the script's own is assumed):
the absolute paths in it named like an MPI launcher that are one here, all of one family.
A script that runs a launcher by bare name (Intel MPI's ``mpirun``: ``mpiexec.hydra "$@"``)
runs whichever PATH finds: :func:`bare_launcher` reads it so, :func:`path_launcher_refusal`
refuses it where that is not the one beside the script (s35 tester I4).
:func:`refusal` is the one line refusing a launcher that is none, naming where it came from
and the launcher of the program's MPI to give instead (:func:`instead`).
"""

from __future__ import annotations

import os
import re
import shutil

from hpcds1mpi.errors import ConfigError
from hpcds1mpi.launch.mpi_family import candidates, launcher_family, library_file, program_mpi
from hpcds1mpi.launch.mpi_names import FAMILY_NAMES, MPICH, OPENMPI, ProgramMPI

#: The names an MPI launcher goes by (Debian's alternatives add a suffix: mpirun.openmpi).
LAUNCHER_NAME = re.compile(r"(mpiexec|mpirun|orterun|prterun)([.-][\w.-]+)?")
#: An absolute path written in a script's text (not the tail of a longer word or path).
_ABSOLUTE = re.compile(r"(?<![\w./$-])/[\w.+/-]+")
#: How much of a script is read: launcher wrappers are a few KiB (cafrun: 9).
_READ_BYTES = 1 << 20
#: The families' short names in "give one of these" lists.
_SHORT = {OPENMPI: "Open MPI", MPICH: "MPICH"}
#: What a launcher that is none was read as, said in every refusal of one.
NO_MPI = "its --version names neither Open MPI nor hydra/MPICH/Intel MPI nor Slurm"


def wrapped_launcher(path: str) -> str | None:
    """The MPI launcher the script ``path`` runs, read from its text; None where ``path`` is
    no script (no ``#!``), names none, or names launchers of both families (which one runs
    cannot be told)."""
    try:
        with open(path, "rb") as handle:
            text = handle.read(_READ_BYTES)
    except OSError:
        return None
    if not text.startswith(b"#!"):
        return None
    own = os.path.realpath(path)
    found: dict[str, str | None] = {}
    for name in _ABSOLUTE.findall(text.decode("utf-8", "replace")):
        if name in found or not LAUNCHER_NAME.fullmatch(os.path.basename(name)) \
                or not os.path.isfile(name) or not os.access(name, os.X_OK) \
                or os.path.realpath(name) == own:
            continue
        found[name] = launcher_family(name)
    families = {family for family in found.values() if family in (OPENMPI, MPICH)}
    if len(families) != 1:
        return None
    return next(name for name, family in found.items() if family in families)


#: A command word that is a launcher named without a folder, at a line's start or after
#: ``;`` / ``&&`` / ``then`` (Intel MPI's ``mpirun``: ``mpiexec.hydra "$@" <&0``).
_BARE_COMMAND = re.compile(r"(?:^|[;&|(]|\b(?:then|else|do)\s)[ \t]*(?:exec[ \t]+)?"
                           r"((?:mpiexec|mpirun|orterun|prterun)(?:[.-][\w.-]+)?)(?=[\s;)]|$)",
                           re.M)


def bare_launcher(path: str, env: dict | None = None) -> tuple[str, str | None, str] | None:
    """(the launcher the script ``path`` runs by bare name, the file ``env``'s PATH finds for
    it now, the one of that name in the script's own folder) where the script runs one and
    its folder has one; None otherwise (s35 tester I4: Intel MPI's ``bin/mpirun`` runs
    ``mpiexec.hydra`` as PATH finds it, which was the venv's MPICH 5 under the sweep and
    Debian's MPICH 4 in the job)."""
    try:
        with open(path, "rb") as handle:
            text = handle.read(_READ_BYTES).decode("utf-8", "replace")
    except OSError:
        return None
    if not text.startswith("#!"):
        return None
    env = os.environ if env is None else env
    for name in dict.fromkeys(_BARE_COMMAND.findall(text)):
        own = os.path.join(os.path.dirname(os.path.realpath(path)), name)
        if name != os.path.basename(path) and os.path.isfile(own) and os.access(own, os.X_OK):
            return name, shutil.which(name, path=env.get("PATH")), own
    return None


def path_launcher_refusal(given: str, found: str, fix: str, env: dict | None = None
                          ) -> str | None:
    """One line where the script ``found`` runs a launcher by bare name (:func:`bare_launcher`)
    and PATH finds another than the one beside it (another MPI's, or another installation's:
    not the same file or bytes), naming both and the fix; None otherwise."""
    from hpcds1mpi.launch.mpi_installation import same_launcher

    bare = bare_launcher(found, env)
    if bare is None or (bare[1] and same_launcher(bare[1], bare[2])):
        return None
    name, on_path, own = bare
    where = f"PATH finds {on_path}, not" if on_path else "PATH finds none, nor"
    return (f"{given} {found!r} is a script that runs {name} as PATH finds it, and here "
            f"{where} {own} beside the script (another MPI installation's launcher would start "
            f"the program): put {os.path.dirname(own)} first on PATH, or {fix.format(own)}")


def instead(program: ProgramMPI | None, env: dict | None = None,
            exclude: str = "") -> list[tuple[str, str]]:
    """The launchers to name in place of one that cannot start ``program``, as (path, whose):
    its MPI's launcher found here where its MPI is read (the one of its installation first),
    else one of each family found here."""
    family = program.family if program is not None else None
    if family in (OPENMPI, MPICH):
        found = candidates(family, env, exclude=exclude, library=library_file(program, env))
        return [(found[0], _SHORT[family])] if found[:1] else []
    pairs = []
    for family in (OPENMPI, MPICH):
        if found := candidates(family, env, exclude=exclude):
            pairs.append((found[0], _SHORT[family]))
    return pairs


def refusal(given: str, found: str, fix: str, program: ProgramMPI | None = None,
            env: dict | None = None, why: str = "") -> str:
    """One line: ``given`` (``--mpiexec '/usr/bin/cafrun'``, the cluster file's ``mpiexec``)
    is not an MPI launcher, the launcher it runs where it is a script around one (``why``
    follows that: why it is not used as it), and what to do: ``fix`` (``--mpiexec {}``)
    formatted with the launcher of the program's MPI, else with PATH followed by the
    launchers of :func:`instead`, or "install the program's MPI" where none is here."""
    runs = wrapped_launcher(found)
    said = f"{given} is not an MPI launcher ({NO_MPI}"
    said += f"; it is a script that runs {runs}{why})" if runs else ")"
    options = instead(program, env, exclude=found)
    if program is not None and program.family in (OPENMPI, MPICH):
        said += (f"; the program is linked against {FAMILY_NAMES[program.family]} "
                 f"({program.evidence})")
        if options:
            return f"{said}: use its launcher: {fix.format(options[0][0])}"
    if not options:
        return f"{said}: install the program's MPI and give its launcher: {fix.format('PATH')}"
    return (f"{said}: {fix.format('PATH')}, PATH the launcher of the program's MPI: "
            + " or ".join(f"{path} ({whose})" for path, whose in options))


def check_mpiexec(path: str, env: dict | None = None, given: str = "--mpiexec",
                  program: list[str] | None = None) -> str:
    """The absolute path of a ``--mpiexec``, checked to be an MPI launcher. ``given``: where
    the path came from (``--mpiexec``, the cluster file's ``mpiexec``), and ``program``: the
    tokens of the program it is to start (None: not known), both named in a refusal.

    Raises:
        ConfigError: not found, not executable, or its ``--version`` names no MPI launcher:
            one line naming the launcher of the program's MPI to give instead
            (:func:`refusal`; s32 tester X1).
    """
    env = dict(os.environ if env is None else env)
    found = path if "/" in path else shutil.which(path, path=env.get("PATH"))
    fix = "--mpiexec {}" if given == "--mpiexec" else 'set mpiexec = "{}" in the cluster file'
    if not found or not os.path.exists(found):
        raise ConfigError(not_found(path, given, fix, program, env))
    if os.path.isdir(found) or not os.access(found, os.X_OK):
        raise ConfigError(f"{given} {found!r} is not an executable file")
    found = os.path.abspath(found)
    if why := path_launcher_refusal(given, found, fix, env):
        raise ConfigError(why)
    # Kept as given, not replaced by the launcher it runs: Intel's mpirun does the scheduler's
    # placement (I_MPI_HYDRA_BOOTSTRAP, Grid Engine's machine file) its mpiexec.hydra does not
    # (s35 review 1); a job script puts its folder first on PATH instead (scripts._own_path).
    if launcher_family(found) is None:
        # A script around a launcher (OpenCoarrays' cafrun) is refused too: the sweep picks the
        # launcher's options by its --version, which is the script's own.
        raise ConfigError(refusal(
            f"{given} {found!r}", found, fix, program_mpi(program, env) if program else None,
            env, ", whose options the sweep cannot choose by the script's own --version"))
    return found


def not_found(path: str, given: str, fix: str, program: list[str] | None,
              env: dict) -> str:
    """The refusal of a ``given`` launcher ``path`` that is not found: where it holds options
    (``"/usr/bin/mpiexec.mpich -n 2"``), that they go in ``--launcher-args`` / the cluster
    file's ``launcher_args``; the example named is the launcher of the program's MPI where
    that is read, else one of each family found here (s36 tester M7: it named Open MPI's
    ``mpirun.openmpi`` for an MPICH program, whose sweep then refused it)."""
    head, *rest = path.split() or [path]  # all blanks (--mpiexec " "): no word (s36 review 3)
    first = head if "/" in head else (shutil.which(head, path=env.get("PATH")) or "")
    if rest and first and os.path.isfile(first):
        where = "--launcher-args" if given == "--mpiexec" else "the cluster file's launcher_args"
        return (f"{given} {path!r} not found: it holds options; give the launcher alone "
                f"({fix.format(first)}) and its options with {where} (the rank count comes "
                "from the configuration: --ranks-per-node / --nodes)")
    options = instead(program_mpi(program, env) if program else None, env)
    example = " or ".join(fix.format(found) for found, _ in options) or fix.format("PATH")
    return f"{given} {path!r} not found; give the path of an MPI launcher: {example}"
