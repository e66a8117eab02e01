"""Hydra's -bind-to core for ranks of several threads (s31 tester P3: two threads shared one
core, and the telemetry said "mpiexec default")."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from hpcds1mpi.config import Configuration
from hpcds1mpi.launch.hydra_binding import hydra_binding, hydra_thread_args
from hpcds1mpi.launch.launchers import HydraMpiexec

WHEEL_MPIEXEC = str(Path(sys.executable).parent / "mpiexec")


def test_bind_to_core_gets_a_core_per_thread_and_is_said():
    for given, want in ((["-bind-to", "core"], ["-bind-to", "core:2"]),
                        (["--bind-to=hwthread"], ["--bind-to=hwthread:2"]),
                        (["-bind-to", "core:4"], ["-bind-to", "core:4"]),  # a count: kept
                        (["-bind-to", "none"], ["-bind-to", "none"])):
        assert list(hydra_thread_args(given, 2)[0]) == want, given
    args, note = hydra_thread_args(["-bind-to", "core"], 2)
    assert note.startswith("2 threads per rank: hydra's -bind-to core is given as -bind-to "
                           "core:2") and "\n" not in note
    assert hydra_thread_args(["-bind-to", "core"], 1) == (("-bind-to", "core"), "")
    launcher = HydraMpiexec("mpiexec", ("-bind-to", "core"))
    config = Configuration(1, 1, 2)
    assert launcher.tokens(config)[-2:] == ["-bind-to", "core:2"]
    assert launcher.notes(config) == [note]
    assert launcher.binding(config) == "mpiexec -bind-to core:2 (the user's launcher options)"
    assert HydraMpiexec("mpiexec").binding(config) == "mpiexec default"
    assert hydra_binding("mpiexec", ["-genv", "X", "1"], 2) is None


@pytest.mark.skipif(not os.path.exists(WHEEL_MPIEXEC) or (os.cpu_count() or 1) < 2,
                    reason="needs the [mpich] extra's mpiexec and 2 CPUs")
def test_a_rank_of_two_threads_is_bound_to_two_cores_in_a_real_launch():
    launcher = HydraMpiexec(WHEEL_MPIEXEC, ("-bind-to", "core"))
    out = subprocess.run([*launcher.tokens(Configuration(1, 1, 2)), "grep",
                          "Cpus_allowed_list", "/proc/self/status"], capture_output=True,
                         text=True, timeout=60)
    cpus = out.stdout.split(":")[-1].strip()
    assert cpus and ("-" in cpus or "," in cpus), out  # 0-1: two cores, not one
