"""advise on a launcher of the program's MPI family but another installation's (s40 tester
A9, A2): two Open MPIs built in the test, both ``libmpi.so.40``; one ORTE-era (Open MPI 4),
one with Open MPI 5's OPAL, each with its own launchers."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from hpcds1mpi.launch.script_mpi_check import mpi_mismatch
from hpcds1mpi.launch.script_reading import read_script
from tests.launch.fake_openmpi import fake_openmpi


def _launcher(path: Path, marks: bytes = b"\0OPAL_PREFIX\0") -> str:
    """An executable ELF (a copy of ``true``) at ``path``: Open MPI's by its name or marks."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(Path(os.path.realpath(shutil.which("true"))).read_bytes() + marks)
    path.chmod(0o755)
    return str(path)


def _check(tmp_path: Path, line: str, env: dict | None = None):
    script = read_script(f"#!/bin/bash\n#SBATCH -N 1\n#SBATCH --ntasks-per-node=2\n{line}\n")
    return mpi_mismatch(script, script.launches[0], str(tmp_path),
                        env if env is not None else dict(os.environ))


def test_prrtes_launcher_for_an_open_mpi_4_program_is_warned_of(tmp_path):
    """s40 tester A9: `prterun -n 2 prog`, prog loading Open MPI 4.1's libmpi.so.40, passed
    without a word; it runs two independent 1-rank copies (prterun sets no LD_LIBRARY_PATH)."""
    four = fake_openmpi(tmp_path, "four", links=("libopen-rte.so.40",))
    own = _launcher(tmp_path / "four" / "bin" / "mpirun")
    prterun = _launcher(tmp_path / "five" / "bin" / "prterun", b"")
    kind, said = _check(tmp_path, f"{prterun} -n 2 {four}")
    assert kind == "warning" and "independent 1-rank copies" in said, said
    assert f"loads {tmp_path / 'four' / 'lib' / 'libmpi.so.40'}" in said
    assert said.endswith(f"launch it with {own}") and "\n" not in said
    assert _check(tmp_path, f"{own} -n 2 {four}") is None  # its own launcher


def test_open_mpis_mpirun_by_path_gives_its_ranks_its_own_library(tmp_path):
    """Open MPI's mpirun started by its path puts PREFIX/lib first on its ranks'
    LD_LIBRARY_PATH (the wheel's mpirun does: a program without RUNPATH loads its 5.0): the
    ranks' library is that installation's, not the one the program's files name."""
    four = fake_openmpi(tmp_path, "four", links=("libopen-rte.so.40",))
    fake_openmpi(tmp_path, "five", links=("libopen-pal.so.80",))
    mpirun5 = _launcher(tmp_path / "five" / "bin" / "mpirun")
    assert _check(tmp_path, f"{mpirun5} -n 2 {four}") is None


def test_another_installations_launcher_found_on_path_is_noted(tmp_path):
    """s40 tester A2 in advise: `mpirun.openmpi -np 2 hyb` (4.1's launcher, found on PATH,
    for a program loading 5.0.11) said nothing; it is another installation's."""
    five = fake_openmpi(tmp_path, "five", links=("libopen-pal.so.80",))
    own = _launcher(tmp_path / "five" / "bin" / "mpirun")
    _launcher(tmp_path / "four" / "bin" / "mpirun.openmpi", b"\0orterun 4.1\0")
    env = {**os.environ, "PATH": f"{tmp_path / 'four' / 'bin'}:{os.environ.get('PATH', '')}"}
    kind, said = _check(tmp_path, f"mpirun.openmpi -np 2 {five}", env)
    assert kind == "note" and "another installation's launcher" in said, said
    assert said.endswith(f"launch it with {own}")


def test_a_launcher_found_on_paths_the_module_lines_change_is_not_asserted(tmp_path):
    """s40 review G3: after `module load openmpi/5` (a line not followed here) a bare
    `prterun` was judged on the PATH advise sees and warned of ("it would start independent
    1-rank copies"), though the job may find another; now a note with the module-line
    caveat. A launcher by its path, which no module line changes, is still warned of."""
    four = fake_openmpi(tmp_path, "four", links=("libopen-rte.so.40",))
    own = _launcher(tmp_path / "four" / "bin" / "mpirun")
    prterun = _launcher(tmp_path / "five" / "bin" / "prterun", b"")
    env = {**os.environ, "PATH": f"{tmp_path / 'five' / 'bin'}:{os.environ.get('PATH', '')}"}
    setup = "source ./site-env.sh\n"  # not a module system's file: the job's PATH is unknown
    kind, said = _check(tmp_path, f"{setup}prterun -n 2 {four}", env)
    assert kind == "note", said  # was: warning, asserted
    assert f"but prterun ({prterun} on the PATH advise sees) is another installation's " \
        "launcher" in said, said
    assert "the one beside that library) (line 4 changes the job's environment first: " in said
    assert "so the job may find another prterun: check `which prterun` in the job): " in said
    assert said.endswith(f"launch it with {own}") and "\n" not in said
    bare = {"PATH": env["PATH"]}  # no module system initialised: `module load` not followed
    kind, said = _check(tmp_path, f"module load openmpi/5\nprterun -n 2 {four}", bare)
    assert kind == "note" and "check `which prterun` in the job" in said, said
    assert "where the job runs this one, Open MPI 5's launcher" in said
    kind, said = _check(tmp_path, f"{setup}{prterun} -n 2 {four}", env)
    assert kind == "warning" and "independent 1-rank copies" in said, said
