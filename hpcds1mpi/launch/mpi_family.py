"""Which MPI a program is built against, and which launchers can start it as one job.

Never assumed: read from the program itself, past an exec-wrapper prefix (``env X=1``, ``nice``).
* **A binary**: the ``NEEDED`` entries of its ELF dynamic section (read with the standard
  library by :mod:`hpcds1mpi.launch.elf_libraries`: ``readelf`` is not on every cluster), each
  soname's family told by :mod:`hpcds1mpi.launch.mpi_names`. A binary that needs no MPI
  library directly (it links a library that does) is followed through ``ldd`` where that
  exists; a static binary is read for the version banner every MPI library carries.
* **A Python script** (``python3 app.py``, or a ``#!`` line naming Python): the MPI of the
  mpi4py that interpreter imports, asked in a subprocess of that interpreter
  (``MPI.Get_library_version()``, without initialising MPI).
* **A shell wrapper**: the program it names outright, read as above (s29 tester E1).
* Anything else (a wrapper naming its program by a variable, a file of unknown kind): unknown.
  The launch probe (:mod:`hpcds1mpi.launch.probe`) and ``--ranks-regex`` are the proof there.

A launcher's family comes from its ``--version`` (hydra: MPICH family; "Open MPI"/"OpenRTE":
Open MPI; ``srun`` starts either, given the right ``--mpi`` plugin). :func:`check_launcher`
refuses a pairing that cannot form one job, naming a launcher on PATH that can (a batch
script's: :mod:`hpcds1mpi.launch.script_launcher_mpi`). Whether this process itself was
started by its mpi4py's family: :mod:`hpcds1mpi.launch.own_launcher`.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

from hpcds1mpi.errors import ConfigError, LaunchError
from hpcds1mpi.launch.elf_libraries import elf_needed, ldd_text
from hpcds1mpi.launch.exec_wrappers import past_wrappers
from hpcds1mpi.launch.mpi_init_calls import NO_MPI_CALLS
from hpcds1mpi.launch.mpi_names import (CANDIDATES, FAMILY_NAMES, LAUNCHER_NAMES, MPI4PY_FILE,
                                        MPI_ABI, MPICH, OPENMPI, ProgramMPI, family_of_banner,
                                        family_of_soname, version_line)
from hpcds1mpi.launch.pmix_support import mpich_speaks_pmix, openmpi_slurm_pmi
from hpcds1mpi.launch.program_folder import in_folder
from hpcds1mpi.launch.refusal_words import RefusalWords


def _ldd_family(path: str, env: dict) -> tuple[str | None, str]:
    """The MPI family of the libraries the loader resolves for ``path`` (``ldd``), if any."""
    for line in (ldd_text(path, env) or "").splitlines():
        name = line.strip().split(" ", 1)[0]
        if family := family_of_soname(name):
            return family, f"links {name} (through its libraries, ldd)"
    return None, ""


def linked_library(path: str, env: dict) -> str | None:
    """The file of the MPI library the loader resolves for binary ``path`` (``ldd``), or None."""
    for line in (ldd_text(path, env) or "").splitlines():
        name, _, rest = line.strip().partition(" => ")
        resolved = rest.split(" (", 1)[0].strip()
        if family_of_soname(name) and os.path.isfile(resolved):
            return resolved
    return None


def library_file(program: ProgramMPI, env: dict | None = None) -> str | None:
    """The MPI library file ``program`` loads: its binary's (``ldd``), or for a Python program
    that of its interpreter's mpi4py extension; None when it cannot be told."""
    env = dict(os.environ if env is None else env)
    if not program.path or program.family is None:
        return None
    from hpcds1mpi.launch.shebang import PYTHON_NAME

    if not PYTHON_NAME.match(os.path.basename(program.path)):
        return linked_library(program.path, env)
    try:
        proc = subprocess.run([program.path, "-c", MPI4PY_FILE], capture_output=True,
                              text=True, timeout=60, env=env)
    except (OSError, subprocess.SubprocessError):
        return None
    extension = proc.stdout.strip()
    return linked_library(extension, env) if proc.returncode == 0 and os.path.isfile(
        extension) else None


