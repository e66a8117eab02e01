"""Shared by the tests of advise's launcher check of a program whose file does not tell its
MPI (tests/launch/test_recorded_mpi.py, test_unchecked_launch.py): a dispatcher script, the
launchers it may have been swept with, and the check as advise runs it."""

from __future__ import annotations

import os

import pytest

from hpcds1mpi.launch import script_mpi_check as mpi_check
from hpcds1mpi.launch.launch_line_checks import launch_checks
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
    from hpcds1mpi.launch.launcher_discovery import version_text

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


def swept(launcher: str) -> dict:
    return {"launcher": "mpiexec", "command": launcher, "args": [], "mpi": "",
            "flavour": "OpenMpiMpirun" if "openmpi" in launcher else "HydraMpiexec"}


SRUN_PMIX = {"launcher": "srun", "command": "srun", "args": [], "mpi": "pmix",
             "flavour": "Srun"}


def checks(text: str, folder, recorded, conf=None) -> tuple[list[str], list[str]]:
    script = read_script(text)
    env = {"PATH": os.environ["PATH"], "SLURM_CONF": str(conf or folder / "none.conf")}
    return launch_checks(script, str(folder), env,
                         measured=(script.launches[-1].line, recorded))
