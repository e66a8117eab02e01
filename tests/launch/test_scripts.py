"""Batch-script rendering: golden directive lines, bash -n, and injection in every field."""

from __future__ import annotations

import dataclasses
import os
import shlex
import subprocess
from pathlib import Path

import pytest

from hpcds1mpi.launch import scripts as batch
from hpcds1mpi.launch.scripts import BatchJob, CalibrationStep
from hpcds1mpi.cluster import Cluster, Partition
from hpcds1mpi.config import Configuration
from hpcds1mpi.errors import ConfigError

GOLDEN = Path(__file__).parents[1] / "golden"

CPU = Partition("cpu", cores_per_node=64, memory_gb=256, max_nodes=16)
GPU = Partition("gpu", cores_per_node=32, memory_gb=512, max_nodes=8, gpus_per_node=4,
                gpu_memory_gb=40, slurm_partition="gpu_a100")


def site(**kw) -> Cluster:
    base = dict(name="site", partitions={"cpu": CPU, "gpu": GPU}, account="proj42",
                qos="normal", modules=["openmpi/4.1.5", "cuda/12.2"], gres_syntax="gpus-per-node",
                mpi="pmix", preamble=["source /etc/profile"])
    base.update(kw)
    return Cluster(**base)


def cpu_job(**kw) -> BatchJob:
    base = dict(config=Configuration(4, 16, 4, "cpu", "fp32"), partition=CPU,
                program="./stencil --n {size} --precision {precision}", size=4096,
                time_limit_s=batch.time_limit_s(600.0), cluster=site(), job_name="stencil-run",
                output="logs/%x-%j.out")
    base.update(kw)
    return BatchJob(**base)


def gpu_job(**kw) -> BatchJob:
    base = dict(config=Configuration(2, 4, 8, "gpu", "bf16"), partition=GPU, program="./gemm",
                time_limit_s=25 * 3600, cluster=site(account="", qos=""), job_name="gemm-gpu",
                exclusive=True)
    base.update(kw)
    return BatchJob(**base)


def golden(name: str) -> list[str]:
    return (GOLDEN / name).read_text().splitlines()


# ---- golden directive lines -----------------------------------------------------------------


def test_slurm_cpu_directives_match_golden():
    assert batch.slurm_directives(cpu_job()) == golden("slurm_cpu.txt")


def test_slurm_gpu_directives_use_site_gres_syntax():
    assert batch.slurm_directives(gpu_job(cluster=site(account="", qos="", gres_syntax="gres"))) \
        == golden("slurm_gpu_gres.txt")
    assert batch.slurm_directives(gpu_job()) == golden("slurm_gpu_gpus_per_node.txt")


def test_pbs_directives_match_golden():
    assert batch.pbs_directives(cpu_job()) == golden("pbs_cpu.txt")
    assert batch.pbs_directives(gpu_job()) == golden("pbs_gpu.txt")


def test_time_limit_from_upper_quantile_with_margin_and_floor():
    assert batch.time_limit_s(600.0) == 900  # 600 x 1.5 = 900 s = 15 min exactly
    assert batch.time_limit_s(601.0) == 960  # 901.5 s rounds up to 16 min
    assert batch.time_limit_s(0.02) == 60  # floor
    assert batch.format_slurm_time(90061) == "1-01:01:01"
    assert batch.format_pbs_walltime(90061) == "25:01:01"
    for bad in (0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ConfigError):
            batch.time_limit_s(bad)


# ---- launcher tokens and assembly -----------------------------------------------------------


def test_launcher_tokens_pass_cpus_per_task_explicitly():
    config = Configuration(2, 8, 4)
    assert batch.launcher_tokens("slurm", config, site()) == [
        "srun", "--nodes=2", "--ntasks-per-node=8", "-c", "4", "--cpu-bind=cores",
        "--kill-on-bad-exit=1", "--mpi=pmix"]
    assert batch.launcher_tokens("pbs", config, site()) == ["mpiexec", "-n", "16"]
    assert batch.launcher_tokens("pbs", config, site(launcher="mpirun"))[0] == "mpirun"
    with pytest.raises(ConfigError):
        batch.launcher_tokens("slurm", config, site(mpi="pmi2; rm -rf /"))


@pytest.mark.parametrize("scheduler", ["slurm", "pbs"])
def test_rendered_script_is_valid_bash_and_complete(scheduler):
    for job in (cpu_job(), gpu_job()):
        text = batch.render(job, scheduler)
        batch.check_bash_syntax(text)
        lines = text.splitlines()
        assert lines[0] == "#!/bin/bash"
        directives = batch.slurm_directives(job) if scheduler == "slurm" else \
            batch.pbs_directives(job)
        # Directives come straight after the shebang, before any command.
        assert lines[1:1 + len(directives)] == directives
        assert f"export OMP_NUM_THREADS={job.config.threads}" in lines
        assert "export OMP_PLACES=cores" in lines and "export OMP_PROC_BIND=close" in lines
        assert f"export HPCDS1MPI_PRECISION={job.config.precision}" in lines
        assert "module load openmpi/4.1.5" in lines
        assert "source /etc/profile" in lines
    text = batch.render(cpu_job(), scheduler)
    assert text.rstrip().splitlines()[-1].endswith("./stencil --n 4096 --precision fp32")


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
    text = batch.render_calibration(steps, GPU, "mykernel", 2048, cluster=site(),
                                    reason="never-seen workload")
    batch.check_bash_syntax(text)
    assert "#SBATCH --nodes=2" in text and "#SBATCH --exclusive" in text
    assert "#SBATCH --gpus-per-node=2" in text
    # The allocation holds the widest step: 8 cores per node as 2 tasks x 4 CPUs.
    assert "#SBATCH --ntasks-per-node=2" in text and "#SBATCH --cpus-per-task=4" in text
    assert text.count("hpcds1mpi sweep") == 3
    assert "OMP_NUM_THREADS=8 HPCDS1MPI_PRECISION=fp32" in text
    with pytest.raises(ConfigError):
        batch.render_calibration(steps, CPU, "mykernel", 2048)  # GPU step on a CPU partition
    with pytest.raises(ConfigError):
        batch.render_calibration(steps[:1], CPU, "my$(kernel)", 2048)
    with pytest.raises(ConfigError):
        batch.render_calibration([], CPU, "k", 2048)


def test_calibration_for_external_program_quotes_the_command(tmp_path):
    steps = [CalibrationStep(Configuration(1, 2, 1), "x")]
    text = batch.render_calibration(steps, CPU, "myapp", 10, program="./app --n {size}; rm -rf ~")
    batch.check_bash_syntax(text)
    launch = [line for line in text.splitlines() if "hpcds1mpi sweep" in line][0]
    tokens = shlex.split(launch.split("||")[0])
    assert tokens[tokens.index("--command") + 1] == "./app --n {size}; rm -rf ~"