def speaks_pmix(program: ProgramMPI, env: dict | None = None,
                library: str | None = None) -> bool | None:
    """Whether ``program``'s MPI library can join its ranks through PMIx (``srun --mpi=pmix``);
    None when that cannot be read.

    Open MPI always can (its runtime is PMIx; Open MPI 4 loads it as a plugin, so it is not in
    the library's dependencies). An MPICH-family library can only where it links a PMIx library
    (MPICH built ``--with-pmix``): its built-in PMI speaks PMI-1/PMI-2 alone, and under
    ``--mpi=pmix`` Debian's MPICH 4.0 starts each rank as a 1-rank world while MPICH 5 aborts
    ("unsupported PMI version PMIx"). Unreadable: the library or one it needs not found, Intel
    MPI, or a vendor's PMI library. ``library``: its MPI library file where the caller knows
    it (None: :func:`library_file`)."""
    env = dict(os.environ if env is None else env)
    if program.family == OPENMPI:
        return True
    library = library or library_file(program, env) if program.family == MPICH else None
    text = ldd_text(library, env) if library else None
    if text is None:
        return None
    names = [line.strip().split(" ", 1)[0] for line in text.splitlines()]
    return mpich_speaks_pmix(library, names, unresolved="not found" in text)


def pmix_refusal(program: ProgramMPI, plugin: str, env: dict | None = None,
                 library: str | None = None, plugin_from: str = "") -> str | None:
    """Why ``srun --mpi=plugin`` (given by ``plugin_from``, said where not "") cannot start
    ``program`` (loading ``library``, None: :func:`library_file`) as one job: a PMIx plugin for
    an MPI library that speaks no PMIx (:func:`speaks_pmix`); None otherwise, or unreadable."""
    if not plugin.startswith("pmix") or speaks_pmix(program, env, library) is not False:
        return None
    # MPICH 4.0 starts 1-rank worlds there, MPICH 5 (the wheel's) aborts in MPI_Init (s33 A9)
    return (f"its MPI library {library or library_file(program, env)} links no PMIx library, "
            f"so srun --mpi={plugin}{f' ({plugin_from})' if plugin_from else ''} would start it "
            "as independent 1-rank copies or abort in MPI_Init")


def openmpi_pmi2_refusal(program: ProgramMPI, env: dict | None = None,
                         library: str | None = None) -> str | None:
    """Why ``srun --mpi=pmi2`` cannot start the Open MPI ``program``: its installation has no
    Slurm PMI component (:func:`~hpcds1mpi.launch.pmix_support.openmpi_slurm_pmi`); None
    where it has one, or where that cannot be read (the launch probe decides there)."""
    library = library or library_file(program, env) if program.family == OPENMPI else None
    speaks, why = openmpi_slurm_pmi(library) if library else (None, "")
    return why if speaks is False else None


def owner_first(launchers: list[str], library: str | None) -> list[str]:
    """``launchers`` with those of the installation that owns ``library`` first: the most
    folders shared with the library's real path (``PREFIX/bin/mpiexec`` for
    ``PREFIX/lib/libmpi.so.12``: the wheel's hydra for the wheel's MPICH, Debian's for
    Debian's), then a plain ``mpiexec``/``mpirun`` (the wheel's ``mpiexec.hydra`` is a copy of
    its ``mpiexec``), then the given order (PATH's)."""
    if not library:
        return list(launchers)
    home = os.path.realpath(library)

    def shared(launcher: str) -> int:
        try:
            return len(Path(os.path.commonpath([home, os.path.realpath(launcher)])).parts)
        except ValueError:
            return 0

    return sorted(launchers, key=lambda launcher: (
        -shared(launcher), os.path.basename(launcher) not in ("mpiexec", "mpirun")))


#: The evidence of a binary known to link no MPI library (:func:`known_without_mpi`).
NO_MPI = "links no MPI library"


