"""Whether a job script's ``mpirun`` / ``mpiexec`` fits the MPI its program was built with.

:func:`mpi_mismatch` is one warning line when a launch line starts a program linked against
one MPI family (Open MPI, MPICH) with the other family's launcher, naming one that fits (a
note where either is found on this PATH after a line that changes the job's environment);
:func:`srun_check` the same for ``srun`` and its MPI plugin
(:func:`~hpcds1mpi.launch.launch_line_checks.launch_checks`: both, for every launch line). It
reads files (the launcher's real name and linked libraries; the program's MPI as the sweep
reads it, :mod:`hpcds1mpi.launch.program_file_mpi`: an ELF's ``NEEDED``, its libraries' in
turn, or its version banner, a Python program's mpi4py, a shell wrapper's program) and runs
nothing but the module-system lines before a launch (:mod:`~hpcds1mpi.launch.module_path`: a
module system's own init file and module files only root or the user can write) and a Python
program's interpreter, asked where its mpi4py is; the families themselves are
:mod:`hpcds1mpi.launch.mpi_names`'s.
"""

from __future__ import annotations

import functools
import math
import os
import re
import shutil
import sys
from typing import TYPE_CHECKING

from hpcds1mpi.launch.elf_libraries import needed_files
from hpcds1mpi.launch.mpi_installation import installation_launcher, launcher_file_family
from hpcds1mpi.launch.mpi_names import (CANDIDATES, FAMILY_NAMES, LAUNCHER_NAMES, MPICH, OPENMPI,
                                        family_of_soname)
from hpcds1mpi.launch.pmix_support import (mpich_speaks_pmix, openmpi_slurm_pmi,
                                          openmpi_without_pmix)
from hpcds1mpi.launch.program_file_mpi import file_mpi, program_word
from hpcds1mpi.launch.recorded_mpi import taken_mpi
from hpcds1mpi.launch.script_folder import launch_folder, unknown_move

if TYPE_CHECKING:  # pragma: no cover
    from hpcds1mpi.launch.job_script import JobScript, Launch
    from hpcds1mpi.launch.recorded_mpi import RecordedMPI

#: Lines that change the job's environment (which mpirun / libraries it finds); the folder's
#: moves are :mod:`~hpcds1mpi.launch.script_folder`'s.
_ENV_RE = re.compile(r"(?<![\w./-])(module|ml|source|spack|conda|mamba|micromamba|eval|"
                     r"\.)\s|(?<![\w])PATH=")


def program_file_family(path: str, env: dict | None = None) -> tuple[str | None, str]:
    """(family, evidence) of a program file, read as the sweep reads it: an ELF's MPI library
    (its own ``NEEDED`` or its libraries': ScaLAPACK, PETSc, parallel HDF5) or a static
    binary's banner, a Python program's mpi4py, a shell wrapper's program
    (:func:`~hpcds1mpi.launch.program_file_mpi.file_mpi`); (None, "") otherwise (no MPI
    found, the MPI-5 ABI, a file of unknown kind)."""
    found = file_mpi(path, env)
    return found.family, found.evidence


@functools.lru_cache(maxsize=4)
def first_env_line(text: str) -> float:
    """The first command line of a script's text that changes the environment, ``inf`` for
    none: read once, so each launch line asks in constant time (a script of thousands of
    launch lines rescanned for each took minutes)."""
    for number, ln in enumerate(text.split("\n"), start=1):
        if ln.strip() and not ln.lstrip().startswith("#") and _ENV_RE.search(ln):
            return number
    return math.inf


def named_file(word: str | None, folder: str | None, path_var: str | None) -> str | None:
    """The file ``word`` names: a path (relative to ``folder``), or a name on ``path_var``."""
    if not word or "$" in word:
        return None
    word = os.path.expanduser(word)
    if "/" in word:
        found = word if os.path.isabs(word) else (os.path.join(folder, word) if folder else None)
    else:
        found = shutil.which(word, path=path_var) if path_var else None
    return found if found and os.path.isfile(found) else None


def fitting_launchers(family: str, path_var: str | None) -> list[str]:
    """mpirun/mpiexec files on ``path_var`` (and beside this Python) of ``family``."""
    names = [shutil.which(n, path=path_var) for n in CANDIDATES.get(family, ())]
    names.append(os.path.join(os.path.dirname(sys.executable), "mpiexec"))
    out: list[str] = []
    for name in names:
        if name and os.path.isfile(name) and name not in out and \
                launcher_file_family(name) == family:
            out.append(name)
    return out


