"""Cluster files are validated on load; detection reads the machine and Slurm."""

from __future__ import annotations

import os
import shutil

import psutil
import pytest

from hpcds1mpi.cluster import detect_local, detect_slurm, load_cluster, load_clusters
from hpcds1mpi.errors import ClusterFileError
from hpcds1mpi.slurm_allocation import parse_scontrol_nodes
from tests.helpers import REPO

TWO = REPO / "tests/data/clusters/two_partitions.toml"
SCONTROL = REPO / "tests/data/slurm-captures/scontrol-show-node.txt"


def test_loads_multi_partition_file():
    cluster = load_cluster(TWO)
    assert set(cluster.partitions) == {"cpu", "gpu"}
    assert cluster.gres_syntax == "gres" and cluster.account == "proj42"
    gpu = cluster.partition("gpu")
    assert gpu.gpus_per_node == 4 and gpu.gpu_memory_gb == 16
    assert cluster.partition("cpu").power_figures()["power_figures_source"] == "cluster file"
    assert gpu.power_figures()["power_figures_source"] == "default per-core figures"


@pytest.mark.parametrize("text, fragment", [
    ("[partitions.cpu]\nmemory_gb = 4\n", "missing required key 'cores_per_node'"),
    ("[partitions.cpu]\ncores_per_node = 4\nmemory_gb = 4\nspeed = 3\n", "unknown key"),
    ("[partitions.cpu]\ncores_per_node = 0\nmemory_gb = 4\n", "must be > 0"),
    ("[partitions.cpu]\ncores_per_node = 4\nmemory_gb = 4\ngpus_per_node = 2\n", "gpu_memory_gb"),
    ("[cluster]\ngres_syntax = 'x'\n[partitions.cpu]\ncores_per_node = 4\nmemory_gb = 4\n",
     "gres_syntax"),
    ("title = 'x'\n", "no [clusters"),
    ("[clusters.a]\n", "no partitions"),
])
def test_bad_files_name_the_key_and_file(tmp_path, text, fragment):
    path = tmp_path / "c.toml"
    path.write_text(text)
    with pytest.raises(ClusterFileError) as info:
        load_clusters(path)
    assert fragment in str(info.value) and str(path) in str(info.value)


def test_a_missing_file_is_refused():
    with pytest.raises(ClusterFileError, match="not found"):
        load_clusters("/nonexistent/c.toml")


def test_detect_local_sees_this_machine():
    part = detect_local().partition()
    assert part.cores_per_node >= 1 and part.memory_gb > 0 and part.max_nodes == 1


def test_detect_slurm_from_env_and_scontrol_capture():
    text = SCONTROL.read_text()
    nodes = parse_scontrol_nodes(text)
    assert [n["NodeName"] for n in nodes] == ["n1", "n2"]
    env = {"SLURM_JOB_ID": "7", "SLURM_JOB_PARTITION": "debug", "SLURM_JOB_NUM_NODES": "2",
           "SLURM_CLUSTER_NAME": "tinyhpc"}
    cluster = detect_slurm(env=env, scontrol_text=text)
    part = cluster.partition()
    assert cluster.name == "tinyhpc" and part.name == "debug"
    assert part.cores_per_node == int(nodes[0]["CPUTot"]) and part.max_nodes == 2
    assert part.memory_gb == pytest.approx(float(nodes[0]["RealMemory"]) / 1000, abs=0.1)


def test_detect_slurm_under_salloc_takes_cores_from_the_job_cpus():
    # salloc's command runs on the submit host: no SLURMD_NODENAME, no SLURM_CPUS_ON_NODE
    env = {"SLURM_JOB_ID": "9", "SLURM_JOB_PARTITION": "debug", "SLURM_JOB_NUM_NODES": "2",
           "SLURM_JOB_CPUS_PER_NODE": "2(x2)"}
    part = detect_slurm(env=env, scontrol_text="").partition("debug")
    assert part.cores_per_node == 2 and part.max_nodes == 2


