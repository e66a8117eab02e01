"""A launch's host list spelled as the other MPI family's launcher spells it (session 41's left
list: hydra's -H and Open MPI's --hosts were not warned of)."""

from __future__ import annotations

import pytest

from hpcds1mpi.decide.advise_launch import text_only_checks
from hpcds1mpi.launch.host_spelling import host_spelling_warning
from hpcds1mpi.launch.mpi_names import MPICH, OPENMPI
from hpcds1mpi.launch.recorded_mpi import RecordedMPI
from hpcds1mpi.launch.script_mpi_check import launch_checks
from hpcds1mpi.launch.script_reading import read_script

SCRIPT = "#!/bin/bash\n#SBATCH -N 2\n#SBATCH -t 30\n{launch} ./heat 2000 100\n"


@pytest.mark.parametrize("launch, said", [
    # measured: MPICH 5.0.2's mpiexec prints its usage for -H, Intel MPI's refuses it
    ("mpiexec.hydra -H n1,n2 -n 2", "line 4: mpiexec.hydra -H n1,n2: hydra's mpiexec (MPICH, "
     "Intel MPI) has no -H: MPICH's prints its usage and runs nothing, Intel MPI's stops "
     "(unrecognized argument H); give -hosts n1,n2"),
    # measured: Open MPI 4.1.4 stops at an unknown option for --hosts and -hosts
    ("mpirun.openmpi --hosts n1,n2 -n 2", "line 4: mpirun.openmpi --hosts n1,n2: Open MPI's "
     "mpirun has no --hosts: it stops (unknown option); give --host n1,n2"),
    ("mpirun.openmpi -n 2 -hosts n1:2", "line 4: mpirun.openmpi -hosts n1:2: Open MPI's mpirun "
     "has no -hosts: it stops (unknown option); give --host n1:2"),
    ("orterun --hosts=n1,n2", "line 4: orterun --hosts=n1,n2: Open MPI's mpirun has no "
     "--hosts: it stops (unknown option); give --host n1,n2")])
def test_a_host_list_its_launcher_refuses_is_warned_of_with_its_spelling(launch, said):
    script = read_script(SCRIPT.format(launch=launch))
    assert said in text_only_checks(script)


@pytest.mark.parametrize("launch", [
    # what each takes (measured): hydra -host, -hosts, --host, --hosts; Open MPI -H, -host, --host
    "mpiexec.hydra -hosts n1,n2", "mpiexec.hydra --hosts n1,n2", "mpiexec.hydra -host n1,n2",
    "mpiexec.hydra --host n1,n2", "mpirun.openmpi -H n1,n2", "mpirun.openmpi --host n1,n2",
    "mpirun.openmpi -host n1,n2",
    # a launcher whose name does not tell its MPI: nothing said from the text alone
    "mpirun -H n1,n2", "mpiexec --hosts n1,n2"])
def test_a_spelling_its_launcher_takes_is_not(launch):
    script = read_script(SCRIPT.format(launch=launch))
    assert not any("has no" in w for w in text_only_checks(script))


def test_the_recorded_sweeps_mpi_tells_a_plain_launchers_family(tmp_path):
    """An `mpiexec` whose file is not here: the MPI its program's sweep ran with says."""
    script = read_script(SCRIPT.format(launch="/opt/none/bin/mpiexec -H n1,n2 -n 2"))
    recorded = RecordedMPI(MPICH, "/opt/x/bin/mpiexec", "the sweep's launcher")
    warnings = launch_checks(script, str(tmp_path), measured=(4, recorded))[0]
    assert any("line 4: mpiexec -H n1,n2: hydra's mpiexec (MPICH, Intel MPI) has no -H" in w
               for w in warnings)
    assert host_spelling_warning(script, script.launch, OPENMPI) is None  # Open MPI takes -H
