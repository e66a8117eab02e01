"""What a script's launch line asks for beyond the layout: the program's size lined up with its
measured command, the note for a script that launches more than once, and a launcher of another
MPI family than the program's, told from the files alone (real Debian binaries; nothing is
run)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from hpcds1mpi.launch import script_mpi_check as mpi_check
from hpcds1mpi.launch import script_request as sr
from hpcds1mpi.launch.script_reading import read_script
from tests.helpers import system_program

WHEEL_MPIEXEC = str(Path(sys.executable).parent / "mpiexec")


def launch_of(line: str, head: str = "#SBATCH -N 1\n"):
    return read_script(head + line + "\n").launch


@pytest.mark.parametrize("line, template, size", [
    ("srun ./bin/app.x 4096 40", "./app {size} 40", 4096),
    ("srun ./wrap.sh ./app 512 40", "./app {size} 40", 512),  # a wrapper before the program
    ("srun python app.py --n 77", "python3 app.py --n {size}", 77),
    ("srun ./app.py --n 78", "python3 app.py --n {size}", 78),  # run directly by its #!
    ("mpirun -np 4 ./app --grid=64x64", "./app --grid={size}x{size}", 64),
    ("srun ./app 512", "./app {size} 40", None),  # not the measured form
    ("srun ./other 512 40", "./app {size} 40", None),
    ("srun ./app 512 40", "./app 512 {ranks}", None),  # the command does not carry the size
    # An option's value, the launch with options left out or added (before: None, "pass --size")
    ("mpirun -np 2 lmp -in in.lj -var x 12", "lmp -in in.lj -var x {size} -log none", 12),
    ("srun lmp -log none -in in.lj -sf opt -var x 20", "lmp -in in.lj -var x {size}", 20),
    ("srun ./app --n=96 -v", "./app --n={size}", 96),
    ("srun ./app -q --n 48", "python3 app.py --n {size} --check", 48),
    ("srun lmp -in in.lj -var y 12", "lmp -in in.lj -var x {size} -log none", None),
    ("srun ./app --n 4 --n 8", "./app --n {size}", None),  # which one: not guessed
])
def test_the_size_is_read_where_the_measured_command_has_it(line, template, size):
    assert sr.size_from(launch_of(line), template) == size


def test_how_well_a_launch_fits_a_measured_command():
    launch = launch_of("srun ./jacobi 128 40")
    assert sr.fits_command(launch, "./jacobi {size} 40") == 2
    assert sr.fits_command(launch, "./jacobi {size} {ranks}") == 2
    assert sr.fits_command(launch, "./jacobi {size} 80") == 1  # its size, another argument
    assert sr.fits_command(launch, "./jacobi 200 {ranks}") == 0


def test_a_script_that_launches_more_than_once_gets_one_note():
    once = read_script("#SBATCH -t 30\nsrun ./app 1\n")
    assert sr.repeats_note(once, 60) is None
    looped = read_script("#SBATCH -t 30\nfor i in 1 2 3; do srun ./app $i; done\n")
    note = sr.repeats_note(looped, 60)
    assert note.startswith("the script launches more than once (line 2, inside a loop)")
    assert "walltime (00:01:00) covers one launch" in note and "keeps its --time (00:30:00)" in note
    several = read_script("#!/bin/bash\nsrun ./pre\nsrun ./app 1\n")
    note = sr.repeats_note(several, 120)
    assert "(lines 2, 3)" in note and "none set: the partition's default" in note
    assert "--rewrite edits the launch options of line 2 only" in note


def test_the_note_lists_a_few_of_many_launch_lines():
    """A generated script of 5,000 launch lines got a note listing every one of them."""
    many = read_script("#SBATCH -t 30\n" + "srun ./app\n" * 5000)
    note = sr.repeats_note(many, 60)
    assert "(lines 2, 3, 4, 5, 6, 7, 8, 9, 10, 11 and 4990 more)" in note and len(note) < 400


# ---- the launcher against the program's MPI ---------------------------------------------------


@pytest.fixture
def nothing_runs(monkeypatch):
    """Any subprocess (``--version``, ``ldd``, the program) fails the test."""
    def refuse(*args, **kwargs):
        raise AssertionError(f"a process was started: {args[:1]}")

    monkeypatch.setattr(subprocess, "Popen", refuse)
    monkeypatch.setattr(subprocess, "run", refuse)


@pytest.fixture
def mpis():
    """The Debian programs and launchers of both families."""
    return {"openmpi_app": system_program("hpcc"), "mpich_app": system_program("NPmpich2"),
            "openmpi_run": system_program("mpirun.openmpi"),
            "mpich_run": system_program("mpiexec.mpich")}


def test_each_launchers_family_from_its_file(mpis, nothing_runs, tmp_path):
    assert mpi_check.launcher_file_family(mpis["openmpi_run"]) == "openmpi"  # orterun, by its name
    assert mpi_check.launcher_file_family(mpis["mpich_run"]) == "mpich"
    copy = tmp_path / "mpirun"  # another name: told by what it links / names
    shutil.copy(os.path.realpath(mpis["openmpi_run"]), copy)
    assert mpi_check.launcher_file_family(str(copy)) == "openmpi"
    if os.path.exists(WHEEL_MPIEXEC):
        assert mpi_check.launcher_file_family(WHEEL_MPIEXEC) == "mpich"  # the wheel's hydra
    wrapper = tmp_path / "mpiexec"
    wrapper.write_text("#!/bin/sh\nexec srun \"$@\"\n")
    assert mpi_check.launcher_file_family(str(wrapper)) is None  # a script: unknown
    assert mpi_check.launcher_file_family(str(tmp_path / "missing")) is None


def test_each_programs_family_from_its_file(mpis, nothing_runs, tmp_path):
    assert mpi_check.program_file_family(mpis["openmpi_app"]) == ("openmpi", "links libmpi.so.40")
    assert mpi_check.program_file_family(mpis["mpich_app"])[0] == "mpich"
    assert mpi_check.program_file_family(shutil.which("sh")) == (None, "")  # no MPI
    text = tmp_path / "app.py"
    text.write_text("print(1)\n")
    assert mpi_check.program_file_family(str(text)) == (None, "")  # its mpi4py would need running


def _mismatch(text: str, cwd, env=None):
    script = read_script(text)
    return mpi_check.mpi_mismatch(script, script.launches[-1], str(cwd), env)


def test_an_mpich_program_under_open_mpis_mpirun_is_a_warning(mpis, nothing_runs, tmp_path):
    line = _mismatch(f"#!/bin/bash\n#SBATCH -N 1\n{mpis['openmpi_run']} -np 2 "
                     f"{mpis['mpich_app']} -u 8\n", tmp_path)
    assert line.startswith("line 3: NPmpich2 is linked against the MPICH family")
    assert "Open MPI's launcher" in line and "independent 1-rank copies" in line
    suggested = line.split("launch it with ")[1].split(" ")[0]
    assert mpi_check.launcher_file_family(suggested) == "mpich", line
    assert "\n" not in line


def test_an_open_mpi_program_under_hydra_is_a_warning(mpis, nothing_runs, tmp_path):
    line = _mismatch(f"#SBATCH -N 1\n{mpis['mpich_run']} -n 2 {mpis['openmpi_app']}\n",
                     tmp_path)
    assert "hpcc is linked against Open MPI (links libmpi.so.40)" in line
    assert "a launcher of the MPICH family (hydra)" in line and "srun --mpi=pmix" in line
    suggested = line.split("launch it with ")[1].split(" ")[0]
    assert mpi_check.launcher_file_family(suggested) == "openmpi", line


def test_a_fitting_or_unknown_pairing_says_nothing(mpis, nothing_runs, tmp_path):
    fits = f"#SBATCH -N 1\n{mpis['openmpi_run']} -np 2 {mpis['openmpi_app']}\n"
    assert _mismatch(fits, tmp_path) is None
    assert _mismatch(f"#SBATCH -N 1\nsrun {mpis['openmpi_app']}\n", tmp_path) is None
    assert _mismatch(f"#SBATCH -N 1\n{mpis['openmpi_run']} -np 2 python3 app.py\n",
                     tmp_path) is None
    assert _mismatch(f"#SBATCH -N 1\n{mpis['openmpi_run']} -np 2 ./missing\n", tmp_path) is None
    assert _mismatch(f"#SBATCH -N 1\n$MPI_HOME/bin/mpirun -np 2 {mpis['mpich_app']}\n",
                     tmp_path) is None


def test_names_are_found_where_the_job_finds_them(mpis, nothing_runs, tmp_path):
    """A bare launcher is looked up on PATH, a relative program in the submit folder, only
    while the script changes neither (module load, cd elsewhere, a PBS job's home folder)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "mpirun").symlink_to(os.path.realpath(mpis["openmpi_run"]))
    shutil.copy(mpis["mpich_app"], tmp_path / "app")
    env = {"PATH": str(bin_dir)}
    plain = "#!/bin/bash\n#SBATCH -N 1\nmpirun -np 2 ./app\n"
    assert "app is linked against the MPICH family" in _mismatch(plain, tmp_path, env)
    for changed in ("module load openmpi\n", "source env.sh\n", ". ./env.sh\n",
                    "export PATH=/opt/mpi/bin:$PATH\n", "cd /scratch/run\n"):
        text = plain.replace("mpirun", changed + "mpirun")
        assert _mismatch(text, tmp_path, env) is None, changed
    moved = plain.replace("mpirun", "cd $SLURM_SUBMIT_DIR\nmpirun")
    assert _mismatch(moved, tmp_path, env) is not None
    pbs = "#PBS -l select=1:ncpus=2:mpiprocs=2\nmpirun -np 2 ./app\n"
    assert _mismatch(pbs, tmp_path, env) is None  # PBS starts in $HOME
    pbs_here = pbs.replace("mpirun", "cd \"$PBS_O_WORKDIR\"\nmpirun")
    assert _mismatch(pbs_here, tmp_path, env) is not None
    other = tmp_path / "run"
    other.mkdir()
    chdir = plain.replace("#SBATCH -N 1", f"#SBATCH -N 1\n#SBATCH --chdir={other}")
    assert _mismatch(chdir, tmp_path, env) is None  # no ./app in the --chdir folder


@pytest.mark.parametrize("text, threads", [
    # PBS without ompthreads: the program's own --threads 2 is the ranks' threads, not 1
    ("#PBS -l select=1:ncpus=2:mpiprocs=1\nmpiexec -n 1 hpcds1mpi run stencil --size 128"
     " --threads 2\n", 2),
    ("#SBATCH -N 1\nexport OMP_NUM_THREADS=1\nsrun hpcds1mpi sweep --plan p.toml "
     "--threads=4\n", 4),
    # srun's own --threads (before the program) and another program's --threads are not it
    ("#SBATCH -N 1\n#SBATCH -c 2\nsrun --threads 3 ./app --threads 8\n", 2),
])
def test_hpcds1mpi_own_threads_are_read_as_the_ranks_threads(text, threads):
    script = read_script(text)
    assert script.threads == threads


def test_a_differing_omp_setting_gets_a_note_naming_both():
    script = read_script("#SBATCH -N 1\nexport OMP_NUM_THREADS=1\nsrun hpcds1mpi run stencil"
                         " --size 9 --threads 2\n")
    assert script.threads == 2
    assert any("--threads 2" in n and "OMP_NUM_THREADS=1" in n for n in script.notes)


def test_thousands_of_launch_lines_are_checked_in_linear_time(mpis, nothing_runs, tmp_path):
    """Each launch line rescanned every line before it (twice): 3,000 mpirun lines took
    30 s, a 256 kB script of them half an hour. The lines that change the environment or the
    folder are now found once; a (program, launcher) pair is read and warned about once."""
    import time

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "mpirun").symlink_to(os.path.realpath(mpis["openmpi_run"]))
    shutil.copy(mpis["mpich_app"], tmp_path / "app")
    env = {"PATH": str(bin_dir)}
    script = read_script("#!/bin/bash\n#SBATCH -N 1\n" + "mpirun -np 2 ./app\n" * 2000
                         + "module load x\nmpirun -np 2 ./app\n")
    start = time.perf_counter()
    seen: set = set()  # as advise passes it: one for all of a script's launch lines
    found = [mpi_check.mpi_mismatch(script, x, str(tmp_path), env, seen=seen) for x in script.launches]
    assert time.perf_counter() - start < 5.0
    assert found[0].startswith("line 3: app is linked against the MPICH family")
    assert not any(found[1:])  # the same pair is said once
    alone = [mpi_check.mpi_mismatch(script, script.launches[k], str(tmp_path), env) for k in (1999, -1)]
    assert alone[0].startswith("line 2002: ") and alone[1] is None  # after module load
