"""Batch-script assembly: bash -n, the program rule in every script, injection in every field,
calibration and tune scripts."""

from __future__ import annotations

import dataclasses
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from hpcds1mpi.cluster import Cluster
from hpcds1mpi.config import Configuration
from hpcds1mpi.errors import ConfigError, OutputError
from hpcds1mpi.launch import directives, scripts as batch
from hpcds1mpi.launch.directives import BatchJob
from hpcds1mpi.launch.launchers import for_script
from hpcds1mpi.launch.calibration_script import CalibrationStep
from hpcds1mpi.launch import calibration_script as calib
from tests.launch.jobs import CPU, GPU, cpu_job, gpu_job, site


# ---- launcher tokens and assembly -----------------------------------------------------------


def test_launcher_tokens_pass_cpus_per_task_explicitly():
    config = Configuration(2, 8, 4)
    assert for_script("slurm", site()).tokens(config) == [
        "srun", "--nodes=2", "--ntasks=16", "--ntasks-per-node=8", "-c", "4", "--cpu-bind=cores",
        "--kill-on-bad-exit=1", "--mpi=pmix"]
    assert for_script("pbs", site()).tokens(config) == ["mpiexec", "-n", "16"]
    assert for_script("pbs", site(launcher="mpirun")).tokens(config)[0] == "mpirun"
    with pytest.raises(ConfigError):
        for_script("slurm", site(mpi="pmi2; rm -rf /")).tokens(config)


def _exports(text: str) -> dict:
    return dict(line[len("export "):].split("=", 1) for line in text.splitlines()
                if line.startswith("export "))


@pytest.mark.parametrize("scheduler", ["slurm", "pbs"])
def test_rendered_script_is_valid_bash_and_complete(scheduler):
    for job in (cpu_job(), gpu_job()):
        text = batch.render(job, scheduler)
        batch.check_bash_syntax(text)
        lines = text.splitlines()
        assert lines[0] == "#!/bin/bash"
        # Directives come straight after the shebang, before any command.
        assert lines[1:1 + len(directives.directives(job, scheduler))] == \
            directives.directives(job, scheduler)
        threads = str(job.config.threads)
        expected = {"OMP_NUM_THREADS": threads, "OPENBLAS_NUM_THREADS": threads,
                    "MKL_NUM_THREADS": threads, "HPCDS1MPI_THREADS": threads,
                    "HPCDS1MPI_PRECISION": job.config.precision,
                    "HPCDS1MPI_DEVICE": job.config.device}
        if scheduler == "slurm":  # srun -c T --cpu-bind=cores: each rank has its own cores
            # steps get the script's environment under sbatch --export=NONE (s29 V2-1)
            expected.update(OMP_PLACES="cores", OMP_PROC_BIND="close", SLURM_EXPORT_ENV="ALL")
        else:  # a bare mpiexec that is Open MPI's would bind each rank to one core
            expected.update(OMPI_MCA_hwloc_base_binding_policy="none")
        assert _exports(text) == expected
        assert "module load openmpi/4.1.5" in lines
        assert "source /etc/profile" in lines
    text = batch.render(cpu_job(), scheduler)
    assert text.rstrip().splitlines()[-1].endswith("./stencil --n 4096 --precision fp32")


def test_extra_environment_is_exported_and_checked():
    text = batch.render(cpu_job(extra_env={"MY_FLAG": "a b"}))
    assert "export MY_FLAG='a b'" in text.splitlines()
    with pytest.raises(ConfigError):
        batch.render(cpu_job(extra_env={"BAD NAME": "1"}))


def test_bash_syntax_check_catches_broken_script():
    with pytest.raises(ConfigError):
        batch.check_bash_syntax("#!/bin/bash\nif then fi (\n")


def test_bad_configuration_for_partition_is_rejected():
    with pytest.raises(ConfigError, match="no GPUs"):
        batch.render(cpu_job(config=Configuration(1, 1, 1, "gpu", "fp32")))
    with pytest.raises(ConfigError, match="cores per node"):
        batch.render(cpu_job(config=Configuration(1, 64, 2)))
    with pytest.raises(ConfigError, match="emit"):
        batch.render(cpu_job(), "lsf")


# ---- injection ------------------------------------------------------------------------------

PAYLOADS = [
    'x"; touch PWNED; echo "',
    "x'; touch PWNED; echo '",
    "$(touch PWNED)",
    "`touch PWNED`",
    "x\ntouch PWNED",
    "x\r#SBATCH --account=other",
    "x;touch PWNED",
    "x && touch PWNED",
    "x | touch PWNED",
    "x touch PWNED",
    "x\x00y",
    "${IFS}touch${IFS}PWNED",
]


