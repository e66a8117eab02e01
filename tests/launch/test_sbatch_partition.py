"""SBATCH_PARTITION: the partition sbatch gives a job over its #SBATCH -p, which advise judges
it on (s48 review RX4)."""

from __future__ import annotations

import pytest

from hpcds1mpi.errors import ConfigError
from hpcds1mpi.launch import partition_limits
from hpcds1mpi.launch.partition_limits import PartitionLimits
from hpcds1mpi.launch.sbatch_partition import (from_environment, refuse_unknown,
                                               take_variable)
from hpcds1mpi.launch.script_reading import read_script
from tests.decide.test_advise import ASKED, bundle, places  # noqa: F401 (fixtures)
from tests.decide.test_advise import run
from tests.helpers import run_cli

#: ASKED naming no partition, asking 30 minutes and 6000 MiB a node.
NO_PARTITION = ASKED.replace("#SBATCH --partition=standard\n", "").replace(
    "#SBATCH --time=00:30:00\n", "#SBATCH --time=00:30:00\n#SBATCH --mem=6000M\n")


def test_the_variable_is_read_stripped_and_unset_is_none():
    assert from_environment({"SBATCH_PARTITION": " big "}) == "big"
    assert from_environment({}) is None


def test_a_variable_set_empty_is_refused_as_sbatch_refuses_it():
    # s49 review F5: sbatch 22.05 "invalid partition specified: (null)"; advise had read it
    # as unset and judged the job on the default partition
    assert from_environment({"SBATCH_PARTITION": " "}) == ""
    with pytest.raises(ConfigError, match="SBATCH_PARTITION is set but empty"):
        take_variable(read_script(ASKED), "", default_queue=True)


def test_partition_for_a_pbs_script_is_refused_the_variable_ignored():
    # s49 review F8: --partition was silently dropped for a PBS script
    pbs = read_script("#!/bin/bash\n#PBS -l select=1:ncpus=2\nmpiexec -n 2 ./a\n")
    with pytest.raises(ConfigError, match="this is not a Slurm script"):
        take_variable(pbs, "big", default_queue=True, source="--partition")
    assert take_variable(pbs, "big", default_queue=True) == ""  # qsub reads no SBATCH_*


def test_the_variable_overrides_the_scripts_own_line_and_says_so():
    named = read_script(ASKED)
    said = take_variable(named, "big", default_queue=False)
    assert named.partition == "big"  # the cluster file's partition 'big' is the one judged
    assert said.startswith("SBATCH_PARTITION=big: sbatch sends the job to partition 'big' (its "
                           "input variables override #SBATCH lines, a `sbatch -p` on its "
                           "command line overrides both); it overrides line 2's "
                           "--partition=standard")
    here = read_script(ASKED)
    assert take_variable(here, "big", default_queue=True) and here.partition is None
    unset = read_script(ASKED)
    assert take_variable(unset, None, default_queue=False) == "" and unset.partition == "standard"
    pbs = read_script("#!/bin/bash\n#PBS -l select=1:ncpus=2\nmpiexec ./app 5\n")
    assert take_variable(pbs, "big", default_queue=True) == ""  # qsub does not read it


def test_a_partition_slurm_does_not_have_is_refused_naming_those_it_has():
    with pytest.raises(ConfigError) as err:
        refuse_unknown("nope", ["debug", "big"])
    assert str(err.value) == ("SBATCH_PARTITION=nope names partition 'nope', which Slurm does "
                              "not have (debug, big); sbatch would refuse the job: set "
                              "SBATCH_PARTITION to one of those, or unset it")
    refuse_unknown("big", ["debug", "big"])
    refuse_unknown("debug,big", ["debug", "big"])  # a list: each one known
    refuse_unknown("nope", None)  # Slurm does not answer: nothing checked


def _slurm(monkeypatch):
    """Slurm with its default partition 'debug' (4000 MiB nodes) and 'big' (64000 MiB nodes,
    MaxTime 10 minutes)."""
    monkeypatch.setattr(partition_limits, "_CACHE", {
        (None, ""): PartitionLimits("debug", node_memory_mb=4000,
                                    node_cpus={"n1": 2, "n2": 2}),
        ("big", ""): PartitionLimits("big", max_time_s=600, node_memory_mb=64000,
                                     node_cpus={"b1": 2, "b2": 2})})
    monkeypatch.setattr(partition_limits, "slurm_partitions", lambda: ["debug", "big"])
    monkeypatch.setenv("SLURM_CONF", "")


