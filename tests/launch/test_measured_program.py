"""Whether a script's ranks run the measured program file
(:mod:`hpcds1mpi.launch.measured_program`; real interpreters, s32 tester U2)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from hpcds1mpi.launch.measured_program import (measured_command, measured_file, other_program,
                                               same_program)
from hpcds1mpi.launch.script_reading import read_script

SYSTEM_PYTHON = "/usr/bin/python3"
VENV_BIN = str(Path(sys.executable).parent)
MEASURED = f"{SYSTEM_PYTHON} sim.py {{size}} 20"


@pytest.fixture
def venv_first():
    if not os.path.exists(SYSTEM_PYTHON) or not (Path(VENV_BIN).parent / "pyvenv.cfg").exists():
        pytest.skip("needs /usr/bin/python3 and a venv")
    return {"PATH": f"{VENV_BIN}:{os.environ['PATH']}"}


def _other(line: str, tmp_path, env, command=MEASURED):
    script = read_script(f"#!/bin/bash\n#SBATCH --ntasks=2\n{line}\n")
    return other_program(script, script.launches[-1], command, str(tmp_path), env)


def test_a_venvs_python_is_another_interpreter_than_the_system_one(venv_first):
    assert not same_program(SYSTEM_PYTHON, os.path.join(VENV_BIN, "python3"))
    assert same_program(SYSTEM_PYTHON, SYSTEM_PYTHON)


def test_bare_python3_under_a_bare_mpirun_runs_the_venvs(venv_first, tmp_path):
    """s32 tester U2: `mpirun.openmpi -n 2 python3 sim.py 15 20` with the venv first on PATH
    failed (no meep in the venv); the workload was measured with /usr/bin/python3."""
    line = _other("mpirun.openmpi -n 2 python3 sim.py 15 20", tmp_path, venv_first)
    assert line is not None and line.startswith(
        f"line 3: the ranks of mpirun.openmpi run python3 as {VENV_BIN}/python3, but the "
        f"workload was measured with {SYSTEM_PYTHON} ('{MEASURED}'): another interpreter"), line
    assert line.endswith(f"write {SYSTEM_PYTHON} on line 3"), line
    assert _other("srun python3 sim.py 15 20", tmp_path, venv_first) is not None


def test_the_measured_interpreter_says_nothing(venv_first, tmp_path):
    # s32 tester U1: Open MPI's mpirun by its path puts /usr/bin first on the ranks' PATH
    assert _other("/usr/bin/mpirun.openmpi -n 2 python3 sim.py 15 20", tmp_path,
                  venv_first) is None
    assert _other(f"mpirun.openmpi -n 2 {SYSTEM_PYTHON} sim.py 15 20", tmp_path,
                  venv_first) is None
    # a measured command naming a bare word says nothing of which file ran
    assert _other("mpirun.openmpi -n 2 python3 sim.py 15 20", tmp_path, venv_first,
                  "python3 sim.py {size} 20") is None


OPENMPI_RUN = {"launcher": "mpiexec", "command": "/usr/bin/mpirun.openmpi", "args": [],
               "flavour": "OpenMpiMpirun", "mpi": ""}


def test_a_bare_measured_word_is_the_file_its_open_mpi_prefix_gave(venv_first, tmp_path):
    """s33 tester B2: `python3 laplace.py {size}` swept under /usr/bin/mpirun.openmpi ran
    /usr/bin/python3; `srun python3 laplace.py 80` ran the venv's and failed (no petsc4py),
    and advise said nothing, as it did for a measured command spelling out /usr/bin/python3."""
    if not os.path.exists(OPENMPI_RUN["command"]):
        pytest.skip("needs Debian's Open MPI")
    bare = "python3 sim.py {size} 20"
    assert measured_file(bare, OPENMPI_RUN) == SYSTEM_PYTHON
    assert measured_file(MEASURED, None) == SYSTEM_PYTHON  # spelled out: itself
    srun = {**OPENMPI_RUN, "launcher": "srun", "command": "srun"}
    assert measured_file(bare, srun) is None and measured_file(bare, None) is None
    line = _other("srun python3 sim.py 15 20", tmp_path, venv_first,
                  measured_command(bare, OPENMPI_RUN))
    assert line is not None and f"measured with {SYSTEM_PYTHON} ('{bare}')" in line, line
    assert line.endswith(f"write {SYSTEM_PYTHON} on line 3"), line
    assert _other("/usr/bin/mpirun.openmpi -n 2 python3 sim.py 15 20", tmp_path, venv_first,
                  measured_command(bare, OPENMPI_RUN)) is None


def test_a_wrappers_bare_interpreter_is_compared_with_the_one_its_sweep_ran(venv_first,
                                                                           tmp_path):
    """s47 tester K6: `./run.sh {size}` (`exec python3 ...`) swept under
    /usr/bin/mpirun.openmpi ran /usr/bin/python3; a script's bare `mpirun.openmpi -np 2
    ./run.sh 32` with the venv first runs the venv's python3, and advise named MPICH's
    mpiexec (which failed too) instead of saying it is another interpreter."""
    if not os.path.exists(OPENMPI_RUN["command"]):
        pytest.skip("needs Debian's Open MPI")
    wrapper = tmp_path / "run.sh"
    wrapper.write_text('#!/bin/sh\nexport OMP_NUM_THREADS=1\nexec python3 sim.py "$@"\n')
    wrapper.chmod(0o755)
    swept = measured_command("./run.sh {size}", OPENMPI_RUN)
    line = _other("mpirun.openmpi -np 2 ./run.sh 32", tmp_path, venv_first, swept)
    assert line is not None and line.startswith(
        f"line 3: run.sh runs python3, which the ranks of mpirun.openmpi find as {VENV_BIN}/"
        f"python3, but the workload was measured with {SYSTEM_PYTHON}"), line
    assert line.endswith(f"launch it with /usr/bin/mpirun.openmpi by that path as the sweep "
                         f"did, or make run.sh exec {SYSTEM_PYTHON}"), line
    # as the sweep launched it: its ranks find /usr/bin/python3 first
    assert _other("/usr/bin/mpirun.openmpi -np 2 ./run.sh 32", tmp_path, venv_first,
                  swept) is None
