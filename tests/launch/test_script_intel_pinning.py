"""Intel MPI's I_MPI_PIN* values in a script kept in step with a rewrite (s35 tester I2).

Was: ``advise site_pincore.sbatch --rewrite`` (2 ranks x 1 thread, ``export
I_MPI_PIN_DOMAIN=core``) rewrote to 1 x 2 and kept the domain: both threads on one core
(0.27 s against 0.14-0.18 s); ``I_MPI_PIN_PROCESSOR_LIST=0`` kept from 1 x 2 to 2 x 1 put
both ranks on cpu 0. The rewritten scripts are run with the real Intel MPI 2021.19.
"""

from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path

import pytest

from hpcds1mpi.launch.script_binding import binding_note
from hpcds1mpi.launch.script_intel_pinning import intel_pinning_warning
from hpcds1mpi.launch.script_reading import read_script
from hpcds1mpi.launch.script_rewrite import Layout, rewrite
from tests.intel_mpi import build_hybrid, intel_env, intel_mpi

ONE_BY_TWO, TWO_BY_ONE = Layout(1, 1, 2), Layout(1, 2, 1)


def site_script(pinning: str, per_node: int, threads: int, launcher: str = "mpirun",
                program: str = "./src/jac 512 100", head: str = "") -> str:
    """The tester's site script: ``pinning`` lines, then Intel's launcher for the layout."""
    return (f"#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --ntasks-per-node={per_node}\n"
            f"#SBATCH --cpus-per-task={threads}\n#SBATCH --time=00:10:00\n{head}"
            f"export OMP_NUM_THREADS={threads}\n{pinning}"
            f"{launcher} -ppn {per_node} -np {per_node} {program}\n")


def lines_with(text: str, word: str) -> list[str]:
    return [line for line in text.splitlines() if word in line]


# -- the rewrite, from the text ----------------------------------------------------------


@pytest.mark.parametrize("pinning, to, kept", [
    ("export I_MPI_PIN_DOMAIN=core\n", ONE_BY_TWO, "export I_MPI_PIN_DOMAIN=omp"),
    ("export I_MPI_PIN_DOMAIN=1:compact\n", ONE_BY_TWO, "export I_MPI_PIN_DOMAIN=omp"),
    ("export I_MPI_PIN_DOMAIN='[1,2]'\n", ONE_BY_TWO, "export I_MPI_PIN_DOMAIN=omp"),
    ("export I_MPI_PIN_PROCESSOR_LIST=0\n", ONE_BY_TWO, "export I_MPI_PIN_DOMAIN=omp"),
    ("export A=1 I_MPI_PIN_PROCESSOR_LIST=0 B=2\n", ONE_BY_TWO,
     "export A=1 I_MPI_PIN_DOMAIN=omp B=2"),
])
def test_a_pinning_too_small_for_the_new_layout_becomes_omp_domains_and_is_said(
        pinning, to, kept):
    text = site_script(pinning, 2, 1)
    new, changes = rewrite(read_script(text), to, "mpich")
    assert lines_with(new, "I_MPI_PIN") == [kept]
    assert [c.line for c in changes if "I_MPI_PIN" in c.old] == [7]
    note = binding_note(read_script(text), to, "mpich")
    assert re.match(r"line 7: I_MPI_PIN_\w+=\S+ .* under Intel MPI's pinning: --rewrite "
                    r"(sets|replaces it with) I_MPI_PIN_DOMAIN=omp \(each rank", note), note


@pytest.mark.parametrize("launch, wanted", [
    ("mpiexec.hydra -genv I_MPI_PIN_DOMAIN core -n 1", "-genv I_MPI_PIN_DOMAIN omp"),
    ("mpiexec.hydra -genv I_MPI_PIN_DOMAIN=core -n 1", "-genv I_MPI_PIN_DOMAIN=omp"),
    ("mpiexec.hydra -env I_MPI_PIN_PROCESSOR_LIST 0 -n 1", "-env I_MPI_PIN_DOMAIN omp"),
    ("I_MPI_PIN_DOMAIN=1 mpiexec.hydra -n 1", "I_MPI_PIN_DOMAIN=omp mpiexec.hydra"),
])
def test_the_launch_lines_own_genv_and_env_are_rewritten_where_they_stand(launch, wanted):
    text = f"#!/bin/bash\n#SBATCH -N 1\n#SBATCH --ntasks-per-node=1\n{launch} ./jac 512 100\n"
    new, _ = rewrite(read_script(text), ONE_BY_TWO, None)
    assert wanted in new and "core" not in new and "_LIST" not in new, new
    assert "export OMP_NUM_THREADS=2\n" in new  # the domain's size, which omp reads


