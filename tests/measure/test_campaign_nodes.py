"""A campaign's node counts against Slurm's partition (s39 tester H4): a cluster file saying
4 nodes of a partition Slurm gives 2 had let a 3-node part through emit, to pend for ever,
and status had advised fixing its script, which cannot help (its plan sweeps on 3 nodes)."""

from __future__ import annotations

import textwrap

import pytest

from hpcds1mpi.errors import ConfigError
from hpcds1mpi.launch import partition_limits
from hpcds1mpi.launch.partition_limits import PartitionLimits
from hpcds1mpi.measure import campaign as cm
from hpcds1mpi.measure.campaign_scripts import emit
from hpcds1mpi.measure.campaign_status import PartStatus, never_start_lines

PLAN = textwrap.dedent("""\
    [sweep]
    min_time = 0.1
    [[kernel]]
    name = "gemm"
    sizes = [32]
    nodes = [1, 3]
    ranks_per_node = [1]
""")
CLUSTER = textwrap.dedent("""\
    [clusters.lab.partitions.debug]
    cores_per_node = 2
    memory_gb = 4
    max_nodes = 4
""")


@pytest.fixture
def slurm_says(monkeypatch):
    """Slurm's partition 'debug' of two nodes, MaxNodes unlimited (the test Slurm's)."""
    def limits_of(partition):
        return PartitionLimits(name="debug", node_states={"n1": "IDLE", "n2": "IDLE"}) \
            if partition in ("debug", None) else None

    monkeypatch.setattr(partition_limits, "limits_of", limits_of)


def _emit(root, scheduler="slurm"):
    (root / "plan.toml").write_text(PLAN)
    (root / "cluster.toml").write_text(CLUSTER)
    return emit(str(root / "plan.toml"), scheduler, str(root / "camp"),
                cluster_file=str(root / "cluster.toml"), partition_name="debug")


def test_emit_refuses_more_nodes_than_the_slurm_partition_has(tmp_path, slurm_says):
    with pytest.raises(ConfigError) as refused:
        _emit(tmp_path)
    line = str(refused.value)
    assert "the plan asks for 3 nodes but Slurm's partition 'debug' gives a job at most 2 " \
        "(its 2 node(s): scontrol show partition debug)" in line
    assert "cluster file's max_nodes = 4 is more than Slurm gives" in line
    assert not (tmp_path / "camp").exists()


def test_a_smaller_max_nodes_is_the_limit(tmp_path, monkeypatch):
    monkeypatch.setattr(partition_limits, "limits_of", lambda p: PartitionLimits(
        name="debug", max_nodes=1, node_states={"n1": "IDLE", "n2": "IDLE"}))
    with pytest.raises(ConfigError, match=r"at most 1 \(its 2 node\(s\), MaxNodes=1"):
        _emit(tmp_path)


def test_where_slurm_does_not_answer_the_cluster_file_stands(tmp_path, monkeypatch):
    monkeypatch.setattr(partition_limits, "limits_of", lambda p: None)
    assert _emit(tmp_path)["jobs"].keys() == {"1", "3"}


def test_status_advises_taking_the_node_count_out_of_the_plan(tmp_path, monkeypatch,
                                                               slurm_says):
    with monkeypatch.context() as m:  # emitted where Slurm did not answer
        m.setattr(partition_limits, "limits_of", lambda p: None)
        _emit(tmp_path)
    camp = tmp_path / "camp"
    manifest = cm.read_manifest(camp)
    held = PartStatus("n3-0", 3, 0, "queued", 1, job="77_0", reason="PartitionConfig")
    lines = never_start_lines(camp, manifest, [held])
    assert len(lines) == 1 and lines[0].startswith(
        "1 part(s) of n3.sbatch ask for 3 nodes, but the partition gives a job at most 2")
    assert "no edit of the script helps: scancel 77_0, take 3 out of the plan's nodes" \
        in lines[0] and "fix n3.sbatch" not in lines[0]
    held = PartStatus("n1-0", 1, 0, "queued", 1, job="76_0", reason="PartitionTimeLimit")
    assert "fix n1.sbatch" in never_start_lines(camp, manifest, [held])[0]  # as before
