"""A script whose other launch line stops the job gets at most ``confirm`` from advise."""

from __future__ import annotations

import dataclasses

from hpcds1mpi.commands.advise import format_advice
from hpcds1mpi.decide import advise as advise_mod
from hpcds1mpi.decide.advise_other_launch import confirm_other_launches
from hpcds1mpi.launch.script_reading import read_script
from tests.decide.test_advise import bundle, places  # noqa: F401 (fixtures)
from tests.decide.test_advise import run

#: The recommended layout on line 6, and a second run on line 7 asking more ranks than the
#: job has tasks, which stops the job (not enough slots).
TWO_LAUNCHES = """#!/bin/bash
#SBATCH --partition=standard
#SBATCH --nodes=1
#SBATCH --ntasks-per-node=2
#SBATCH --time=00:01:00
srun hpcds1mpi run stencil --size 128 --precision fp64
{second}
"""
STOPS = "mpirun.openmpi -np 4 hpcds1mpi run stencil --size 128 --precision fp64"
SAID = ("line 7: Open MPI's mpirun.openmpi starts 4 ranks, but the job has 2 tasks, its slots: "
        "it stops at once (not enough slots); ask #SBATCH --ntasks=4, or give mpirun.openmpi "
        "--oversubscribe")


def test_a_second_launch_line_that_stops_the_job_holds_the_verdict_at_confirm(
        bundle, places, monkeypatch):
    """s49 (after s48 tester O8): advise warned that line 7 stops the job, and still printed
    "verdict auto" and "already asks the recommended layout" for the line it read."""
    real_recommend = advise_mod.recommend

    def sure_guard(*args, **kw):  # the guard said auto of the line read
        rec = real_recommend(*args, **kw)
        rec.verdict = dataclasses.replace(rec.verdict, verdict="auto")
        return rec

    monkeypatch.setattr(advise_mod, "recommend", sure_guard)
    a = run(TWO_LAUNCHES.format(second=STOPS), bundle, places)
    assert a.recommended.config == a.asked.config  # the line read asks the recommended layout
    assert SAID in a.warnings
    assert a.verdict["verdict"] == "confirm" and SAID in a.verdict["reasons"], a.verdict
    text = format_advice(a)
    assert "verdict confirm" in text and "verdict auto" not in text
    assert f"     - {SAID}" in text
    fits = run(TWO_LAUNCHES.format(second=STOPS.replace("-np 4", "-np 2")), bundle, places)
    assert fits.verdict["verdict"] == "auto"  # a second line the job holds: as before
    one = run(TWO_LAUNCHES.format(second=""), bundle, places)
    assert one.verdict["verdict"] == "auto" and SAID not in one.verdict["reasons"]


def test_only_an_auto_verdict_is_lowered_and_each_reason_is_said_once():
    script = read_script(TWO_LAUNCHES.format(second=STOPS))
    script.launch = script.launches[0]
    escalated = {"verdict": "escalate", "reasons": ["unknown program"], "checks": {}}
    confirm_other_launches(escalated, script)
    assert escalated["verdict"] == "escalate" and escalated["reasons"][1] == SAID
    confirm_other_launches(escalated, script)
    assert escalated["reasons"].count(SAID) == 1
    alone = read_script(TWO_LAUNCHES.format(second=""))
    alone.launch = alone.launches[0]
    kept = {"verdict": "auto", "reasons": [], "checks": {}}
    confirm_other_launches(kept, alone)
    assert kept == {"verdict": "auto", "reasons": [], "checks": {}}


def test_a_bare_mpirun_that_is_open_mpis_on_path_holds_the_verdict_too(tmp_path, monkeypatch):
    """s49 review F2: the warning read a bare ``mpirun``'s file (Open MPI's on PATH) and said
    the job stops; the verdict read its name only and stayed auto."""
    import os
    import shutil

    import pytest

    openmpi = shutil.which("mpirun.openmpi")
    if openmpi is None:
        pytest.skip("Debian's Open MPI (mpirun.openmpi) is not installed")
    bin_dir = tmp_path / "ompi"
    bin_dir.mkdir()
    (bin_dir / "mpirun").symlink_to(openmpi)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    script = read_script(TWO_LAUNCHES.format(second=STOPS.replace("mpirun.openmpi", "mpirun")))
    script.launch = script.launches[0]
    verdict = {"verdict": "auto", "reasons": [], "checks": {}}
    confirm_other_launches(verdict, script, str(tmp_path))
    assert verdict["verdict"] == "confirm" and "Open MPI's mpirun starts 4 ranks" in \
        verdict["reasons"][0], verdict


def test_a_hydra_line_crowding_the_jobs_cpus_holds_the_verdict_the_line_read_too():
    """s49 review F6: advise warned that mpiexec.mpich's 4 ranks share the job's 2 CPUs and
    still said "already asks the recommended layout; verdict auto" (the prediction gives each
    rank its own CPU)."""
    line = "mpiexec.mpich -n 4 hpcds1mpi run stencil --size 128 --precision fp64"
    for second in ("", line):  # the line read, or a second line
        text = TWO_LAUNCHES.format(second=second)
        if not second:
            text = text.replace("srun hpcds1mpi run", "mpiexec.mpich -n 4 hpcds1mpi run")
        script = read_script(text)
        script.launch = script.launches[0]
        verdict = {"verdict": "auto", "reasons": [], "checks": {}}
        confirm_other_launches(verdict, script)
        assert verdict["verdict"] == "confirm", (second, verdict)
        assert "sharing the job's CPUs (4 ranks on 2 CPUs)" in verdict["reasons"][0]
    fits = read_script(TWO_LAUNCHES.format(second=line.replace("-n 4", "-n 2")))
    fits.launch = fits.launches[0]
    kept = {"verdict": "auto", "reasons": [], "checks": {}}
    confirm_other_launches(kept, fits)
    assert kept["verdict"] == "auto"
