"""A Python program of Debian's mpi4py (``python3-mpi4py``, built against Open MPI) swept for
real under Open MPI's mpirun: its library version, which ends in a NUL byte, had crashed every
write of the telemetry file and every ``--resume``; its threads had shared one core."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from hpcds1mpi.records import telemetry
from tests.helpers import run_cli, system_program

pytestmark = pytest.mark.mpi

#: /usr/bin/python3 is Debian's Python, whose mpi4py is python3-mpi4py's.
PYTHON = "/usr/bin/python3"
PROGRAM = """
import os, sys, time
from mpi4py import MPI
comm = MPI.COMM_WORLD
start = time.perf_counter()
total = comm.reduce(sum(1.0 / (i + 1) for i in range(comm.rank, int(sys.argv[1]) * 1000,
                                                      comm.size)), root=0)
took = comm.reduce(time.perf_counter() - start, op=MPI.MAX, root=0)
if comm.rank == 0:
    print(f"procs={comm.size} cpus={len(os.sched_getaffinity(0))} Time: {took:.6f} s")
"""


def debian_python() -> str:
    """Debian's ``python3`` with ``python3-mpi4py`` (scripts/system-packages installs it).

    Missing, the test skips; under ``HPCDS1MPI_REQUIRE_APPS=1`` (set by ``.ci/run``) it fails.
    """
    if os.path.exists(PYTHON) and subprocess.run(
            [PYTHON, "-c", "import mpi4py"], capture_output=True, timeout=60).returncode == 0:
        return PYTHON
    reason = "python3-mpi4py not installed (bash scripts/system-packages)"
    if os.environ.get("HPCDS1MPI_REQUIRE_APPS") == "1":
        pytest.fail(f"HPCDS1MPI_REQUIRE_APPS=1 but {reason}", pytrace=False)
    pytest.skip(reason)


def test_a_debian_mpi4py_program_is_swept_resumed_and_its_threads_get_their_cores(tmp_path):
    python = debian_python()
    mpirun = system_program("mpirun.openmpi")
    (tmp_path / "prog.py").write_text(PROGRAM)
    out = tmp_path / "py.h5"
    argv = ["sweep", "--command", f"{python} prog.py {{size}}", "--label", "pyd",
            "--ranks-per-node", "1,2", "--threads", "1,2", "--time-regex",
            r"Time: ([0-9.]+) s", "--ranks-regex", r"procs=(\d+)", "--fom-regex",
            r"cpus=(\d+)", "--mpiexec", mpirun, "--min-repeats", "1", "--max-repeats", "1",
            "--min-time", "0", "--no-progress", "--out", str(out)]
    proc = run_cli([*argv, "--sizes", "20"], cwd=tmp_path, timeout=300)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    assert "\0" not in proc.stderr and "2022  (" not in proc.stderr  # the NUL, said as a space
    (library,) = telemetry.read_machines(out)["mpi_library"]
    assert library.startswith("Open MPI v") and "\0" not in library
    hpcc = shutil.which("hpcc")  # an Open MPI C program: the same library, the same machine
    if hpcc:
        from hpcds1mpi.measure import program_mpi

        assert program_mpi.program_mpi_library([hpcc], dict(os.environ), mpirun) == library
    proc = run_cli([*argv, "--sizes", "20,30", "--resume"], cwd=tmp_path, timeout=300)
    assert proc.returncode == 0 and "4 already done" in proc.stderr, proc.stderr
    runs = telemetry.read_runs(out)
    assert len(runs) == 8 and (runs["status"] == "ok").all()
    if len(os.sched_getaffinity(0)) >= 2:  # each rank may use the cores of its threads
        threaded = runs[runs["threads"] == 2]
        assert (threaded["fom"] >= 2).all(), threaded[["ranks", "fom", "binding"]]
        assert threaded["binding"].str.contains("Open MPI's mpirun is given").all()