def test_detect_slurm_outside_allocation():
    with pytest.raises(ClusterFileError, match="not inside a Slurm allocation"):
        detect_slurm(env={})


@pytest.mark.slurm
def test_detect_slurm_refuses_the_leftovers_of_a_job_that_is_not_running(slurm, monkeypatch):
    """s32 tester T4: SLURM_JOB_ID=123 (no such job) had been read as a 4 x 64-core allocation."""
    from hpcds1mpi import slurm_allocation

    monkeypatch.setattr(slurm_allocation, "_FIRST_STATES", {})
    monkeypatch.setattr(slurm_allocation, "_SAID_LEFTOVER", set())
    env = {"SLURM_CONF": slurm.conf, "PATH": slurm.env["PATH"], "SLURM_JOB_ID": "123",
           "SLURM_NNODES": "4", "SLURM_CPUS_ON_NODE": "64"}
    with pytest.raises(ClusterFileError, match=r"not inside a Slurm allocation \(SLURM_JOB_ID=123 "
                                               r"is no running job, or one its SLURM_\* "
                                               r"contradict\); unset the leftover"):
        detect_slurm(env=env, scontrol_text="")


P = "[partitions.cpu]\ncores_per_node = 4\nmemory_gb = 4\n"


@pytest.mark.parametrize("text, fragment", [
    # issue #14: `memory_gb = nan` and negative watts were accepted
    ("[partitions.cpu]\ncores_per_node = 4\nmemory_gb = nan\n",
     "partitions.cpu.memory_gb must be a finite number"),
    ("[partitions.cpu]\ncores_per_node = 4\nmemory_gb = inf\n", "finite number"),
    (P + "max_watts_node = -5\n", "partitions.cpu.max_watts_node must be >= 0, got -5"),
    (P + "idle_watts_gpu = nan\n", "idle_watts_gpu must be a finite number"),
    (P + "idle_watts_node = 500\nmax_watts_node = 100\n", "idle_watts_node 500 is above"),
    ("[partitions.cpu]\ncores_per_node = 4.5\nmemory_gb = 4\n", "must be an integer, got 4.5"),
    ("[partitions.cpu]\ncores_per_node = true\nmemory_gb = 4\n", "must be an integer, got True"),
    ("[partitions.cpu]\ncores_per_node = 99999999999\nmemory_gb = 4\n", "must be <= 1000000"),
    ("[partitions.cpu]\ncores_per_node = 4\nmemory_gb = '4'\n", "memory_gb must be a number"),
    (P + "gpus_per_node = -1\n", "gpus_per_node must be >= 0"),
    (P + "max_nodes = 0\n", "max_nodes must be > 0"),
    (P + "speed = 3\n", "(known: cores_per_node, memory_gb, max_nodes"),
    ("[cluster]\nqos = 1\n" + P, "cluster.qos must be a string"),
    ("[clusters.a]\nmodules = ['x', 1]\n[clusters.a.partitions.p]\ncores_per_node = 4\n"
     "memory_gb = 4\n", "clusters.a.modules[1] must be a string"),
    ("[clusters.a]\nspeed = 1\n[clusters.a.partitions.p]\ncores_per_node = 4\nmemory_gb = 4\n",
     "unknown key clusters.a.speed (known: name, account"),
    ("[partitions]\ncpu = 3\n", "partitions.cpu must be a table"),
])
def test_bad_values_are_refused_with_the_key_path(tmp_path, text, fragment):
    path = tmp_path / "c.toml"
    path.write_text(text)
    with pytest.raises(ClusterFileError) as info:
        load_clusters(path)
    message = str(info.value)
    assert fragment in message and message.startswith(f"{path}: ") and "\n" not in message
    assert message.endswith("cluster file") or "add [" in message


