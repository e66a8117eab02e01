"""Partition limits read from Slurm (s33 tester A3/A5): the text is real ``scontrol`` output
captured from tester A's second Slurm ("testera": work MaxTime 10 min, MaxNodes 2,
MaxMemPerNode 1500, DefMemPerCPU 500; short MaxTime 2 min; m2 drained)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from hpcds1mpi.launch import partition_limits
from hpcds1mpi.launch.script_options import parse_slurm_time
from hpcds1mpi.launch.script_reading import read_script
from hpcds1mpi.launch.script_rewrite import Layout
from hpcds1mpi.launch.partition_limits import (PartitionLimits, keep_within, largest_node_memory,
                                        parse_node_states, parse_partitions, script_problems)

DATA = Path(__file__).parents[1] / "data" / "slurm_limits"


def _work() -> PartitionLimits:
    limits = parse_partitions((DATA / "partitions.txt").read_text())["work"][0]
    states = parse_node_states((DATA / "nodes_m2_drained.txt").read_text())
    return PartitionLimits(**{**limits.__dict__, "node_states": states})


def test_scontrol_partition_text_gives_the_limits():
    parts = parse_partitions((DATA / "partitions.txt").read_text())
    work, default, nodes = parts["work"]
    assert (work.max_time_s, work.max_nodes, work.max_mem_per_node_mb,
            work.def_mem_per_cpu_mb, default, nodes) == (600, 2, 1500, 500, True, "m[1-2]")
    short = parts["short"][0]
    assert (short.max_time_s, short.max_nodes, short.max_mem_mb(2)) == (120, 1, None)
    assert parse_slurm_time("1-02:00:00") == 93600 and parse_slurm_time("UNLIMITED") is None


CALIBRATION = ["#SBATCH --partition=work", "#SBATCH --nodes=2", "#SBATCH --mem=0",
               "#SBATCH --time=01:00:00", "#SBATCH --exclusive"]


def test_a_guessed_time_and_whole_node_memory_are_cut_to_the_limits():
    lines, notes = keep_within(CALIBRATION, _work(), cpus_per_node=1, time_guessed=True)
    assert "#SBATCH --time=00:10:00" in lines and "#SBATCH --mem=1500M" in lines
    assert any("MaxTime 00:10:00" in n for n in notes)
    assert any("MaxMemPerNode 1500M" in n for n in notes)


def test_an_estimate_above_the_limits_is_kept_and_said():
    said = []
    asked = ["#SBATCH --nodes=3", "#SBATCH --mem=2010M", "#SBATCH --time=00:36:00"]
    lines, notes = keep_within(asked, _work(), cpus_per_node=1, say=said.append)
    assert lines == asked and notes == []
    assert len(said) == 3 and all("partition work" in s for s in said)
    assert any("MaxTime 00:10:00" in s and "another partition" in s for s in said)


def test_advise_finds_what_would_pend_forever():
    limits = _work()
    found = {name: script_problems(read_script((DATA / "adv" / name).read_text()), limits)
             for name in ("loop.sbatch", "mem.sbatch", "drained.sbatch")}
    assert "PartitionTimeLimit" in found["loop.sbatch"][0]
    assert "MaxMemPerLimit" in found["mem.sbatch"][0] and "1500M" in found["mem.sbatch"][0]
    assert "m2 (idle+drain)" in found["drained.sbatch"][0]


def test_the_rewrite_keeps_nothing_that_would_pend(monkeypatch):
    monkeypatch.setattr(partition_limits, "_CACHE", {(name, ""): _work()
                                                      for name in ("work", None)})
    monkeypatch.setenv("SLURM_CONF", "")
    mem = read_script((DATA / "adv" / "mem.sbatch").read_text())
    assert "MaxMemPerLimit" in partition_limits.rewrite_refusal(mem, Layout(1, 1, 1, 0, 60))
    loop = read_script((DATA / "adv" / "loop.sbatch").read_text())
    assert partition_limits.rewrite_refusal(loop, Layout(1, 1, 1, 0, 60)) == ""  # time replaced
    assert "PartitionTimeLimit" in partition_limits.rewrite_refusal(loop, Layout(1, 1, 1))


NO_PARTITION = """#!/bin/bash
#SBATCH --nodes=1
#SBATCH --ntasks-per-node=2
#SBATCH --time=00:30:00
#SBATCH --mem=4G
srun ./app 56
"""


def _debug() -> PartitionLimits:
    """s47 tester K2: the test Slurm's default partition, nodes of RealMemory 4000 MiB and no
    MaxMemPerNode."""
    nodes = (DATA / "nodes_m2_drained.txt").read_text()
    return PartitionLimits("debug", node_states=parse_node_states(nodes),
                           node_memory_mb=largest_node_memory(nodes))


def test_a_mem_above_every_node_of_the_partition_is_found():
    """s47 tester K2: --mem=4G (4096 MiB) on nodes of 4000 MiB, which sbatch refuses at once,
    was checked only against MaxMemPerNode (UNLIMITED) and went unmentioned."""
    assert _debug().node_memory_mb == 4000
    (found,) = script_problems(read_script(NO_PARTITION), _debug())
    assert found.startswith("--mem=4G (line 5) is above the memory of partition debug's nodes "
                            "(4000M)") and "ask for at most 4000M" in found
    assert script_problems(read_script(NO_PARTITION.replace("4G", "3900M")), _debug()) == []


def test_advise_on_this_machine_checks_a_script_naming_no_partition_on_the_default_one(
        monkeypatch):
    """s47 tester K2: this machine's made-up partition 'local' is no Slurm partition, so a
    script naming none was checked against nothing; sbatch sends it to the default partition,
    as recommend --emit says, and advise now reads that one's limits."""
    from hpcds1mpi.cluster import Partition

    monkeypatch.setattr(partition_limits, "_CACHE", {(None, ""): _debug(), ("local", ""): None})
    monkeypatch.setenv("SLURM_CONF", "")
    script, local = read_script(NO_PARTITION), Partition("local", cores_per_node=2,
                                                         memory_gb=25.3)
    (found,) = partition_limits.advise_warnings(script, local, default_queue=True)
    assert "partition debug's nodes (4000M)" in found
    assert partition_limits.advise_warnings(script, local) == []  # a cluster file's partition
    refused = partition_limits.rewrite_refusal(script, Layout(1, 1, 1, 0, 60), partition_limits
                                               .read_on(local, True))
    assert refused.startswith("--rewrite refused: --mem=4G")


