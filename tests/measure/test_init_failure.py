"""A failed launch whose output shows it failed in MPI_Init points at the launcher
(:mod:`hpcds1mpi.measure.init_failure`, through :func:`~hpcds1mpi.measure.program_launch.classify`)."""

from __future__ import annotations

import os
import sys

import pytest

from hpcds1mpi.measure.init_failure import init_failure_hint
from hpcds1mpi.measure.program_launch import classify, launch_once


def test_an_open_mpi_ruby_program_under_mpich_hydra_is_told_to_take_its_own_launcher(tmp_path):
    """s35 tester A1: every run of `ruby reduce.rb` under the venv's MPICH hydra crashed in
    Open MPI's MPI_Init, and the reason was the crash alone ("exit code 6: reduce.rb:5: [BUG]
    Segmentation fault"), never naming the launcher. A real run of the tester's program."""
    from tests.launch.test_ruby_mpi import REDUCE_RB, ruby_mpi_extension

    ruby_mpi_extension()
    hydra = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    if not os.path.exists(hydra):
        pytest.skip("no MPICH mpiexec beside this Python")
    (tmp_path / "reduce.rb").write_text(REDUCE_RB)
    result = launch_once([hydra, "-n", "1", "ruby", "reduce.rb", "4000"], dict(os.environ), 60,
                         str(tmp_path))
    status, error = classify(result, 60)
    assert status == "failed" and error.startswith("exit code "), error
    assert error.endswith("(it failed in MPI_Init: the launcher is probably not of the "
                          "program's MPI (or srun's --mpi plugin cannot wire it up); pass the "
                          "program's own MPI's mpiexec with --mpiexec, or srun --mpi=pmix for "
                          "Open MPI)"), error


@pytest.mark.parametrize("text", [
    "*** An error occurred in MPI_Init\n*** on a NULL communicator",  # Open MPI
    "Fatal error in PMPI_Init_thread: Other MPI error",  # MPICH
    "[n1:123] [10] /lib/libmpi.so.40(ompi_mpi_init+0xaae)[0x7f]",  # a backtrace
    "It looks like MPI_INIT failed for some reason",  # Open MPI's help text
])
def test_mpi_start_up_in_a_failure_is_the_hint(text):
    assert init_failure_hint(text).startswith("it failed in MPI_Init")


def test_a_failure_elsewhere_gets_no_hint():
    assert init_failure_hint("Segmentation fault in solve() at step 40") == ""
    assert init_failure_hint("MPI_Initialized returned 0") == ""
