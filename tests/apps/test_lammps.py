"""LAMMPS for real (Debian ``lammps``: ``lmp``, Open MPI), driven through the CLI in fresh
processes as a new user drives it (README "Sweep your own program"): refused with the wrong
launcher, swept with the right one (LAMMPS's own loop time as the runtime, its rank count
checked), trained on, recommended for an unmeasured size, its batch script and an existing
script read; a misspelled input and a regex that never matches are failed runs with the reason."""

from __future__ import annotations

import json
import os
import re

import pytest

from hpcds1mpi.records import telemetry
from tests.apps.lammps import COMMAND, RANKS_REGEX, STEPS, copy_input, sweep_args
from tests.apps.open_mpi import assert_launched_by_open_mpi_timed_by_itself, openmpi_site
from tests.helpers import error_lines, mpiexec, run_cli, system_program

pytestmark = [pytest.mark.mpi, pytest.mark.slow]
#: Boxes of 6^3, 8^3, 12^3 unit cells (864, 2048, 6912 atoms: 0.02-0.3 s of steps on one core);
#: 10 is never measured.
SIZES, HELD = (6, 8, 12), 10


def _one_line(proc, code: int) -> str:
    assert proc.returncode == code, proc.stderr
    lines = error_lines(proc.stderr)
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    return lines[0]


def _sweep(folder, argv, sizes, out, timeout=300):
    return run_cli([*argv, "--sizes", ",".join(map(str, sizes)), "--out", str(out)],
                   timeout=timeout, cwd=folder)


def test_lammps_with_the_wheels_mpiexec_is_refused_naming_open_mpis(tmp_path):
    system_program("lmp")
    openmpi = system_program("mpirun.openmpi")
    copy_input(tmp_path)
    proc = _sweep(tmp_path, sweep_args(mpiexec()), [8], tmp_path / "t.h5", timeout=120)
    line = _one_line(proc, 1)
    assert "this program is linked against Open MPI (links libmpi.so.40)" in line
    assert os.path.realpath(line.rsplit("--mpiexec ", 1)[1]) == os.path.realpath(openmpi)
    assert not (tmp_path / "t.h5").exists()  # refused before anything ran


def test_a_wrapper_the_elf_check_cannot_read_is_caught_by_lammps_own_rank_count(tmp_path):
    system_program("lmp")
    copy_input(tmp_path)
    wrapper = tmp_path / "run-lmp"
    # lmp by a variable: a wrapper naming it outright is read (s29 tester E1) and refused
    # before any launch; this one stays unread, so only LAMMPS's rank count can catch it
    wrapper.write_text("#!/bin/sh\nexec $APP \"$@\"\n")
    wrapper.chmod(0o755)
    # the wheel's hydra starts two lone copies of Open MPI's lmp: each says "on 1 procs"
    argv = sweep_args(mpiexec(), command=f"{wrapper} -in in.lj -var x {{size}} -log none",
                      repeats=1, ranks="2")
    out = tmp_path / "t.h5"
    proc = run_cli([*argv, "--sizes", "6", "--out", str(out)], timeout=120, cwd=tmp_path,
                   env={"APP": "lmp"})
    line = _one_line(proc, 1)
    assert "launched 2 rank(s)" in line and "with 1: its ranks are not one job" in line
    runs = telemetry.read_runs(out) if out.exists() else None
    assert runs is None or not (runs["status"] == "ok").any()


@pytest.mark.parametrize("command, time_regex, reason", [
    # before: "exit code 1: -----..." (the rule under Open MPI's MPI_ABORT text)
    ("lmp -in in.ljj -var x {size} -log none", None,
     "exit code 1: ERROR on proc 0: Cannot open input script in.ljj: No such file or directory"),
    (COMMAND, r"Loop time: ([0-9.]+)",
     "exit 0, but --time-regex 'Loop time: ([0-9.]+)' matched no number in its output"),
])
def test_a_misspelled_input_or_a_regex_that_never_matches_is_a_failed_run_saying_why(
        tmp_path, command, time_regex, reason):
    system_program("lmp")
    openmpi = system_program("mpirun.openmpi")
    copy_input(tmp_path)
    argv = sweep_args(openmpi, command=command, repeats=1, ranks="1")
    if time_regex:
        argv[argv.index("--time-regex") + 1] = time_regex
    out = tmp_path / "t.h5"
    proc = _sweep(tmp_path, argv, [6], out, timeout=120)
    # A failed run is a measurement, kept; a sweep whose every run failed exits 1 (it had
    # exited 0 with "failed 1"), saying the reason once and the whole in one last line.
    assert proc.returncode == 1, proc.stderr
    runs = telemetry.read_runs(out)
    assert list(runs["status"]) == ["failed"] and runs["error"].iloc[0].startswith(reason)
    said = proc.stderr.strip().splitlines()
    assert any(reason in line for line in said)
    assert said[-1].startswith("hpcds1mpi: error: every configuration this sweep ran failed")


