"""``hpcds1mpi run``: what a kernel refuses is bad input (exit 2, one line), not a failed run."""

from __future__ import annotations

import pytest

from tests.helpers import run_cli


def test_a_size_the_kernel_refuses_is_exit_2():
    """It printed a 'failed' run and exited 1, which says 'try again'."""
    proc = run_cli(["run", "allreduce", "--size", "1", "--repeats", "1"], timeout=120)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert "kernel 'allreduce' needs size >= 8 on 1 ranks, got 1" in proc.stderr
    assert "failed" not in proc.stdout


def test_a_precision_the_kernel_does_not_support_is_reported_and_exit_2():
    proc = run_cli(["run", "stencil", "--size", "16", "--precision", "bf16", "--repeats", "1"],
                   timeout=120)
    assert proc.returncode == 2, proc.stderr  # was 1
    assert "unsupported" in proc.stdout and "does not support bf16" in proc.stdout


def test_a_good_run_still_runs():
    proc = run_cli(["run", "stencil", "--size", "16", "--repeats", "1"], timeout=120)
    assert proc.returncode == 0 and "rel. error" in proc.stdout, proc.stderr


def test_kernel_options_run_the_deck_a_plan_measured_and_bad_ones_are_one_line():
    """s40 tester B13: a script for stencil measured with sweeps = 100 ran the default 10
    sweeps (run could not pass the plan's extra); --option passes it, checked as a plan's."""
    import json

    proc = run_cli(["run", "stencil", "--size", "16", "--repeats", "1", "--option",
                    "sweeps=3", "--json"], timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["extra"] == {"sweeps": 3}
    for options, words in ((["sweeps=0"], "from 1 to 1,000,000"),
                           (["sweeps=x"], "a whole number"),
                           (["foo=1"], "does not read extra foo"), (["sweeps"], "give KEY=VALUE"),
                           (["sweeps=2", "sweeps=3"], "sweeps is given twice")):
        given = [arg for option in options for arg in ("--option", option)]
        proc = run_cli(["run", "stencil", "--size", "16", *given], timeout=120)
        assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
        assert words in proc.stderr


def test_under_another_mpis_launcher_it_is_one_line_before_mpi_init():
    """Under Debian's Open MPI mpirun the wheel's MPICH aborted in MPI_Init on every rank with
    its error stack ("unsupported PMI version PMIx", exit 16); now rank 0 says one line naming
    the wheel's mpiexec, before MPI starts."""
    import os
    import subprocess

    from tests.helpers import hpcds1mpi_exe, mpiexec, system_program

    mpirun = system_program("mpirun.openmpi")
    root = ["--allow-run-as-root"] if os.geteuid() == 0 else []
    proc = subprocess.run([mpirun, *root, "--oversubscribe", "-n", "2", hpcds1mpi_exe(), "run",
                           "stencil", "--size", "16", "--repeats", "1"],
                          capture_output=True, text=True, timeout=120)
    ours = [line for line in (proc.stdout + proc.stderr).splitlines()
            if "hpcds1mpi" in line or "error stack" in line or "Abort(" in line]
    assert proc.returncode == 1 and len(ours) == 1, proc.stdout + proc.stderr
    assert ours[0].startswith("hpcds1mpi: error: hpcds1mpi was started by Open MPI's mpirun")
    assert f"start it with {mpiexec()} -n N instead" in ours[0]