def test_a_csh_setenv_is_rewritten_as_csh_writes_it():
    text = ("#!/bin/csh -f\n#SBATCH -N 1\n#SBATCH --ntasks-per-node=2\n"
            "setenv I_MPI_PIN_PROCESSOR_LIST 0\nmpirun -ppn 2 -n 2 ./jac 512 100\n")
    new, _ = rewrite(read_script(text), ONE_BY_TWO, None)
    assert "setenv I_MPI_PIN_DOMAIN omp\n" in new and "setenv OMP_NUM_THREADS 2\n" in new


@pytest.mark.parametrize("pinning, to", [
    ("export I_MPI_PIN_DOMAIN=core\n", TWO_BY_ONE),  # one core a rank of one thread
    ("export I_MPI_PIN_DOMAIN=omp\n", ONE_BY_TWO),
    ("export I_MPI_PIN_DOMAIN=socket\n", ONE_BY_TWO),
    ("export I_MPI_PIN_DOMAIN=4\n", ONE_BY_TWO),
    ("export I_MPI_PIN_PROCESSOR_LIST=0-3\n", Layout(1, 2, 2)),
    ("export I_MPI_PIN_PROCESSOR_LIST=allcores:map=scatter\n", ONE_BY_TWO),
    ("export I_MPI_PIN=off I_MPI_PIN_DOMAIN=core\n", ONE_BY_TWO),  # pinning off: unbound
    ("export I_MPI_PIN_DOMAIN=$SLURM_CPUS_PER_TASK\n", ONE_BY_TWO),  # follows --cpus-per-task
    ("export I_MPI_PIN_DOMAIN=core\nexport I_MPI_PIN_DOMAIN=omp\n", ONE_BY_TWO),  # the last
    ("export I_MPI_PIN_PROCESSOR_LIST=0 I_MPI_PIN_DOMAIN=omp\n", ONE_BY_TWO),  # domain wins
])
def test_a_pinning_that_fits_the_new_layout_is_kept_and_not_said(pinning, to):
    text = site_script(pinning, 2, 1)
    new, _ = rewrite(read_script(text), to, "mpich")
    assert lines_with(new, "I_MPI_PIN") == lines_with(text, "I_MPI_PIN")
    assert binding_note(read_script(text), to, "mpich") is None


def test_open_mpi_and_srun_read_no_intel_pinning():
    text = site_script("export I_MPI_PIN_DOMAIN=core\n", 2, 1, "mpirun.openmpi")
    assert "I_MPI_PIN_DOMAIN=core" in rewrite(read_script(text), ONE_BY_TWO, "openmpi")[0]
    text = site_script("export I_MPI_PIN_DOMAIN=core\n", 2, 1, "srun")
    assert "I_MPI_PIN_DOMAIN=core" in rewrite(read_script(text), ONE_BY_TWO, None)[0]


def test_a_value_not_read_here_is_kept_and_named_with_what_to_change():
    text = site_script("export I_MPI_PIN_DOMAIN=$MYDOMAIN\n", 2, 1)
    new, _ = rewrite(read_script(text), ONE_BY_TWO, "mpich")
    assert "export I_MPI_PIN_DOMAIN=$MYDOMAIN\n" in new
    assert binding_note(read_script(text), ONE_BY_TWO, "mpich") == (
        "line 7: I_MPI_PIN_DOMAIN=$MYDOMAIN gives domains not read here under Intel MPI's "
        "pinning, kept by --rewrite for 1 rank(s) x 2 thread(s) a node: if it gives a rank "
        "fewer cpus than its threads, set I_MPI_PIN_DOMAIN=omp (each rank as many cpus as its "
        "OMP_NUM_THREADS)")
    assert binding_note(read_script(text), TWO_BY_ONE, "mpich") is None  # the layout stays


# -- advise's warning of the script's own layout ------------------------------------------


