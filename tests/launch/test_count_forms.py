"""The node, task, CPU and GPU counts sbatch takes in directives, read as it reads them (s47
tester M4: --nodes=abc, --ntasks=-2, --cpus-per-task=0, --gpus=abc and --nodes=2-1 were
"ignored", and the script advised as asking the recommended layout, where sbatch refuses
each)."""

from __future__ import annotations

import pytest

from hpcds1mpi.errors import ConfigError
from hpcds1mpi.launch.count_forms import count_refusal
from hpcds1mpi.launch.script_reading import read_script

#: Values sbatch 22.05 refuses (``sbatch --test-only``, the test Slurm), with what it says.
SBATCH_REFUSES = [
    ("nodes", "abc", "not a valid node count"), ("nodes", "2x", "not a valid node count"),
    ("nodes", "1,2", "not a valid node count"), ("nodes", "1-", "not a valid node count"),
    ("nodes", "99999999999999999999", "not a valid node count"),
    ("nodes", "2147483648", "not a valid node count"),
    ("nodes", "2-1", "Maximum node count 1 is less than minimum node count 2"),
    ("ntasks", "-2", 'Invalid numeric value "-2" for --ntasks'),
    ("ntasks", "0", "Invalid numeric value"), ("ntasks", "2-4", "Invalid numeric value"),
    ("ntasks", "1k", "Invalid numeric value"), ("ntasks-per-node", "0", "Invalid numeric"),
    ("ntasks-per-node", "2x", "Invalid numeric"), ("cpus-per-task", "-1", "Invalid numeric"),
    ("cpus-per-task", "0", "Invalid numeric"), ("cpus-per-task", "2-3", "Invalid numeric"),
    ("gpus", "abc", "Invalid generic resource"), ("gpus", "-1", "Invalid generic resource"),
    ("gpus-per-task", "2x", "Invalid generic resource"),
    ("gres", "gpu:-1", "Invalid generic resource")]
#: Values it takes (node counts and ranges, signs and suffixes as it reads them; GPU forms).
SBATCH_TAKES = [("nodes", "2"), ("nodes", "1-2"), ("nodes", "2-2"), ("nodes", "0"),
                ("nodes", "-1"), ("nodes", "+1"), ("nodes", "1k"), ("nodes", "2147483647"),
                ("ntasks", "+2"), ("ntasks", "02"), ("cpus-per-task", "4"),
                ("gpus", "0"), ("gpus", "a100:2"), ("gpus-per-task", "0"),
                ("gres", "gpu:0"), ("gres", "gpu"), ("gres", "gpu:a100:2"),
                ("gres", "lscratch:200,gpu:2"), ("partition", "abc")]


@pytest.mark.parametrize(("name", "value", "said"), SBATCH_REFUSES)
def test_a_count_sbatch_refuses_is_refused_with_what_it_says(name, value, said):
    refusal = count_refusal(name, value)
    assert refusal is not None and said in refusal[0]


@pytest.mark.parametrize(("name", "value"), SBATCH_TAKES)
def test_a_count_sbatch_takes_is_not_refused(name, value):
    assert count_refusal(name, value) is None


SCRIPT = "#!/bin/bash\n#SBATCH {ask}\nsrun hpcds1mpi run stencil --size 28\n"


@pytest.mark.parametrize("ask", ["--nodes=abc", "--ntasks=-2", "--cpus-per-task=0",
                                 "--gpus=abc", "--nodes=2-1", "-n 0"])
def test_a_count_directive_sbatch_refuses_is_refused_in_one_line(ask):
    with pytest.raises(ConfigError) as err:
        read_script(SCRIPT.format(ask=ask))
    said = str(err.value)
    assert "\n" not in said and said.startswith("line 2: #SBATCH --")
    assert "sbatch refuses this count" in said and "; write " in said


def test_a_count_sbatch_takes_but_this_reader_does_not_stays_a_note():
    script = read_script(SCRIPT.format(ask="--nodes=0"))
    assert any("cannot read nodes '0'" in note for note in script.notes)