def _launcher_args(script: "JobScript", launch: "Launch") -> list[str]:
    """The launcher's own words on ``launch`` (between the launcher and its program), as
    written: where Open MPI reads ``--prefix DIR`` / ``--noprefix``."""
    end = launch.spans[0][0] if launch.spans else launch.span[1]
    return [w.strip("\"'") for w in script.text[launch.span[1]:end].split()]


def ranks_program(script: "JobScript", launch: "Launch", cwd: str, env: dict | None = None
                  ) -> tuple[str, str | None]:
    """(the word that tells the launched program's MPI, the file the launcher's ranks run for
    it; None: not found): looked up on the PATH the ranks get, which for Open MPI's ``mpirun``
    started by its path or with ``--prefix`` puts that prefix's ``bin`` first — the sweep's
    rule, :func:`~hpcds1mpi.launch.rank_program.rank_environment` (s32 tester U1:
    ``/usr/bin/mpirun.openmpi -n 2 python3`` runs ``/usr/bin/python3`` on the ranks, not the
    venv's ``python3`` first on this PATH, and was warned of as an MPICH program)."""
    env = os.environ if env is None else env
    word = program_word([launch.program or "", *launch.args])
    path_var = ranks_path(script, launch, cwd, env) if "/" not in word else env.get("PATH")
    return word, named_file(word, launch_folder(script, launch, cwd), path_var)


def ranks_path(script: "JobScript", launch: "Launch", cwd: str, env: dict | None = None
               ) -> str | None:
    """The PATH the ranks of ``launch`` get (:func:`ranks_program`'s rule): ``env``'s, with
    the prefix's ``bin`` first for Open MPI's ``mpirun`` by its path or ``--prefix``."""
    from hpcds1mpi.launch.rank_program import rank_environment

    path_var = (os.environ if env is None else env).get("PATH")
    if launch.kind == "mpi":
        launcher_word = script.text[launch.span[0]:launch.span[1]].strip("\"'")
        # only an Open MPI launcher by its files asks the sweep's rule (which runs --version)
        launcher = named_file(launcher_word, launch_folder(script, launch, cwd), path_var)
        if launcher is not None and launcher_file_family(launcher) == OPENMPI:
            path_var = rank_environment(launcher_word, _launcher_args(script, launch),
                                        {"PATH": path_var or ""}).get("PATH") or path_var
    return path_var


