"""Where a job may go: the (cluster, partition) pairs of a file, a cluster, a partition, this
allocation or this machine, narrowed by ``--partition`` names; the one partition a command uses."""

from __future__ import annotations

import pytest

from hpcds1mpi.cluster import Partition, load_cluster
from hpcds1mpi.errors import ClusterFileError
from hpcds1mpi.places import (allowed_places, cluster_places, default_queue_note, is_this_machine,
                              resolve_partition, select_places)
from tests.helpers import REPO

TWO = REPO / "tests/data/clusters/two_partitions.toml"


def test_an_unknown_partition_names_the_known_ones():
    with pytest.raises(ClusterFileError, match=r"no partition .big. \(it has: cpu, gpu\)"):
        resolve_partition(str(TWO), "big")


# -- where a job may go: one choice for recommend, advise, the API and the service -------------

def _labels(pairs):
    return [f"{c.name}/{p.name}" if c is not None else p.name for c, p in pairs]


def test_cluster_places_from_a_file_a_cluster_a_partition_or_this_machine(monkeypatch):
    cluster = load_cluster(TWO)
    assert _labels(cluster_places(str(TWO))) == [f"{cluster.name}/cpu", f"{cluster.name}/gpu"]
    assert _labels(cluster_places(TWO)) == _labels(cluster_places(cluster))
    assert cluster_places(cluster.partition("gpu")) == [(None, cluster.partition("gpu"))]
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    for default in (None, ""):
        (c, p), = cluster_places(default)
        assert (c.name, p.name) == ("local", "local")
    with pytest.raises(ClusterFileError, match="a TOML path, a Cluster or a Partition, got int"):
        cluster_places(3)


def test_select_places_by_name_or_cluster_name_in_order_once():
    pairs = cluster_places(TWO)
    name = pairs[0][0].name
    assert select_places(pairs, ()) == pairs and select_places(pairs, []) is not pairs
    assert _labels(select_places(pairs, ["gpu", f"{name}/cpu", "gpu"])) == \
        [f"{name}/gpu", f"{name}/cpu"]
    assert allowed_places(str(TWO), ("cpu",)) == select_places(pairs, ("cpu",))
    with pytest.raises(ClusterFileError,
                       match=rf"no partition 'big'; known: {name}/cpu, {name}/gpu"):
        allowed_places(str(TWO), ["big"])
    part = pairs[1][1]
    assert select_places([(None, part)], ["gpu"]) == [(None, part)]


SHARED_NAME = """
[clusters.x.partitions.p]
cores_per_node = 2
memory_gb = 4
max_nodes = 2
[clusters.y.partitions.p]
cores_per_node = 64
memory_gb = 256
max_nodes = 8
[clusters.y.partitions.h]
cores_per_node = 8
memory_gb = 16
max_nodes = 1
"""


def test_a_partition_name_two_clusters_share_is_ambiguous(tmp_path):
    """``--partition p`` with x/p and y/p known picked x/p without a word; now it is refused
    in one line naming both, and CLUSTER/NAME picks one (select_places and
    resolve_partition alike)."""
    path = tmp_path / "dup.toml"
    path.write_text(SHARED_NAME)
    ambiguous = r"^partition 'p' is ambiguous: x/p, y/p; name one as CLUSTER/PARTITION$"
    with pytest.raises(ClusterFileError, match=ambiguous):
        allowed_places(str(path), ["p"])
    with pytest.raises(ClusterFileError, match=ambiguous):
        resolve_partition(str(path), "p")
    assert _labels(allowed_places(str(path), ["y/p", "h"])) == ["y/p", "y/h"]
    assert resolve_partition(str(path), "y/p").cores_per_node == 64
    assert resolve_partition(str(path), "x/p").cores_per_node == 2
    assert resolve_partition(str(path), "h").cores_per_node == 8


def test_this_machine_is_the_place_without_a_file_outside_an_allocation(monkeypatch, tmp_path):
    """The one rule recommend, campaign emit and serve use to leave this machine's made-up
    partition name out of a script (s27 tester P, 4: two of them asked for 'local')."""
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    assert is_this_machine(None) and is_this_machine("")
    assert not is_this_machine(str(TWO))
    monkeypatch.setenv("SLURM_JOB_ID", "12")
    monkeypatch.setenv("PATH", str(tmp_path))  # no squeue to ask: the job id is believed
    assert not is_this_machine(None)  # this allocation's partition is a real one
    note = default_queue_note(Partition("local", 8, 15.5), "pbs", "the jobs name")
    assert note.startswith("the jobs name no -q: it was chosen for this machine (8 cores, "
                           "15.5 GB), whose name 'local' is no pbs partition")
    named = default_queue_note(Partition("local", 2, 25.3), "slurm", queue="debug")
    assert "so Slurm's default partition 'debug' takes the job" in named  # advise's (s48)


