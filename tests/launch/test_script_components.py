"""Scripts that are several jobs or several programs in one: refused in one line, and a
comment or here-document that merely names one is no such script (s29 tester D2, D6)."""

from __future__ import annotations

import pytest

from hpcds1mpi.errors import ConfigError
from hpcds1mpi.launch.script_reading import read_script

HEAD = "#!/bin/bash\n#SBATCH --partition=debug\n#SBATCH --ntasks=4\n#SBATCH --time=00:10:00\n"


@pytest.mark.parametrize("launch, what", [
    # the tester's p11_mpmd.sbatch: read as "1 node x 1 rank" and rewritten to 11 processes
    ("mpirun -np 1 ./master 128 : -np 3 ./worker 128", "mpirun ... : ... is an MPMD launch"),
    ("mpiexec -n 1 ./master : -n 3 ./worker", "mpiexec ... : ... is an MPMD launch"),
    ("aprun -n 1 ./master : -n 3 ./worker", "aprun ... : ... is an MPMD launch"),
    ("srun -n 1 ./master : -n 3 ./worker", "srun ... : ... is an MPMD launch"),
    ("srun --multi-prog multi.conf", "srun --multi-prog runs the programs its file names"),
    ("srun --multi multi.conf", "srun --multi-prog"),  # getopt's unique prefix
    ("mpirun --app appfile", "mpirun -app reads the programs from a file"),
    ("mpiexec -configfile mpmd.txt", "mpiexec -configfile reads the programs from a file"),
])
def test_an_mpmd_launch_is_refused_in_one_line(launch, what):
    with pytest.raises(ConfigError, match="one program per launch line") as err:
        read_script(HEAD + launch + "\n")
    assert what in str(err.value) and "\n" not in str(err.value)
    assert str(err.value).startswith("line 5: ")


@pytest.mark.parametrize("text", [
    HEAD + "#SBATCH hetjob\n#SBATCH --nodes=2\nsrun ./app\n",
    HEAD + "#SBATCH packjob  # the old spelling\n#SBATCH --nodes=2\nsrun ./app\n",
    HEAD + "srun --het-group=0 ./a : --het-group=1 ./b\n",
    HEAD + "srun --het-group 1 ./b\n",
])
def test_a_heterogeneous_job_is_refused(text):
    with pytest.raises(ConfigError, match="heterogeneous job"):
        read_script(text)


@pytest.mark.parametrize("text", [
    # the tester's q02_comment_het.sbatch: sbatch runs it as one job
    HEAD + "# NOTE: we used to run this with srun --het-group=0,1 but no longer\nsrun ./a 128\n",
    HEAD + "srun ./a 128  # not srun --het-group=1, not mpirun ./a : ./b\n",
    HEAD + "cat > old.sh <<EOF\nsrun --het-group=1 ./b\nmpirun -np 1 ./a : -np 3 ./b\n"
           "#SBATCH hetjob\nEOF\nsrun ./a 128\n",
    HEAD + "srun ./a 128\n#SBATCH hetjob\n",  # after the first command: sbatch ignores it
    HEAD + "srun ./a x: :y host:1\n",  # colons inside words split nothing
    HEAD + "echo mpirun -np 1 ./a : -np 3 ./b\nsrun ./a 128\n",  # not a launch
    HEAD + "#SBATCH --job-name=hetjob\nsrun ./a 128\n",  # a name, not a split
])
def test_a_comment_or_heredoc_naming_one_is_read(text):
    assert read_script(text).launch.program == "./a"