def _with_cluster_field(field: str, value) -> BatchJob:
    if field == "modules":
        return cpu_job(cluster=site(modules=[value]))
    if field == "partition":
        return cpu_job(partition=dataclasses.replace(CPU, slurm_partition=value))
    if field == "mpi":
        return cpu_job(cluster=site(mpi=value))
    if field in ("account", "qos"):
        return cpu_job(**{field: value})
    return cpu_job(**{field: value})


@pytest.mark.parametrize("field", ["job_name", "output", "account", "qos", "modules",
                                   "partition", "mpi"])
@pytest.mark.parametrize("payload", PAYLOADS)
@pytest.mark.parametrize("scheduler", ["slurm", "pbs"])
def test_directive_fields_reject_shell_syntax(field, payload, scheduler):
    with pytest.raises(ConfigError) as info:
        batch.render(_with_cluster_field(field, payload), scheduler)
    message = str(info.value)
    assert "\n" not in message and len(message) < 300


def test_preamble_rejects_control_characters():
    with pytest.raises(ConfigError):
        batch.render(cpu_job(cluster=site(preamble=["ok\ntouch PWNED"])))


def _run_inert(script: str, workdir: Path) -> list[str]:
    """Run the generated script with srun/mpiexec/module stubbed to print their argv."""
    stub = ("srun() { printf '%s\\n' \"$@\" > args.txt; }\n"
            "mpiexec() { printf '%s\\n' \"$@\" > args.txt; }\n"
            "module() { :; }\nsource() { :; }\n")
    body = script.split("\n", 1)[1]
    proc = subprocess.run(["bash", "-c", stub + body], cwd=workdir, capture_output=True,
                          text=True, timeout=30)
    assert proc.returncode == 0, proc.stderr
    return (workdir / "args.txt").read_text().split("\n")[:-1]


@pytest.mark.parametrize("payload", [p for p in PAYLOADS if "\x00" not in p and "\n" not in p
                                     and "\r" not in p])
@pytest.mark.parametrize("scheduler", ["slurm", "pbs"])
def test_program_with_shell_syntax_is_inert(payload, scheduler, tmp_path):
    program = ["./app", "--tag", payload, "--precision", "{precision}"]
    job = cpu_job(program=program)
    text = batch.render(job, scheduler)
    batch.check_bash_syntax(text)
    args = _run_inert(text, tmp_path)
    assert not (tmp_path / "PWNED").exists()
    # The program receives the payload verbatim as one argument.
    assert args[-5:] == ["./app", "--tag", payload, "--precision", "fp32"]


def test_program_string_is_split_like_a_shell_and_requoted(tmp_path):
    job = cpu_job(program="./app --name 'two words' \"$(touch PWNED)\" ';touch PWNED'")
    args = _run_inert(batch.render(job), tmp_path)
    assert args[-5:] == ["./app", "--name", "two words", "$(touch PWNED)", ";touch PWNED"]
    assert not (tmp_path / "PWNED").exists()


@pytest.mark.parametrize("program", ["./app\ntouch PWNED", "./app 'unbalanced", "", "   "])
def test_bad_program_rejected(program):
    with pytest.raises(ConfigError):
        batch.render(cpu_job(program=program))


# ---- calibration sweep script ---------------------------------------------------------------


def test_calibration_script_is_valid_and_sized_for_every_step(tmp_path):
    steps = [CalibrationStep(Configuration(1, 2, 1, "cpu", "fp64"), "widest interval"),
             CalibrationStep(Configuration(2, 1, 8, "cpu", "fp32"), "most disagreement"),
             CalibrationStep(Configuration(1, 2, 4, "gpu", "bf16"), "untried device")]
    text = calib.render_calibration(steps, GPU, "stencil", 2048, cluster=site(),
                                    reason="never-seen workload")
    batch.check_bash_syntax(text)
    assert "#SBATCH --nodes=2" in text and "#SBATCH --exclusive" in text
    assert "#SBATCH --gpus-per-node=2" in text
    # The allocation holds the widest step: 8 cores per node as 2 tasks x 4 CPUs.
    assert "#SBATCH --ntasks-per-node=2" in text and "#SBATCH --cpus-per-task=4" in text
    assert text.count("hpcds1mpi sweep") == 3
    # Each step: the program rule's environment, then srun with exactly its own layout.
    step = [line for line in text.splitlines() if line.startswith("OMP_NUM_THREADS=8 ")]
    assert step == ["OMP_NUM_THREADS=8 OPENBLAS_NUM_THREADS=8 MKL_NUM_THREADS=8 OMP_PLACES=cores "
                    "OMP_PROC_BIND=close HPCDS1MPI_THREADS=8 HPCDS1MPI_PRECISION=fp32 "
                    "HPCDS1MPI_DEVICE=cpu \\"]
    assert "srun --nodes=2 --ntasks=2 --ntasks-per-node=1 -c 8 --cpu-bind=cores" in text
    with pytest.raises(ConfigError):
        calib.render_calibration(steps, CPU, "stencil", 2048)  # GPU step on a CPU partition
    with pytest.raises(ConfigError):
        calib.render_calibration(steps[:1], CPU, "my$(kernel)", 2048, program="./app")
    with pytest.raises(ConfigError):
        calib.render_calibration([], CPU, "k", 2048)