def mpi_mismatch(script: "JobScript", launch: "Launch", cwd: str, env: dict | None = None,
                 seen: set | None = None, recorded: "RecordedMPI | None" = None
                 ) -> tuple[str, str] | None:
    """("warning", line) when ``launch`` starts a program of one MPI family with an
    ``mpirun`` / ``mpiexec`` of the other (it would start independent 1-rank copies, or abort
    in ``MPI_Init``), naming a launcher that fits; ("note", line) when either was found on
    the PATH advise sees after a line that changes the job's environment; None when they fit
    or either is unknown.

    ``seen``: one set passed for every launch line of a script: each (program, launcher)
    pair of files is then read once, and warned about at its first line only.

    Files are read and no launcher is run (not even ``--version``); what runs is a Python
    program's interpreter, asked where its mpi4py is, and the module-system lines before the
    launch (:func:`~hpcds1mpi.launch.module_path.job_path`: only a module system's own init
    file and module files only root or the user can write). A name without a folder is
    looked up on ``PATH``; after a line that changes the job's environment (``module``,
    ``source``, ``spack``, ``conda``, ``PATH=``) that is the PATH advise sees, and the note
    says so (the job may find another); a relative program is read in ``cwd`` (where the job
    is submitted from), or ``--chdir``, unless the script ``cd``s elsewhere first. ``srun``,
    ``aprun`` and ``ibrun`` are left alone. ``recorded``: the MPI the model's sweep ran it
    with (:mod:`~hpcds1mpi.launch.recorded_mpi`), taken where its file does not tell."""
    if launch.kind != "mpi":
        return None
    env = os.environ if env is None else env
    changed_at = first_env_line(script.text)
    unknown, moduled = "", math.inf
    if changed_at < launch.line:  # s36 tester M1: the PATH its module lines give, if told
        from hpcds1mpi.launch.module_path import job_path

        job, unknown = job_path(script.text.split("\n")[:launch.line - 1], env)
        if job is not None:
            moduled, changed_at, env = changed_at, math.inf, {**env, "PATH": job}
    path_var = env.get("PATH")
    folder = launch_folder(script, launch, cwd)
    word, program = ranks_program(script, launch, cwd, env)
    launcher_word = script.text[launch.span[0]:launch.span[1]].strip("\"'")
    launcher = named_file(launcher_word, folder, path_var)
    # not checked, said (s39 tester D8: skipped in silence after a cd advise cannot follow)
    if program is None and launcher is not None and folder is None and "/" in word \
            and not os.path.isabs(word) and (moved := unknown_move(script, launch)):
        return "note", (f"line {launch.line}: {word} is not checked for its MPI against "
                        f"{launcher_word}: line {moved} moves the job to a folder not known "
                        "here; run advise where that folder is")
    if program is None or launcher is None:
        return None
    if seen is not None:
        if (program, launcher) in seen:
            return None  # read, and said at its first line
        seen.add((program, launcher))
    read = file_mpi(program, env)
    want, evidence, have = read.family, read.evidence, launcher_file_family(launcher)
    library = _mpi_library(read.elf, want) if read.elf and want else None
    if taken := taken_mpi(read, recorded):  # s42 tester E4: a wrapper whose MPI is unread
        want, evidence, library = taken.family, taken.evidence, taken.library
    if want is None:
        return None
    # s35 tester I6: the launcher beside the libmpi it loads, as the sweep names it
    own = taken.launcher if taken else installation_launcher(library, want)
    others = [own] if own else fitting_launchers(want, path_var)
    hint = f"launch it with {others[0]}" if others else \
        f"launch it with {FAMILY_NAMES[want]}'s mpiexec"
    # s29 tester A7: after `source .../openfoam/etc/bashrc` nothing was said, and the job ran
    # the venv's MPICH mpirun that came first on the PATH it inherited: noted, with the caveat
    # (a warning only where the job surely finds these files: `module load` may change them)
    changed = changed_at < launch.line
    on_path = [w for w in (launcher_word, word) if changed and "/" not in w]
    said = (f"{os.path.basename(program)} ({program} on the PATH advise sees)"
            if word in on_path else os.path.basename(program))
    caveat = (f" (line {int(changed_at)} changes the job's environment first"
              + (f": {unknown}" if unknown else "") + ", so the job may "
              f"find another {' or '.join(on_path)}: check `which {on_path[0]}` in the job)"
              if on_path else "")
    if want == have and read.elf and (library := _mpi_library(read.elf, want)):
        from hpcds1mpi.launch.script_installation import other_installation_line, ranks_library

        library = ranks_library(read.elf, library, launcher_word, _launcher_args(script, launch))
        if found := other_installation_line(launch.line, said, library, want, launcher,
                                            launcher_word, caveat):
            return found  # s40 tester A9: one soname, two installations (review G3: caveat)
    if have is None or want == have:  # s36 tester M1: a module's mpirun, not told here
        return None if not unknown or "/" in launcher_word else ("note", (
            f"line {launch.line}: {os.path.basename(program)} is linked against "
            f"{FAMILY_NAMES[want]} ({evidence}); the {launcher_word} the job runs is whichever "
            f"line {int(changed_at)} and those after it put first on its PATH, not checked "
            f"here ({unknown}): check `which {launcher_word}` in the job, or {hint}"))
    where = "on the PATH advise sees" if launcher_word in on_path else "here" if \
        moduled == math.inf or "/" in launcher_word else \
        f"after the module lines from line {int(moduled)} ({launcher}, as they give it here)"
    return ("note" if on_path else "warning"), (
            f"line {launch.line}: {said} is linked against {FAMILY_NAMES[want]} ({evidence}) "
            f"but {launch.launcher} {where} is {os.path.realpath(launcher)}, "
            f"{LAUNCHER_NAMES[have]}{caveat}: it would start independent 1-rank "
            f"copies or abort; {hint}"
            + (" (or srun --mpi=pmix)" if want == OPENMPI else " (or srun --mpi=pmi2)"))


def site_mpi_default(env: dict | None = None) -> str | None:
    """The ``MpiDefault`` of this machine's ``slurm.conf`` (``$SLURM_CONF``, else
    ``/etc/slurm/slurm.conf``): the MPI plugin ``srun`` uses without ``--mpi``; None when the
    file cannot be read or does not say (Slurm's own default is then ``none``, but a site may
    configure it where this machine cannot see)."""
    env = os.environ if env is None else env
    path = env.get("SLURM_CONF") or "/etc/slurm/slurm.conf"
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read(1 << 20)
    except OSError:
        return None
    found = None
    for ln in text.splitlines():
        key, sep, value = ln.split("#", 1)[0].strip().partition("=")
        if sep and key.strip().lower() == "mpidefault":
            found = value.strip().lower() or None
    return found


