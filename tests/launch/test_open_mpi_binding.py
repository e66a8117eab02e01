"""Open MPI's mpirun options that give a rank the cores of its threads, and the user's own."""

from __future__ import annotations

from hpcds1mpi.config import Configuration
from hpcds1mpi.launch.open_mpi_binding import binds_its_own, open_mpi_thread_binding


def test_other_options_are_not_the_users_binding_and_one_function_serves_sweep_and_script():
    assert not binds_its_own(["-x", "OMP_NUM_THREADS", "--report-bindings"])
    # One function for the sweep and a batch script's mpirun line.
    binding = open_mpi_thread_binding(Configuration(1, 1, 2), 2)
    assert binding.tokens == ("--map-by", "slot:PE=2") and binding.binds_cores