def test_calibration_for_external_program_quotes_the_command(tmp_path):
    steps = [CalibrationStep(Configuration(1, 2, 1), "x")]
    text = calib.render_calibration(steps, CPU, "myapp", 10, program="./app --n {size}; rm -rf ~")
    batch.check_bash_syntax(text)
    launch = [line for line in text.splitlines() if "hpcds1mpi sweep" in line][0]
    tokens = shlex.split(launch.split("||")[0])
    assert tokens[tokens.index("--command") + 1] == "./app --n {size}; rm -rf ~"
    # The program's sweep launches the program with srun itself: the step is not under srun
    # (R copies of the sweep would each launch it), and it names srun and the plugin.
    assert tokens[0] == "hpcds1mpi"
    assert tokens[-4:] == ["--launcher", "srun", "--mpi", "pmi2"]


def test_a_programs_step_launches_with_the_sites_srun_plugin_and_launcher():
    steps = [CalibrationStep(Configuration(1, 2, 1), "x")]
    for cluster, tail in ((site(mpi="pmix"), ["--launcher", "srun", "--mpi", "pmix"]),
                          (site(launcher="mpirun"), ["--mpiexec", "mpirun"]),
                          (site(mpi="pmix", launcher_args="--overlap --label"),
                           ["--mpi", "pmix", "--launcher-args", "--overlap --label"])):
        text = calib.render_calibration(steps, CPU, "myapp", 10, program="./app", cluster=cluster)
        kernel_step = [ln for ln in calib.render_calibration(steps, CPU, "stencil", 10,
                                                             cluster=cluster).splitlines()
                       if "hpcds1mpi sweep" in ln][0]
        launch = [line for line in text.splitlines() if "hpcds1mpi sweep" in line][0]
        tokens = shlex.split(launch.split("||")[0])
        assert tokens[-len(tail):] == tail
        # the same launcher as the kernel steps of that site
        assert shlex.split(kernel_step.split("||")[0])[0] == ("srun" if "--mpi" in tail
                                                              else "mpirun")


def _run_calibration(text: str, tmp_path: Path, srun: str) -> subprocess.CompletedProcess:
    """Run a calibration script with ``srun`` a shell function (the body of one)."""
    body = text.split("\n", 1)[1]  # after the shebang
    return subprocess.run(["bash", "-c", f"srun() {{ {srun}; }}\n" + body], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)


def test_a_calibration_job_in_which_every_step_failed_exits_1(tmp_path):
    """Was: `set -uo pipefail` and `|| echo "... failed (recorded)"`: a job whose every step
    failed (nothing measured) ended with exit 0."""
    steps = [CalibrationStep(Configuration(1, r, 1), "x") for r in (1, 2, 4)]
    text = calib.render_calibration(steps, CPU, "stencil", 10)
    batch.check_bash_syntax(text)
    failed = _run_calibration(text, tmp_path, "return 3")
    assert failed.returncode == 1, failed.stderr
    assert failed.stderr.count("failed (exit 3; see above)") == 3
    assert "every step failed, nothing was measured" in failed.stderr
    assert "(recorded)" not in failed.stderr
    # One step that ran is a measurement: the job succeeds and says how many ran.
    one = _run_calibration(text, tmp_path, '[ "$2" = "--ntasks=2" ]')
    assert one.returncode == 0, one.stderr
    assert "calibration: 1 of 3 steps ran; runs written to calibration.h5" in one.stdout


def test_a_calibration_of_a_workload_that_is_no_kernel_needs_its_program():
    """Was: `sweep --kernel myapp` at every step (sweep refuses an unknown kernel)."""
    steps = [CalibrationStep(Configuration(1, 2, 1), "x")]
    with pytest.raises(ConfigError, match=r"^no calibration sweep for 'myapp': it is not a "
                                          r"built-in kernel .* --program ") as info:
        calib.render_calibration(steps, CPU, "myapp", 10)
    assert "\n" not in str(info.value)
    text = calib.render_calibration(steps, CPU, "myapp", 10, program="./myapp {size}")
    assert "--kernel" not in text and "hpcds1mpi sweep --command './myapp {size}'" in text


