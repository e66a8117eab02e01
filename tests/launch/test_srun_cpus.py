"""The CPUs an srun step gives each task, by Slurm release (s38 tester D1: `#SBATCH -c 2` and
`srun --cpu-bind=cores` without `-c` was read as 2 threads on 2 cores; Slurm 22.05.8 ran both
threads on one CPU)."""

from __future__ import annotations

import re

import pytest

from hpcds1mpi.launch import srun_cpus
from hpcds1mpi.launch.script_reading import read_script
from hpcds1mpi.launch.script_rewrite import Layout, rewrite
from hpcds1mpi.launch.srun_cpus import (Release, adds_srun_c, binding, inherits,
                                        shared_core_problem, srun_c_note, step_cpus,
                                        unknown_release_note)

HEAD = ("#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --ntasks-per-node=1\n#SBATCH --cpus-per-task=2\n"
        "export OMP_NUM_THREADS=$SLURM_CPUS_PER_TASK\n")
S22, S23_02, S23_11, S21 = (Release(n, t) for n, t in (((22, 5), "22.05.8"), ((23, 2), "23.02.7"),
                                                      ((23, 11), "23.11.4"), ((21, 8), "21.08.8")))


@pytest.fixture
def release(monkeypatch):
    def use(found):
        monkeypatch.setattr(srun_cpus, "slurm_release", lambda: found)
    return use


@pytest.mark.parametrize("found, taken", [(S21, True), (S22, False), (S23_02, False),
                                          (S23_11, True), (None, None)])
def test_only_22_05_to_23_02_do_not_take_the_jobs_cpus(found, taken):
    assert inherits(found) is taken


@pytest.mark.parametrize("found, cpus", [(S22, 1), (S23_11, 2), (S21, 2), (None, None)])
def test_a_step_without_c_gets_what_its_release_gives(release, found, cpus):
    release(found)
    script = read_script(HEAD + "srun --cpu-bind=cores ./app\n")
    assert step_cpus(script, script.launch).cpus == cpus


@pytest.mark.parametrize("given", ["srun -c 2 --cpu-bind=cores ./app\n",
                                   "export SRUN_CPUS_PER_TASK=$SLURM_CPUS_PER_TASK\n"
                                   "srun --cpu-bind=cores ./app\n",
                                   "SRUN_CPUS_PER_TASK=2 srun --cpu-bind=cores ./app\n"])
def test_c_or_srun_cpus_per_task_gives_the_cpus_on_every_release(release, given):
    release(S22)
    script = read_script(HEAD + given)
    assert step_cpus(script, script.launch).cpus == 2
    assert shared_core_problem(script, script.launch, 2) == ""


def test_threads_bound_to_one_cpu_get_no_prediction_and_say_the_release(release):
    release(S22)
    script = read_script(HEAD + "srun --cpu-bind=cores ./app\n")
    assert shared_core_problem(script, script.launch, 2) == (
        "line 6: --cpu-bind=cores binds each task to its 1 CPU, which its 2 threads share "
        "(srun 22.05.8 here, as every srun of Slurm 22.05 to 23.02, takes no "
        "--cpus-per-task=2 from the job); no prediction: give srun -c 2 (or export "
        "SRUN_CPUS_PER_TASK=$SLURM_CPUS_PER_TASK before it)")
    release(S23_11)  # its sbatch exports SRUN_CPUS_PER_TASK: read as written
    assert shared_core_problem(script, script.launch, 2) == ""
    release(None)  # not known here: read as written, and said
    assert shared_core_problem(script, script.launch, 2) == ""
    assert "on Slurm 22.05 to 23.02 srun does not take" in unknown_release_note(
        script, script.launch, 2)


@pytest.mark.parametrize("step, bound", [
    ("srun --cpu-bind=cores", "--cpu-bind=cores"), ("srun --cpu-bind=verbose,threads",
                                                    "--cpu-bind=verbose,threads"),
    ("srun --exact", "--exact"), ("srun --hint=nomultithread", "--hint=nomultithread"),
    ("export SLURM_CPU_BIND=cores\nsrun", "SLURM_CPU_BIND=cores"),
    ("srun --cpu-bind=sockets", None), ("srun --cpu-bind=none", None), ("srun", None)])
def test_what_binds_a_task_to_its_cpus(release, step, bound):
    """As the test Slurm did: cores / threads / --exact / --hint / SLURM_CPU_BIND gave the task
    cpu 0, sockets, none and no binding 0-1."""
    release(S22)
    script = read_script(HEAD + step + " ./app\n")
    assert binding(script, script.launch) == bound
    assert bool(shared_core_problem(script, script.launch, 2)) == (bound is not None)


def test_the_rewrites_c_is_explained(release):
    release(S22)
    script = read_script(HEAD.replace("--cpus-per-task=2", "--cpus-per-task=1")
                         + "srun --cpu-bind=cores ./app\n")
    text, _ = rewrite(script, Layout(1, 1, 2))
    assert "srun -c 2 --cpu-bind=cores ./app" in text and adds_srun_c(script, 2)
    note = srun_c_note(script, 2)
    assert note.startswith("line 6: --rewrite adds -c 2 to srun: srun of Slurm 22.05 to 23.02 "
                           "takes no --cpus-per-task from the job")
    assert note.endswith("; 22.05.8 here is one of them")
    release(S23_11)
    assert "23.11.4 here takes it, so the line keeps the script right" in srun_c_note(script, 2)
    assert srun_c_note(script, 1) is None


@pytest.mark.slurm
def test_the_test_slurm_gives_the_cpus_read(slurm, tmp_path):
    """Both steps run on the test Slurm: the task gets the CPUs step_cpus reads for its release
    (this machine's srun), bound (one CPU on 22.05 to 23.02 without -c) or not."""
    text = HEAD + "".join(f"srun {o} grep Cpus_allowed_list /proc/self/status\n"
                          for o in ("--cpu-bind=cores", "-c 2 --cpu-bind=cores"))
    path = tmp_path / "probe.sbatch"
    path.write_text(text)
    out = tmp_path / "probe.out"
    job = slurm.sbatch(path, f"--output={out}", "--time=1", cwd=tmp_path)
    assert slurm.wait(job) == "COMPLETED"
    got = [sum(int(b) - int(a) + 1 if b else 1 for a, b in re.findall(r"(\d+)(?:-(\d+))?", m))
           for m in re.findall(r"Cpus_allowed_list:\s*(\S+)", out.read_text())]
    script = read_script(text)
    assert got[0] == step_cpus(script, script.launches[0]).cpus
    assert got[1] == 2
