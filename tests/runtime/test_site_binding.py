"""The site's OpenMP binding variables: set aside by the CLI, never given to the runs (s36
tester E1, E2)."""

import os
import subprocess
import sys

import pytest

from hpcds1mpi.runtime import site_binding

# A fresh hpcds1mpi process (the console entry point, main) that loads the model libraries
# once its command has run, then says the CPUs it may run on.
_AFTER_COMMAND = r"""
import os, sys
from hpcds1mpi.cli import main
sys.argv = ["hpcds1mpi", "kernels"]
try:
    main()
except SystemExit:
    pass
import xgboost, torch  # both load libgomp, which pinned the process to its first place
os.write(2, f"mask {sorted(os.sched_getaffinity(0))}\n".encode())
"""


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs 2 usable CPUs")
@pytest.mark.parametrize("site", [{"OMP_PROC_BIND": "close", "OMP_PLACES": "cores"},
                                  {"GOMP_CPU_AFFINITY": "0"}])
def test_cli_process_keeps_its_cpus_under_a_sites_binding(site):
    """s36 tester E1: with OMP_PROC_BIND=close OMP_PLACES=cores in the shell, loading xgboost
    and torch pinned hpcds1mpi to CPU 0, and every launcher and rank it started inherited it."""
    before = sorted(os.sched_getaffinity(0))
    done = subprocess.run([sys.executable, "-c", _AFTER_COMMAND], env={**os.environ, **site},
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    mask = [line for line in done.stderr.splitlines() if line.startswith("mask")]
    assert mask == [f"mask {before}"]


def test_set_aside_takes_them_out_and_says_why(monkeypatch):
    """s36 tester E2: the runs never carry the shell's binding variables; the note says which
    and why, by whether the launcher binds each rank's cores."""
    monkeypatch.setattr(site_binding, "_aside", {})
    env = {"OMP_PROC_BIND": "close", "OMP_PLACES": "cores", "PATH": "/bin"}
    assert site_binding.left_out_note(False) is None
    assert site_binding.set_aside(env) == {"OMP_PROC_BIND": "close", "OMP_PLACES": "cores"}
    assert env == {"PATH": "/bin"}
    note = site_binding.left_out_note(False, "mpiexec")
    assert "OMP_PROC_BIND=close OMP_PLACES=cores left out" in note
    assert "mpiexec is not told to give each rank cores" in note
    assert "within the rank's own cores" in site_binding.left_out_note(True)


def test_script_unsets_what_it_does_not_export():
    assert site_binding.script_unset(["OMP_NUM_THREADS"]) == list(site_binding.SITE_BINDING)
    assert site_binding.script_unset(["OMP_PLACES", "OMP_PROC_BIND"]) == [
        "GOMP_CPU_AFFINITY", "KMP_AFFINITY"]


@pytest.mark.mpi
def test_a_sweeps_runs_record_the_binding_variables_left_out(tmp_path):
    """s36 tester E2: the shell's OMP_PROC_BIND / OMP_PLACES stacked every rank's threads on
    core 0 unsaid; the runs go without them, said once and recorded in each run's binding."""
    from hpcds1mpi.records.telemetry import read_runs
    from tests.helpers import hpcds1mpi_exe

    out = tmp_path / "t.h5"
    proc = subprocess.run(
        [hpcds1mpi_exe(), "sweep", "--command", f"{sys.executable} -c pass", "--label", "p",
         "--sizes", "1", "--ranks-per-node", "1", "--threads", "1", "--launcher", "mpiexec",
         "--max-repeats", "1", "--out", str(out), "--no-progress"],
        env={**os.environ, "OMP_PROC_BIND": "close", "OMP_PLACES": "cores"},
        capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    said = "the shell's OMP_PROC_BIND=close OMP_PLACES=cores left out of the runs"
    assert proc.stderr.count(said) == 1
    assert all(said in binding for binding in read_runs(out)["binding"])
