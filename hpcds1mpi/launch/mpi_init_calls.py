"""Whether a binary that links an MPI library ever starts MPI: its initialisation symbols.

Linking ``libmpi`` is not calling it: Debian's ``apbs`` needs ``libmpi.so.40`` (over-linking)
while neither it nor any library it loads imports an MPI symbol, so two of its "ranks" are two
independent 1-rank copies, each doing the whole job, and a sweep stored them as one 2-rank run
(s43 tester I1). A program that is one MPI job calls ``MPI_Init`` (or ``MPI_Init_thread``,
``MPI_Session_init``, their ``PMPI_`` names, the Fortran bindings' ``mpi_init_`` /
``mpi_init__`` / ``MPI_INIT`` / ``mpi_init_f08_``) itself or through a library it loads
(PETSc's ``PetscInitialize``, a solver framework): some file among the binary and its libraries,
other than the MPI library's own, then imports one. The MPI library's own files are told by what
they are, not by name: a library that DEFINES an initialisation symbol is MPI's (its C library,
its Fortran bindings, which import the C entry points); one that only imports it uses MPI, whatever
its name (``libmpisolver.so``, DFTB+'s ``libmpifx``: s43 tester K3, refused while skipped by their
``libmpi`` prefix). Where none does, :func:`calls_mpi_init` says False.

The dynamic symbols are read with binutils' ``nm -D -A``, one run over every file (tens of
milliseconds for a hundred libraries): the project reads ``NEEDED`` with the
standard library, but a symbol table reader is more code than a dependency on pyelftools, which
the project does not have, and ``nm`` ships with the compilers an MPI program is built with.
Without ``nm``, or with a library not found, it answers None (cannot tell) and nothing is
refused. A program that ``dlopen``s the code that starts MPI is missed; the sweep's refusal
names ``--ranks-regex`` as the way to prove its ranks.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess

#: The end of the evidence for a binary that links an MPI library it never starts, which
#: :func:`~hpcds1mpi.launch.mpi_family.known_without_mpi` reads as a program without MPI.
NO_MPI_CALLS = "a build that never starts MPI"
#: An MPI initialisation entry point, in C, PMPI and the Fortran bindings' manglings.
INIT_SYMBOL = re.compile(r"^p?mpi_(init|init_thread|session_init)(_f08)?_{0,2}$", re.IGNORECASE)
#: How long ``nm`` may take over a program and its libraries.
_NM_SECONDS = 60
#: How deep (libraries of libraries) and how many library files are read.
_MAX_DEPTH, _MAX_FILES = 16, 1024


def calls_mpi_init(path: str) -> bool | None:
    """Whether the ELF ``path`` or a library it loads (other than the MPI library's own files,
    those defining an initialisation symbol) imports an MPI initialisation symbol
    (:data:`INIT_SYMBOL`); None where that cannot be told (no ``nm``, a library not found,
    ``nm`` failing). The binary is read first: most MPI programs call ``MPI_Init`` themselves,
    and then no library is read."""
    from hpcds1mpi.launch.elf_libraries import needed_files

    nm = shutil.which("nm")
    if nm is None:
        return None
    # the binary is never MPI's own library: an import starts MPI, even beside its own
    # MPI_Init (a wrapper exported with -rdynamic, calling PMPI_Init)
    if (binary := _init_symbols(nm, [path])) is None or binary[0]:
        return None if binary is None else True
    libraries = []
    try:  # every library, however deep (LAMMPS' reach 5 levels through libcurl)
        for _, _, file in needed_files(path, _MAX_DEPTH, _MAX_FILES):
            if file is None:  # not found or not read: cannot tell, so never refused
                return None
            libraries.append(file)
    except OSError:
        return None
    if not libraries:
        return False
    if (found := _init_symbols(nm, libraries)) is None:
        return None
    imports, defines = found
    return bool(imports - defines)


def _init_symbols(nm: str, files: list[str]) -> tuple[set, set] | None:
    """The ``files`` that import an MPI initialisation symbol and those that define one (one
    ``nm -D -A`` run); None where ``nm`` cannot read them."""
    try:
        proc = subprocess.run([nm, "-D", "-A", *files], capture_output=True, text=True,
                              timeout=_NM_SECONDS)
    except (OSError, subprocess.SubprocessError):
        return None
    if proc.returncode != 0:
        return None
    imports, defines, last = set(), set(), files[0]
    for line in proc.stdout.splitlines():
        symbol, imported = _symbol(line)
        if not INIT_SYMBOL.match(symbol):
            continue
        # -A starts each line with "FILE:", in the order given (a path may hold ':' or ' ')
        if not line.startswith(last + ":"):
            last = next((f for f in files if line.startswith(f + ":")), None)
            if last is None:
                return None
        (imports if imported else defines).add(last)
    return imports, defines


def _symbol(line: str) -> tuple[str, bool]:
    """The symbol name of an ``nm`` line (``U MPI_Init@OMPI_4.0`` -> ``MPI_Init``), "" for none,
    and whether it is imported; a weak reference (``w``: MPI started where the library is
    there) counts as imported, a weak definition (``W``, Open MPI's ``MPI_Init``) as defined."""
    words = line.split()
    if len(words) < 2:
        return "", False
    return words[-1].split("@", 1)[0], words[-2] in ("U", "w", "v")


def never_initialises(library: str, path: str) -> str:
    """The evidence that the binary ``path``, linking the MPI library ``library``, never
    starts MPI (:func:`calls_mpi_init` False): ends with
    :data:`NO_MPI_CALLS`."""
    return (f"{os.path.basename(path)} links {library} but neither it nor a library it loads "
            f"imports MPI_Init or a kin (nm -D): {NO_MPI_CALLS}")
