"""An MPICH-family program for real (jacobi.c built with the wheel's mpicc): refused under
Open MPI's mpirun, one job under hydra (the wheel's mpiexec and Debian's mpiexec.mpich), repeated
by default, swept, trained on, recommended for an unmeasured size and checked against it."""

from __future__ import annotations

import json
import os

import pytest

from hpcds1mpi.records import telemetry
from tests.apps import jacobi
from tests.apps.picks import assert_pick_is_good
from tests.helpers import error_lines, run_cli, system_program

pytestmark = [pytest.mark.mpi, pytest.mark.slow]
SIZES, HELD = (300, 600, 1200), 900


@pytest.fixture(scope="module")
def exe(tmp_path_factory):
    built = jacobi.build(tmp_path_factory.mktemp("jacobi"))
    if built is None:
        if os.environ.get("HPCDS1MPI_REQUIRE_APPS") == "1":
            pytest.fail("HPCDS1MPI_REQUIRE_APPS=1 but the wheel's mpicc or cc is missing")
        pytest.skip("the wheel's mpicc or a C compiler is missing")
    return built


def _one_line(proc, code: int) -> str:
    assert proc.returncode == code, proc.stderr
    lines = error_lines(proc.stderr)
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    return lines[0]


def test_open_mpis_mpirun_is_refused_naming_an_mpich_launcher(exe, tmp_path):
    openmpi = system_program("mpirun.openmpi")
    out = tmp_path / "t.h5"
    proc = run_cli([*jacobi.sweep_args(exe), "--sizes", "300", "--mpiexec", openmpi,
                    "--out", str(out)], timeout=120)
    line = _one_line(proc, 1)
    assert "linked against the MPICH family" in line and "links libmpi.so.12" in line
    assert "Open MPI's launcher" in line and "--mpiexec " in line
    assert not out.exists()


def test_open_mpis_mpirun_is_refused_for_one_rank_too(exe, tmp_path):
    # Was: launched, MPICH 5 aborted ("unsupported PMI version PMIx") and the run was recorded
    # as the program's failure with a line of dashes as its error.
    out = tmp_path / "t.h5"
    argv = jacobi.sweep_args(exe, repeats=1, ranks="1", threads="1")
    proc = run_cli([*argv, "--sizes", "300", "--mpiexec", system_program("mpirun.openmpi"),
                    "--out", str(out)], timeout=120)
    line = _one_line(proc, 1)
    assert "linked against the MPICH family" in line and "Open MPI's launcher" in line
    assert not out.exists()


def test_debian_mpichs_hydra_starts_the_wheel_built_program_as_one_job(exe, tmp_path):
    out = tmp_path / "t.h5"
    argv = jacobi.sweep_args(exe, repeats=1, ranks="2", threads="1")
    proc = run_cli([*argv, "--sizes", "300", "--mpiexec", system_program("mpiexec.mpich"),
                    "--out", str(out)], timeout=120)
    assert proc.returncode == 0, proc.stderr
    run = telemetry.read_runs(out).iloc[0]
    assert run["status"] == "ok" and run["ranks"] == 2 and "mpiexec.mpich" in run["command"]


def test_a_short_program_gets_at_least_three_repeats_by_default(exe, tmp_path):
    out = tmp_path / "t.h5"
    argv = jacobi.sweep_args(exe, repeats=None)
    argv[argv.index("--ranks-per-node") + 1] = "1"
    argv[argv.index("--threads") + 1] = "1"
    proc = run_cli([*argv, "--sizes", "300", "--out", str(out)], timeout=120)
    assert proc.returncode == 0, proc.stderr
    run = telemetry.read_runs(out).iloc[0]
    assert run["repeats"] >= 3 and run["noise"] == run["noise"]  # measured, not NaN
    assert run["runtime_min_s"] <= run["runtime_s"] <= run["runtime_max_s"]
    assert run["runtime_s"] < run["elapsed_s"]  # its own time, start-up excluded


@pytest.fixture(scope="module")
def swept(exe, tmp_path_factory):
    root = tmp_path_factory.mktemp("jacobi-sweep")
    train, held, model = root / "train.h5", root / "held.h5", root / "model"
    for sizes, out in ((SIZES, train), ((HELD,), held)):
        proc = run_cli([*jacobi.sweep_args(exe), "--sizes", ",".join(map(str, sizes)),
                        "--out", str(out)], timeout=600)
        assert proc.returncode == 0, proc.stderr
    proc = run_cli(["train", "--telemetry", str(train), "--out", str(model), "--no-embedding",
                    "--members", "3", "--member-trees", "20"], timeout=600)
    assert proc.returncode == 0, proc.stderr
    return {"train": telemetry.read_runs(train), "held": telemetry.read_runs(held),
            "model": model}


def test_every_launch_was_one_job_of_its_ranks(swept):
    runs = swept["train"]
    assert len(runs) == 12 and (runs["status"] == "ok").all()  # --ranks-regex held for each
    assert set(runs["ranks"]) == {1, 2} and (runs["fom"] > 0).all()


def test_the_pick_for_an_unmeasured_size_against_its_measured_configurations(swept):
    proc = run_cli(["recommend", "--workload", "jacobi", "--size", str(HELD), "--model",
                    str(swept["model"]), "--json"], timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert_pick_is_good("jacobi", HELD, swept["held"], json.loads(proc.stdout)["pick"])
