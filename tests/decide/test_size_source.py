"""Which line of a script advise read a program's size from (s30 tester N8)."""

from __future__ import annotations

import pytest

from hpcds1mpi.decide.size_source import size_source
from hpcds1mpi.launch.script_placeholders import size_from
from hpcds1mpi.launch.script_reading import read_script

ENV = "env POISSON_N={size} /usr/bin/python3 poisson_cfg.py"
HEAD = "#!/bin/bash\n#SBATCH -n 2\n"


def _read(body: str, command: str = ENV):
    launch = read_script(HEAD + body).launches[-1]
    return size_from(launch, command), size_source(launch, command)


def test_a_size_the_script_exports_is_said_to_come_from_that_line():
    """Was: "size 320 (from the command on line 5)", the launch line, which has no size."""
    assert _read("export POISSON_N=320\nexport OMP_NUM_THREADS=1\n"
                 "mpirun -n 2 /usr/bin/python3 poisson_cfg.py\n") == (
        320, "POISSON_N set on line 3")
    # set twice: the line that counts is the last before the launch
    assert _read("POISSON_N=100\nPOISSON_N=320\nmpirun -n 2 /usr/bin/python3 poisson_cfg.py\n"
                 "POISSON_N=7\n") == (320, "POISSON_N set on line 4")


@pytest.mark.parametrize("body", [
    "export POISSON_N=100\nmpirun -n 2 env POISSON_N=320 /usr/bin/python3 poisson_cfg.py\n",
    "export POISSON_N=100\nmpirun -n 2 -x POISSON_N=320 /usr/bin/python3 poisson_cfg.py\n",
])
def test_a_size_the_launch_line_sets_is_said_to_come_from_it(body):
    assert _read(body) == (320, "the command on line 4")


def test_a_size_in_the_launched_words_is_the_launch_lines():
    assert _read("export N=9\nsrun ./app 96 40\n", "./app {size} 40") == (
        96, "the command on line 4")
