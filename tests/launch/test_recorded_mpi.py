"""The MPI a model's sweep ran a program with, taken by advise's launcher check where the
program's file does not tell it (:mod:`hpcds1mpi.launch.recorded_mpi`; s42 tester E4: Debian's
``HYPHYMPI``, a ``/bin/sh`` dispatcher, got no warning under a hydra ``mpirun`` nor under
``srun --mpi=pmi2``, though its sweep ran it as one job under Open MPI's ``mpirun``)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from hpcds1mpi.launch import script_mpi_check as mpi_check
from hpcds1mpi.launch.launch_line_checks import launch_checks
from hpcds1mpi.launch.recorded_mpi import recorded_mpi
from hpcds1mpi.launch.script_reading import read_script
from tests.helpers import system_program
# the fixtures dispatcher and launchers are used by name
from tests.launch.recorded_launch_cases import (SRUN_PMIX, checks, dispatcher,  # noqa: F401
                                                launchers, swept)



def test_a_recorded_mpirun_gives_its_family_and_its_installations_library(launchers):
    found = recorded_mpi(swept(launchers["openmpi"]))
    assert found.family == "openmpi" and found.launcher == launchers["openmpi"]
    assert found.library and "libmpi" in os.path.basename(found.library)
    assert os.path.isfile(found.library)
    assert recorded_mpi(swept(launchers["mpich"])).family == "mpich"
    srun = recorded_mpi(SRUN_PMIX)
    assert srun.family is None and srun.launcher == "srun --mpi=pmix"
    assert recorded_mpi(None) is None and recorded_mpi({}) is None


def test_another_familys_mpirun_for_an_unread_program_is_warned_of(launchers, dispatcher):
    recorded = recorded_mpi(swept(launchers["openmpi"]))
    text = f"#!/bin/bash\n#SBATCH --ntasks=2\n{launchers['mpich']} -n 2 ./app in.bf\n"
    warnings, notes = checks(text, dispatcher, recorded)
    assert len(warnings) == 1 and not notes, (warnings, notes)
    assert warnings[0].startswith("line 3: app is linked against Open MPI (as the model's "
                                  f"sweep found: it ran it as one job with "
                                  f"{launchers['openmpi']}")
    assert "independent 1-rank copies" in warnings[0]
    assert f"launch it with {launchers['openmpi']}" in warnings[0]
    fits = f"#!/bin/bash\n#SBATCH --ntasks=2\n{launchers['openmpi']} -n 2 ./app in.bf\n"
    assert checks(fits, dispatcher, recorded) == ([], [])
    # only the measured program's line: advise's other lines are left as before
    assert launch_checks(read_script(text), str(dispatcher)) == ([], [])


def test_srun_pmi2_for_an_unread_open_mpi_program_is_warned_of(launchers, dispatcher):
    recorded = recorded_mpi(swept(launchers["openmpi"]))
    if recorded.library is None:
        pytest.skip("Debian's libmpi not beside its mpirun")
    from hpcds1mpi.launch.pmix_support import openmpi_slurm_pmi

    if openmpi_slurm_pmi(recorded.library)[0] is not False:
        pytest.skip("this Open MPI has Slurm's PMI")
    text = "#!/bin/bash\n#SBATCH --ntasks=2\nsrun --mpi=pmi2 ./app in.bf\n"
    warnings, _ = checks(text, dispatcher, recorded)
    assert len(warnings) == 1 and "--mpi=pmi2, which Open MPI cannot wire up" in warnings[0]
    assert "add --mpi=pmix" in warnings[0]
    script = read_script(text)
    assert mpi_check.srun_fix(script, script.launches[-1], str(dispatcher),
                              recorded=recorded)[0] == "pmix"  # what --rewrite gives
    fits = "#!/bin/bash\n#SBATCH --ntasks=2\nsrun --mpi=pmix ./app in.bf\n"
    assert checks(fits, dispatcher, recorded) == ([], [])


def test_a_program_read_from_its_file_keeps_its_own_mpi(launchers, tmp_path):
    """The recorded MPI stands in only where the file does not tell: an MPICH program swept
    (wrongly) under Open MPI's mpirun is still read as MPICH."""
    mpich_app = system_program("NPmpich2")
    recorded = recorded_mpi(swept(launchers["openmpi"]))
    text = f"#!/bin/bash\n#SBATCH --ntasks=2\n{launchers['openmpi']} -n 2 {mpich_app}\n"
    warnings, _ = checks(text, tmp_path, recorded)
    assert len(warnings) == 1 and "NPmpich2 is linked against the MPICH family" in warnings[0]


def test_advise_takes_the_mpi_the_bundles_sweep_recorded(launchers, dispatcher):
    """launch_notes reads the sweep's launcher from the measured command line (the bundle's
    ``launched_with``, carried by :class:`~hpcds1mpi.launch.measured_program.MeasuredCommand`)."""
    from hpcds1mpi.decide.advise_launch import launch_notes
    from hpcds1mpi.launch.measured_program import measured_command

    wheel = str(Path(sys.executable).parent / "mpirun")
    hydra = wheel if os.path.exists(wheel) else launchers["mpich"]
    script = read_script(f"#!/bin/bash\n#SBATCH --ntasks=2\n{hydra} -np 2 ./app in-30.bf\n")
    command = measured_command("./app in-{size}.bf", swept(launchers["openmpi"]))
    warnings, _ = launch_notes(script, script.launch, command, str(dispatcher))
    assert any("as the model's sweep found" in w and "1-rank copies" in w for w in warnings), \
        warnings
    unrecorded = measured_command("./app in-{size}.bf", None)
    warnings, notes = launch_notes(script, script.launch, unrecorded, str(dispatcher))
    assert not warnings and any("launcher is not checked" in n for n in notes), notes
