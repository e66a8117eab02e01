"""Scheduler directives: golden #SBATCH / #PBS lines per scheduler, time limits."""

from __future__ import annotations

import pytest

from hpcds1mpi.errors import ConfigError
from hpcds1mpi.launch import directives as batch
from tests.launch.jobs import cpu_job, golden, gpu_job, site


# ---- golden directive lines -----------------------------------------------------------------


def test_slurm_cpu_directives_match_golden():
    assert batch.slurm_directives(cpu_job(output="logs/%x-%j.out")) == golden("slurm_cpu.txt")


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


def test_a_slurm_output_pattern_is_refused_for_pbs_in_one_line():
    """PBS writes ``-o out.%j`` as it stands: a file literally named out.%j."""
    with pytest.raises(ConfigError) as info:
        batch.pbs_directives(cpu_job(output="out.%j"))
    assert "PBS does not expand" in str(info.value) and "\n" not in str(info.value)
    assert any(line.endswith("-o out.log") for line in
               batch.pbs_directives(cpu_job(output="out.log")))
    assert any(line.endswith("--output=out.%j") for line in
               batch.slurm_directives(cpu_job(output="out.%j")))
