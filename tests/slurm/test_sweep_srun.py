"""``sweep --command --launcher srun`` against the real test Slurm: the ``--mpi`` plugin is
checked against ``srun --mpi=list`` before anything launches, and a plugin it has still
measures inside an allocation (``salloc``)."""

from __future__ import annotations

import sys

import pytest

from tests.helpers import hpcds1mpi_exe

pytestmark = pytest.mark.slurm

#: Two ranks of the wheel's MPICH as one job under srun --mpi=pmi2: the program says its size.
PROGRAM = f"{sys.executable} -c 'from mpi4py import MPI; print(\"ranks:\", MPI.COMM_WORLD.size)'"


def _sweep_in_allocation(slurm, tmp_path, mpi: str, ranks: str):
    out = tmp_path / f"{mpi}-{ranks}.h5"
    proc = slurm.cmd(["salloc", "-N1", f"-n{ranks}", "--time=3", "--job-name=hpcds-srun-mpi",
                      hpcds1mpi_exe(), "sweep", "--command", PROGRAM, "--label", "size",
                      "--sizes", "1", "--ranks-per-node", ranks, "--launcher", "srun",
                      "--mpi", mpi, "--ranks-regex", r"ranks: (\d+)", "--max-repeats", "1",
                      "--out", str(out), "--no-progress"], timeout=180, check=False,
                     cwd=tmp_path)
    ours = [line for line in proc.stderr.splitlines() if line.startswith("hpcds1mpi")]
    return proc, ours, out


@pytest.mark.parametrize("ranks", ["1", "2"])
def test_a_plugin_srun_lacks_is_refused_in_one_line_before_any_launch(slurm, tmp_path, ranks):
    """It was a failed run and exit 0 with one rank, a probe failure blaming --mpiexec with two."""
    proc, ours, out = _sweep_in_allocation(slurm, tmp_path, "bogus", ranks)
    assert proc.returncode == 2 and len(ours) == 1, proc.stderr
    assert ours[0].startswith("hpcds1mpi: error: srun has no --mpi plugin 'bogus'; "
                              "`srun --mpi=list` names ") and "pmi2" in ours[0]
    assert not out.exists()


@pytest.mark.parametrize("ranks", ["1", "2"])
def test_a_plugin_srun_has_still_measures_inside_an_allocation(slurm, tmp_path, ranks):
    proc, ours, out = _sweep_in_allocation(slurm, tmp_path, "pmi2", ranks)
    assert proc.returncode == 0, proc.stderr
    assert not any("not inside a Slurm allocation" in line for line in ours), ours
    from hpcds1mpi.records.telemetry import read_runs

    runs = read_runs(out)
    assert list(runs["status"]) == ["ok"], runs[["status", "error"]].to_dict("records")