def _srun_plugin(launch: "Launch", env: dict) -> tuple[str | None, str] | None:
    """(the MPI plugin ``srun`` starts ``launch`` with, how it is known): the line's ``--mpi``,
    else ``SLURM_MPI_TYPE`` as the script sets it, else the site's ``MpiDefault``
    (:func:`site_mpi_default`; (None, "") when it cannot be read); None when it is set at run
    time (unknown here)."""
    given = launch.options.get("mpi")
    set_on_line = launch.env.get("SLURM_MPI_TYPE")
    if given is not None and given.value:
        if "$" in given.value or "$" in (given.raw or ""):
            return None
        return given.value.lower(), f"--mpi={given.value}"
    if set_on_line is not None or "SLURM_MPI_TYPE" in launch.scope:
        value = set_on_line[0] if set_on_line is not None else launch.scope["SLURM_MPI_TYPE"]
        if not value or "$" in str(value):
            return None
        return str(value).lower(), f"SLURM_MPI_TYPE={value}"
    default = site_mpi_default(env)
    return default, (f"no --mpi, so this site's MpiDefault={default}" if default else "")


def srun_finding(script: "JobScript", launch: "Launch", cwd: str, env: dict | None = None,
                 seen: set | None = None, recorded: "RecordedMPI | None" = None
                 ) -> tuple[str, str | None, str] | None:
    """(kind, the ``--mpi`` plugin that fixes it or None, line): ("warning", ...) when
    ``srun`` starts a program with an MPI plugin that cannot wire up
    its MPI: Open MPI needs ``--mpi=pmix`` unless its installation has a Slurm PMI component
    (:func:`~hpcds1mpi.launch.pmix_support.openmpi_slurm_pmi`; without one Open MPI 4 aborts
    in ``MPI_Init``, Open MPI 5 runs 1-rank copies; a note where that cannot be read), and
    any MPI gets no wire-up from ``--mpi=none``; ("note", line) for an Open MPI program
    where the plugin is unknown (no ``--mpi``, no ``slurm.conf`` readable here: it may be
    pmix). The plugin: :func:`_srun_plugin`. None when they fit, or the
    program or its MPI is unknown. A program named without a folder after a line that
    changes the environment (``module load``) is read on this machine's PATH, and the line
    says the job may run another. Files are read (a Python program's interpreter asked where
    its mpi4py is); ``seen`` and ``recorded`` as :func:`mpi_mismatch` takes them."""
    if launch.kind != "slurm":
        return None
    env = os.environ if env is None else env
    changed_at = first_env_line(script.text)
    path_var = None if changed_at < launch.line else env.get("PATH")
    word = program_word([launch.program or "", *launch.args])
    program = named_file(word, launch_folder(script, launch, cwd), path_var)
    maybe_other = program is None and path_var is None and "/" not in word
    if maybe_other:  # a module changes which program runs, not which srun: read this one
        program = named_file(word, None, env.get("PATH"))
    plugin_of = _srun_plugin(launch, env)
    if program is None or plugin_of is None:
        return None
    plugin, whence = plugin_of
    if seen is not None:
        if (program, plugin) in seen:
            return None
        seen.add((program, plugin))
    found = file_mpi(program, env)  # a Python program's: its mpi4py's (s29 tester B2)
    want, evidence, elf = found.family, found.evidence, found.elf
    library = _mpi_library(elf, OPENMPI) if want == OPENMPI and elf else None
    if taken := taken_mpi(found, recorded):  # s42 tester E4: a wrapper whose MPI is unread
        want, evidence, library = taken.family, taken.evidence, taken.library
    if want is None:
        return None
    which = (f"the {word} on this machine's PATH ({program}; line {int(changed_at)} changes "
             "the job's environment first, so the job may run another)" if maybe_other
             else os.path.basename(program))
    name = f"line {launch.line}: {which} is linked against " \
           f"{FAMILY_NAMES[want]} ({evidence})"
    if want == OPENMPI and plugin is None:
        return "note", None, (
            f"{name} and srun has no --mpi; the site's default MPI plugin is not known here "
            "(no MpiDefault read from $SLURM_CONF or /etc/slurm/slurm.conf): Open MPI starts "
            "under srun only with --mpi=pmix, or with pmi2 where it was built with Slurm's "
            "PMI; check srun --mpi=list, or add --mpi=pmix")
    if want == OPENMPI and plugin == "none":
        return "warning", "pmix", (
            f"{name} but srun runs it with {whence}, which Open MPI cannot wire up "
            f"({openmpi_without_pmix(library)}); add --mpi=pmix, or launch it with Open MPI's "
            "mpirun")
    if want == OPENMPI and not plugin.startswith("pmix"):
        speaks, why = openmpi_slurm_pmi(library) if library else (None, "its libmpi not found")
        if speaks is False:  # Debian's Open MPI aborts in MPI_Init; Open MPI 5 runs singletons
            return "warning", "pmix", (
                f"{name} but srun runs it with {whence}, which Open MPI cannot wire up ({why}; "
                f"{openmpi_without_pmix(library)}); add --mpi=pmix, or launch it with Open "
                "MPI's mpirun")
        if speaks is None:
            return "note", None, (
                f"{name} and srun runs it with {whence}: Open MPI starts there only where it "
                f"was built with Slurm's PMI, not known here ({why}); check that a job runs as "
                "one, or add --mpi=pmix")
        return None
    if plugin == "none":
        return "warning", "pmi2", (
            f"{name} but srun runs it with {whence}: no wire-up, so each rank starts alone; "
            # s36 tester M4: pmix only where the library may speak it (Debian's MPICH: no)
            "add --mpi=pmi2" + (" (or pmix)" if want == MPICH and not (
                elf and _mpich_without_pmix(elf)) else ""))
    if want == MPICH and plugin and plugin.startswith("pmix"):
        library = _mpich_without_pmix(elf) if elf else None
        if library:  # its ranks start as 1-rank copies (s27 tester Q, 1)
            return "warning", "pmi2", (
                f"{name} but srun runs it with {whence}: its MPI library {library} links no "
                "PMIx library, so srun would start it as independent 1-rank copies; add "
                "--mpi=pmi2")
    return None


