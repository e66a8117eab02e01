"""The layout a batch script asks for, as the scheduler would give it."""

from __future__ import annotations

import pytest

from hpcds1mpi.errors import ConfigError
from hpcds1mpi.launch.script_reading import read_script

RANGE = ("#!/bin/bash\n#SBATCH --partition=debug\n#SBATCH --nodes=1-2\n#SBATCH --ntasks=4\n"
         "#SBATCH --time=10\nsrun ./app 128\n")


def test_a_node_range_gets_the_nodes_its_tasks_need():
    """s29 tester D4: `--nodes=1-2 --ntasks=4` on 2-core nodes was read as 1 node x 4 ranks
    and called impossible; `sbatch --test-only` says 'using 4 processors on nodes n[1-2]'."""
    script = read_script(RANGE)
    assert script.layout(2) == (2, 2, 1)
    assert any("nodes 1-2 is a range" in n and "2 is read" in n for n in script.notes)
    assert not any("its minimum 1 is read" in n for n in script.notes)  # no longer true


@pytest.mark.parametrize("asked, cores, layout", [
    ("--nodes=1-2 --ntasks=2", 2, (2, 1, 1)),  # sbatch --test-only: 'nodes n[1-2]'
    ("--nodes=1-4 --ntasks=2", 8, (2, 1, 1)),  # one task per node at most
    ("--nodes=2-4 --ntasks=1", 8, (1, 1, 1)),  # one rank cannot fill two nodes
    ("--nodes=1-2 --ntasks=8", 2, (2, 4, 1)),  # more than the range holds: refused later
    ("--nodes=1-3", 2, (3, 1, 1)),
    ("--nodes=1-3 --ntasks-per-node=2", 2, (3, 2, 1)),
    ("--nodes=1-4 --ntasks=4 --ntasks-per-node=2", 2, (2, 2, 1)),
    ("--nodes=2-2 --ntasks=4", 2, (2, 2, 1)),
])
def test_node_ranges(asked, cores, layout):
    assert read_script(f"#SBATCH {asked}\nsrun ./app\n").layout(cores) == layout


def test_a_step_that_sets_its_own_nodes_is_not_a_range():
    assert read_script("#SBATCH --nodes=1-4 --ntasks=4\nsrun -N 1 ./app\n").layout(2) == \
        (1, 4, 1)


def test_a_rank_wider_than_a_node_is_said_refused_not_spread():
    """s29 tester D4: `--ntasks=8 --cpus-per-task=4` on 2-core nodes was read as '16 nodes x
    1 rank x 4 threads' with '8 ranks do not divide evenly over 16 nodes'."""
    script = read_script("#SBATCH --ntasks=8\n#SBATCH --cpus-per-task=4\n"
                         "export OMP_NUM_THREADS=$SLURM_CPUS_PER_TASK\nsrun ./prog 128\n")
    assert script.layout(2) == (8, 1, 4)
    assert ("line 2: 4 CPUs per task are more than a node's 2 cores: Slurm refuses the job (a "
            "task's CPUs are on one node); counted 1 rank per node") in script.notes
    assert not any("divide evenly" in n for n in script.notes)


def test_tasks_pack_by_whole_ranks_per_node():
    """5 ranks of 3 CPUs on 8-core nodes: 2 fit a node, so 3 nodes (not 15 / 8 -> 2)."""
    script = read_script("#SBATCH --ntasks=5 --cpus-per-task=3\nsrun ./app\n")
    assert script.layout(8) == (3, 2, 3)


def test_fewer_ranks_than_nodes_run_on_as_many_nodes():
    script = read_script("#SBATCH --nodes=2\nsrun -n 1 ./app\n")
    assert script.layout(2) == (1, 1, 1)
    assert any("1 rank cannot fill 2 nodes" in n for n in script.notes)


def test_an_open_node_count_needs_the_cores():
    with pytest.raises(ConfigError, match="pass --cluster"):
        read_script("#SBATCH --ntasks=4\nsrun ./app\n").layout()
    assert read_script("#SBATCH --nodes=1-2 --ntasks=4\nsrun ./app\n").layout() == (2, 2, 1)


def test_a_node_range_is_said_once_whatever_cores_it_was_read_for():
    """s38 tester D7: rank_proof read the layout without cores, advise with them, and the
    range was said twice in two wordings."""
    from hpcds1mpi.launch.script_reading import read_script

    script = read_script("#!/bin/bash\n#SBATCH --nodes=1-2\n#SBATCH --ntasks=2\nsrun ./toy 8000\n")
    assert script.layout() == script.layout(2) == (2, 1, 1)
    said = [n for n in script.notes if "is a range" in n]
    assert said == ["line 2: nodes 1-2 is a range: Slurm gives as many nodes as are free within "
                    "it, at most one per task and at least those the tasks need on 2-core "
                    "nodes; 2 is read"]


def test_the_settings_a_line_inherits_leave_out_a_subshell_closed_before_it():
    """s45 S1: every reader of what a launch inherits asks :meth:`JobScript.settings_before`;
    a subshell's assignment holds inside it, to its closing parenthesis, and not after."""
    script = read_script("#!/bin/bash\n#SBATCH -N 1\nexport OMP_NUM_THREADS=2\n"
                         "(export OMP_NUM_THREADS=8; srun ./app)\nexport SRUN_CPUS_PER_TASK=4\n"
                         "(export SRUN_CPUS_PER_TASK=8\n gpaw -P 2 x.py)\ngpaw -P 2 y.py\n")
    inside = script.launches[0]
    assert [s.resolved for s in script.settings_before(inside)] == ["2", "8"]
    assert [s.resolved for s in script.settings_before(None, 7)] == ["2", "4", "8"]
    assert [s.resolved for s in script.settings_before(None, 8)] == ["2", "4"]
    assert [s.resolved for s in script.settings_before(None)] == ["2", "4"]
    assert script.threads == 8  # its one launch runs inside the subshell


def test_tasks_without_cpus_per_task_get_one_cpu_whatever_the_threads():
    """s45 tester B1: `-n 2` with OMP_NUM_THREADS=2 was read as 2 nodes x 1 rank x 2 threads;
    `sbatch --test-only` on 2-core nodes: 'using 2 processors on nodes n1' (`-n 4`: n[1-2])."""
    text = "#SBATCH -t 5\n#SBATCH -n {n}\nexport OMP_NUM_THREADS=2\nmpirun.openmpi -np {n} ./a\n"
    assert read_script(text.format(n=2)).layout(2) == (1, 2, 2)
    assert read_script(text.format(n=4)).layout(2) == (2, 2, 2)
    assert read_script(text.format(n=4).replace("-n 4", "-n 4 -c 2")).layout(2) == (4, 1, 2)
