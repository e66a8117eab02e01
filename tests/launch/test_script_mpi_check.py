"""A launcher of another MPI family than the program's, told from the files alone
(:mod:`hpcds1mpi.launch.script_mpi_check`; real Debian binaries; nothing is run)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from hpcds1mpi.launch import script_mpi_check as mpi_check
from hpcds1mpi.launch.launch_line_checks import launch_checks
from hpcds1mpi.launch.script_reading import read_script
from tests.helpers import system_program

WHEEL_MPIEXEC = str(Path(sys.executable).parent / "mpiexec")


@pytest.fixture
def nothing_runs(monkeypatch):
    """Any subprocess (``--version``, ``ldd``, the program) fails the test."""
    def refuse(*args, **kwargs):
        raise AssertionError(f"a process was started: {args[:1]}")

    monkeypatch.setattr(subprocess, "Popen", refuse)
    monkeypatch.setattr(subprocess, "run", refuse)


@pytest.fixture
def mpis():
    """The Debian programs and launchers of both families; each launcher's `--version` read
    once here (the process keeps it), as any earlier test of the run would have: the check
    under test starts no process of its own, and alone it had read the version (order-
    dependent: it failed only when run by itself)."""
    from hpcds1mpi.launch.launcher_discovery import version_text

    found = {"openmpi_app": system_program("hpcc"), "mpich_app": system_program("NPmpich2"),
             "openmpi_run": system_program("mpirun.openmpi"),
             "mpich_run": system_program("mpiexec.mpich")}
    for launcher in (found["openmpi_run"], found["mpich_run"]):
        version_text(launcher)
    return found


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


def _mismatch(text: str, cwd, env=None, kind: str = "warning"):
    """The line of the last launch's mismatch, checked to be said as ``kind``; None for none."""
    script = read_script(text)
    found = mpi_check.mpi_mismatch(script, script.launches[-1], str(cwd), env)
    if found is not None:
        assert found[0] == kind, found
    return found and found[1]


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
    # `python3 app.py`: its mpi4py's, asked of the interpreter (a process): in the test below
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
                    "export PATH=/opt/mpi/bin:$PATH\n"):  # said, as this PATH has it
        text = plain.replace("mpirun", changed + "mpirun")
        said = _mismatch(text, tmp_path, env, "note")
        assert "mpirun on the PATH advise sees is" in said, changed
    moved_away = plain.replace("mpirun", "cd /scratch/run\nmpirun")
    assert _mismatch(moved_away, tmp_path, env, "note") == (  # ./app there: not read here
        "line 4: ./app is not checked for its MPI against mpirun: line 3 moves the job to a "
        "folder not known here; run advise where that folder is")
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


