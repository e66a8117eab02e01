"""Whether a Python program uses MPI at all, read from its source without running it.

An interpreter that has mpi4py runs scripts that never touch it: ``python serial.py`` had been
read as "the MPICH family" through its interpreter's mpi4py, so its 2-rank runs were two serial
copies recorded ok with no note (s33 tester D4). :func:`script_names_mpi` reads the script and
the local modules it imports (beside it, a bounded number) for the name of mpi4py or of a
package built on MPI (dolfinx, petsc4py, meep, gpaw, ...: each imports mpi4py itself, so a
script importing them alone is an MPI program). mpi4py named anywhere in the text counts (a
dynamic ``importlib.import_module("mpi4py")`` too), the others where imported: only a script
naming none is read as MPI-free.
"""

from __future__ import annotations

import os
import re

#: Packages whose import means MPI (each uses mpi4py or links MPI itself).
MPI_PACKAGES = ("mpi4py", "petsc4py", "slepc4py", "dolfinx", "dolfin", "fenics", "firedrake",
                "meep", "gpaw", "h5py", "horovod", "mpi4jax", "heat", "mpi4py_fft", "dask_mpi",
                "PyTrilinos", "adios2", "lammps", "ngsolve", "mfem", "devito", "pyscf_mpi",
                "netCDF4", "boutpp", "pylith", "espressomd", "underworld", "nekrs", "mpi")
_IMPORTS = re.compile(r"^\s*(?:from\s+(\.*[\w.]*)\s+import|import\s+([\w., ]+))", re.M)
#: Options of python that take a value (``-W ignore``, ``-X dev``): the one list
#: ``launch/script_placeholders.program_at`` reads a Python command's program by too.
PYTHON_VALUED = ("-W", "-X", "--check-hash-based-pycs")
#: A console-script wrapper (pip's, setuptools' and easy_install's ``bin/`` scripts): its
#: program is an installed package's entry point, not its own text (s41 tester A2: Debian's
#: ``/usr/bin/gpaw`` loads ``gpaw.cli.main`` through ``load_entry_point('gpaw==22.8.0',
#: ...)``, with no ``import gpaw``, and was read as MPI-free).
_ENTRY_POINT = re.compile(r"EASY-INSTALL-(?:ENTRY-)?SCRIPT|\bload_entry_point\(|"
                          r"\.entry_points\b|\bentry_points\(|-script\\\.pyw\?")
#: The wrapper pip and distlib write today (``from gpaw.cli import main`` ...
#: ``sys.exit(main())``, like ``.venv/bin/hpcds1mpi``), whatever its argv[0] line: its package
#: is the module's top name. Only the older templates had been known, so pip's wrappers of an
#: MPI program were read as MPI-free (s41 review F2).
_CALLS_IMPORTED = re.compile(r"^from\s+([\w.]+)\s+import\s+(\w+)\s*$"
                             r"(?=.*^\s+sys\.exit\(\s*\2\(\)\s*\))", re.M | re.S)
#: The distribution such a wrapper names (``'gpaw==22.8.0'``): its package's name.
_DISTRIBUTION = re.compile(r"(?:EASY-INSTALL-(?:ENTRY-)?SCRIPT:\s*|load_entry_point\(\s*|"
                           r"__requires__\s*=\s*|distribution\(\s*)['\"]([\w.-]+)")
#: At most this much of a file, and this many files, are read.
_READ_CHARS = 1 << 20
_MAX_FILES = 50


def python_target(args: list[str]) -> tuple[str, str] | None:
    """What ``python ARGS`` runs: ("file", path), ("module", name) or ("code", text); None
    where nothing (an interactive interpreter) or it cannot be told."""
    k = 0
    while k < len(args):
        word = args[k]
        if word == "-m" and k + 1 < len(args):
            return "module", args[k + 1]
        if word.startswith("-m") and len(word) > 2:
            return "module", word[2:]
        if word == "-c" and k + 1 < len(args):
            return "code", args[k + 1]
        if word in PYTHON_VALUED:
            k += 2
            continue
        if word == "-" or word.startswith("-") and word[1:2] in ("c", "m"):
            return None
        if not word.startswith("-"):
            return "file", word
        k += 1
    return None


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read(_READ_CHARS)
    except OSError:
        return None