def test_a_good_file_keeps_its_values_and_defaults(tmp_path):
    path = tmp_path / "site.toml"
    path.write_text("[cluster]\nname = 'x'\nmodules = ['m']\n" + P + "max_watts_node = 300\n")
    cluster = load_cluster(path)
    part = cluster.partition("cpu")
    assert cluster.name == "x" and cluster.modules == ["m"] and cluster.mpi == ""  # unset
    assert (part.cores_per_node, part.memory_gb, part.max_nodes, part.gpus_per_node) == (4, 4, 1, 0)
    assert part.max_watts_node == 300 and part.idle_watts_node is None
    path.write_text(P)
    assert set(load_clusters(path)) == {"site"}  # the file's stem names it


def test_detect_slurm_with_a_garbled_count_is_one_line():
    env = {"SLURM_JOB_ID": "7", "SLURM_JOB_NUM_NODES": "two"}
    with pytest.raises(ClusterFileError, match="not a number; give the partition with --cluster"):
        detect_slurm(env=env, scontrol_text="")
    for garbled in ("9" * 5000, "\u00b2"):  # Python's own words were shown (s29 V3-3)
        with pytest.raises(ClusterFileError) as caught:
            detect_slurm(env={**env, "SLURM_JOB_NUM_NODES": garbled}, scontrol_text="")
        assert "limit" not in str(caught.value) and "int()" not in str(caught.value)


def test_srun_plugin_from_the_cluster_file(tmp_path):
    from hpcds1mpi.cluster import srun_mpi

    path = tmp_path / "c.toml"
    path.write_text('[clusters.a]\nmpi = "pmix"\n[clusters.a.partitions.p]\ncores_per_node = 4\n'
                    'memory_gb = 8\nmax_nodes = 2\n')
    assert srun_mpi(str(path)) == "pmix"
    assert srun_mpi(None) == "pmi2"
    path.write_text('[clusters.a]\n[clusters.a.partitions.p]\ncores_per_node = 4\n'
                    'memory_gb = 8\nmax_nodes = 2\n')
    assert srun_mpi(str(path)) == "pmi2"


CLUSTER = ('[clusters.a]\n{site}\n[clusters.a.partitions.p]\ncores_per_node = 4\n'
           'memory_gb = 8\nmax_nodes = 2\n')


def test_launch_settings_from_the_cluster_file(tmp_path):
    from hpcds1mpi.cluster import launch_settings

    path = tmp_path / "c.toml"
    path.write_text(CLUSTER.format(site='mpi = "pmix"\nmpiexec = "/usr/bin/mpirun.openmpi"\n'
                                        'launcher_args = "--bind-to core"'))
    assert launch_settings(str(path)) == {"mpi": "pmix", "mpiexec": "/usr/bin/mpirun.openmpi",
                                          "launcher_args": "--bind-to core", "launcher": ""}
    assert launch_settings(None) == {"mpi": "pmi2", "mpiexec": "", "launcher_args": "",
                                     "launcher": ""}


@pytest.mark.parametrize("site, words", [
    ('launcher_args = "--bind-to \'core"', "launcher_args .* cannot be parsed"),
    ('mpi = "pmi3"', "not an srun --mpi plugin; use pmix, pmi2, none"),
    ('mpiexec = "bin/mpirun"', "give an absolute path or a name on PATH"),
])
def test_bad_launch_settings_are_refused_on_load(tmp_path, site, words):
    path = tmp_path / "c.toml"
    path.write_text(CLUSTER.format(site=site))
    with pytest.raises(ClusterFileError, match=words):
        load_clusters(str(path))


@pytest.mark.parametrize("env, cpus", [
    ({"SLURM_JOB_CPUS_PER_NODE": "1"}, 1),
    ({"SLURM_JOB_CPUS_PER_NODE": "2(x2)"}, 2),
    ({"SLURM_JOB_CPUS_PER_NODE": "2,1"}, 1),
    ({"SLURM_JOB_CPUS_PER_NODE": "4,2(x3)"}, 2),
    ({"SLURM_CPUS_ON_NODE": "3"}, 3),
    ({}, None),
])
def test_allocation_cpus_per_node_reads_every_form(env, cpus):
    from hpcds1mpi.slurm_allocation import allocation_cpus_per_node

    assert allocation_cpus_per_node(env) == cpus