def known_without_mpi(program: ProgramMPI) -> bool:
    """Whether ``program`` is a dynamic binary whose libraries, every one resolved by ``ldd``,
    include no MPI library, or one that links an MPI library it never starts (read through a
    wrapper too): its ranks cannot be one job."""
    return program.family is None and program.evidence.endswith((NO_MPI, NO_MPI_CALLS))


def _started(program: ProgramMPI, library: str) -> ProgramMPI:
    """``program`` (read as linking the MPI library ``library``), or where neither it nor a
    library it loads imports an MPI initialisation symbol, a program known to use no MPI."""
    from hpcds1mpi.launch.mpi_init_calls import calls_mpi_init, never_initialises

    if calls_mpi_init(program.path) is False:
        return ProgramMPI(None, never_initialises(library, program.path), program.path)
    return program


def _abi_implementation(path: str, env: dict) -> str | None:
    """Which implementation provides the ``libmpi_abi`` the loader finds for ``path``."""
    match = re.search(r"libmpi_abi\S*\s+=>\s+(\S+)", ldd_text(path, env) or "")
    if not match or not os.path.exists(match.group(1)):
        return None
    with open(match.group(1), "rb") as fh:
        return family_of_banner(fh.read())


def binary_mpi(path: str, env: dict | None = None) -> ProgramMPI:
    """The MPI of an ELF binary (see the module docstring)."""
    env = dict(os.environ if env is None else env)
    try:
        needed = elf_needed(path)
    except OSError as exc:
        return ProgramMPI(None, f"cannot read {path}: {exc.strerror}")
    if needed is None:
        return ProgramMPI(None, f"{path} is not an ELF binary")
    for name in needed:
        family = family_of_soname(name)
        if family == MPI_ABI:
            impl = _abi_implementation(path, env)
            return _started(ProgramMPI(impl or MPI_ABI, f"links {name}" + (
                f", provided here by {FAMILY_NAMES[impl]}" if impl else ""), path), name)
        if family:
            return _started(ProgramMPI(family, f"links {name}", path), name)
    if needed:
        family, why = _ldd_family(path, env)
        if family:
            return _started(ProgramMPI(family, why, path), why.split()[1])
        text = ldd_text(path, env)
        # s33 tester D2: only a binary whose libraries ldd all resolves is known to link none
        unread = ("" if text and "not found" not in text else
                  " directly (ldd cannot find every library it needs)" if text else
                  " directly (no ldd here to read the libraries it loads)")
        return ProgramMPI(None, NO_MPI + unread, path)
    with open(path, "rb") as fh:  # static: the library's banner is compiled in
        family = family_of_banner(fh.read())
    return ProgramMPI(family, "static binary" + (" with an MPI version banner" if family
                                                 else " without an MPI version banner"), path)


MPI4PY_PROBE = ("import mpi4py; mpi4py.rc.initialize = False; mpi4py.rc.finalize = False; "
                 "from mpi4py import MPI; print(MPI.Get_library_version())")


def python_mpi(interpreter: str, env: dict | None = None,
               options: tuple[str, ...] = ()) -> ProgramMPI:
    """The MPI of the mpi4py that ``interpreter`` (run with ``options``, as a script's ``#!``
    line gives them) imports, asked in a subprocess of it."""
    try:
        proc = subprocess.run([interpreter, *options, "-c", MPI4PY_PROBE], capture_output=True,
                              text=True, timeout=60, env=env)
    except (OSError, subprocess.SubprocessError) as exc:
        return ProgramMPI(None, f"cannot ask {interpreter} for its mpi4py ({exc})")
    if proc.returncode != 0:
        return ProgramMPI(None, f"{interpreter} cannot import mpi4py")
    family = family_of_banner(proc.stdout)
    first = version_line(proc.stdout) or "?"
    return ProgramMPI(family, f"a Python program whose mpi4py uses {first} ({interpreter})",
                      interpreter)