def _imports_mpi(text: str) -> bool:
    """Whether ``text`` names mpi4py, or imports a package of :data:`MPI_PACKAGES`, or is a
    console-script wrapper of one's distribution (``load_entry_point('gpaw==22.8.0', ...)``)."""
    if "mpi4py" in text:
        return True
    listed = {name.casefold().replace("-", "_") for name in MPI_PACKAGES}
    return any(name.strip().split(" ")[0].split(".")[0] in MPI_PACKAGES
               for match in _IMPORTS.finditer(text)
               for name in (match.group(1) or match.group(2) or "").split(",")) or any(
        match.group(1).split("==")[0].casefold().replace("-", "_") in listed
        for match in _DISTRIBUTION.finditer(text))


def _local_modules(text: str, folder: str) -> list[str]:
    """The files of the modules ``text`` imports that lie in ``folder`` (``x.py``, or every
    ``.py`` of a package ``x/``)."""
    found = []
    for match in _IMPORTS.finditer(text):
        for name in (match.group(1) or match.group(2) or "").split(","):
            top = name.strip().split(" ")[0].lstrip(".").split(".")[0]
            if not top:
                continue
            if os.path.isfile(single := os.path.join(folder, top + ".py")):
                found.append(single)
            elif os.path.isdir(package := os.path.join(folder, top)):
                for root, _, files in os.walk(package):
                    found += [os.path.join(root, f) for f in sorted(files) if f.endswith(".py")]
    return found


def _installed_package(text: str, folder: str) -> str | None:
    """The folder of the package a pip or distlib wrapper in ``folder`` runs
    (:data:`_CALLS_IMPORTED`): ``site-packages/PKG`` of the environment whose ``bin/`` holds
    it; "" where the text is such a wrapper of a package not found there; None where it is no
    such wrapper."""
    import glob

    if not (call := _CALLS_IMPORTED.search(text)):
        return None
    top = call[1].split(".")[0]
    if os.path.exists(os.path.join(folder, f"{top}.py")) or os.path.isdir(f"{folder}/{top}"):
        return None  # a local module: read as one
    found = glob.glob(os.path.join(folder, os.pardir, "lib*", "python*", "site-packages", top))
    return found[0] if found and os.path.isdir(found[0]) else ""


def script_names_mpi(text: str, folder: str) -> bool | None:
    """Whether the Python source ``text`` (of a script in ``folder``), or a local module it
    imports, names mpi4py or a package built on MPI (:data:`MPI_PACKAGES`); None where a file
    could not be read or too many would be, or where it is a console-script wrapper of a
    package not read here (no guess). A pip or distlib wrapper is read as its package, where
    its environment holds it (:func:`_installed_package`)."""
    pending, seen = [(text, folder)], set()
    while pending:
        source, where = pending.pop()
        if _imports_mpi(source):
            return True
        if _ENTRY_POINT.search(source):
            return None  # an installed package's entry point, not read here: no guess
        if (package := _installed_package(source, where)) == "":
            return None  # its package is not where it can be read: no guess
        if package:
            where = os.path.dirname(package)  # its modules import each other by the package
            source = f"{source}\nimport {os.path.basename(package)}"
        for path in _local_modules(source, where):
            if path in seen:
                continue
            seen.add(path)
            if len(seen) > _MAX_FILES or (more := _read(path)) is None:
                return None
            pending.append((more, where))
    return False


def python_without_mpi(args: list[str], cwd: str | None = None,
                       script: str | None = None) -> str | None:
    """Why the Python program run as ``python ARGS`` (or the script file ``script``, run by
    its ``#!``) uses no MPI: "serial.py names neither mpi4py nor a package built on MPI";
    None where it may (it names one, a module run by ``-m``, a file that cannot be read)."""
    target = ("file", script) if script else python_target(args)
    if target is None or target[0] == "module":
        return None
    if target[0] == "code":
        text, folder, name = target[1], cwd or os.getcwd(), "its -c code"
    else:
        path = target[1] if os.path.isabs(target[1]) or not cwd else os.path.join(cwd, target[1])
        text, folder, name = _read(path), os.path.dirname(os.path.abspath(path)), \
            os.path.basename(path)
        if text is None:
            return None
    if script_names_mpi(text, folder) is not False:
        return None
    return (f"a Python program that imports no MPI: {name} (and its local modules) names "
            "neither mpi4py nor a package built on MPI")