def test_detect_slurm_keeps_the_node_s_hardware_and_adds_the_allocation_s_share():
    """Was (5dccf24): `salloc -c 1` on 2-CPU nodes described the partition as 1 core, so a
    model trained on the whole node no longer matched it (recommend escalated); before that
    it said 2 cores and recommend picked a step the allocation refuses."""
    text = "NodeName=n1 CPUTot=2 RealMemory=4000 Gres=(null)\n"
    base = {"SLURM_JOB_ID": "9", "SLURM_JOB_PARTITION": "debug", "SLURM_JOB_NUM_NODES": "1"}
    part = detect_slurm(env={**base, "SLURM_JOB_CPUS_PER_NODE": "1"},
                        scontrol_text=text).partition()
    assert (part.cores_per_node, part.memory_gb) == (2, 4.0)  # the hardware
    assert (part.usable_cores_per_node, part.usable_memory_gb) == (1, 4.0)  # no --mem: node's
    part = detect_slurm(env={**base, "SLURM_JOB_CPUS_PER_NODE": "2,1", "SLURM_MEM_PER_CPU": "500"},
                        scontrol_text=text).partition()
    assert (part.cores_per_node, part.memory_gb) == (2, 4.0)
    assert (part.allocated_cores_per_node, part.allocated_memory_gb) == (1, 0.5)
    part = detect_slurm(env={**base, "SLURM_JOB_CPUS_PER_NODE": "2", "SLURM_MEM_PER_NODE": "1000"},
                        scontrol_text=text).partition()
    assert (part.usable_cores_per_node, part.usable_memory_gb) == (2, 1.0)
    part = detect_slurm(env={**base, "SLURM_JOB_CPUS_PER_NODE": "8", "SLURM_MEM_PER_NODE": "9G"},
                        scontrol_text=text).partition()
    assert (part.usable_cores_per_node, part.usable_memory_gb) == (2, 4.0)  # never over the node
    part = detect_slurm(env={**base, "SLURM_JOB_CPUS_PER_NODE": "3"}, scontrol_text="").partition()
    assert (part.cores_per_node, part.usable_cores_per_node) == (3, 3)  # no scontrol: its CPUs
    with pytest.raises(ClusterFileError, match="not a number"):
        detect_slurm(env={**base, "SLURM_JOB_CPUS_PER_NODE": "two"}, scontrol_text=text)


@pytest.mark.parametrize("text", [
    '[clusters."a/b".partitions.p]\ncores_per_node = 2\nmemory_gb = 4\n',
    '[clusters.a.partitions."p/q"]\ncores_per_node = 2\nmemory_gb = 4\n',
    '[clusters."".partitions.p]\ncores_per_node = 2\nmemory_gb = 4\n',
    '[partitions." "]\ncores_per_node = 2\nmemory_gb = 4\n',
    '[cluster]\nname = "x/y"\n[partitions.p]\ncores_per_node = 2\nmemory_gb = 4\n',
])
def test_a_name_that_cluster_slash_partition_cannot_name_is_refused(tmp_path, text):
    """``--partition CLUSTER/NAME`` splits at '/': an empty name, or one holding '/', would make
    it ambiguous, so the file is refused in one line naming the table."""
    path = tmp_path / "c.toml"
    path.write_text(text)
    with pytest.raises(ClusterFileError, match="must be non-empty and without '/'") as info:
        load_clusters(str(path))
    assert "\n" not in str(info.value)


