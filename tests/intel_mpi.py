"""Intel MPI for the tests: its runtime and compiler wrappers from PyPI (``scripts/intel-mpi``),
a program built with its ``mpicc``, and the environment its ``mpiexec.hydra`` runs in (s35
tester I). Missing, a test skips; under ``HPCDS1MPI_REQUIRE_APPS=1`` (``.ci/run``) it fails.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

#: Where ``scripts/intel-mpi`` installs it (``HPCDS1MPI_INTEL_MPI`` moves it).
INTEL_MPI = Path(os.environ.get("HPCDS1MPI_INTEL_MPI", "/opt/hpcds1mpi-intel-mpi"))

#: A hybrid MPI+OpenMP program: its ranks' CPUs (what Intel's pinning gave each thread) and its
#: own time, so that a test can tell a 2-thread rank on one core from one on two.
HYBRID = r"""
#define _GNU_SOURCE
#include <mpi.h>
#include <omp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
    int provided, rank, size;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    cpu_set_t set;
    sched_getaffinity(0, sizeof set, &set);
    int cpus = CPU_COUNT(&set);
    double t0 = MPI_Wtime(), sum = 0;
    #pragma omp parallel for reduction(+:sum)
    for (long i = 0; i < n; i++) sum += 1.0 / (1.0 + (double)i);
    double elapsed = MPI_Wtime() - t0, slowest;
    MPI_Reduce(&elapsed, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    printf("rank %d of %d threads %d cpus %d\n", rank, size, omp_get_max_threads(), cpus);
    if (rank == 0) printf("sum %.6f time %.6f s\n", sum, slowest);
    MPI_Finalize();
    return 0;
}
"""


def intel_mpi() -> Path:
    """The Intel MPI installation's folder (its ``bin/mpiexec.hydra``, ``bin/mpicc``)."""
    if (INTEL_MPI / "bin" / "mpiexec.hydra").is_file() and (INTEL_MPI / "bin" / "mpicc").is_file():
        return INTEL_MPI
    reason = f"Intel MPI not installed in {INTEL_MPI} (bash scripts/intel-mpi)"
    if os.environ.get("HPCDS1MPI_REQUIRE_APPS") == "1":
        pytest.fail(f"HPCDS1MPI_REQUIRE_APPS=1 but {reason}", pytrace=False)
    pytest.skip(reason)


def intel_env(base: dict | None = None) -> dict:
    """``base`` (default: this process's environment) with Intel MPI's bin first on PATH and
    its ``I_MPI_ROOT`` (the PyPI wheel's mpicc needs it: its prefix is left unfilled)."""
    root = intel_mpi()
    env = dict(os.environ if base is None else base)
    env["PATH"] = f"{root / 'bin'}:{env.get('PATH', '')}"
    env["I_MPI_ROOT"] = str(root)
    return env


def build_hybrid(folder: Path, source: str = HYBRID, name: str = "hybrid") -> Path:
    """``source`` compiled with Intel MPI's ``mpicc -fopenmp`` into ``folder/name``."""
    root = intel_mpi()
    (folder / f"{name}.c").write_text(source)
    out = folder / name
    subprocess.run([str(root / "bin" / "mpicc"), "-O2", "-fopenmp", "-o", str(out),
                    str(folder / f"{name}.c")], check=True, capture_output=True, text=True,
                   timeout=120, env={**intel_env(), "I_MPI_CC": "gcc"})
    return out