def test_a_program_without_precision_is_calibrated_at_fp64_once():
    """Was: one step per precision of the identical command (a program never told its
    precision measured three times under three labels)."""
    steps = [CalibrationStep(Configuration(1, 2, 1, "cpu", p), f"widest for {p}")
             for p in ("bf16", "fp64", "fp32")] + \
        [CalibrationStep(Configuration(1, 4, 1, "cpu", "fp32"), "anchor")]
    text = calib.render_calibration(steps, CPU, "myapp", 10, program="./myapp {size}")
    assert [line for line in text.splitlines() if line.startswith("# N")] == [
        "# N1xR2xT1-cpu-fp64: widest for bf16; measured at fp64: the command takes no "
        "{precision}",
        "# N1xR4xT1-cpu-fp64: anchor; measured at fp64: the command takes no {precision}"]
    assert text.count("--precisions fp64") == 2 and "--precisions fp32" not in text
    takes = calib.render_calibration(steps, CPU, "myapp", 10, program="./myapp {precision}")
    assert takes.count("hpcds1mpi sweep") == 4 and "--precisions bf16" in takes


def test_a_calibration_name_fits_the_limit_whenever_the_jobs_own_name_does():
    """Was: 'job name is 134 characters long; use at most 128' for a 128-character name."""
    steps = [CalibrationStep(Configuration(1, 2, 1), "x")]
    text = calib.render_calibration(steps, CPU, "stencil", 10, job_name="j" * 128 + "-calib")
    assert f"#SBATCH --job-name={'j' * 122}-calib\n" in text
    with pytest.raises(ConfigError, match="job name is 129 characters long"):
        calib.render_calibration(steps, CPU, "stencil", 10, job_name="j" * 129 + "-calib")


# ---- the checksum line: a script is replaced only while nobody has edited it ------------------


def test_every_script_we_write_carries_a_checksum_that_an_edit_breaks(tmp_path):
    """Was: any file with the header line in its first 4 KB counted as ours, edited or not."""
    steps = [CalibrationStep(Configuration(1, 2, 1), "x")]
    texts = {"job": batch.render(cpu_job(), "slurm"), "pbs": batch.render(cpu_job(), "pbs"),
             "calibration": calib.render_calibration(steps, CPU, "stencil", 10),
             "tune": batch.render_tune(["--kernel", "gemm"], CPU, nodes=1, cores=4,
                                       time_limit_s=600, job_name="t")}
    for kind, text in texts.items():
        batch.check_bash_syntax(text)
        lines = text.splitlines()
        at = next(i for i, line in enumerate(lines) if line.startswith(batch.MARK))
        assert lines[at + 1].startswith(batch.SEAL), kind
        path = tmp_path / f"{kind}.sh"
        path.write_text(text)
        assert batch.script_state(path) == "unchanged" and batch.written_by_us(path), kind
        for edited in (text + "echo MY POSTPROCESSING\n",  # appended
                       text.replace("#!/bin/bash", "#!/bin/bash -l"),  # changed in place
                       text.replace(lines[at + 1], lines[at + 1] + "\n" + lines[at + 1])):
            path.write_text(edited)
            assert batch.script_state(path) == "edited" and not batch.written_by_us(path), kind
        path.write_text("\n".join(line for line in lines if not line.startswith(batch.SEAL)))
        assert batch.script_state(path) == "unsealed", kind
    fake = tmp_path / "fake.sh"
    fake.write_text("#!/bin/bash\n# Written by hpcds1mpi 0.1.0.\nmy own work\n")
    assert batch.script_state(fake) == "unsealed"  # our header, no checksum: not provably ours
    assert not batch.written_by_us(fake)
    mine = tmp_path / "mine.sh"
    mine.write_text("#!/bin/bash\nsrun ./app\n")
    assert batch.script_state(mine) == "foreign"


# ---- the script tune --submit submits ---------------------------------------------------------


def test_tune_script_comes_from_the_template_with_checked_directives():
    text = batch.render_tune(["--kernel", "gemm", "--size", "64", "--out", "t h.h5"], CPU,
                             nodes=2, cores=64, time_limit_s=900, job_name="hpcds1mpi-tune-gemm",
                             exe="/opt/venv/bin/hpcds1mpi", bin_dir="/opt/venv/bin")
    batch.check_bash_syntax(text)
    lines = text.splitlines()
    assert lines[1:7] == ["#SBATCH --job-name=hpcds1mpi-tune-gemm", "#SBATCH --partition=cpu",
                          "#SBATCH --nodes=2", "#SBATCH --ntasks-per-node=64",
                          "#SBATCH --cpus-per-task=1", "#SBATCH --time=00:15:00"]
    assert "export PATH=/opt/venv/bin:$PATH" in lines
    assert lines[-1] == "/opt/venv/bin/hpcds1mpi tune --kernel gemm --size 64 --out 't h.h5'"
    with pytest.raises(ConfigError):
        batch.render_tune([], CPU, nodes=1, cores=64, time_limit_s=900, job_name="x;y")
    with pytest.raises(ConfigError, match="nodes"):
        batch.render_tune([], CPU, nodes=99, cores=64, time_limit_s=900, job_name="t")


