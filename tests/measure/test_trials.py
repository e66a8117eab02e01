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
    from hpcds1mpi.launch import launchers

    marker = tmp_path / "failed-once"
    flaky = tmp_path / "flaky-launch"
    flaky.write_text("#!/bin/sh\n"
                     f"if [ ! -e {marker} ]; then touch {marker}; "
                     "echo 'PMI2 wire-up failed' >&2; exit 7; fi\n"
                     f"exec {launchers.mpiexec_path()} -n 1 \"$@\"\n")
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
    again = trials.LaunchRunner(settings, out, part, "mpiexec")(config)
    assert again["started_at"] == first["started_at"]
    assert again["stored"].startswith(f"already in {out} (measured 20")
    assert again["stored"].endswith("not run again (another --out measures it anew)")