def test_fewer_cores_than_gpus_is_said_not_refused(tmp_path):
    """Was: a 2-core, 4-GPU partition taken without a word, though at most 2 of its GPUs can
    ever be used (one rank per GPU, a core per rank)."""
    path = tmp_path / "few.toml"
    path.write_text("[clusters.x.partitions.g]\ncores_per_node = 2\nmemory_gb = 512\n"
                    "gpus_per_node = 4\ngpu_memory_gb = 80\n")
    part = load_cluster(path).partition("g")
    assert part.hardware_notes() == [
        "2 cores per node for 4 GPUs: a GPU run takes one rank per GPU and a core per rank, so "
        "at most 2 GPUs per node are used; check cores_per_node"]
    assert load_cluster(TWO).partition("gpu").hardware_notes() == []


# s33 tester A2 / A7: real `scontrol show node` text of tester A's Slurm (tests/data/slurm_limits)
def test_a_mixed_partition_is_sized_by_its_smallest_node():
    from pathlib import Path

    from hpcds1mpi.cluster import node_cores_of
    from hpcds1mpi.slurm_allocation import parse_scontrol_nodes

    text = (Path(__file__).parent / "data" / "slurm_limits" /
            "nodes_m1_2cores_m2_1core.txt").read_text()
    cores, threads, notes = node_cores_of(parse_scontrol_nodes(text))
    assert (cores, threads) == (1, 1)
    assert len(notes) == 1 and "m1 2, m2 1" in notes[0] and "smallest, 1 cores" in notes[0]


def test_hardware_threads_are_not_counted_as_cores():
    from pathlib import Path

    from hpcds1mpi.cluster import node_cores_of
    from hpcds1mpi.slurm_allocation import parse_scontrol_nodes

    text = (Path(__file__).parent / "data" / "slurm_limits" / "nodes_m1_ht_m2.txt").read_text()
    cores, threads, notes = node_cores_of(parse_scontrol_nodes(text))  # m1: 1 core x 2 threads
    assert (cores, threads) == (1, 2)
    assert any("2 hardware threads per core" in n for n in notes)


@pytest.mark.skipif((psutil.cpu_count(logical=False) or 1) < 2 or len(os.sched_getaffinity(0)) < 2
                    or shutil.which("taskset") is None, reason="needs 2 cores and taskset")
def test_this_machine_under_a_cpu_mask_has_the_masks_cores():
    """s36 tester E3: under `taskset -c 0` cluster said 2 cores, and sweeps recorded
    cores_per_node=2 and called 2 ranks x 1 thread fitting; the mask's cores are what may
    run, said once."""
    import json
    import subprocess
    import sys

    cpu = min(os.sched_getaffinity(0))
    shown = subprocess.run(["taskset", "-c", str(cpu), sys.executable, "-m", "hpcds1mpi",
                            "cluster", "--json"], capture_output=True, text=True, timeout=60,
                           check=True).stdout
    entry = json.loads(shown)[0]
    assert entry["partition"]["cores_per_node"] == 1
    assert entry["configurations"] == 3  # 1 node x 1 rank x 1 thread, cpu, 3 precisions
    assert any("may run on 1 of the machine's" in note for note in entry["notes"])
    assert not any("CPU mask" in note for note in detect_local().partition().node_notes)


def test_a_script_written_in_an_allocation_says_the_layouts_were_held_to_it():
    """s46 tester J5: a 1 node x 1 CPU salloc sized the new job's layouts, unsaid."""
    from hpcds1mpi.cluster import Partition, allocation_limits_note

    share = Partition("debug", cores_per_node=2, memory_gb=4.0, max_nodes=1,
                      slurm_partition="debug", allocated_cores_per_node=1)
    assert allocation_limits_note(share, "77") == (
        "the layouts were limited by this shell's Slurm allocation (SLURM_JOB_ID=77): 1 node x "
        "1 of each node's 2 cores; the script's job gets its own from sbatch: for partition "
        "debug's full choice, give --cluster FILE describing it, or run recommend outside the "
        "allocation")
    assert allocation_limits_note(Partition("cpu", cores_per_node=2, memory_gb=4.0)) == ""