def test_a_script_whose_launcher_cannot_start_its_program_is_refused():
    from tests.helpers import system_program

    hpcc = system_program("hpcc")
    config = Configuration(1, 2, 1)
    job = lambda cluster, program=hpcc: BatchJob(config=config, partition=CPU,  # noqa: E731
                                                 program=program, cluster=cluster,
                                                 job_name="j", time_limit_s=600)
    # Open MPI is not built with Slurm's PMI-2: srun --mpi=pmi2 aborts it in MPI_Init
    with pytest.raises(ConfigError, match=r'linked against Open MPI.*srun --mpi=pmi2 cannot '
                                          r'start it as one job: set mpi = "pmix"'):
        batch.render(job(site(mpi="pmi2")), "slurm")
    assert batch.render(job(site(mpi="pmix")), "slurm").rstrip().endswith(
        "--mpi=pmix " + hpcc)
    netpipe = system_program("NPmpich2")
    with pytest.raises(ConfigError, match="MPICH family.*mpi = \"pmi2\""):
        batch.render(job(site(mpi="none"), netpipe), "slurm")
    openmpi = os.path.realpath(system_program("mpirun.openmpi"))
    with pytest.raises(ConfigError, match="Open MPI's launcher: set launcher = \"mpiexec\" and mpiexec = .*mpiexec"):
        batch.render(job(site(launcher="mpirun", mpiexec=openmpi), netpipe), "pbs")
    assert f"{openmpi} -n 2 {hpcc}" in batch.render(job(site(launcher="mpirun",
                                                             mpiexec=openmpi)), "pbs")
    # a program not found here, or of no known MPI, is written as asked
    assert batch.render(job(site(mpi="pmi2"), "./my_app"), "slurm")
    # No cluster file (recommend inside an salloc, s28 tester T): said how to give one
    with pytest.raises(ConfigError, match=r'cannot start it as one job: set mpi = "pmix" in the '
                                          r'cluster file .*; no cluster file was given: write '
                                          r'one with those keys under \[cluster\] and pass it '
                                          r'with --cluster FILE$'):
        batch.render(job(None), "slurm")


def test_a_cluster_read_from_the_allocation_or_this_machine_is_said_to_be_no_file():
    """Was (s29 tester C6): inside ``salloc`` with no --cluster, told to set mpi = "pmix"
    "in the cluster file" of none: the hint on giving one was said only for no cluster at
    all, and inside an allocation the cluster is read from Slurm. (Open MPI 4.1 of Debian has
    no mca_pmix_s1/s2: srun --mpi=pmi2 does abort it in MPI_Init, checked on the test Slurm.)"""
    from hpcds1mpi.cluster import detect_local, detect_slurm, load_cluster
    from tests.helpers import system_program

    hpcc = system_program("hpcc")
    salloc = {"SLURM_JOB_ID": "9", "SLURM_JOB_PARTITION": "debug", "SLURM_JOB_NUM_NODES": "1",
              "SLURM_JOB_CPUS_PER_NODE": "2"}
    allocation = detect_slurm(env=salloc, scontrol_text="")
    local = detect_local()
    for cluster, origin in ((allocation, " (the partition was read from this Slurm allocation"),
                            (local, " (the partition is this machine")):
        job = BatchJob(config=Configuration(1, 2, 1), partition=cluster.partition(),
                       program=hpcc, cluster=cluster, job_name="j", time_limit_s=600)
        with pytest.raises(ConfigError) as refused:
            batch.render(job, "slurm")
        said = str(refused.value)
        assert 'set mpi = "pmix" in the cluster file' in said and \
            f"; no cluster file was given{origin}" in said and \
            said.endswith("write one with those keys under [cluster] and pass it with "
                          "--cluster FILE"), said
    # a file the user gave, even one with no launch keys: its own keys are the fix
    given = load_cluster(Path(__file__).parent.parent / "data" / "clusters" /
                         "two_partitions.toml")
    assert not given.mpi and not given.launcher  # no launch keys (mpi unset: pmi2)
    job = BatchJob(config=Configuration(1, 2, 1), partition=given.partition(), program=hpcc,
                   cluster=given, job_name="j", time_limit_s=600)
    with pytest.raises(ConfigError) as refused:
        batch.render(job, "slurm")
    assert "no cluster file was given" not in str(refused.value)


