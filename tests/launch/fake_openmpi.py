"""Open MPI installations built in a test: a ``libmpi.so.40`` of its own, with or without a
Slurm PMI component beside it, and a program linked against it (found through its RPATH)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest


def _shared(path: Path, soname: str, *links: str, folder: Path | None = None) -> None:
    """An empty shared library ``path`` whose soname is ``soname`` and that needs ``links``."""
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(path), "-x", "c", "/dev/null",
                    f"-Wl,-soname,{soname}", *([f"-L{folder}"] if folder else []),
                    "-Wl,--no-as-needed", *[f"-l:{lib}" for lib in links]],
                   check=True, timeout=60)


def fake_openmpi(tmp_path: Path, name: str, *, components: tuple = ("mca_pmix_ext3x.so",),
                 links: tuple = ()) -> str:
    """A program linked against ``tmp_path/name/lib/libmpi.so.40``, whose installation has
    ``components`` in ``lib/openmpi`` (none: no folder) and whose libmpi links the libraries
    ``links`` (file names, built empty in ``lib``: e.g. Slurm's ``libpmi2.so.0``)."""
    if shutil.which("cc") is None:
        pytest.skip("no C compiler")
    lib = tmp_path / name / "lib"
    lib.mkdir(parents=True)
    for soname in links:
        _shared(lib / soname, soname)
    _shared(lib / "libmpi.so.40", "libmpi.so.40", *links, folder=lib)
    if components:
        (lib / "openmpi").mkdir()
        for component in components:
            _shared(lib / "openmpi" / component, component)
    main = tmp_path / name / "main.c"
    # it starts MPI (weakly bound: the empty libmpi defines nothing), as an MPI program does
    main.write_text("extern int MPI_Init(void) __attribute__((weak));\n"
                    "int main(void) { return MPI_Init ? MPI_Init() : 0; }\n")
    app = tmp_path / name / "app"
    subprocess.run(["cc", "-o", str(app), str(main), f"-L{lib}", "-Wl,--no-as-needed",
                    "-l:libmpi.so.40", f"-Wl,-rpath,{lib}"], check=True, timeout=60)
    return str(app)
