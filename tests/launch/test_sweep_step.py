"""Sweep one configuration: one description as CLI arguments, a plan document and a command."""

from __future__ import annotations

import pytest

from hpcds1mpi.config import Configuration
from hpcds1mpi.errors import ConfigError
from hpcds1mpi.launch.launchers import Srun
from hpcds1mpi.launch.sweep_step import SweepStep

CONFIG = Configuration(2, 4, 3, "cpu", "fp32")


def test_kernel_step_as_arguments_plan_and_command_under_the_launcher():
    step = SweepStep("gemm", 256, min_time=0.2, max_repeats=5, snapshot_every=0)
    args = step.sweep_args(CONFIG, "t.h5", progress=False, cluster_file="c.toml",
                           partition="debug")
    assert args == ["--kernel", "gemm", "--sizes", "256", "--nodes", "2", "--ranks-per-node", "4",
                    "--threads", "3", "--devices", "cpu", "--precisions", "fp32",
                    "--min-time", "0.2", "--max-repeats", "5", "--snapshot-every", "0",
                    "--out", "t.h5", "--resume", "--no-progress", "--cluster", "c.toml",
                    "--partition", "debug"]
    assert step.plan_doc(CONFIG) == {
        "sweep": {"min_time": 0.2, "max_repeats": 5, "snapshot_every": 0},
        "kernel": [{"name": "gemm", "sizes": [256], "nodes": [2], "ranks_per_node": [4],
                    "threads": [3], "devices": ["cpu"], "precisions": ["fp32"]}]}
    command = step.command(CONFIG, Srun(), "t.h5")
    assert command[:len(Srun().tokens(CONFIG))] == Srun().tokens(CONFIG)
    assert command[len(Srun().tokens(CONFIG)):][:2] == ["hpcds1mpi", "sweep"]


def test_program_step_is_not_started_under_the_launcher():
    step = SweepStep("app", 10, program=["./app", "--n", "{size}", "a b"])
    command = step.command(CONFIG, Srun(), "t.h5")
    assert command[:4] == ["hpcds1mpi", "sweep", "--command", "./app --n '{size}' 'a b'"]
    assert command[4:6] == ["--label", "app"]
    with pytest.raises(ConfigError):
        step.plan_doc(CONFIG)
    with pytest.raises(ConfigError):
        SweepStep("app", 0).options(CONFIG)


def test_min_repeats_is_passed_on_when_set():
    step = SweepStep("gemm", 64, min_repeats=4, max_repeats=6)
    args = step.sweep_args(CONFIG, "t.h5")
    assert args[args.index("--min-repeats") + 1] == "4"
    assert step.plan_doc(CONFIG)["sweep"] == {"min_repeats": 4, "max_repeats": 6}
    assert "--min-repeats" not in SweepStep("gemm", 64).sweep_args(CONFIG, "t.h5")


def test_a_programs_step_reads_it_as_its_earlier_sweep_did():
    """The regexes and the workdir travel with the step: without them a calibration step timed
    the launch, not the program, and ran every rank count in one folder (issue s25 e1)."""
    measure = {"time_regex": r"^WALL\s+([0-9.]+)", "workdir": "sc/{size}-{ranks}",
               "ranks_regex": r"P=(\d+)", "fom_regex": "", "output_file": None}
    step = SweepStep("lu", 550, program="./xdlu", measure=measure)
    args = step.sweep_args(CONFIG, "t.h5")
    assert args[:10] == ["--command", "./xdlu", "--label", "lu",
                         "--time-regex", r"^WALL\s+([0-9.]+)", "--ranks-regex", r"P=(\d+)",
                         "--workdir", "sc/{size}-{ranks}"]
    assert "--fom-regex" not in args and "--output-file" not in args  # "" / None: not used
    # a kernel has nothing to read: the options do not reach sweep --kernel
    assert "--time-regex" not in SweepStep("gemm", 64, measure=measure).sweep_args(CONFIG, "t")
    with pytest.raises(ConfigError, match="unknown reading option"):
        SweepStep("lu", 5, program="./x", measure={"timeregex": "x"}).sweep_args(CONFIG, "t")
    with pytest.raises(ConfigError, match="--workdir"):
        SweepStep("lu", 5, program="./x", measure={"workdir": "a\nb"}).sweep_args(CONFIG, "t")


def test_a_programs_step_repeats_its_fail_regex():
    """A calibration step of a program swept with --fail-regex fails a run that did not
    converge, as the model's runs did (was: not a reading key, dropped: such runs were ok)."""
    from hpcds1mpi.launch.sweep_step import READING_KEYS

    step = SweepStep("cp2k", 150, program="./cp2k -i h2o-{size}.inp",
                     measure={"time_regex": r"CP2K\s+1\s+\S+\s+\S+\s+\S+\s+\S+\s+(\S+)",
                              "fail_regex": "SCF run NOT converged"})
    args = step.sweep_args(CONFIG, "t.h5")
    assert args[args.index("--fail-regex") + 1] == "SCF run NOT converged"
    assert READING_KEYS[-1] == "fail_regex"  # written after the other reading options
    assert "--fail-regex" not in SweepStep("cp2k", 150, program="./cp2k", measure={
        "fail_regex": ""}).sweep_args(CONFIG, "t.h5")  # none recorded: none repeated
    with pytest.raises(ConfigError, match="--fail-regex"):
        SweepStep("cp2k", 5, program="./x", measure={"fail_regex": "a\nb"}).sweep_args(CONFIG,
                                                                                      "t")