def test_an_open_mpi_mpirun_script_gives_each_rank_the_cores_of_its_threads():
    """Open MPI's mpirun binds a rank to one core by default: a script running 2 threads per
    rank under it must map each rank to 2 cores (as the sweep does), say why, and bind the
    threads as srun would."""
    from tests.helpers import system_program

    hpcc = system_program("hpcc")
    openmpi = os.path.realpath(system_program("mpirun.openmpi"))

    def render(config, scheduler="slurm", **kw):
        return batch.render(BatchJob(config=config, partition=CPU, program=hpcc,
                                     cluster=site(**{"launcher": "mpirun",
                                                     "mpiexec": openmpi, **kw}),
                                     job_name="j", time_limit_s=600), scheduler)

    for scheduler in ("slurm", "pbs"):
        text = render(Configuration(1, 1, 2), scheduler)
        batch.check_bash_syntax(text)
        assert text.rstrip().endswith(f"{openmpi} -n 1 --map-by slot:PE=2 {hpcc}")
        assert _exports(text)["OMP_PLACES"] == "cores"
        assert _exports(text)["OMP_PROC_BIND"] == "close"
        assert "# 2 threads per rank: Open MPI's mpirun is given --map-by slot:PE=2" in text
    assert render(Configuration(2, 4, 8)).rstrip().endswith(
        f"{openmpi} -n 8 --map-by ppr:4:node:PE=8 {hpcc}")
    # one thread per rank, or the site's own binding: written as before
    assert render(Configuration(1, 2, 1)).rstrip().endswith(f"{openmpi} -n 2 {hpcc}")
    own = render(Configuration(1, 1, 2), launcher_args="--bind-to core")
    assert own.rstrip().endswith(f"{openmpi} -n 1 --bind-to core {hpcc}")
    assert "OMP_PLACES" not in _exports(own)
    # a bare mpirun is whatever the job's PATH gives there: its flavour is not guessed
    assert render(Configuration(1, 1, 2), mpiexec="").rstrip().endswith(f"mpirun -n 1 {hpcc}")


def test_a_programs_calibration_steps_carry_its_reading_options_and_notes(tmp_path):
    """Each step measures the program as its earlier sweep did (issue s25 e1)."""
    steps = [CalibrationStep(Configuration(1, 1, 1), "x"), CalibrationStep(Configuration(1, 2, 1))]
    measure = {"time_regex": r"^WALL\s+\d+\s+([0-9.]+)", "workdir": "sc/{size}-{ranks}"}
    text = calib.render_calibration(steps, CPU, "lu", 550, program="./xdlu", measure=measure,
                                    notes=["the steps measure without --fom-regex"])
    batch.check_bash_syntax(text)
    launches = [ln for ln in text.splitlines() if "hpcds1mpi sweep" in ln]
    assert len(launches) == 2
    for launch in launches:
        tokens = shlex.split(launch.split("||")[0])
        assert tokens[tokens.index("--time-regex") + 1] == measure["time_regex"]
        assert tokens[tokens.index("--workdir") + 1] == "sc/{size}-{ranks}"
    assert "# note: the steps measure without --fom-regex\n" in text
    path = tmp_path / "c.sbatch"
    path.write_text(text)
    assert batch.script_state(path) == "unchanged"  # the note is sealed with the rest


@pytest.mark.parametrize("scheduler,queue", [("slurm", "#SBATCH --partition="),
                                             ("pbs", "#PBS -q ")])
def test_a_script_for_this_machine_names_no_partition(scheduler, queue, tmp_path):
    """This machine's made-up partition name is refused by sbatch (issue s25 e4): with
    default_queue the scheduler's default partition takes the job, and the note says so."""
    assert queue in batch.render(cpu_job(), scheduler)
    text = batch.render(cpu_job(), scheduler, default_queue=True, notes=["no partition"])
    batch.check_bash_syntax(text)
    assert queue not in text and "# note: no partition\n" in text
    assert text.splitlines()[1].startswith("#SBATCH --job-name=" if scheduler == "slurm"
                                           else "#PBS -N ")
    sweep = calib.render_calibration([CalibrationStep(Configuration(1, 2, 1))], CPU, "stencil",
                                     10, default_queue=True)
    assert "#SBATCH --partition=" not in sweep and "#SBATCH --nodes=1" in sweep


@pytest.mark.parametrize("scheduler", ["slurm", "pbs"])
def test_a_script_says_what_memory_it_asks_for_or_why_none(scheduler):
    """Was: no memory asked and no word about it; the site's default then applied."""
    asked = batch.render(cpu_job(memory_mb=20000.0), scheduler)
    assert "# note: asks 30000 MiB per node: the predicted need of 20000 MiB x 1.5" in asked
    unknown = batch.render(cpu_job(), scheduler)
    option = "#SBATCH --mem=" if scheduler == "slurm" else "mem= in -l select"
    assert f"# note: no {option}: this script was written without a predicted memory need" \
        in unknown
    whole = batch.render(gpu_job(), scheduler)
    assert ("# note: no" in whole) == (scheduler == "pbs")  # Slurm: --mem=0, the whole node


