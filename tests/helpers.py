"""Shared test helpers: launching real MPI (mpiexec from the venv) with a hard timeout."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def mpiexec() -> str:
    """Path of the mpiexec next to this Python (the mpich wheel), else on PATH."""
    here = Path(sys.executable).parent / "mpiexec"
    if here.exists():
        return str(here)
    found = shutil.which("mpiexec")
    if not found:
        pytest.fail("mpiexec not found: pip install 'hpcds1mpi[mpich]'")
    return found


def hpcds1mpi_exe() -> str:
    return str(Path(sys.executable).parent / "hpcds1mpi")


def run_mpi(nranks: int, argv: list[str], *, timeout: float = 300, env: dict | None = None,
            cwd: str | os.PathLike | None = None) -> subprocess.CompletedProcess:
    """Run ``mpiexec -n nranks argv...``; a hang past ``timeout`` fails the test, never hangs it."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    cmd = [mpiexec(), "-n", str(nranks), *argv]
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=full_env,
                              cwd=cwd)
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"{' '.join(cmd)} did not finish in {timeout}s: {exc.stdout!r} {exc.stderr!r}")


def run_cli(argv: list[str], *, timeout: float = 300, env: dict | None = None,
            cwd: str | os.PathLike | None = None, input: str | None = None
            ) -> subprocess.CompletedProcess:
    """Run the installed ``hpcds1mpi`` console script in a fresh process."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run([hpcds1mpi_exe(), *argv], capture_output=True, text=True,
                          timeout=timeout, env=full_env, cwd=cwd, input=input)


def kernel_check(ranks: int, modes: str, device: str, env: dict, *, timeout: float = 240
                 ) -> dict:
    """One ``mpiexec -n ranks tests/mpi_kernel_check.py`` launch: its records keyed by
    (kernel, precision, mode). Fails the test if the launch fails or does not finish."""
    import json

    script = str(REPO / "tests" / "mpi_kernel_check.py")
    proc = run_mpi(ranks, [sys.executable, script, "--modes", modes, "--device", device],
                   timeout=timeout, env=env)
    assert proc.returncode == 0, f"launch at {ranks} ranks failed:\n{proc.stderr[-3000:]}"
    records = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    assert records and records[-1].get("done"), f"launch did not finish:\n{proc.stdout[-2000:]}"
    return {(r["kernel"], r["precision"], r["mode"]): r for r in records if "kernel" in r}


def fill_disk(disk: Path, leave: int) -> Path:
    """Fill the file system of ``disk`` until about ``leave`` bytes are free; returns the filler
    (remove it to free the space again)."""
    stat = os.statvfs(disk)
    free = stat.f_bavail * stat.f_frsize
    filler = disk / "filler"
    with open(filler, "wb") as fh:
        fh.write(b"\0" * max(0, free - leave))
    return filler


def wait_for_start(out, size: int, timeout: float = 60.0) -> None:
    """Wait until the sweep writing ``out`` has journaled the start of its run of ``size``
    (the last start event's row has that size), or ``timeout`` seconds passed.

    The row is parsed, not searched: a substring test matched "4000" inside a run id or a
    timestamp of another size's start and signalled the sweep too early (a CI flake)."""
    import json
    import time

    from hpcds1mpi.records import telemetry

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        jpath = telemetry.journal_path(out)
        if jpath.exists() and _last_started_size(jpath.read_bytes(), json) == size:
            return
        time.sleep(0.05)


def _last_started_size(journal: bytes, json):
    """The size of the journal's last whole "start" event, or None."""
    for line in reversed(journal.splitlines()):
        try:
            event = json.loads(line)
        except ValueError:  # a line still being written
            continue
        if isinstance(event, dict) and event.get("event") == "start":
            return event.get("row", {}).get("size")
    return None


def system_program(name: str) -> str:
    """Path of a program from a Debian package (scripts/system-packages installs them).

    Missing, the test skips; under ``HPCDS1MPI_REQUIRE_APPS=1`` (set by ``.ci/run``) it fails.
    """
    found = shutil.which(name)
    if found:
        return found
    reason = f"{name} not installed (bash scripts/system-packages)"
    if os.environ.get("HPCDS1MPI_REQUIRE_APPS") == "1":
        pytest.fail(f"HPCDS1MPI_REQUIRE_APPS=1 but {reason}", pytrace=False)
    pytest.skip(reason)


def error_lines(stderr: str) -> list[str]:
    """stderr less what a sweep's pre-flight says (said with or without --no-progress):
    the lines a one-line error is judged on."""
    return [line for line in stderr.strip().splitlines()
            if not line.startswith("hpcds1mpi sweep: ")]


#: A small MPI program with no OpenMP: it prints its rank count and its own time.
#: A plan's [sweep] table that measures each configuration once, fast, at 1 rank x 1 thread,
#: fp64 (the kernel-option tests add their [[kernel]] tables).
ONE_QUICK_LAYOUT = """[sweep]
min_repeats = 1
max_repeats = 1
min_time = 0
ranks_per_node = [1]
threads = [1]
precisions = ["fp64"]
"""


UNTHREADED = r"""
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv) {
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double start = MPI_Wtime(), x = 0;
    for (long i = 0; i < 2000000; i++) x += 1e-9 * i;
    if (rank == 0) printf("ranks %d\ntime %.6f s (%g)\n", size, MPI_Wtime() - start, x);
    MPI_Finalize();
    return 0;
}
"""


def build_unthreaded(folder: Path) -> Path:
    """:data:`UNTHREADED` built with the wheel's ``mpicc`` in ``folder`` (the test skipped
    where the wheel's mpicc or a C compiler is missing)."""
    cc = Path(sys.executable).parent / "mpicc"
    if not cc.exists() or shutil.which("cc") is None:
        pytest.skip("the wheel's mpicc or a C compiler is missing")
    (folder / "serial.c").write_text(UNTHREADED)
    exe = folder / "serial"
    subprocess.run([str(cc), "-O1", "-o", str(exe), str(folder / "serial.c")], check=True,
                   timeout=120)
    return exe


def logging_command(bin_dir: Path, name: str, body: str, log) -> None:
    """A real executable ``name`` in ``bin_dir`` (a stand-in for ``sacct``, ``squeue``,
    ``srun`` put first on PATH) that logs each call's arguments to ``log``, then runs
    ``body``."""
    bin_dir.mkdir(exist_ok=True)
    path = bin_dir / name
    path.write_text(f'#!/bin/sh\necho "$*" >> {log}\n{body}\n')
    path.chmod(0o755)


def recorded_commands(monkeypatch) -> list[list[str]]:
    """Every command ``subprocess.run`` is given from now on, in order (each still run)."""
    calls: list[list[str]] = []
    run = subprocess.run

    def record(command, *args, **kwargs):
        calls.append(list(command))
        return run(command, *args, **kwargs)

    monkeypatch.setattr(subprocess, "run", record)
    return calls


def coarray_heat(folder) -> str:
    """The OpenCoarrays heat program of tests/data/programs built as ``folder/heat`` with
    ``caf``; Open MPI's ``mpirun.openmpi``, which runs it. Skips where either is missing."""
    caf, mpirun = shutil.which("caf"), shutil.which("mpirun.openmpi")
    if caf is None or mpirun is None:
        pytest.skip("OpenCoarrays' caf or Open MPI's mpirun.openmpi is missing")
    shutil.copy(REPO / "tests" / "data" / "programs" / "heat.f90", folder)
    subprocess.run([caf, "-o", "heat", "heat.f90"], cwd=folder, check=True, timeout=120)
    return mpirun


def openmp_binary(folder: Path) -> str:
    """An OpenMP-only C program (no MPI) compiled with gcc in ``folder``; skips without gcc."""
    if shutil.which("gcc") is None:
        pytest.skip("gcc missing")
    (folder / "omp.c").write_text("#include <omp.h>\n#include <stdio.h>\nint main(void) "
                                  "{ printf(\"%d\\n\", omp_get_max_threads()); return 0; }\n")
    subprocess.run(["gcc", "-fopenmp", "-o", str(folder / "omp"), str(folder / "omp.c")],
                   check=True, timeout=120)
    return str(folder / "omp")


def executable_script(folder: Path, name: str, text: str) -> str:
    """``text`` written as the executable file ``folder/name``; its path."""
    path = folder / name
    path.write_text(text)
    path.chmod(0o755)
    return str(path)


@contextlib.contextmanager
def lock_held_elsewhere(path):
    """The write lock of output ``path`` held through a descriptor of its own, as another
    writer's is: a command of this process that locks ``path`` is refused."""
    from hpcds1mpi.lock_files import take_lock
    from hpcds1mpi.writers import lock_path

    lock = lock_path(path)
    fd = take_lock(lock, busy=AssertionError, cannot_create=AssertionError)
    try:
        yield lock
    finally:
        os.close(fd)
        lock.unlink(missing_ok=True)
