"""The refusal of a written script's launcher of another MPI family than its program's
(:func:`~hpcds1mpi.launch.script_launcher_mpi.check_script`)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from hpcds1mpi.errors import ConfigError
from hpcds1mpi.launch.script_launcher_mpi import check_script

OPENMPI_RUN = "/usr/bin/mpirun.openmpi"
VENV_PYTHON = str(Path(sys.executable).parent / "python3")


@pytest.fixture
def venv_first(monkeypatch):
    """This PATH with the venv's python3 (MPICH's mpi4py) first; Debian's python3 (Open MPI's
    mpi4py) beside Debian's mpirun.openmpi."""
    if not os.path.exists(OPENMPI_RUN) or not os.path.exists(VENV_PYTHON) or \
            subprocess.run(["/usr/bin/python3", "-c", "import mpi4py"]).returncode or \
            not subprocess.run([VENV_PYTHON, "-c", "import mpi4py.MPI as M; print(M."
                                "Get_library_version())"], capture_output=True,
                               text=True).stdout.startswith("MPICH"):
        pytest.skip("needs Debian's Open MPI and its mpi4py, and a venv with MPICH's")
    monkeypatch.setenv("PATH", f"{Path(VENV_PYTHON).parent}:{os.environ['PATH']}")


def _mpirun():
    from hpcds1mpi.launch.launchers import OpenMpiMpirun

    return OpenMpiMpirun(OPENMPI_RUN, (), as_root=False, cores=2)


def test_a_wrappers_python3_is_read_on_the_path_open_mpis_mpirun_gives_its_ranks(
        tmp_path, venv_first):
    """s47 tester K8: `./run.sh` (`exec python3 ...`) under /usr/bin/mpirun.openmpi runs
    /usr/bin/python3 on the ranks, and the job ran; its python3 had been read on this PATH
    (the venv's, MPICH's) and the script refused, naming a fix that failed."""
    wrapper = tmp_path / "run.sh"
    wrapper.write_text('#!/bin/sh\nexec python3 app.py "$@"\n')
    wrapper.chmod(0o755)
    check_script([str(wrapper), "40"], _mpirun(), os.environ["PATH"])


def test_the_refusal_names_the_program_of_the_launchers_mpi_beside_it(venv_first):
    """s47 tester K8: the venv's python3 under Open MPI's mpirun is refused; besides the
    cluster-file keys (MPICH's mpiexec, under which the venv's python3 lacked the program's
    modules) the refusal names /usr/bin/python3, which the sweep ran and which works."""
    with pytest.raises(ConfigError) as refused:
        check_script([VENV_PYTHON, "app.py", "40"], _mpirun(), os.environ["PATH"])
    assert "or run python3 as /usr/bin/python3, linked against Open MPI" in str(refused.value)
    assert "--program" in str(refused.value)