@pytest.mark.slurm
def test_the_memory_lines_pass_sbatch_test_only(slurm, tmp_path):
    """The test Slurm has DefMemPerCPU=1000 and nodes of 4000 MB: --mem=NM and --mem=0."""
    from hpcds1mpi.cluster import Partition

    node = Partition("debug", cores_per_node=2, memory_gb=4.0, max_nodes=2)
    for i, job in enumerate([
            BatchJob(config=Configuration(1, 2, 1), partition=node, program="true",
                     memory_mb=1500.0, time_limit_s=60),
            BatchJob(config=Configuration(2, 1, 1), partition=node, program="true",
                     exclusive=True, time_limit_s=60)]):
        path = tmp_path / f"m{i}.sbatch"
        path.write_text(batch.render(job, "slurm"))
        res = slurm.cmd(["sbatch", "--test-only", str(path)], check=False)
        assert res.returncode == 0, res.stderr


def test_an_unchanged_script_of_another_user_is_not_replaced_without_force(tmp_path,
                                                                            monkeypatch):
    """Was: its checksum line (anyone can copy one) made it ours, and -o replaced it."""
    path = tmp_path / "shared.sh"
    path.write_text(batch.render(cpu_job(), "slurm"))
    assert batch.script_state(path) == "unchanged"
    real = os.geteuid()
    monkeypatch.setattr(os, "geteuid", lambda: real + 1)
    with pytest.raises(OutputError, match="belongs to another user"):
        batch.check_replace_script(path, force=False)
    batch.check_replace_script(path, force=True)


@pytest.mark.parametrize("program", ["--ntasks=1 --label hostname", ["-n", "99", "./app"]])
def test_a_program_that_starts_with_an_option_gets_no_script(program):
    """Was: ``srun --ntasks=2 ... --mpi=pmix --ntasks=1 --label hostname`` under a header
    recommending 2 ranks."""
    with pytest.raises(ConfigError, match="must start with its executable"):
        batch.render(cpu_job(program=program), "slurm")
    with pytest.raises(ConfigError, match="must start with its executable"):
        calib.render_calibration([CalibrationStep(Configuration(1, 2, 1))], CPU, "app", 10,
                                 program=program)


def test_a_tune_script_gives_its_steps_its_own_environment():
    """s29 V2-1: under sbatch --export=NONE, tune's srun steps got no PATH."""
    lines = batch.render_tune(["--kernel", "gemm"], CPU, nodes=1, cores=4, time_limit_s=600,
                              job_name="t").splitlines()
    assert lines.index("export SLURM_EXPORT_ENV=ALL") < len(lines) - 1
    assert lines[-1].startswith("hpcds1mpi tune")


_OPENMPI = {"launcher": "mpiexec", "command": "/usr/bin/mpirun.openmpi", "args": []}


@pytest.mark.skipif(not os.access("/usr/bin/mpirun.openmpi", os.X_OK), reason="no Open MPI")
def test_a_calibration_sweep_launches_the_program_as_its_sweep_did():
    """Was (s29 V2-5): the recorded launcher went to the pick's script only; the sweep's steps
    got srun --mpi=pmi2. A cluster file's launcher still wins."""
    from hpcds1mpi.launch.script_launcher import LAUNCHED_WITH

    steps = [CalibrationStep(Configuration(1, 2, 1), "x")]
    text = calib.render_calibration(steps, CPU, "app", 10, program="./app {size}",
                                    measure={LAUNCHED_WITH: _OPENMPI, "time_regex": "t=(.+)"})
    assert "--mpiexec /usr/bin/mpirun.openmpi" in text and "--launcher srun" not in text
    assert "# note: each step launches with /usr/bin/mpirun.openmpi, the mpiexec the " \
        "program's sweep ran it with" in text
    own = Cluster("lab", {CPU.name: CPU}, mpi="pmix")
    text = calib.render_calibration(steps, CPU, "app", 10, program="./app {size}", cluster=own,
                                    measure={LAUNCHED_WITH: _OPENMPI})
    assert "--launcher srun --mpi pmix" in text and "sweep ran it with" not in text


def test_a_calibration_with_a_setup_leaves_its_folders_to_the_steps_sweeps(tmp_path):
    """s30 tester N7a: a calibration sweep whose --setup writes the input refused its missing
    --workdir folders before its first step; each step's sweep now creates them for the
    setup, and without a setup the script still checks them first."""
    import functools

    from hpcds1mpi.decide.calibration_folders import step_folders

    steps = [CalibrationStep(Configuration(1, 2, 1), "x")]
    for setup, checked in (("sed s/@N@/{size}/ ../t > in", False), ("", True)):
        measure = {"workdir": "case-{size}-{ranks}", "setup": setup}
        text = calib.render_calibration(
            steps, CPU, "myapp", 10, program="./app", measure=measure,
            folders=functools.partial(step_folders, size=10, measure=measure))
        batch.check_bash_syntax(text)
        assert ("missing_folders" in text) is checked, text
        assert ("creates its folder where missing, for its --setup" in text) is not checked
        if setup:
            launch = next(ln for ln in text.splitlines() if "hpcds1mpi sweep" in ln)
            assert "--setup" in launch and "case-{size}-{ranks}" in launch