def test_a_cd_to_the_submit_folder_with_a_default_is_the_submit_folder(mpis, nothing_runs,
                                                                        tmp_path):
    """s31 tester P2: recommend's own `cd "${PBS_O_WORKDIR:-.}"` was read as a move elsewhere,
    so its bare mpiexec (Open MPI's here) starting an MPICH ./heat went unwarned."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "mpiexec").symlink_to(os.path.realpath(mpis["openmpi_run"]))
    shutil.copy(mpis["mpich_app"], tmp_path / "app")
    env = {"PATH": str(bin_dir)}
    for cd in ('cd "${PBS_O_WORKDIR:-.}"', "cd ${PBS_O_WORKDIR-$HOME}",
               "cd ${SLURM_SUBMIT_DIR:-.}", "cd \"${SLURM_SUBMIT_DIR:=$PWD}\""):
        text = f"#PBS -l select=1:ncpus=2:mpiprocs=2\n{cd}\nmpiexec -n 2 ./app 10\n"
        line = _mismatch(text, tmp_path, env)
        assert line and "app is linked against the MPICH family" in line, cd
    elsewhere = "#PBS -l select=1\ncd ${SCRATCH:-/tmp}\nmpiexec -n 2 ./app\n"
    assert "./app is not checked" in _mismatch(elsewhere, tmp_path, env, "note")  # not here


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
    assert found[0][1].startswith("line 3: app is linked against the MPICH family")
    assert not any(found[1:])  # the same pair is said once
    alone = [mpi_check.mpi_mismatch(script, script.launches[k], str(tmp_path), env) for k in (1999, -1)]
    assert alone[0][0] == "warning" and alone[0][1].startswith("line 2002: ")
    assert alone[1][0] == "note" and "line 2003 changes" in alone[1][1]  # after module load


PITZ = ("#!/bin/bash\n#SBATCH -J pitzDaily\n#SBATCH -N 2\n#SBATCH --ntasks-per-node=2\n"
        "#SBATCH -t 01:00:00\n#SBATCH -o pitz.%j.out\nsource /usr/share/openfoam/etc/bashrc\n"
        "cd {case}\ndecomposePar -force > log.decomposePar 2>&1\n"
        "mpirun -np $SLURM_NTASKS simpleFoam -parallel > log.simpleFoam 2>&1\n"
        "reconstructPar -latestTime > log.reconstructPar 2>&1\n")


def test_mpirun_after_a_line_that_changes_the_environment_is_checked_on_this_path(
        mpis, nothing_runs, tmp_path):
    """s29 tester A7: after ``source .../openfoam/etc/bashrc`` an ``mpirun`` that is MPICH's
    hydra on the PATH advise sees (a venv's) was not said for an Open MPI simpleFoam, and the
    job ran it and failed. Now a note, with the caveat that the job may find another (a
    warning where the job surely finds these files: without the line, or with paths)."""
    simple_foam = system_program("simpleFoam")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "mpirun").symlink_to(os.path.realpath(mpis["mpich_run"]))
    env = {"PATH": f"{bin_dir}:{os.path.dirname(simple_foam)}:/usr/bin"}
    line = _mismatch(PITZ.format(case=tmp_path), tmp_path, env, "note")
    assert line.startswith(f"line 10: simpleFoam ({simple_foam} on the PATH advise sees) is "
                           "linked against Open MPI"), line
    assert (f"but mpirun on the PATH advise sees is {os.path.realpath(bin_dir / 'mpirun')}, "
            "a launcher of the MPICH family (hydra) (line 7 changes the job's environment "
            "first: 'source /usr/share/openfoam/etc/bashrc' sources no module system's init "
            "file (Lmod's, Environment Modules'), so it is not run here, so the job may find "
            "another mpirun or simpleFoam: check `which mpirun` in the job)") in line
    suggested = line.split("launch it with ")[1].split(" ")[0]
    assert mpi_check.launcher_file_family(suggested) == "openmpi", line
    warnings, notes = launch_checks(read_script(PITZ.format(case=tmp_path)),
                                    str(tmp_path), env)
    assert (warnings, notes) == ([], [line])
    unsourced = PITZ.format(case=tmp_path).replace("source /usr/share/openfoam/etc/bashrc\n",
                                                   "")
    assert _mismatch(unsourced, tmp_path, env).startswith(
        "line 9: simpleFoam is linked against Open MPI")  # a warning, as before
    (bin_dir / "mpirun").unlink()  # the fitting one on this PATH: the job's is not checked
    (bin_dir / "mpirun").symlink_to(os.path.realpath(mpis["openmpi_run"]))
    fitting = _mismatch(PITZ.format(case=tmp_path), tmp_path, env, "note")  # s36 tester M1
    assert "so it is not run here): check `which mpirun` in the job, or launch it with " \
        "/usr/bin/mpirun.openmpi" in fitting, fitting


def test_a_program_reaching_mpich_through_scalapack_under_open_mpis_mpirun_is_a_warning(
        mpis, nothing_runs, tmp_path):
    # Debian's xdlu links libscalapack-mpich, which links libmpich. Before: no warning (only
    # the program's own NEEDED was read), while sweep (ldd) refused the same launch.
    xdlu = "/usr/lib/x86_64-linux-gnu/scalapack/mpich-tests/xdlu"
    if not os.path.exists(xdlu):
        pytest.skip("scalapack-mpi-test not installed (bash scripts/system-packages)")
    line = _mismatch(f"#!/bin/bash\n#SBATCH -N 1\n{mpis['openmpi_run']} -np 2 {xdlu}\n",
                     tmp_path)
    assert line.startswith("line 3: xdlu is linked against the MPICH family"), line
    assert "(links libmpich.so.12 through libscalapack-mpich.so.2.2)" in line
    assert mpi_check.launcher_file_family(line.split("launch it with ")[1].split(" ")[0]) == \
        "mpich"


def _srun(text: str, cwd, conf=None):
    script = read_script(text)
    env = {"PATH": os.environ["PATH"], **({"SLURM_CONF": str(conf)} if conf else {})}
    if conf is None:
        env["SLURM_CONF"] = str(cwd / "no-such-slurm.conf")
    found = mpi_check.srun_check(script, script.launches[-1], str(cwd), env)
    return None if found is None else found[1] if found[0] == "warning" else f"note: {found[1]}"


def test_srun_without_pmix_for_an_open_mpi_program_is_a_warning(mpis, nothing_runs, tmp_path):
    """``srun lmp`` (Open MPI) under a site whose MpiDefault is pmi2 aborts in MPI_Init (the
    test Slurm shows it); advise had said nothing (carried item "srun lmp no --mpi")."""
    conf = tmp_path / "slurm.conf"
    conf.write_text("ClusterName=x\nMpiDefault=pmi2  # site default\n")
    app = mpis["openmpi_app"]
    line = _srun(f"#SBATCH -N 1\nsrun {app}\n", tmp_path, conf)
    assert line.startswith("line 2: hpcc is linked against Open MPI") and \
        "MpiDefault=pmi2" in line and "add --mpi=pmix" in line, line
    line = _srun(f"#SBATCH -N 1\nsrun --mpi=pmi2 {app}\n", tmp_path, conf)
    assert "--mpi=pmi2, which Open MPI cannot wire up" in line
    unknown = _srun(f"#SBATCH -N 1\nsrun {app}\n", tmp_path)  # no slurm.conf readable
    assert unknown.startswith("note: ") and "srun has no --mpi" in unknown and \
        "srun --mpi=list" in unknown  # a note: the site's default may be pmix
    exported = _srun(f"#SBATCH -N 1\nexport SLURM_MPI_TYPE=pmi2\nsrun {app}\n", tmp_path)
    assert "SLURM_MPI_TYPE=pmi2" in exported
    mpich = _srun(f"#SBATCH -N 1\nsrun --mpi=none {mpis['mpich_app']}\n", tmp_path, conf)
    assert "--mpi=none: no wire-up" in mpich and "add --mpi=pmi2" in mpich


def test_srun_with_a_plugin_that_fits_says_nothing(mpis, nothing_runs, tmp_path):
    conf = tmp_path / "slurm.conf"
    conf.write_text("MpiDefault=pmix_v4\n")
    assert _srun(f"#SBATCH -N 1\nsrun {mpis['openmpi_app']}\n", tmp_path, conf) is None
    assert _srun(f"#SBATCH -N 1\nsrun --mpi=pmix {mpis['openmpi_app']}\n", tmp_path) is None
    assert _srun(f"#SBATCH -N 1\nsrun --mpi=pmi2 {mpis['mpich_app']}\n", tmp_path) is None
    assert _srun(f"#SBATCH -N 1\nsrun {mpis['mpich_app']}\n", tmp_path) is None  # unknown
    conf.write_text("MpiDefault=pmi2\n")  # `srun python3 app.py`: asks python3 (a test below)
    assert _srun(f"#SBATCH -N 1\nsrun --mpi=$MPI {mpis['openmpi_app']}\n", tmp_path,
                 conf) is None  # set at run time: unknown here


def test_srun_after_a_module_line_checks_the_program_on_this_path(mpis, nothing_runs,
                                                                  tmp_path):
    """s27 tester R 3: ``module load qe || true`` before ``srun pw.x < si-30.in`` left the
    program unread (its PATH may change), so advise said nothing and the job died in MPI_Init.
    srun is the site's whatever the module loads: the program on this PATH is read, and the
    warning says the job may run another."""
    conf = tmp_path / "slurm.conf"
    conf.write_text("MpiDefault=pmi2\n")
    name = os.path.basename(mpis["openmpi_app"])
    text = (f"#!/bin/bash\n#SBATCH -N 1\nmodule load qe 2>/dev/null || true\n"
            f"srun {name} < in.txt > out.txt\n")
    line = _srun(text, tmp_path, conf)
    assert line.startswith(f"line 4: the {name} on this machine's PATH ({mpis['openmpi_app']}; "
                           "line 3 changes the job's environment first, so the job may run "
                           "another) is linked against Open MPI"), line
    assert "MpiDefault=pmi2" in line and "add --mpi=pmix" in line
    unknown = _srun(text, tmp_path)  # no slurm.conf: a note, which says what to check
    assert unknown.startswith("note: line 4: the hpcc on this machine's PATH") and \
        "srun --mpi=list" in unknown and "--mpi=pmix" in unknown
    assert _srun(text.replace("srun ", "srun --mpi=pmix "), tmp_path, conf) is None
    gone = text.replace(name, "no-such-program-here")
    assert _srun(gone, tmp_path, conf) is None  # not on this PATH either: unknown


def test_launch_checks_sort_warnings_from_notes(mpis, nothing_runs, tmp_path, monkeypatch):
    monkeypatch.setenv("SLURM_CONF", str(tmp_path / "no-such-slurm.conf"))
    app = mpis["openmpi_app"]
    script = read_script(f"#SBATCH -N 1\nsrun {app}\n{mpis['mpich_run']} -n 2 {app}\n"
                         f"srun {app}\n")
    warnings, notes = launch_checks(script, str(tmp_path))
    assert len(warnings) == 2 and warnings[0].startswith("line 3: hpcc is linked against "
                                                         "Open MPI"), warnings
    # hydra's 2 ranks in the 1-task job share its CPU (s49)
    assert warnings[1].startswith("line 3: mpiexec.mpich starts 2 ranks, but the job has 1 "
                                  "task: hydra"), warnings
    assert len(notes) == 1 and notes[0].startswith("line 2: hpcc"), notes  # once: line 4 not


def test_srun_with_pmix_for_an_mpich_without_pmix_is_a_warning(mpis, nothing_runs, tmp_path):
    """Debian's MPICH links no PMIx: `srun --mpi=pmix` starts its program as 1-rank copies
    (s27 tester Q, 1: NWChem printed nproc = 1 twice); advise had said nothing."""
    line = _srun(f"#SBATCH -N 1\nsrun --mpi=pmix {mpis['mpich_app']}\n", tmp_path)
    assert line.startswith("line 2: NPmpich2 is linked against the MPICH family"), line
    assert "links no PMIx library" in line and line.endswith("add --mpi=pmi2")
    conf = tmp_path / "slurm.conf"
    conf.write_text("MpiDefault=pmix\n")
    assert "links no PMIx library" in _srun(f"#SBATCH -N 1\nsrun {mpis['mpich_app']}\n",
                                            tmp_path, conf)


def test_srun_pmi2_for_an_open_mpi_built_with_slurms_pmi_says_nothing(request, tmp_path):
    """Open MPI built --with-pmi (mca_pmix_s2) runs under srun --mpi=pmi2; advise warned for
    every Open MPI program (s28 tester U 8). Where its components are not found: a note."""
    from tests.launch.fake_openmpi import fake_openmpi

    with_pmi = fake_openmpi(tmp_path, "withpmi", components=("mca_pmix_s2.so",))
    without = fake_openmpi(tmp_path, "without")
    elsewhere = fake_openmpi(tmp_path, "elsewhere", components=())
    request.getfixturevalue("nothing_runs")  # built: from here on files are only read
    assert _srun(f"#SBATCH -N 1\nsrun --mpi=pmi2 {with_pmi}\n", tmp_path) is None
    line = _srun(f"#SBATCH -N 1\nsrun --mpi=pmi2 {without}\n", tmp_path)
    assert "which Open MPI cannot wire up (its Open MPI" in line and \
        "no Slurm PMI component (no mca_pmix_s1/s2 in" in line and "add --mpi=pmix" in line, line
    note = _srun(f"#SBATCH -N 1\nsrun --mpi=pmi2 {elsewhere}\n", tmp_path)
    assert note.startswith("note: line 2:") and "built with Slurm's PMI" in note, note
    assert "which Open MPI cannot wire up" in _srun(
        f"#SBATCH -N 1\nsrun --mpi=none {with_pmi}\n", tmp_path)


def test_a_python_programs_mpi_is_its_mpi4pys_as_the_sweep_reads_it(tmp_path):
    """s29 tester B2: `srun --mpi=pmi2 gpaw python h2.py 25` (GPAW: #!/usr/bin/python3,
    Debian's mpi4py on Open MPI) got no warning, while Meep's line did, and the job failed
    "OMPI was not built with SLURM's PMI support"; so did `mpirun -np 2 gpaw ...` where
    PATH's mpirun is the venv's MPICH hydra. Only files are read, and GPAW's interpreter is
    asked where its mpi4py is."""
    gpaw = system_program("gpaw")
    text = f"#!/bin/bash\n#SBATCH -N 1\nexport OMP_NUM_THREADS=1\nsrun --mpi=pmi2 {gpaw} " \
           "python h2.py 25\n"
    line = _srun(text, tmp_path)
    assert line.startswith("line 4: gpaw is linked against Open MPI (a Python program: the "
                           "mpi4py of /usr/bin/python3"), line
    assert "which Open MPI cannot wire up" in line and "add --mpi=pmix" in line, line
    meep = _srun(text.replace(f"{gpaw} python h2.py 25", system_program("meep")), tmp_path)
    assert "which Open MPI cannot wire up" in meep  # the ELF, read as before
    assert _srun(text.replace("pmi2", "pmix"), tmp_path) is None
    if os.path.exists(WHEEL_MPIEXEC):  # the venv's hydra first on PATH
        env = {"PATH": f"{Path(WHEEL_MPIEXEC).parent}:{os.environ['PATH']}"}
        mismatch = mpi_check.mpi_mismatch(read_script(
            text.replace("srun --mpi=pmi2", "mpirun -np 2")), read_script(text.replace(
                "srun --mpi=pmi2", "mpirun -np 2")).launch, str(tmp_path), env)
        assert mismatch is not None and mismatch[0] == "warning", mismatch
        assert "gpaw is linked against Open MPI (a Python program" in mismatch[1]
        assert "a launcher of the MPICH family (hydra)" in mismatch[1], mismatch


def test_a_python_interpreter_on_the_launch_line_is_read_for_its_mpi4py(tmp_path):
    """`srun --mpi=pmi2 /usr/bin/python3 -m gpaw ...`: the interpreter's mpi4py counts."""
    python = "/usr/bin/python3"
    if not os.path.exists(python) or not _has_mpi4py(python):
        pytest.skip("Debian's python3-mpi4py not installed")
    line = _srun(f"#SBATCH -N 1\nsrun --mpi=pmi2 {python} -m gpaw python h2.py 25\n", tmp_path)
    assert line.startswith("line 2: python3 is linked against Open MPI (a Python program"), line
    assert _srun(f"#SBATCH -N 1\nsrun --mpi=pmix {python} app.py\n", tmp_path) is None
    assert _srun(f"#SBATCH -N 1\nsrun --mpi=pmi2 {sys.executable} app.py\n", tmp_path) is None


def test_a_python_program_under_another_familys_mpirun_is_a_warning(mpis, tmp_path):
    """`mpirun.openmpi -np 2 python3 app.py` was unknown ("its mpi4py would need running"):
    the venv's mpi4py (the MPICH wheel) under Open MPI's launcher is warned about, Debian's
    python3 (Open MPI's mpi4py) fits."""
    venv_python = Path(sys.executable)
    line = _mismatch(f"#SBATCH -N 1\n{mpis['openmpi_run']} -np 2 {venv_python} app.py\n",
                     tmp_path)
    assert line is not None and "Cray MPICH) (a Python program: the mpi4py of " in line, line
    if _has_mpi4py("/usr/bin/python3"):
        assert _mismatch(f"#SBATCH -N 1\n{mpis['openmpi_run']} -np 2 /usr/bin/python3 "
                         "app.py\n", tmp_path) is None


def _has_mpi4py(python: str) -> bool:
    return subprocess.run([python, "-c", "import mpi4py"], capture_output=True).returncode == 0


def test_open_mpis_mpirun_by_its_path_runs_its_prefixs_python(mpis, tmp_path):
    """s32 tester U1: `/usr/bin/mpirun.openmpi -n 2 python3 sim.py` with the venv first on
    PATH: Open MPI puts /usr/bin first on the ranks' PATH (the sweep's rule,
    ``rank_program.rank_environment``), so they run /usr/bin/python3, whose mpi4py is Open
    MPI's, and the job completed; advise warned of the venv's MPICH mpi4py."""
    if not _has_mpi4py("/usr/bin/python3") or not os.path.exists(WHEEL_MPIEXEC):
        pytest.skip("needs Debian's python3-mpi4py and the venv's MPICH wheel")
    env = {"PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    run = os.path.abspath(mpis["openmpi_run"])
    assert _mismatch(f"#SBATCH -N 1\n{run} -n 2 python3 sim.py 15 20\n", tmp_path, env) is None
    assert _mismatch(f"#SBATCH -N 1\nmpirun.openmpi --prefix /usr -n 2 python3 sim.py 15\n",
                     tmp_path, env) is None
    bare = _mismatch("#SBATCH -N 1\nmpirun.openmpi -n 2 python3 sim.py 15 20\n", tmp_path, env)
    assert bare is not None and "the mpi4py of " + str(Path(sys.executable).parent) in bare
    assert _mismatch(f"#SBATCH -N 1\n{run} --noprefix -n 2 python3 sim.py 15\n", tmp_path,
                     env) is not None  # no prefix: this PATH's python3


def test_srun_fix_names_the_plugin_the_programs_mpi_needs(mpis, tmp_path):
    """s32 tester U5: the rewrite kept `srun meep` under MpiDefault=pmi2; srun_fix gives the
    plugin the warning names, None where nothing is warned of."""
    conf = tmp_path / "slurm.conf"
    conf.write_text("MpiDefault=pmi2\n")
    env = {"PATH": os.environ["PATH"], "SLURM_CONF": str(conf)}

    def fix(text):
        script = read_script(text)
        found = mpi_check.srun_fix(script, script.launches[-1], str(tmp_path), env)
        return found and found[0]

    assert fix(f"#SBATCH -N 1\nsrun {mpis['openmpi_app']}\n") == "pmix"
    assert fix(f"#SBATCH -N 1\nsrun --mpi=none {mpis['mpich_app']}\n") == "pmi2"
    assert fix(f"#SBATCH -N 1\nsrun --mpi=pmix {mpis['openmpi_app']}\n") is None
    assert fix(f"#SBATCH -N 1\nsrun {mpis['mpich_app']}\n") is None


def test_mpirun_after_module_lines_is_checked_as_the_module_system_gives_it(mpis, tmp_path):
    """s36 tester M1: ``module load openmpi`` then ``mpirun -np 2`` of an MPICH program was
    silent where advise's own PATH found an MPICH ``mpirun``: the job ran two 1-rank copies.
    The module lines are asked of the module system (real Lmod): a warning naming the
    module's mpirun; where they cannot be run, one note that the job's mpirun is not checked,
    naming the program's own launcher."""
    from tests.launch.test_module_path import lmod_modules

    lines = "\n".join(lmod_modules(tmp_path, "openmpi", mpis["openmpi_run"]))
    fits = tmp_path / "fits"  # advise's own PATH finds an MPICH mpirun
    fits.mkdir()
    (fits / "mpirun").symlink_to(os.path.realpath(mpis["mpich_run"]))
    env = {**os.environ, "PATH": f"{fits}:/usr/bin:/bin"}
    text = (f"#!/bin/bash\n#SBATCH -N 1\n{lines}\nmodule load openmpi\n"
            f"export OMP_NUM_THREADS=1\nmpirun -np 2 {mpis['mpich_app']}\n")
    line = _mismatch(text, tmp_path, env)
    assert line.startswith("line 7: NPmpich2 is linked against the MPICH family"), line
    assert (f"but mpirun after the module lines from line 3 ({tmp_path}/mbin/openmpi/mpirun, "
            "as they give it here) is ") in line and "Open MPI's launcher" in line, line
    unknown = _mismatch(text.replace("load openmpi", "load nothere"), tmp_path, env, "note")
    assert unknown == (
        "line 7: NPmpich2 is linked against the MPICH family (MPICH, Intel MPI, Cray MPICH) "
        "(links libmpich.so.12); the mpirun the job runs is whichever line 3 and those after "
        "it put first on its PATH, not checked here ('module load nothere' failed here): "
        f"check `which mpirun` in the job, or launch it with {mpis['mpich_run']}"), unknown


def test_srun_mpi_none_for_an_mpich_without_pmix_names_pmi2_alone(mpis, nothing_runs, tmp_path):
    """s36 tester M4: "add --mpi=pmi2 (or pmix)" for Debian's MPICH, which pmix starts as
    1-rank copies (advise's own next warning)."""
    line = _srun(f"#SBATCH -N 1\nsrun --mpi=none {mpis['mpich_app']}\n", tmp_path)
    assert line.endswith("no wire-up, so each rank starts alone; add --mpi=pmi2"), line


def test_a_script_recommend_wrote_for_a_swept_folder_is_checked(mpis, tmp_path, monkeypatch):
    """s39 tester D8: recommend's script for a program swept without --workdir enters the
    sweep's folder (`cd /abs/folder`) and checks its input with an echo saying "edit the cd
    line"; both were read as moves elsewhere, and the launcher check was skipped in silence
    (its launcher edited to Open MPI's: no warning). Checked from another folder."""
    import shlex

    from hpcds1mpi.config import Configuration
    from hpcds1mpi.launch import scripts
    from hpcds1mpi.launch.directives import BatchJob
    from tests.launch.jobs import CPU, site

    swept = tmp_path / "swept 'q' $x"
    swept.mkdir()
    shutil.copy(mpis["mpich_app"], swept / "app")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    job = BatchJob(config=Configuration(1, 2, 1), partition=CPU, program="./app -u {size}",
                   cluster=site(modules=[], preamble=[], launcher="mpiexec",
                                mpiexec=mpis["mpich_run"]),
                   job_name="j", time_limit_s=600, size=8)
    text = scripts.render(job, "slurm", folder=str(swept), inputs=["./app"])
    assert "edit the cd line" in text and f"\ncd {shlex.quote(str(swept))}\n" in text
    script = read_script(text.replace(mpis["mpich_run"], mpis["openmpi_run"]))
    warnings, _ = launch_checks(script, str(elsewhere))
    assert any("app is linked against the MPICH family" in w and "Open MPI's launcher" in w
               for w in warnings), warnings