def srun_check(script: "JobScript", launch: "Launch", cwd: str, env: dict | None = None,
               seen: set | None = None, recorded: "RecordedMPI | None" = None
               ) -> tuple[str, str] | None:
    """(kind, line) of :func:`srun_finding`."""
    found = srun_finding(script, launch, cwd, env, seen, recorded)
    return None if found is None else (found[0], found[2])


def srun_fix(script: "JobScript", launch: "Launch", cwd: str, env: dict | None = None,
             recorded: "RecordedMPI | None" = None) -> tuple[str | None, str] | None:
    """(the ``--mpi`` plugin a rewrite of ``launch`` gives srun, or None where no value is
    known to start the program, the warning) where :func:`srun_finding` warns; None where it
    does not (s32 tester U5: the rewrite kept ``srun meep`` under MpiDefault=pmi2, and the
    job failed in MPI_Init). The plugins are the ones ``recommend --emit``'s refusal names for
    the family (:func:`~hpcds1mpi.launch.script_launcher_mpi.check_script`: Open MPI pmix,
    MPICH pmi2)."""
    found = srun_finding(script, launch, cwd, env, recorded=recorded)
    return None if found is None or found[0] != "warning" else (found[1], found[2])


def _mpich_without_pmix(program: str) -> str | None:
    """The MPICH-family library file the ELF ``program`` (a binary, or a Python program's
    mpi4py extension) loads where it speaks no PMIx
    (:func:`~hpcds1mpi.launch.pmix_support.mpich_speaks_pmix` on everything it links), else
    None. Read from the ELF files, nothing run: a script's program may be anyone's."""
    try:
        tree = list(needed_files(program))
    except OSError:
        return None
    found = _mpi_library(program, MPICH, tree)
    if found is None:
        return None
    return found if mpich_speaks_pmix(found, [name for name, _, _ in tree]) is False else None


def _mpi_library(program: str, family: str, tree: list | None = None) -> str | None:
    """The file of the ``family`` MPI library ``program`` loads, found from its ELF files as
    the loader would (``tree``: its :func:`~hpcds1mpi.launch.elf_libraries.needed_files`,
    when already read); None when it links none, or it is not found."""
    try:
        tree = list(needed_files(program)) if tree is None else tree
    except OSError:
        return None
    return next((file for name, _, file in tree
                 if file and family_of_soname(name) == family), None)