@pytest.mark.slurm
def test_a_script_written_in_a_reserved_allocation_carries_its_reservation(slurm, tmp_path):
    """s33 tester A6: inside `salloc --reservation=resA` the script named no reservation and
    pended (ReqNodeNotAvail). A real allocation of the test Slurm; the reservation variable is
    set as salloc sets it (making a reservation would hold the shared nodes)."""
    code = ("from tests.launch.jobs import cpu_job\n"
            "from hpcds1mpi.launch.scripts import render\n"
            "import dataclasses\n"
            "from tests.launch.jobs import CPU\n"
            "job = cpu_job(partition=dataclasses.replace(CPU, name='debug'))\n"
            "print(render(job))\n")
    env = {k: v for k, v in slurm.env.items() if not k.startswith("SLURM_")}
    env.update(SLURM_CONF=slurm.conf, PYTHONPATH=str(Path(__file__).parents[2]))
    proc = subprocess.run(["salloc", "-N1", "-p", "debug", "--time=2", "sh", "-c",
                           f"SLURM_JOB_RESERVATION=resA {shlex.quote(sys.executable)} -c "
                           f"{shlex.quote(code)}"], env=env, capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "#SBATCH --reservation=resA" in proc.stdout
    assert "# note: --reservation=resA: the allocation" in proc.stdout
    outside = batch.render(cpu_job(partition=dataclasses.replace(CPU, name="debug")))
    assert "--reservation" not in outside


@pytest.mark.parametrize("scheduler", ["slurm", "pbs"])
def test_script_unsets_the_submitting_shells_binding_variables(scheduler):
    """s36 tester E2: a job submitted with OMP_PROC_BIND=close OMP_PLACES=cores (a site's
    module) ran both ranks on CPU 0; the measured runs had none of them, so the script
    unsets those it does not set itself, and says why."""
    text = batch.render(cpu_job(), scheduler)
    # the script's own lines from its first export to the launch, run where a site set them
    body = [line for line in text.splitlines()
            if line.startswith(("export ", "unset "))] + ["env"]
    site = {"OMP_PROC_BIND": "spread", "OMP_PLACES": "threads", "GOMP_CPU_AFFINITY": "0",
            "KMP_AFFINITY": "compact"}
    shown = subprocess.run(["bash", "-c", "\n".join(body)], env={**os.environ, **site},
                           capture_output=True, text=True, check=True).stdout
    env = dict(line.split("=", 1) for line in shown.splitlines() if "=" in line)
    assert "GOMP_CPU_AFFINITY" not in env and "KMP_AFFINITY" not in env
    if scheduler == "slurm":  # srun binds each rank's cores: the rule's own binding
        assert (env["OMP_PLACES"], env["OMP_PROC_BIND"]) == ("cores", "close")
        assert "# note: unsets the shell's GOMP_CPU_AFFINITY KMP_AFFINITY: the measured runs " \
               "ran without them" in text
    else:  # mpiexec binds no rank: they would pin every rank's threads to one core
        assert "OMP_PLACES" not in env and "OMP_PROC_BIND" not in env
        assert "so they could pin every rank's threads to the same core" in text


def test_the_launch_check_reads_the_program_in_the_folder_the_job_runs_it_in(tmp_path,
                                                                             monkeypatch):
    """s46 tester J2: an MPICH ``./np`` under Open MPI's mpirun was refused from its own
    folder and written from any other (read as "./np not found" in the shell's folder)."""
    from tests.helpers import system_program

    netpipe = system_program("NPmpich2")
    openmpi = os.path.realpath(system_program("mpirun.openmpi"))
    app = tmp_path / "app"
    app.mkdir()
    (app / "np").symlink_to(netpipe)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    job = BatchJob(config=Configuration(1, 2, 1), partition=CPU, program="./np",
                   cluster=site(launcher="mpirun", mpiexec=openmpi, modules=[], preamble=[]),
                   job_name="j", time_limit_s=600)
    with pytest.raises(ConfigError, match="np is linked against the MPICH family.*Open MPI's "
                                          "launcher"):
        batch.render(job, "slurm", folder=str(app))
    # a folder not on this machine: said what is not checked, not "./np not found"
    text = batch.render(job, "slurm", folder=str(tmp_path / "gone"))
    assert "# note: ./np's MPI is not checked against the launcher: the folder the job runs " \
           "it in" in text and "not found" not in text