def program_mpi(tokens: list[str], env: dict | None = None, cwd: str | None = None
                ) -> ProgramMPI:
    """The MPI of the program ``tokens`` starts (the first token found on ``PATH``), started in
    the folder ``cwd`` (None: this one).

    ``python x.py`` / ``python3 -m pkg`` and scripts whose ``#!`` names Python (read as the
    kernel and env(1) do: :mod:`~hpcds1mpi.launch.shebang`) are asked through that
    interpreter's mpi4py; ELF binaries are read, and the program a shell wrapper names
    (:func:`~hpcds1mpi.launch.wrapper_program.unwrapped`); anything else is unknown."""
    from hpcds1mpi.launch.shebang import PYTHON_NAME, read_shebang, shebang_python
    from hpcds1mpi.launch.wrapper_program import unwrapped

    env = dict(os.environ if env is None else env)
    found = past_wrappers(tokens, env)  # past `env X=1`, `nice`, `numactl` (s30 tester K1)
    if not found or not found[0]:
        return ProgramMPI(None, f"{tokens[0]}'s words cannot be read" if tokens else "no program")
    tokens, env = found
    from hpcds1mpi.launch.program_file_mpi import interpreted_program_mpi, past_tools
    from hpcds1mpi.launch.tool_wrappers import is_tool

    if is_tool(tokens[0]):  # strace, perf, valgrind: the program it runs (s44 tester N6)
        inner = past_tools(tokens)
        return program_mpi(inner, env, cwd) if inner else ProgramMPI(
            None, f"the program {os.path.basename(tokens[0])} runs cannot be read")

    # s32 tester W1: Rscript mc.R; s35 tester A1: ruby reduce.rb, read in the run's folder
    if (interpreted := interpreted_program_mpi(tokens, env, cwd)) is not None:
        return interpreted
    if (wrapped := unwrapped(tokens, env, cwd)) and wrapped[1]:  # s29 tester E1 (hpcc's)
        inner = program_mpi(wrapped[0], env, cwd)
        said = inner.family or inner.evidence.endswith(("cannot be read", NO_MPI,
                                                                 NO_MPI_CALLS))
        return ProgramMPI(inner.family, f"{wrapped[1]}: {inner.evidence}"
                          + ("" if said else ": its MPI cannot be read"), inner.path)
    from hpcds1mpi.launch.python_mpi_use import python_without_mpi

    path = in_folder(tokens[0], cwd) if "/" in tokens[0] else shutil.which(
        tokens[0], path=env.get("PATH"))
    if path is None or not os.path.isfile(path):
        return ProgramMPI(None, f"{tokens[0]} not found")
    if PYTHON_NAME.match(os.path.basename(path)):  # s33 tester D4: mpi4py there, never used
        why = python_without_mpi(tokens[1:], cwd)
        return ProgramMPI(None, why) if why else python_mpi(path, env)
    shebang = read_shebang(path)
    if shebang is not None:
        found = shebang_python(path, env)
        if found is not None:
            if why := python_without_mpi([], cwd, script=path):
                return ProgramMPI(None, why)
            (interpreter, *options), script_env = found
            return python_mpi(interpreter, script_env, tuple(options))
        line = " ".join(part for part in shebang if part)
        unnamed = " that names no one program outright" if wrapped is None else ""  # no guess
        return ProgramMPI(None, f"{os.path.basename(path)} is a script run by {line}{unnamed}: "
                                "its MPI cannot be read")
    return binary_mpi(path, env)


def launcher_family(path: str) -> str | None:
    """``"openmpi"``, ``"mpich"`` (hydra, Intel MPI), ``"slurm"`` (srun), or None when
    neither the command's ``--version`` nor its file names an MPI launcher
    (:func:`~hpcds1mpi.launch.mpi_installation.version_family`)."""
    from hpcds1mpi.launch.launcher_discovery import version_text
    from hpcds1mpi.launch.mpi_installation import version_family

    if os.path.basename(path) == "srun":
        return "slurm"
    return version_family(path, version_text(path))