def test_a_written_mem_above_every_node_of_the_partition_is_said(monkeypatch, capsys):
    """s48 (s47 tester K2, review RX2): recommend --emit's own check of the script it writes
    read MaxMemPerNode only, so a --mem=9000M for the default partition's 4000 MiB nodes,
    which sbatch refuses ("Memory specification can not be satisfied"), went unsaid."""
    from hpcds1mpi.cluster import Partition
    from hpcds1mpi.config import Configuration
    from hpcds1mpi.launch.directives import BatchJob
    from hpcds1mpi.launch.scripts import render

    said = []
    lines, notes = keep_within(["#SBATCH --mem=9000M"], _debug(), cpus_per_node=2,
                               say=said.append)
    assert lines == ["#SBATCH --mem=9000M"] and notes == []  # an estimate: kept, and said
    (warning,) = said
    assert warning.startswith("the script asks --mem=9000M, above the memory of partition "
                              "debug's nodes (4000M): sbatch refuses it")
    assert "use more nodes or another partition" in warning
    said.clear()
    keep_within(["#SBATCH --mem=3900M", "#SBATCH --mem=0"], _debug(), cpus_per_node=2,
                say=said.append)
    assert said == []  # within the node, or the whole node
    monkeypatch.setattr(partition_limits, "_CACHE", {(None, ""): _debug()})
    monkeypatch.setenv("SLURM_CONF", "")
    job = BatchJob(Configuration(1, 2, 1, "cpu", "fp64"), Partition("local", 2, 25.3),
                   "./app 56", memory_mb=6000)  # asks 9000M on this machine's 25.3 GB
    script = render(job, default_queue=True)
    assert "#SBATCH --mem=9000M" in script
    assert "above the memory of partition debug's nodes (4000M)" in capsys.readouterr().err


