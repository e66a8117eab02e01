"""Programs that start their own ranks, refused before a sweep launches them: real wrapper
scripts (s33 tester D5) and non-MPI launchers' words (s33 tester D4)."""

from __future__ import annotations

import os
import sys

import pytest

from hpcds1mpi.errors import ConfigError
from hpcds1mpi.launch.self_launching import check_self_launching, own_launcher
from tests.helpers import executable_script as script




def test_a_wrapper_that_runs_mpiexec_is_refused_naming_its_line(tmp_path):
    script(tmp_path, "run2.sh", '#!/bin/sh\n# starts its own ranks\nmpiexec -n 2 ./app "$1" plain\n')
    with pytest.raises(ConfigError) as refused:
        check_self_launching(["./run2.sh", "10"], dict(os.environ), cwd=str(tmp_path))
    assert "mpiexec -n 2 ./app" in str(refused.value) and "\n" not in str(refused.value)
    with pytest.raises(ConfigError, match="starts the launcher mpirun"):
        check_self_launching(["mpirun", "-n", "2", "./app"], dict(os.environ))


def test_a_plain_wrapper_passes(tmp_path):
    script(tmp_path, "app", "#!/bin/sh\necho Time: 1\n")
    script(tmp_path, "run.sh", '#!/bin/sh\ncd "$(dirname "$0")"\nexec ./app "$1"\n')
    check_self_launching(["./run.sh", "10"], dict(os.environ), cwd=str(tmp_path),
                         ranks_per_node=2)


@pytest.mark.parametrize("words", [
    ["torchrun", "--nproc_per_node", "2", "ddp.py"],
    [sys.executable, "-m", "torch.distributed.run", "ddp.py"],
    ["accelerate", "launch", "train.py"], ["deepspeed", "train.py"]])
def test_non_mpi_launchers_are_swept_with_one_rank_per_node(words):
    assert own_launcher(words)
    with pytest.raises(ConfigError, match="--ranks-per-node 1"):
        check_self_launching(words, dict(os.environ), ranks_per_node=2)
    check_self_launching(words, dict(os.environ), ranks_per_node=1)


def test_a_wrapper_of_torchrun_is_read_too(tmp_path):
    script(tmp_path, "train.sh", "#!/bin/bash\ntorchrun --nproc_per_node 2 ddp.py\n")
    with pytest.raises(ConfigError, match="torchrun"):
        check_self_launching(["./train.sh"], dict(os.environ), cwd=str(tmp_path),
                             ranks_per_node=2)


def test_a_job_scripts_program_that_starts_its_own_ranks_is_refused(tmp_path):
    """s46 tester H8: `recommend --emit --program "ff-mpirun -np {ranks} ..."` wrote `mpirun -n
    1 ff-mpirun ...`, a launcher in a launcher ("mpiexec does not support recursive calls"):
    refused by the sweep's rule, in the script's words."""
    from hpcds1mpi.launch.self_launching import check_script_program
    from tests.launch.test_wrapper_program import FF_MPIRUN

    script(tmp_path, "ff-mpirun", FF_MPIRUN)
    with pytest.raises(ConfigError) as refused:
        check_script_program(["./ff-mpirun", "-np", "1", "poisson.edp"], str(tmp_path))
    said = str(refused.value)
    assert said.startswith("--program: ff-mpirun starts its own ranks ('/usr/bin/mpiexec")
    assert "under the job script's launcher" in said and "give the program it launches" in said
    with pytest.raises(ConfigError, match="--program starts the launcher mpirun: the job "):
        check_script_program(["mpirun", "-n", "2", "./app"], str(tmp_path))
    script(tmp_path, "app", "#!/bin/sh\necho Time: 1\n")
    check_script_program(["env", "A=1", "./app", "10"], str(tmp_path), ranks_per_node=2)
    check_script_program(["./ff-mpirun", "x.edp"], "runs/150-1")  # not here: the job's to run
    check_script_program(["hpcds1mpi", "run", "gemm"], None)