def test_advise_on_this_machine_judges_the_job_on_sbatch_partition(bundle, places,
                                                                    monkeypatch):
    """s48 review RX4: a script naming no partition was judged on Slurm's default partition
    whatever SBATCH_PARTITION said, though sbatch sends it there."""
    _slurm(monkeypatch)
    default = run(NO_PARTITION, bundle, places, default_queue=True)
    assert any("partition debug's nodes (4000M)" in w for w in default.warnings)
    a = run(NO_PARTITION, bundle, places, default_queue=True, sbatch_partition="big")
    assert not any("debug" in w for w in a.warnings), a.warnings  # big's nodes hold 6000M
    assert any(w.startswith("--time 00:30:00 is above partition big's MaxTime 00:10:00")
               for w in a.warnings), a.warnings
    (said,) = [n for n in a.notes if "SBATCH_PARTITION" in n]
    assert said.startswith("SBATCH_PARTITION=big: sbatch sends the job to partition 'big'")
    assert "its limits, nodes and memory are the ones checked" in said
    assert not any("default partition" in n for n in a.notes), a.notes
    with pytest.raises(ConfigError, match="SBATCH_PARTITION=nope names partition 'nope', "
                       r"which Slurm does not have \(debug, big\)"):
        run(NO_PARTITION, bundle, places, default_queue=True, sbatch_partition="nope")


def test_advise_with_a_cluster_file_judges_the_job_on_its_partition_of_that_name(bundle,
                                                                                 places):
    a = run(NO_PARTITION, bundle, places, sbatch_partition="standard")
    assert a.asked.partition == "lab/standard"
    assert any(n.startswith("SBATCH_PARTITION=standard: sbatch sends the job to partition "
                            "'standard'") and n.endswith("it is judged on the cluster "
                                                         "description's partition of that name")
               for n in a.notes), a.notes
    with pytest.raises(ConfigError) as err:
        run(ASKED, bundle, places, sbatch_partition="gpu")  # over the script's 'standard'
    assert str(err.value).startswith("SBATCH_PARTITION=gpu sends the job to partition 'gpu', "
                                     "which the cluster description does not have "
                                     "(lab/standard)")


def _need_slurm() -> None:
    """Skip where no Slurm answers (the CLI tests read the real one)."""
    import shutil
    import subprocess

    if not shutil.which("scontrol") or subprocess.run(
            ["scontrol", "show", "partition", "-o"], capture_output=True, timeout=10).returncode:
        pytest.skip("no Slurm answers here")


def test_the_advise_command_reads_sbatch_partition_from_its_environment(tmp_path):
    """The real Slurm here has one partition, 'debug': SBATCH_PARTITION=debug is said as the
    partition checked, a name it lacks is refused in one line (sbatch refuses it: "invalid
    partition specified")."""
    _need_slurm()
    job = tmp_path / "job.sbatch"
    job.write_text(NO_PARTITION)
    env = {"HPCDS1MPI_CACHE": str(tmp_path / "cache")}
    res = run_cli(["advise", str(job)], env={**env, "SBATCH_PARTITION": "nope"}, cwd=tmp_path)
    assert res.returncode != 0 and res.stdout == ""
    (line,) = res.stderr.strip().splitlines()
    assert "SBATCH_PARTITION=nope names partition 'nope', which Slurm does not have (" in line
    res = run_cli(["advise", str(job)], env={**env, "SBATCH_PARTITION": "debug"}, cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert "note: SBATCH_PARTITION=debug: sbatch sends the job to partition 'debug'" in res.stdout


def test_advise_partition_stands_for_sbatch_p_over_the_variable(tmp_path):
    """sbatch's command line overrides SBATCH_PARTITION, which advise cannot see: its own
    --partition says it (s48 review RX4)."""
    _need_slurm()
    job = tmp_path / "job.sbatch"
    job.write_text(NO_PARTITION)
    env = {"HPCDS1MPI_CACHE": str(tmp_path / "cache"), "SBATCH_PARTITION": "nope"}
    res = run_cli(["advise", str(job), "--partition", "debug"], env=env, cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert ("note: --partition=debug: sbatch sends the job to partition 'debug' (as `sbatch -p` "
            "would: its command line overrides SBATCH_PARTITION and #SBATCH lines)") in res.stdout
    res = run_cli(["advise", str(job), "--partition", "nope"], env=env, cwd=tmp_path)
    assert res.returncode != 0 and res.stdout == ""
    (line,) = res.stderr.strip().splitlines()
    assert "--partition=nope names partition 'nope', which Slurm does not have (" in line
    assert line.endswith("give --partition one of those")
    res = run_cli(["advise", str(job), "--partition", " "], env=env, cwd=tmp_path)
    assert res.returncode != 0 and "--partition is empty" in res.stderr
