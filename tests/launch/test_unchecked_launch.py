"""The note on a launch line whose program's MPI neither its file nor the model tells
(:mod:`hpcds1mpi.launch.unchecked_launch`; s42 tester E4: advise said nothing)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from hpcds1mpi.launch import script_mpi_check as mpi_check
from hpcds1mpi.launch.recorded_mpi import recorded_mpi
from hpcds1mpi.launch.script_reading import read_script
from tests.helpers import system_program

#: A program whose MPI cannot be read: a shell script that chooses its binary in an ``if``,
#: as Debian's HYPHYMPI chooses its SIMD build.
DISPATCHER = ("#!/bin/sh\nEXE=/usr/lib/nowhere/bin/app\n"
              "if grep -q avx /proc/cpuinfo; then \"$EXE-avx\" \"$@\"; exit; fi\n"
              "\"$EXE\" \"$@\"\n")


@pytest.fixture
def launchers():
    """Debian's Open MPI mpirun and MPICH hydra (their --version read once, as elsewhere)."""
    from hpcds1mpi.launch.launchers import version_text

    found = {"openmpi": system_program("mpirun.openmpi"),
             "mpich": system_program("mpiexec.mpich")}
    for launcher in found.values():
        version_text(launcher)
    return found


@pytest.fixture
def dispatcher(tmp_path):
    """The folder holding ``app``, a program whose file does not tell its MPI."""
    app = tmp_path / "app"
    app.write_text(DISPATCHER)
    app.chmod(0o755)
    return tmp_path


def _swept(launcher: str) -> dict:
    return {"launcher": "mpiexec", "command": launcher, "args": [], "mpi": "",
            "flavour": "OpenMpiMpirun" if "openmpi" in launcher else "HydraMpiexec"}


SRUN_PMIX = {"launcher": "srun", "command": "srun", "args": [], "mpi": "pmix",
             "flavour": "Srun"}


def _checks(text: str, folder, recorded, conf=None) -> tuple[list[str], list[str]]:
    script = read_script(text)
    env = {"PATH": os.environ["PATH"], "SLURM_CONF": str(conf or folder / "none.conf")}
    return mpi_check.launch_checks(script, str(folder), env,
                                   measured=(script.launches[-1].line, recorded))


def _note(text: str, folder, recorded):
    from hpcds1mpi.launch.unchecked_launch import unread_launch

    script = read_script(text)
    env = {"PATH": os.environ["PATH"], "SLURM_CONF": str(folder / "none.conf")}
    return unread_launch(script, script.launches[-1], str(folder), env, recorded)


def test_where_neither_file_nor_model_tells_the_line_is_said_unchecked(launchers, dispatcher):
    srun = recorded_mpi(SRUN_PMIX)
    text = f"#!/bin/bash\n#SBATCH --ntasks=2\n{launchers['mpich']} -n 2 ./app in.bf\n"
    assert _checks(text, dispatcher, srun) == ([], [])  # no MPI finding: this module's note
    assert _note(text, dispatcher, srun) == ("line 3: app's MPI cannot be read from its file and the model records "
                        "only that its sweep ran it with srun --mpi=pmix, so this line's "
                        "launcher is not checked: launch it as measured (srun --mpi=pmix)")
    same = "#!/bin/bash\n#SBATCH --ntasks=2\nsrun --mpi=pmix ./app in.bf\n"
    assert _note(same, dispatcher, srun) is None  # as measured: nothing to say
    none = _note(text, dispatcher, None)  # pooled launchers, or a model before them
    assert "the model records no one launcher its sweep ran it with" in none
    known = recorded_mpi(_swept(launchers["openmpi"]))  # a family: launch_checks's warning
    assert _note(text, dispatcher, known) is None
