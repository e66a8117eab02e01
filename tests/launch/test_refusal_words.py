"""One launcher check, worded by the command refusing (s43 review R5: the kernels' refusal had
been a second copy of `mpi_family.check_launcher`)."""

from __future__ import annotations

import pytest

from hpcds1mpi.errors import ConfigError, LaunchError
from hpcds1mpi.launch import mpi_family
from hpcds1mpi.launch.refusal_words import kernel_words
from tests.helpers import system_program


def test_the_kernels_words_name_the_cluster_files_key_and_the_launcher_suggested():
    hpcc = mpi_family.program_mpi([system_program("hpcc")])  # Debian's, Open MPI
    hydra = system_program("mpiexec.mpich")
    words = kernel_words("tune", "--mpi none", "mpiexec in the --cluster file")
    with pytest.raises(ConfigError) as refused:
        mpi_family.check_launcher(hpcc, hydra, words=words, suggest=lambda: "/own/mpiexec")
    line = str(refused.value)
    assert line.startswith("tune: the kernels run this Python's mpi4py, linked against Open "
                           "MPI (links libmpi.so.40) but ") and "\n" not in line
    assert line.endswith("; set mpiexec in the --cluster file to /own/mpiexec; nothing was "
                         "launched")
    with pytest.raises(ConfigError, match=r"install Open MPI's launcher and set mpiexec in the "
                                          r"--cluster file to it; nothing was launched$"):
        mpi_family.check_launcher(hpcc, hydra, words=words, suggest=lambda: None)
    with pytest.raises(ConfigError, match=r"srun --mpi=none \(--mpi none\) gives its ranks no "
                                          r"wire-up: pass --mpi pmix \(or set mpi = \"pmix\" in "
                                          r"the --cluster file\); nothing was launched$"):
        mpi_family.check_launcher(hpcc, "srun", "none", words=words)


def test_a_programs_words_name_mpiexec_and_the_launcher_suggested():
    hpcc = mpi_family.program_mpi([system_program("hpcc")])
    with pytest.raises(LaunchError, match=r"^this program is linked against Open MPI .*; use its "
                                          r"launcher: --mpiexec /own/mpirun$"):
        mpi_family.check_launcher(hpcc, system_program("mpiexec.mpich"),
                                  suggest=lambda: "/own/mpirun")
