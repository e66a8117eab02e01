"""The MPICH-family application of the real-application tests: ``jacobi.c`` built with the
mpich wheel's ``mpicc`` (libmpi.so.12), and the sweep arguments the tests and benchmark share."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

SOURCE = Path(__file__).with_name("jacobi.c")
TIME_REGEX = r"^time ([0-9.eE+-]+) s"
FOM_REGEX = r"^rate ([0-9.eE+-]+) Mupdates/s"
RANKS_REGEX = r"^jacobi: ranks (\d+)"


def build(folder: Path) -> str | None:
    """``folder/jacobi`` compiled with the wheel's mpicc (-O2 -fopenmp); None without one."""
    cc = Path(sys.executable).parent / "mpicc"
    if not cc.exists() or shutil.which("cc") is None:
        return None
    exe = folder / "jacobi"
    subprocess.run([str(cc), "-O2", "-fopenmp", "-o", str(exe), str(SOURCE)], check=True,
                   timeout=120)
    return str(exe)


def sweep_args(exe: str, *, repeats: int | None = 2, ranks: str = "1,2",
               threads: str = "1,2") -> list[str]:
    """``hpcds1mpi sweep`` arguments for jacobi over ranks per node ``ranks`` x ``threads``
    (add --sizes, --out; the launcher is the default: the wheel's mpiexec beside this Python)."""
    counts = ["--min-repeats", str(repeats), "--max-repeats", str(repeats), "--min-time", "0"] \
        if repeats else []
    return ["sweep", "--command", f"{exe} {{size}} 40", "--label", "jacobi",
            "--ranks-per-node", ranks, "--threads", threads, "--time-regex", TIME_REGEX,
            "--fom-regex", FOM_REGEX, "--ranks-regex", RANKS_REGEX, *counts, "--no-progress"]