def candidates(family: str, env: dict | None = None, exclude: str = "",
               library: str | None = None) -> list[str]:
    """Launchers on ``PATH`` (and beside this Python) whose family is ``family``; those of the
    installation owning the MPI ``library`` the program loads first (:func:`owner_first`),
    its own ``bin``'s first of all where it is on no PATH (s35 tester I6: Intel MPI's, loaded
    through RUNPATH, was never named)."""
    import sys

    from hpcds1mpi.launch.mpi_installation import installation_launcher

    env = os.environ if env is None else env
    seen, found = set(), []
    names = [installation_launcher(library, family)]
    names += [shutil.which(n, path=env.get("PATH")) for n in CANDIDATES.get(family, ())]
    names.append(str(Path(sys.executable).parent / "mpiexec"))
    for name in names:
        if not name or not os.path.exists(name):
            continue
        real = os.path.realpath(name)
        if real in seen or real == os.path.realpath(exclude or "/nonexistent"):
            continue
        seen.add(real)
        if launcher_family(name) == family:
            found.append(name)
    return owner_first(found, library)


def check_launcher(program: ProgramMPI, launcher_path: str, srun_mpi: str = "",
                   env: dict | None = None, *, words: RefusalWords = RefusalWords(),
                   library: str | None = None, suggest=None) -> str | None:
    """Refuse a launcher that cannot start ``program`` as one job; return its family.

    Args:
        words: how the refusal names its fix, by the refusing command's options (the kernels'
            sweep takes no ``--mpiexec``: :func:`~hpcds1mpi.launch.refusal_words.kernel_words`).
        library: the MPI library file ``program`` loads where the caller knows it better than
            ``ldd`` (the MPICH wheel's, found by mpi4py's own loader); None: :func:`library_file`.
        suggest: the launcher of the program's family to name, of () -> path or None; None:
            the first of :func:`candidates`.

    Raises:
        LaunchError (``words.error``): the program's MPI, why this launcher cannot start it and
            a launcher that can, when one is found.
        ConfigError: an srun ``--mpi`` that cannot start it: ``none`` for several ranks,
            ``pmix`` for a library that speaks no PMIx (:func:`speaks_pmix`), another than
            ``pmix`` for an Open MPI without Slurm's PMI (:func:`openmpi_pmi2_refusal`).
    """
    family = launcher_family(launcher_path)
    want = program.family
    if want not in (OPENMPI, MPICH):
        return family  # unknown or an unresolved MPI-5 ABI: the probe decides
    head = words.head.format(name=FAMILY_NAMES[want], evidence=program.evidence)
    suggest = suggest or (lambda: next(iter(candidates(
        want, env, exclude=launcher_path, library=library or library_file(program, env))), None))
    if family == "slurm":
        # s31 tester P8: a --mpi value that cannot start it is a bad option value, exit 2, as
        # pmix_refusal's below (these two exited 1)
        plugin = f"srun --mpi={srun_mpi}" + (f" ({words.plugin_from})" if words.plugin_from
                                             else "")
        if srun_mpi == "none":
            raise ConfigError(f"{head}; {plugin} gives its ranks no wire-up: "
                              + words.plugin_fix.format("pmix" if want == OPENMPI else "pmi2"))
        if want == OPENMPI and srun_mpi and not srun_mpi.startswith("pmix") and (
                why := openmpi_pmi2_refusal(program, env, library)):  # it aborts in MPI_Init
            own = suggest() if words.or_launcher else None
            raise ConfigError(f"{head}; {why}, so {plugin} cannot start it as one job: "
                              + words.plugin_fix.format("pmix")
                              + (words.or_launcher.format(own) if own else ""))
        if why := pmix_refusal(program, srun_mpi, env, library, words.plugin_from):
            raise ConfigError(f"{head}; {why}: {words.plugin_fix.format('pmi2')}")
        return family
    if family == want:
        return family
    own = suggest()
    hint = words.launcher_fix.format(own) if own else words.no_launcher.format(
        name=FAMILY_NAMES[want])
    raise words.error(f"{head} but {launcher_path} is "
                      f"{LAUNCHER_NAMES.get(family or '', 'not its launcher')}, "
                      f"which would start it as independent 1-rank copies; {hint}")