def test_a_size_that_outruns_the_timeout_is_a_timeout_row_and_the_sweep_goes_on(tmp_path):
    system_program("lmp")
    openmpi = system_program("mpirun.openmpi")
    copy_input(tmp_path)
    out = tmp_path / "t.h5"
    # 40^3 cells (256000 atoms): some 10 s of steps, killed at 3 s; 6 takes 0.5 s of launch
    proc = _sweep(tmp_path, [*sweep_args(openmpi, repeats=1, ranks="1"), "--timeout", "3"],
                  [40, 6], out, timeout=120)
    assert proc.returncode == 0, proc.stderr
    runs = telemetry.read_runs(out).set_index("size")
    assert runs.loc[40, "status"] == "timeout" and runs.loc[6, "status"] == "ok", runs
    assert runs.loc[40, "error"] == "no exit within the 3 s timeout; killed"


@pytest.fixture(scope="module")
def lammps(tmp_path_factory):
    """The sweep of SIZES x ranks 1,2 (2 launches each) and a small bundle trained on it."""
    system_program("lmp")
    openmpi = system_program("mpirun.openmpi")
    root = tmp_path_factory.mktemp("lammps")
    copy_input(root)
    out = root / "lj.h5"
    proc = _sweep(root, sweep_args(openmpi), SIZES, out)
    assert proc.returncode == 0, proc.stderr
    model = root / "model"
    proc = run_cli(["train", "--telemetry", str(out), "--out", str(model), "--no-embedding",
                    "--members", "3", "--member-trees", "20"], timeout=300)
    assert proc.returncode == 0, proc.stderr
    return {"root": root, "file": out, "runs": telemetry.read_runs(out), "model": model,
            "openmpi": openmpi}


def test_the_sweep_records_lammps_own_loop_time_and_checked_ranks(lammps):
    runs = lammps["runs"]
    assert len(runs) == 6 and (runs["status"] == "ok").all(), runs[["status", "error"]]
    assert (runs["repeats"] == 2).all() and runs["noise"].notna().all()
    assert (runs["runtime_s"] < runs["elapsed_s"]).all()  # the steps, not mpirun + set-up
    # LAMMPS's timesteps/s is STEPS / its loop time: with 2 launches the median rate's
    # STEPS / rate lies between the two loop times (0.5 %: LAMMPS rounds what it prints)
    steps_time = STEPS / runs["fom"]
    assert (steps_time >= runs["runtime_min_s"] * 0.995).all(), runs
    assert (steps_time <= runs["runtime_max_s"] * 1.005).all(), runs
    small = runs.set_index(["size", "ranks"])["runtime_s"]
    assert small[(12, 1)] > small[(6, 1)]  # 8x the atoms
    assert "mpirun.openmpi -n 2 " in " ".join(runs["command"])
    assert_launched_by_open_mpi_timed_by_itself(lammps["file"], RANKS_REGEX)


def test_a_size_never_measured_is_answered_from_what_was(lammps):
    proc = run_cli(["recommend", "--workload", "lammps", "--size", str(HELD), "--model",
                    str(lammps["model"]), "--json"], timeout=120)
    assert proc.returncode == 0, proc.stderr
    answer = json.loads(proc.stdout)
    pick, runs = answer["pick"], lammps["runs"]
    assert pick["ranks_per_node"] in (1, 2) and pick["threads"] == 1 and pick["nodes"] == 1
    assert runs["runtime_min_s"].min() / 2 < pick["runtime_s"] < runs["runtime_max_s"].max() * 2
    assert "threads 2: never measured for this program (measured 1)" in json.dumps(answer)