@pytest.mark.slurm
def test_leftover_slurm_variables_place_a_job_on_this_machine(slurm, monkeypatch):
    """Was (s32 tester T4): with a job's leftover SLURM_* (job 123, which did not exist),
    recommend wrote --partition=slurm --ntasks-per-node=64 and a sweep recorded 64 cores,
    200 GB and partition 'compute' on a 2-core VM."""
    from hpcds1mpi import slurm_allocation
    from hpcds1mpi.cluster import detect_local

    monkeypatch.setattr(slurm_allocation, "_FIRST_STATES", {})
    monkeypatch.setattr(slurm_allocation, "_SAID_LEFTOVER", set())
    monkeypatch.setenv("SLURM_CONF", slurm.conf)
    for name, value in {"SLURM_JOB_ID": "123", "SLURM_NNODES": "4", "SLURM_CPUS_ON_NODE": "64",
                        "SLURM_JOB_PARTITION": "compute", "SLURM_MEM_PER_NODE": "200000"}.items():
        monkeypatch.setenv(name, value)
    assert slurm.job_state(123) == "UNKNOWN"  # no such job on the test Slurm
    assert is_this_machine(None)
    here = detect_local().partition()
    for part in (resolve_partition(None, None), cluster_places(None)[0][1]):
        assert (part.name, part.cores_per_node, part.memory_gb, part.allocated_cores_per_node) \
            == ("local", here.cores_per_node, here.memory_gb, None)


# -- this machine inside another scheduler's job (s35 tester X4) ------------------------------

def _without_jobs() -> dict:
    import os

    from hpcds1mpi.foreign_jobs import all_variables
    from hpcds1mpi.places import FOREIGN_SAID_VARIABLE

    names = all_variables() | {FOREIGN_SAID_VARIABLE}
    return {k: v for k, v in os.environ.items()
            if not k.startswith(("SLURM_", "PMI_", "OMPI_", "PMIX_")) and k not in names}


def test_this_machine_inside_a_pbs_job_is_said_once_with_the_way_out(tmp_path):
    """Was (s35 tester X4): inside a PBS job of 2 hosts `hpcds1mpi cluster` said "local/local:
    1 nodes x 2 cores" with no word that the job's nodes were not read."""
    import subprocess

    from tests.helpers import hpcds1mpi_exe

    nodefile = tmp_path / "nodes"
    nodefile.write_text("node001\nnode001\nnode002\nnode002\n")
    env = {**_without_jobs(), "PBS_JOBID": "9.pbs", "PBS_ENVIRONMENT": "PBS_BATCH",
           "PBS_NODEFILE": str(nodefile)}
    proc = subprocess.run([hpcds1mpi_exe(), "cluster"], env=env, capture_output=True,
                          text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0 and proc.stdout.startswith("local/local: 1 nodes x "), proc
    assert proc.stderr.splitlines() == [
        "note: this runs inside a PBS job (PBS_JOBID=9.pbs), whose nodes are not read (only a "
        "Slurm allocation's are): this machine alone is modelled; to choose for the job's "
        "nodes, describe them in a cluster file and pass --cluster FILE"]
    proc = subprocess.run([hpcds1mpi_exe(), "cluster", "--cluster", str(TWO)], env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stderr == ""  # the job's nodes described: no note


def test_the_foreign_job_note_is_said_once_per_process(monkeypatch, capsys):
    from hpcds1mpi import places

    monkeypatch.setattr(places, "_SAID_FOREIGN", set())
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    monkeypatch.setenv(places.FOREIGN_SAID_VARIABLE, "")  # restored to unset after
    monkeypatch.delenv(places.FOREIGN_SAID_VARIABLE)
    monkeypatch.setenv("LSB_JOBID", "77")
    for _ in range(2):
        cluster_places(None)
        resolve_partition(None, None)
    assert capsys.readouterr().err.count("note: this runs inside an LSF job (LSB_JOBID=77)") == 1


def test_a_partition_this_machine_lacks_says_how_to_reach_one(monkeypatch):
    """s46 tester J8: `--partition debug` outside an allocation, no --cluster, said only
    "known: local/local"; a file's unknown name keeps its own line."""
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    with pytest.raises(ClusterFileError) as refused:
        allowed_places(None, ["debug"])
    assert str(refused.value) == (
        "no partition 'debug'; known: local/local (no --cluster and no Slurm allocation: only "
        "this machine is known); give --cluster FILE describing that partition, or run inside "
        "an allocation of it")
    with pytest.raises(ClusterFileError, match=r"^no partition 'big'; known: [^(]*$"):
        allowed_places(str(TWO), ["big"])
    assert _labels(allowed_places(None, ["local"])) == ["local/local"]
