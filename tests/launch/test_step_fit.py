"""An srun step that asks more CPUs or nodes than its job's directives hold: Slurm refuses the
step and the job fails at once, so advise must say so and predict nothing (s38 tester D2). The
cases are the ones run on the test Slurm (22.05.8); :func:`test_the_test_slurm_agrees` runs
them again where it is up."""

from __future__ import annotations

import pytest

from hpcds1mpi.launch import srun_cpus
from hpcds1mpi.launch.script_reading import read_script
from hpcds1mpi.launch.step_fit import job_tasks, step_refused

#: directives, step -> refused (the test Slurm's answer, its job's exit).
CASES = {
    "nodes_alone": ("#SBATCH -N 2\n", "srun --ntasks-per-node=2", True),
    "cpus_alone": ("#SBATCH -N 1\n#SBATCH -c 2\n", "srun -n 2", False),
    "step_cpus": ("#SBATCH -n 2\n", "srun -n 2 -c 2", True),
    "inherited_tasks": ("#SBATCH -N 2\n#SBATCH --ntasks-per-node=1\n#SBATCH -c 2\n",
                        "srun --ntasks-per-node=2", False),
    "fewer_tasks_than_nodes": ("#SBATCH -N 1\n#SBATCH -n 1\n", "srun -N 2", False),
    "per_node": ("#SBATCH -N 1\n#SBATCH --ntasks-per-node=2\n", "srun -n 2 -c 2", True),
    "job_ntasks": ("#SBATCH -N 2\n#SBATCH --ntasks=2\n", "srun --ntasks-per-node=2", False),
    "more_nodes": ("#SBATCH -N 1\n#SBATCH -n 2\n", "srun -N 2", True),
}


@pytest.fixture(autouse=True)
def slurm_22_05(monkeypatch):
    """The release of the test Slurm, whatever srun this machine has."""
    monkeypatch.setattr(srun_cpus, "slurm_release",
                        lambda: srun_cpus.Release((22, 5), "22.05.8"))


def _text(name: str, program: str = "./app") -> str:
    directives, step, _ = CASES[name]
    return f"#!/bin/bash\n{directives}#SBATCH -t 00:02:00\n{step} {program}\n"


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_step_is_refused_where_slurm_refuses_it(name):
    assert bool(step_refused(read_script(_text(name)))) == CASES[name][2]


def test_the_line_says_what_the_job_holds_and_the_fix():
    """The tester's s41: `#SBATCH -N 2` and `srun --ntasks-per-node=2` was read 2 x 2 and
    predicted; the job failed at once."""
    why = step_refused(read_script(_text("nodes_alone")))
    assert why == ("line 4: srun asks 4 tasks x 1 CPU (2 per node), but the job holds 2 CPUs, "
                   "1 per node (--nodes alone asks one task per node): Slurm refuses the step "
                   "(More processors requested than permitted) and the job fails at once; ask "
                   "for them in the directives (#SBATCH --ntasks-per-node=2)")
    assert "(#SBATCH --ntasks=2 --cpus-per-task=2)" in step_refused(
        read_script(_text("step_cpus")))
    assert "(Only allocated 1 nodes asked for 2)" in step_refused(
        read_script(_text("more_nodes")))


@pytest.mark.parametrize("directives, step", [
    ("#SBATCH -N 2\n#SBATCH --exclusive\n", "srun --ntasks-per-node=2"),  # whole nodes
    ("#SBATCH -N 1-2\n", "srun -n 4"),                                     # a range
    ("#SBATCH -N 2\n", "srun -n $NP"),                                     # not resolved
    ("#SBATCH -N 2\n", "srun --overcommit --ntasks-per-node=2"),          # allowed
])
def test_what_the_directives_do_not_fix_is_not_judged(directives, step):
    assert step_refused(read_script(f"#!/bin/bash\n{directives}{step} ./app\n")) == ""


def test_mpirun_and_pbs_are_not_judged():
    assert step_refused(read_script("#!/bin/bash\n#SBATCH -N 2\nmpirun -np 8 ./app\n")) == ""
    assert step_refused(read_script("#!/bin/bash\n#PBS -l select=1:ncpus=2\n"
                                    "mpiexec -n 8 ./app\n")) == ""



def test_job_tasks():
    """The job's task count, one function for the step's fit and Open MPI's slots (s46
    review RV11: mpirun_slots counted them again)."""
    assert job_tasks(read_script("#SBATCH -N 2 --ntasks-per-node=3\nsrun ./a\n")) == 6
    assert job_tasks(read_script("#!/bin/bash\nsrun ./a\n")) == 1
    assert job_tasks(read_script("#!/bin/bash\n#SBATCH -N 2 -n 3\nsrun ./a\n")) == 3
    assert job_tasks(read_script("#!/bin/bash\n#SBATCH -N 1-2 -n 3\nsrun ./a\n")) is None

@pytest.mark.slurm
@pytest.mark.parametrize("name", ["nodes_alone", "inherited_tasks"])
def test_the_test_slurm_agrees(slurm, tmp_path, name):
    """The tester's case and one that fits, submitted to the test Slurm: the job fails where
    the line says the step is refused (the other cases were run by hand, s38 fixer FD)."""
    path = tmp_path / f"{name}.sbatch"
    path.write_text(_text(name, "true"))
    failed = slurm.wait(slurm.sbatch(path, "--output=/dev/null", cwd=tmp_path)) != "COMPLETED"
    assert failed == CASES[name][2] == bool(step_refused(read_script(_text(name))))
