"""A job script's mpiexec given a host list of its own, not the job's nodes (s31 tester P2)."""

from __future__ import annotations

import pytest

from hpcds1mpi.launch.script_hosts import host_list_warning
from hpcds1mpi.launch.launch_line_checks import launch_checks
from hpcds1mpi.launch.script_reading import read_script

#: The tester's adv/B.sbatch: hydra told to run on hosts.txt's nodes inside a Slurm job.
B_SBATCH = """#!/bin/bash
#SBATCH -N 2
#SBATCH --ntasks-per-node=1
#SBATCH -c 2
#SBATCH -t 30
mpiexec.hydra -f hosts.txt -n 2 -ppn 1 ./heat 2000 100
export OMP_NUM_THREADS=2
"""


def _warning(text: str) -> str | None:
    script = read_script(text)
    return host_list_warning(script, script.launch)


def test_a_host_file_of_the_scripts_own_is_warned_of(tmp_path):
    said = _warning(B_SBATCH)
    assert said == ("line 6: mpiexec.hydra -f hosts.txt runs the ranks on the nodes that host "
                    "file names, not those Slurm gives the job (inside a job the launcher reads "
                    "them itself): drop -f, or build it from the job's nodes (scontrol show "
                    "hostnames \"$SLURM_JOB_NODELIST\" > hosts.txt)")
    assert said in launch_checks(read_script(B_SBATCH), str(tmp_path))[0]  # advise's warnings


@pytest.mark.parametrize("line", ["mpirun --hostfile nodes ./heat 2000 100",
                                  "mpiexec -machinefile m.txt -n 2 ./heat 2000 100",
                                  "mpiexec.hydra -hosts n1,n2 -n 2 ./heat 2000 100",
                                  "mpirun --host n1:1,n2:1 ./heat 2000 100"])
def test_every_spelling_of_a_host_list_is_warned_of(line):
    assert " names, not those Slurm gives the job" in _warning(
        B_SBATCH.replace("mpiexec.hydra -f hosts.txt -n 2 -ppn 1 ./heat 2000 100", line))


def test_a_host_list_built_from_the_jobs_nodes_is_not():
    built = B_SBATCH.replace("mpiexec.hydra", 'scontrol show hostnames "$SLURM_JOB_NODELIST" '
                             "> hosts.txt\nmpiexec.hydra")
    assert _warning(built) is None
    assert _warning(B_SBATCH.replace("./heat", "./heat").replace("-f hosts.txt", "")) is None
    pbs = ("#!/bin/bash\n#PBS -l select=2:ncpus=2:mpiprocs=1\ncd $PBS_O_WORKDIR\n"
           "mpiexec -f $PBS_NODEFILE -n 2 ./heat 2000 100\n")
    assert _warning(pbs) is None
    assert "not those PBS gives the job" in _warning(pbs.replace("$PBS_NODEFILE", "hosts.txt"))
