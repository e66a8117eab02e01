"""Scheduler directives: golden #SBATCH / #PBS lines per scheduler, time limits."""

from __future__ import annotations

import pytest

from hpcds1mpi.cluster import Partition
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


# ---- what a value may look like: the message states the rule the check applies --------------

_PRINTABLE = [chr(c) for c in range(33, 127)]


def _stated_marks(message: str) -> set[str]:
    """The marks a refusal says are allowed: '... letters, digits and . _ - only ...'."""
    words = message.split("letters, digits and ", 1)[1].split(" only", 1)[0]
    return set(words.split())


@pytest.mark.parametrize("what, check", [
    ("job name", lambda v: batch.check_job_name(v)),
    ("partition", lambda v: cpu_job(partition=Partition(v, cores_per_node=64, memory_gb=256,
                                                        max_nodes=16)).queue()),
    ("account", lambda v: cpu_job(account=v).account_value()),
    ("module", lambda v: cpu_job(cluster=site(modules=[v])).modules()),
    ("output path", lambda v: batch.check_output_path(v)),
])
def test_a_refusal_states_exactly_the_characters_the_check_allows(what, check):
    """Was: 'use letters, digits and . _ - only' for job names (which also allow +) and
    modules (which also allow / and +): openmpi/4.1 passed a rule that said / was refused."""
    with pytest.raises(ConfigError) as info:
        check("a b")  # a space: refused everywhere
    message = str(info.value)
    assert message.startswith(f"{what} 'a b' has characters not allowed") and "' '" in message
    stated = _stated_marks(message)
    for c in _PRINTABLE:
        try:
            check("a" + c)
            accepted = True
        except ConfigError:
            accepted = False
        assert accepted == (c.isalnum() or c in stated), (what, c, message)


def test_a_name_that_starts_badly_is_told_so_not_that_its_characters_are_wrong():
    with pytest.raises(ConfigError) as info:
        batch.check_job_name("-x")  # was: "has characters not allowed ... (. _ - only)"
    assert str(info.value).startswith("job name '-x' starts with '-'; use letters")
    assert "starting with a letter or digit" in str(info.value)
    with pytest.raises(ConfigError, match=r"^account '-x' starts with '-'; use letters, "
                                          r"digits and \. _ - only, starting with a letter or "
                                          r"digit, at most 128 characters$"):
        cpu_job(account="-x").account_value()
    with pytest.raises(ConfigError, match=r"^output path is empty; use "):
        batch.check_output_path("")  # was: "output path '' has characters not allowed"
    with pytest.raises(ConfigError, match=r"^job name is 129 characters long; use .*at most "
                                          r"128 characters$"):
        batch.check_job_name("j" * 129)
    # Spack's module names and Lmod's folders pass, as the rule says
    assert cpu_job(cluster=site(modules=["gcc@12+shared", "openmpi/4.1"])).modules() == \
        ["gcc@12+shared", "openmpi/4.1"]


def test_a_derived_job_name_fits_whenever_the_users_name_does():
    """Was: a 128-character --job-name passed for a job's script, then its calibration sweep
    (the name + '-calib', 134 characters) was refused."""
    longest = "j" * batch.MAX_JOB_NAME
    name = batch.job_name_with(longest, "-calib")
    assert len(name) == batch.MAX_JOB_NAME and name.endswith("-calib")
    assert batch.job_name_with("short", "-calib") == "short-calib"
    with pytest.raises(ConfigError, match="job name is 129 characters long"):
        batch.job_name_with(longest + "j", "-calib")  # the user's own name, as the user gave it
    with pytest.raises(ConfigError, match="job name '-x' starts with '-'"):
        batch.job_name_with("-x", "-calib")


# ---- memory: what the job was judged to fit in is what it asks for (tester l, item 11) ------


def test_a_known_memory_need_is_asked_for_with_a_margin_per_scheduler():
    """Was: no script asked for memory, while the fit was judged against 90 % of the node: on
    a site with DefMemPerCPU (the test Slurm: 1000 MB per CPU) the job ran with less."""
    job = cpu_job(memory_mb=20000.0)  # 20000 MiB per node predicted, 256 GB nodes
    mib = 30000
    assert f"#SBATCH --mem={mib}M" in batch.slurm_directives(job)
    assert any(line.startswith("#PBS -l select=") and line.endswith(f":mem={mib}mb")
               for line in batch.pbs_directives(job))


def test_the_memory_asked_is_in_the_need_s_own_unit_mib():
    """s40 tester D1: the need (the learned ``peak_rss_mb``) is MiB, but it was converted as
    decimal MB (x 1e6 / 2**20), asking 4.6 % less than the stated rule, and near the 90 %
    cap below the measured peak itself. A small need gets 1000 MiB more; a large one at most
    90 % of the node (a GB is 1000 MiB, as Slurm's RealMemory is read); never below the need."""
    assert batch.memory_request_mib(363.17, 256) == 1364
    assert batch.memory_request_mib(100.0, 256) == 1100
    assert batch.memory_request_mib(200000.0, 256) == int(0.9 * 256000)
    assert batch.memory_request_mib(240000.0, 256) == 240000  # was 228882: below the need
    note = batch.memory_note(cpu_job(memory_mb=363.17), "slurm")
    assert note.startswith("asks 1364 MiB per node: the predicted need of 363 MiB x 1.5 (at "
                           "least 1000 MiB more)")


def test_an_unknown_need_asks_the_whole_node_when_exclusive_else_nothing():
    assert "#SBATCH --mem=0" in batch.slurm_directives(gpu_job())  # exclusive
    assert not any("--mem" in line for line in batch.slurm_directives(cpu_job()))
    assert not any("mem=" in line for line in batch.pbs_directives(gpu_job()))


@pytest.mark.parametrize("need", [0.0, -5.0, float("nan"), 300000.0])
def test_a_need_that_cannot_be_asked_for_is_refused_in_one_line(need):
    with pytest.raises(ConfigError) as info:
        batch.slurm_directives(cpu_job(memory_mb=need))
    assert "\n" not in str(info.value) and "memory need" in str(info.value)


def test_no_time_limit_writes_no_time_and_no_walltime_line():
    """s46 tester J1: a job asked to have no limit is written without one (the partition's,
    the queue's applies), never with the floor of a minute; a limit below a minute is still
    refused."""
    job = cpu_job(time_limit_s=batch.NO_TIME_LIMIT)
    slurm = batch.slurm_directives(job)
    assert slurm == [line for line in batch.slurm_directives(cpu_job())
                     if not line.startswith("#SBATCH --time=")]
    assert batch.pbs_directives(job) == [line for line in batch.pbs_directives(cpu_job())
                                         if not line.startswith("#PBS -l walltime=")]
    assert "partition's time limit applies" in batch.no_time_limit_note("UNLIMITED", "slurm")
    assert batch.no_time_limit_note("0", "pbs").startswith(
        "no walltime: your --time-limit 0 asks for no limit, so the queue's default walltime")
    with pytest.raises(ConfigError, match="at least 60 s"):
        batch.slurm_directives(cpu_job(time_limit_s=30))