def test_the_scripts_own_ranks_on_fewer_cpus_than_they_need_are_warned_of():
    """site_intel2.new: 2 ranks x 1 thread with I_MPI_PIN_PROCESSOR_LIST=0 ran both on cpu 0
    (1.06 s against the 49.9 ms predicted), with no word from advise."""
    from hpcds1mpi.decide.advise_launch import launch_notes

    script = read_script(site_script("export I_MPI_PIN_PROCESSOR_LIST=0\n", 2, 1,
                                     "mpiexec.hydra -genvall"))
    assert intel_pinning_warning(script, script.launch, None) == (
        "line 7: I_MPI_PIN_PROCESSOR_LIST=0 names 1 cpu for 2 ranks x 1 thread a node, which "
        "they share under Intel MPI's pinning, so the job runs slower than its layout can: "
        "set I_MPI_PIN_DOMAIN=omp (each rank as many cpus as its OMP_NUM_THREADS), or list 2 "
        "cpus")
    warnings, _ = launch_notes(script, script.launch, "./src/jac {size} 100", None)
    assert warnings == [intel_pinning_warning(script, script.launch, None)]
    core = read_script(site_script("export I_MPI_PIN_DOMAIN=core\n", 1, 2))
    assert "gives each rank one core, which its 2 threads share" in intel_pinning_warning(
        core, core.launch, None)
    fits = read_script(site_script("export I_MPI_PIN_DOMAIN=core\n", 2, 1))
    assert intel_pinning_warning(fits, fits.launch, None) is None


# -- real runs of the rewritten scripts ------------------------------------------------------


def _run_rank_cpus(script: Path) -> list[int]:
    """Each rank's cpu count when ``script`` runs under bash outside any job, with the
    environment of a shell that set no I_MPI_PIN* and no Slurm variables of its own."""
    env = {k: v for k, v in intel_env().items()
           if not k.startswith(("SLURM_", "I_MPI_PIN", "OMP_"))}
    out = subprocess.run(["bash", str(script)], capture_output=True, text=True, timeout=120,
                         env=env, cwd=script.parent)
    assert out.returncode == 0, out.stderr
    return [int(m) for m in re.findall(r"^rank \d+ of \d+ threads \d+ cpus (\d+)$",
                                       out.stdout, re.M)]


@pytest.mark.parametrize("pinning, launcher", [
    ("export I_MPI_PIN_DOMAIN=core\n", "mpirun"),  # site_pincore.sbatch
    ("", "mpiexec.hydra -genv I_MPI_PIN_PROCESSOR_LIST 0"),  # site_intel2's list, on the line
])
def test_a_rewritten_intel_script_gives_its_one_rank_both_cpus(tmp_path, pinning, launcher):
    root = intel_mpi()
    program = build_hybrid(tmp_path)
    head = f"export PATH={shlex.quote(str(root / 'bin'))}:$PATH\n"
    text = site_script(pinning, 2, 1, launcher, f"{program} 100000", head)
    assert _cpus_of(tmp_path, text) == [1, 1]  # the script's own 2 x 1: a cpu each
    new, _ = rewrite(read_script(text), ONE_BY_TWO, None)
    assert _cpus_of(tmp_path, new) == [2]  # was [1]: both threads on one core


def _cpus_of(folder: Path, text: str) -> list[int]:
    script = folder / "job.sbatch"
    script.write_text(text)
    return _run_rank_cpus(script)


@pytest.mark.slurm
def test_the_rewritten_site_script_runs_its_two_threads_on_two_cpus_in_slurm(slurm, tmp_path):
    """site_pincore.sbatch rewritten to 1 x 2 and submitted as it is to the test Slurm: Intel's
    mpiexec starts its rank through Slurm, in a job of 1 task of 2 cpus."""
    root = intel_mpi()
    program = build_hybrid(tmp_path)
    head = (f"#SBATCH -o {tmp_path}/job.out\nexport PATH={shlex.quote(str(root / 'bin'))}:$PATH\n"
            f"export I_MPI_ROOT={shlex.quote(str(root))}\n")
    text = site_script("export I_MPI_PIN_DOMAIN=core\n", 2, 1, "mpirun",
                       f"{program} 100000", head)
    new, _ = rewrite(read_script(text), ONE_BY_TWO, None)
    assert "#SBATCH --cpus-per-task=2\n" in new
    (tmp_path / "job.sbatch").write_text(new)
    log = tmp_path / "job.out"
    _, state, out = slurm.run_job(lambda: slurm.sbatch(tmp_path / "job.sbatch", cwd=tmp_path),
                                  log, timeout=180)
    assert state == "COMPLETED", out
    assert re.findall(r"^rank 0 of 1 threads 2 cpus (\d+)$", out, re.M) == ["2"], out
    assert "export I_MPI_PIN_DOMAIN=omp\n" in new  # was =core: {0} for both threads