def test_the_script_for_it_and_an_existing_script_use_lammps_own_mpi_and_size(lammps, tmp_path):
    openmpi, model = lammps["openmpi"], str(lammps["model"])
    argv = ["recommend", "--workload", "lammps", "--size", str(HELD), "--model", model,
            "--emit", "slurm", "--program", COMMAND]
    # No cluster file: launched as its sweep ran it, not by srun --mpi=pmi2 (the default),
    # which cannot start Open MPI's lmp and was refused (s29 tester B4)
    proc = run_cli(argv, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1].startswith(f"{openmpi} -n ")
    site = openmpi_site(tmp_path, openmpi)  # the machine the bundle was trained on
    proc = run_cli([*argv, "--cluster", str(site)], timeout=120)
    assert proc.returncode == 0, proc.stderr
    launch = proc.stdout.strip().splitlines()[-1]
    # the program by the file its sweep ran (a job's PATH need not find it: s41 tester D7)
    assert launch.startswith(f"{openmpi} -n ") and \
        re.search(rf"[ /]lmp -in in.lj -var x {HELD} -log none$", launch), proc.stdout[-600:]
    # A user's own script, launched without the sweep's -log none: its size is still read
    # (before: "does not have the form of its measured command ...; pass --size", exit 2).
    job = tmp_path / "job.sbatch"
    job.write_text("#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --ntasks-per-node=2\n"
                   "#SBATCH --time=00:10:00\nmpirun -np 2 lmp -in in.lj -var x 12\n")
    proc = run_cli(["advise", str(job), "--model", model], timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "workload lammps (from the program on line 5), size 12 (from the command on line " \
        "5)" in proc.stdout, proc.stdout


def test_without_program_the_scripts_run_the_recorded_command_under_a_launcher_that_can(
        lammps, tmp_path):
    """No --program: the pick's script runs the command the sweep measured (it had run
    ``hpcds1mpi run lammps``, no such kernel), and a calibration sweep of it under srun
    --mpi=pmi2 is not written to fail at every step: its steps launch as the sweep did."""
    openmpi, model = lammps["openmpi"], str(lammps["model"])
    site = openmpi_site(tmp_path, openmpi)
    pick = run_cli(["recommend", "--workload", "lammps", "--size", str(HELD), "--model", model,
                    "--emit", "slurm", "--cluster", str(site)], timeout=120)
    assert pick.returncode == 0, pick.stderr
    assert re.search(rf"[ /]lmp -in in.lj -var x {HELD} -log none$",
                     pick.stdout.strip().splitlines()[-1]), pick.stdout[-600:]
    assert "hpcds1mpi run lammps" not in pick.stdout and "recorded in the model" in pick.stderr
    far = ["recommend", "--workload", "lammps", "--size", "60", "--model", model,
           "--emit", "slurm"]
    # its calibration steps launch as the sweep did, not under srun --mpi=pmi2 (s29 V2-5)
    proc = run_cli(far, timeout=120)
    assert proc.returncode == 0, proc.stderr
    steps = [ln for ln in proc.stdout.splitlines() if " sweep " in ln and "--mpiexec" in ln]
    assert steps and all(f"--mpiexec {openmpi}" in ln for ln in steps), proc.stdout[-800:]


def test_advise_warns_that_srun_without_pmix_cannot_start_lammps(lammps, tmp_path):
    """``srun lmp`` where the site's MpiDefault is pmi2 (the test Slurm's) aborts in MPI_Init;
    advise had said nothing about it."""
    conf = tmp_path / "slurm.conf"
    conf.write_text("MpiDefault=pmi2\n")
    job = tmp_path / "job.sbatch"
    job.write_text("#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --ntasks-per-node=2\n"
                   "#SBATCH --time=00:10:00\nsrun lmp -in in.lj -var x 12\n")
    proc = run_cli(["advise", str(job), "--model", str(lammps["model"])], timeout=120,
                   env={"SLURM_CONF": str(conf)})
    assert proc.returncode == 0, proc.stderr
    assert "warning: line 5: lmp is linked against Open MPI" in proc.stdout and \
        "MpiDefault=pmi2" in proc.stdout and "add --mpi=pmix" in proc.stdout, proc.stdout
