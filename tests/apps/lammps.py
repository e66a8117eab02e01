"""LAMMPS's input and the sweep arguments of its real-application test.

LAMMPS (Debian package ``lammps``: ``lmp``, linked against Open MPI; its build has no OPENMP
package, so threads are not swept) runs ``in.lj``, the classic Lennard-Jones melt: an fcc
lattice at density 0.8442 in a box of ``x``^3 unit cells (4 atoms each), ``x`` given on the
command line (``-var x {size}``), 80 steps. It prints its own time of the steps and its rank
count on one line (``Loop time of 0.0805 on 1 procs for 80 steps with 2048 atoms``) and its
rate on the next (``Performance: 429128.599 tau/day, 993.353 timesteps/s``).
"""

from __future__ import annotations

import shutil
from pathlib import Path

INPUT = Path(__file__).with_name("in.lj")
#: Steps of ``in.lj``'s run: LAMMPS's timesteps/s is STEPS / its loop time.
STEPS = 80
COMMAND = "lmp -in in.lj -var x {size} -log none"
TIME_REGEX = r"Loop time of ([0-9.eE+-]+)"
RANKS_REGEX = r"Loop time of \S+ on (\d+) procs"
FOM_REGEX = r"([0-9.eE+-]+) timesteps/s"


def copy_input(folder: Path) -> Path:
    """``folder/in.lj``: the sweep runs in ``folder``, as a user runs it beside the input."""
    return Path(shutil.copy(INPUT, folder / "in.lj"))


def sweep_args(mpiexec: str, *, command: str = COMMAND, repeats: int = 2,
               ranks: str = "1,2", time_regex: str = TIME_REGEX) -> list[str]:
    """``hpcds1mpi sweep`` arguments for LAMMPS over ranks ``ranks`` (add --sizes, --out; run
    in the folder of ``in.lj``)."""
    return ["sweep", "--command", command, "--label", "lammps", "--ranks-per-node", ranks,
            "--time-regex", time_regex, "--ranks-regex", RANKS_REGEX, "--fom-regex", FOM_REGEX,
            "--mpiexec", mpiexec, "--min-repeats", str(repeats), "--max-repeats", str(repeats),
            "--min-time", "0", "--no-progress"]
