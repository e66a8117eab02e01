"""A batch script that runs hpcds1mpi finds this installation and its MPI inside the job,
where the PATH it was submitted with is gone (PBS without qsub -V; Slurm with
SBATCH_EXPORT=NONE)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from hpcds1mpi.cluster import Cluster, Partition
from hpcds1mpi.config import Configuration
from hpcds1mpi.launch import scripts as batch
from hpcds1mpi.launch.directives import BatchJob
from hpcds1mpi.errors import ConfigError
from hpcds1mpi.launch.own_install import own_executable, path_export
from hpcds1mpi.launch import calibration_script as calib

#: The repro's cluster file (tester V): 2 cores per node, account proj42.
LAB = Partition("workq", cores_per_node=2, memory_gb=25.3, max_nodes=4)
KERNEL = ("hpcds1mpi run fft --size 16 --threads {threads} --device {device} "
          "--precision {precision}")


def _job(program: str, config=Configuration(1, 1, 2, "cpu", "fp32"), **site) -> BatchJob:
    cluster = Cluster(name="lab", partitions={"workq": LAB}, account="proj42", **site)
    return BatchJob(config=config, partition=LAB, program=program, cluster=cluster,
                    job_name="fft", time_limit_s=600)


def test_a_pbs_script_of_a_kernel_runs_with_only_the_environment_pbs_gives_the_job(tmp_path):
    """The repro: with PATH reset as in a PBS job, the bare mpiexec was the system's (another
    MPI family) and hpcds1mpi was not found (rc 134)."""
    script = tmp_path / "fft.pbs"
    script.write_text(batch.render(_job(KERNEL, Configuration(1, 1, 1, "cpu", "fp32")), "pbs"))
    (tmp_path / "jobdir").mkdir()
    job_env = {"HOME": os.environ.get("HOME", str(tmp_path)),
               "PATH": "/usr/local/bin:/usr/bin:/bin", "PBS_O_WORKDIR": str(tmp_path / "jobdir")}
    done = subprocess.run(["bash", str(script)], env=job_env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "fft size=16" in done.stdout and ": ok" in done.stdout


def test_both_schedulers_put_this_installation_first_after_the_modules():
    _, bin_dir = own_executable()
    assert bin_dir == str(Path(sys.executable).parent)  # the venv's hpcds1mpi is installed
    for scheduler in ("slurm", "pbs"):
        lines = batch.render(_job(KERNEL, modules=["gcc/12"]), scheduler).splitlines()
        export = lines.index(f"export PATH={bin_dir}:$PATH")
        assert lines.index("module load gcc/12") < export < lines.index("export OMP_NUM_THREADS=2")
        assert lines[-1].split()[0] == ("mpiexec" if scheduler == "pbs" else "srun")
        assert "hpcds1mpi run fft" in lines[-1]  # the bare name, found through PATH


def test_a_users_program_is_run_as_given_and_pbs_says_how_it_is_found():
    for scheduler in ("slurm", "pbs"):
        text = batch.render(_job("./app --n 4"), scheduler)
        assert "export PATH=" not in text and "$PBS_O_PATH" not in text
    bare = batch.render(_job("app --n 4"), "pbs")
    assert "export PATH=" not in bare
    assert "# note: PBS does not give the job qsub's PATH (only as $PBS_O_PATH, unless qsub " \
           "-V): write app's full path" in bare
    # a bare name on PATH (one that is not is refused for Slurm: s34 tester U6)
    assert "$PBS_O_PATH" not in batch.render(_job("true --n 4"), "slurm")


def test_a_preamble_that_already_puts_the_folder_first_is_not_repeated():
    _, bin_dir = own_executable()
    job = _job(KERNEL, preamble=[f"export PATH={bin_dir}:$PATH"])
    assert path_export(bin_dir, job) == ""
    assert batch.render(job, "pbs").splitlines().count(f"export PATH={bin_dir}:$PATH") == 1
    assert path_export(bin_dir, _job(KERNEL, preamble=[f"export PATH={bin_dir}:$PATH"],
                                     modules=["gcc/12"])) == bin_dir  # a module may move it
    assert path_export("", job) == ""


def _installation_at(folder: bytes) -> bytes:
    """A venv at ``folder`` that runs this installation (its hpcds1mpi linked to this one's,
    its packages this venv's through a .pth file, as tester Z made it): a job script written from
    it must put ``folder``/bin on PATH. Its python."""
    import site

    bin_dir = os.path.join(folder, b"bin")
    packages = os.path.join(folder, b"lib", b"python%d.%d" % sys.version_info[:2],
                            b"site-packages")
    os.makedirs(bin_dir)
    os.makedirs(packages)
    os.symlink(os.fsencode(sys.executable), os.path.join(bin_dir, b"python"))
    os.symlink(os.fsencode(Path(sys.executable).parent / "hpcds1mpi"),
               os.path.join(bin_dir, b"hpcds1mpi"))
    Path(os.fsdecode(os.path.join(packages, b"main.pth"))).write_text(  # its .pth files too
        "".join(f"import site; site.addsitedir({p!r})\n" for p in site.getsitepackages()))
    Path(os.fsdecode(os.path.join(folder, b"pyvenv.cfg"))).write_bytes(
        (Path(sys.executable).parent.parent / "pyvenv.cfg").read_bytes())
    return os.path.join(bin_dir, b"python")


@pytest.mark.parametrize("name, said", [
    (b"co:lon", "has a ':', which PATH cannot hold"),  # s28 tester Z9: PATH split there
    (b"nonutf\xff\xfe", "nonutf\\xff\\xfe/bin is not UTF-8, so a batch script cannot put it "
                        "on PATH"),  # s28 tester Z8: a garbled error quoting script text
])
def test_an_installation_folder_path_cannot_hold_is_refused_and_nothing_written(
        tmp_path, name, said):
    python = _installation_at(os.path.join(os.fsencode(tmp_path), name))
    out = tmp_path / "job.slurm"
    done = subprocess.run([python, "-m", "hpcds1mpi", "recommend", "--workload", "stencil",
                           "--size", "128", "--emit", "slurm", "-o", str(out)],
                          capture_output=True, timeout=120)
    err = done.stderr.decode("utf-8", "backslashreplace")
    assert done.returncode == 2 and said in err and "install hpcds1mpi under" in err, err
    assert len(err.strip().splitlines()) == 1 and not out.exists()


def test_a_folder_with_blanks_quotes_and_dollars_goes_first_on_path_as_it_is(tmp_path):
    """What the refusal keeps: any other folder is quoted, and bash puts it first whole."""
    folder = str(tmp_path / "we ird'\"$HOME`x`" / "bin")
    export = f"export PATH={path_export(folder, _job(KERNEL))}:$PATH"
    shown = subprocess.run(["bash", "-c", export + '\nprintf %s "${PATH%%:*}"'],
                           capture_output=True, text=True, timeout=30)
    assert shown.stdout == folder
    with pytest.raises(ConfigError, match="has a ':'"):
        path_export(str(tmp_path / "co:lon" / "bin"), _job(KERNEL))


@pytest.mark.parametrize("program", [None, "./app --n {size}"])
def test_a_calibration_sweep_finds_this_installation_without_the_submit_path(tmp_path, program):
    """Was (s29 tester C2): ``sbatch --export=NONE`` of recommend's calibration sweep: every
    step "hpcds1mpi: command not found", exit 127 (its script put no bin folder on PATH). Run
    here with the PATH slurmd gives such a job; srun a shell function that runs the step."""
    _, bin_dir = own_executable()
    steps = [calib.CalibrationStep(Configuration(1, 1, 1), "x")]
    text = calib.render_calibration(steps, LAB, "stencil" if program is None else "app", 16,
                                    program=program, cluster=Cluster(
                                        name="lab", partitions={"workq": LAB}, modules=["gcc"]))
    lines = text.splitlines()
    assert lines.index("module load gcc") < lines.index(f"export PATH={bin_dir}:$PATH") \
        < next(i for i, ln in enumerate(lines) if "hpcds1mpi sweep" in ln)
    body = text.split("\n", 1)[1].replace("module load gcc\n", "")  # no modules here
    srun = 'srun() { while :; do case $1 in -c) shift 2;; -*) shift;; *) break;; esac; done; "$@"; }\n'
    job_env = {"HOME": os.environ.get("HOME", str(tmp_path)), "PATH": "/usr/bin:/bin"}
    done = subprocess.run(["bash", "-c", srun + body], cwd=tmp_path, env=job_env,
                          capture_output=True, text=True, timeout=240)
    assert "command not found" not in done.stderr and "(exit 127" not in done.stderr, \
        done.stderr
    if program is None:  # the kernel's step measured: the job found hpcds1mpi and ran it
        assert done.returncode == 0 and "calibration: 1 of 1 steps ran" in done.stdout, \
            done.stdout + done.stderr


_APP = ("from mpi4py import MPI\nimport time\nt0 = time.time()\nMPI.COMM_WORLD.Barrier()\n"
        "if MPI.COMM_WORLD.rank == 0:\n"
        "    print(f'time: {time.time() - t0 + 0.001:.4f} s', flush=True)\n")


def _export_none(slurm, script: str, folder, name: str) -> str:
    """``sbatch --export=NONE`` of ``script`` in ``folder``: the job's output (it must end)."""
    path = folder / f"{name}.sbatch"
    path.write_text(script)
    job = slurm.sbatch(path, "--export=NONE", f"--output={folder / name}.out", cwd=folder)
    slurm.wait(job, timeout=240)
    return (folder / f"{name}.out").read_text()


@pytest.mark.slurm
def test_steps_of_a_job_submitted_with_export_none_get_the_scripts_environment(slurm, tmp_path):
    """Was (s29 V2-1): under ``sbatch --export=NONE`` srun inherits SLURM_EXPORT_ENV=NONE, so a
    pick's ``srun hpcds1mpi run`` failed "execve(): hpcds1mpi: No such file or directory" and
    every calibration step of an Open MPI program ("ORTE daemon has unexpectedly failed":
    mpirun starts its daemons with srun) measured nothing. Real jobs on the test Slurm."""
    debug = Partition("debug", cores_per_node=2, memory_gb=3.0, max_nodes=2)
    pick = BatchJob(config=Configuration(1, 2, 1), partition=debug, program=KERNEL,
                    cluster=Cluster("vm", {"debug": debug}), job_name="fft", time_limit_s=300)
    out = _export_none(slurm, batch.render(pick, "slurm"), tmp_path, "pick")
    assert "fft size=16 N1xR2xT1-cpu-fp64 (2 ranks): ok" in out, out
    probe = subprocess.run(["/usr/bin/python3", "-c", "import mpi4py"], capture_output=True)
    if not os.access("/usr/bin/mpirun.openmpi", os.X_OK) or probe.returncode != 0:
        pytest.skip("no Debian Open MPI with python3-mpi4py for the calibration job")
    (tmp_path / "app.py").write_text(_APP)
    site = Cluster("vm", {"debug": debug}, launcher="mpiexec", mpiexec="/usr/bin/mpirun.openmpi")
    script = calib.render_calibration(
        [calib.CalibrationStep(Configuration(1, 2, 1), "x")], debug, "app", 4,
        program="/usr/bin/python3 app.py", cluster=site, time_limit=300,
        measure={"time_regex": r"time: ([0-9.]+) s"})
    assert "--mpiexec /usr/bin/mpirun.openmpi" in script
    out = _export_none(slurm, script, tmp_path, "calibration")
    assert "calibration: 1 of 1 steps ran" in out and "ORTE daemon" not in out, out