def test_a_script_naming_no_partition_is_checked_on_the_default_partition_s_nodes(monkeypatch):
    """s48: advise's memory checks of a script naming none read Slurm's default partition's
    nodes, not this machine's partition beside them; a named partition is not read so."""
    from hpcds1mpi.cluster import Partition

    monkeypatch.setattr(partition_limits, "_CACHE", {(None, ""): _debug()})
    monkeypatch.setenv("SLURM_CONF", "")
    local = Partition("local", cores_per_node=2, memory_gb=25.3)
    limits = partition_limits.default_queue_limits(read_script(NO_PARTITION), True)
    checked = partition_limits.checked_partition(local, limits)
    assert (checked.name, checked.memory_gb, checked.cores_per_node) == ("debug", 4.0, 2)
    named = read_script(NO_PARTITION.replace("#!/bin/bash\n", "#!/bin/bash\n#SBATCH -p debug\n"))
    assert partition_limits.default_queue_limits(named, True) is None
    assert partition_limits.default_queue_limits(read_script(NO_PARTITION), False) is None
    assert partition_limits.checked_partition(local, None) is local  # Slurm did not answer


def test_the_asked_layout_fits_on_the_default_partition_s_nodes_and_cpus():
    """s48 tester Q5: a script naming no partition, advised on this machine ('local', 1 node),
    had its 2 nodes refused by 'local''s size, while Slurm's default partition, which took
    and ran it, has 2: the fit reads that partition's node count and its nodes' CPUs."""
    from dataclasses import replace

    from hpcds1mpi.cluster import Partition

    nodes = (DATA / "nodes_m2_drained.txt").read_text()  # m1: 2 CPUs, m2: 1
    assert partition_limits.parse_node_cpus(nodes) == {"m1": 2, "m2": 1}
    debug = PartitionLimits("debug", node_memory_mb=4000,
                            node_cpus=partition_limits.parse_node_cpus(nodes))
    local = Partition("local", cores_per_node=2, memory_gb=25.3)  # max_nodes 1
    one = partition_limits.fit_partition(local, debug)
    assert (one.name, one.max_nodes, one.cores_per_node, one.memory_gb) == ("debug", 2, 2, 4.0)
    assert partition_limits.fit_partition(local, debug, 2).cores_per_node == 1  # m2's too
    assert partition_limits.fit_partition(local, replace(debug, max_nodes=1)).max_nodes == 1
    assert partition_limits.fit_partition(local, None) is local  # Slurm did not answer
    assert partition_limits.fit_partition(local, PartitionLimits("debug")) is local


@pytest.mark.slurm
def test_the_shared_test_slurm_is_read_once(slurm, monkeypatch):
    monkeypatch.setattr(partition_limits, "_CACHE", {})
    for key, value in slurm.env.items():
        monkeypatch.setenv(key, value)
    debug = partition_limits.limits_of("debug")
    assert debug is not None and debug.max_time_s is None and set(debug.node_states) == {"n1",
                                                                                         "n2"}
    assert partition_limits.limits_of(None) == debug  # the default partition
    assert debug.node_memory_mb == 4000  # its nodes' RealMemory (s47 tester K2)
    assert debug.node_cpus == {"n1": 2, "n2": 2}  # the asked layout's fit (s48 tester Q5)
    assert partition_limits.limits_of("no-such-partition") is None
    assert len(partition_limits._CACHE) == 3
