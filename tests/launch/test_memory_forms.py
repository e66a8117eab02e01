"""The memory sizes sbatch takes for --mem / --mem-per-cpu / --mem-per-gpu, read as it reads
them (s41 tester B9: --mem=-5, 10Mi and --mem beside --mem-per-cpu were read as no ask, and
0.02G as 20 MiB, where sbatch refuses each)."""

from __future__ import annotations

import pytest

from hpcds1mpi.errors import ConfigError
from hpcds1mpi.launch.memory_forms import slurm_memory_mib
from hpcds1mpi.launch.script_reading import read_script

#: Values sbatch 22.05 takes (``sbatch --test-only --mem=V``: no "Invalid --mem
#: specification"; 10G is then "Requested node configuration is not available" on the test
#: Slurm's 4000 MiB nodes) with the MiB it reads, and values it refuses.
SBATCH_TAKES = {"4000": 4000, "10M": 10, "10MB": 10, "10mb": 10, "10Mb": 10, "10m": 10,
                "10K": 1, "10k": 1, "1K": 1, "10KB": 1, "3G": 3072, "10GB": 10240,
                "1T": 1024 ** 2, "0": 0, "0M": 0, "0G": 0, "-0": 0, "+10": 10}
SBATCH_REFUSES = ["-5", "10Mi", "0.02G", "1.5G", "10M5", "0x10", "1e3", "1P", "10b", "10MBB",
                  "10 M", ""]


@pytest.mark.parametrize("value", sorted(SBATCH_TAKES))
def test_a_size_sbatch_takes_is_read_as_it_reads_it(value):
    assert slurm_memory_mib(value) == SBATCH_TAKES[value]


@pytest.mark.parametrize("value", SBATCH_REFUSES)
def test_a_size_sbatch_refuses_is_none(value):
    assert slurm_memory_mib(value) is None


SCRIPT = "#!/bin/bash\n#SBATCH --ntasks-per-node=2\n#SBATCH {mem}\nmpiexec -n 2 ./app\n"


@pytest.mark.parametrize("option", ["mem", "mem-per-cpu", "mem-per-gpu"])
@pytest.mark.parametrize("value", ["-5", "10Mi", "0.02G"])
def test_a_memory_directive_sbatch_refuses_is_refused_in_one_line(option, value):
    with pytest.raises(ConfigError) as err:
        read_script(SCRIPT.format(mem=f"--{option}={value}"))
    assert str(err.value) == (f"line 3: #SBATCH --{option}={value}: sbatch refuses this memory "
                              f"size (\"Invalid --{option} specification\"); write a whole "
                              "number with an optional unit K, M, G or T (4000, 4000M, 4G), in "
                              "MiB without one")


def test_two_memory_options_are_refused_as_sbatch_refuses_them():
    with pytest.raises(ConfigError) as err:
        read_script(SCRIPT.format(mem="--mem=4G\n#SBATCH --mem-per-cpu=5M"))
    assert str(err.value) == ("line 4: #SBATCH --mem-per-cpu=5M: sbatch refuses it beside "
                              "--mem (line 3): \"--mem, --mem-per-cpu, and --mem-per-gpu are "
                              "mutually exclusive\"; keep one of them")
    script = read_script(SCRIPT.format(mem="--mem=1G\n#SBATCH --mem=2G"))  # the last counts
    assert script.directives["mem"].value == "2G"
