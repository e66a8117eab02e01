"""System 2's runners: one-configuration sweeps built by SweepStep, relaunch of a dead launch."""

from __future__ import annotations

import pytest

from hpcds1mpi.config import Configuration
from hpcds1mpi.measure import trials


def test_runs_are_built_from_the_one_sweep_step():
    settings = trials.RunSettings("stencil", 12)
    config = Configuration(1, 2, 1, "cpu", "fp64")
    doc = settings.plan_doc(config)
    assert doc["sweep"] == {"min_time": 0.2, "max_repeats": 5, "warmup": 1, "timeout": 600.0,
                            "snapshot_every": 0}
    assert trials.launched_under_mpi({"PMI_RANK": "0"}) and not trials.launched_under_mpi({})


@pytest.mark.parametrize("relaunches", [1, 0])
def test_launch_that_never_started_the_sweep_is_made_again(tmp_path, monkeypatch, relaunches):
    """A launch failing before the sweep records anything (a PMI wire-up error on the test
    Slurm) is launched again once; with relaunches=0 the same launch stays a crash."""
    from hpcds1mpi.cluster import Partition
    from hpcds1mpi.launch import launcher_discovery, launchers

    marker = tmp_path / "failed-once"
    flaky = tmp_path / "flaky-launch"
    flaky.write_text("#!/bin/sh\n"
                     f"if [ ! -e {marker} ]; then touch {marker}; "
                     "echo 'PMI2 wire-up failed' >&2; exit 7; fi\n"
                     f"exec {launcher_discovery.mpiexec_path()} -n 1 \"$@\"\n")
    flaky.chmod(0o755)

    class Flaky(launchers.Launcher):
        def tokens(self, config):
            return [str(flaky)]

    monkeypatch.setattr(launchers, "local", lambda launcher=None, **kw: Flaky())
    part = Partition("p", cores_per_node=2, memory_gb=4, max_nodes=1)
    settings = trials.RunSettings("stencil", 12, min_time=0.01, max_repeats=1)
    runner = trials.LaunchRunner(settings, str(tmp_path / "t.h5"), part, "srun",
                                 relaunches=relaunches)
    row = runner(Configuration(1, 1, 1, "cpu", "fp64"))
    if relaunches:
        assert row["status"] == "ok", row
        assert [r[1] for r in runner.relaunched] == [7]
    else:
        assert row["status"] == "crashed" and "launch exited 7" in row["error"], row
        assert runner.relaunched == []


def test_a_run_the_file_already_held_comes_back_marked_stored(tmp_path):
    """Was: a tune on an existing --out read the file's old run back as a new one (the sweep
    resumes and does not run it again) and spent the budget on it."""
    from hpcds1mpi.cluster import Partition

    part = Partition("p", cores_per_node=2, memory_gb=4, max_nodes=1)
    settings = trials.RunSettings("stencil", 12, min_time=0.01, max_repeats=1)
    out = str(tmp_path / "t.h5")
    config = Configuration(1, 1, 1, "cpu", "fp64")
    first = trials.LaunchRunner(settings, out, part, "mpiexec")(config)
    assert first["status"] == "ok" and not first.get("stored"), first
    import time

    from tests.runtime.test_zoned_times import local_zone

    with local_zone():  # s35 tester T7: was local time with no zone ("measured 2026-12-06 14:59")
        again = trials.LaunchRunner(settings, out, part, "mpiexec")(config)
    assert again["started_at"] == first["started_at"]
    when = time.strftime("%Y-%m-%d %H:%M", time.gmtime(first["started_at"]))
    assert again["stored"].startswith(f"already in {out} (measured {when} UTC)")
    assert again["stored"].endswith("not run again (another --out measures it anew)")


def test_a_program_run_that_did_not_converge_comes_back_with_the_sweeps_note(tmp_path):
    """s30 tester N3: tune's "best" was an Elk run that exited 0 but said it did not reach
    self-consistency, and tune said nothing; the sweep says it once per configuration."""
    import sys

    from hpcds1mpi.cluster import Partition

    app = tmp_path / "scf.py"
    app.write_text("print('SCF run NOT converged')\n")
    part = Partition("p", cores_per_node=2, memory_gb=4, max_nodes=1)
    settings = trials.RunSettings("scf", 3, program=f"{sys.executable} {app}", min_time=0,
                                  min_repeats=1, max_repeats=1, warmup=0)
    row = trials.LaunchRunner(settings, str(tmp_path / "t.h5"), part, "mpiexec")(
        Configuration(1, 1, 1, "cpu", "fp64"))
    assert row["status"] == "ok", row
    assert row["notes"] == [n for n in row["notes"] if "SCF run NOT converged" in n]
    assert len(row["notes"]) == 1 and row["notes"][0].startswith(
        "note: scf size 3 N1xR1xT1-cpu-fp64: ok, but the program said")


def test_run_notes_keeps_the_notes_on_this_run_only():
    said = ["launch probe: 2 ranks joined", "note: a size 3 N1xR1xT1-cpu-fp64: ok, but x",
            "note: the launch is unverified", "a size 3 N1xR1xT1-cpu-fp64: failed: y"]
    assert trials.run_notes(said, "a size 3 N1xR1xT1-cpu-fp64") == [said[1]]


def test_a_kernels_trials_take_tunes_mpi_over_the_cluster_files(tmp_path):
    """s42: tune had no ``--mpi``; a kernel's trials took the cluster file's ``mpi`` only."""
    from hpcds1mpi.cluster import Partition

    site = tmp_path / "c.toml"
    site.write_text('[cluster]\nmpi = "pmix"\n[partitions.p]\ncores_per_node = 2\n'
                    "memory_gb = 4\nmax_nodes = 1\n")
    part = Partition("p", cores_per_node=2, memory_gb=4, max_nodes=1)
    settings = trials.RunSettings("stencil", 12, min_time=0.01, max_repeats=1)
    runner = trials.LaunchRunner(settings, str(tmp_path / "t.h5"), part, "srun", str(site))
    assert runner._srun_mpi() == "pmix"
    runner = trials.LaunchRunner(settings, str(tmp_path / "t.h5"), part, "srun", str(site),
                                 mpi="none")
    assert runner._srun_mpi() == "none"
