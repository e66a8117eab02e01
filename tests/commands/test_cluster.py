"""The cluster command: each partition's valid configuration space, narrowed by a kernel."""

from __future__ import annotations

import json

from tests.helpers import REPO, run_cli

TWO = str(REPO / "tests/data/clusters/two_partitions.toml")


def _layouts(cores: int) -> int:
    """(ranks per node, threads) pairs that fit ``cores``."""
    return sum(cores // r for r in range(1, cores + 1))


def _doc(*args: str) -> dict:
    proc = run_cli(["cluster", "--cluster", TWO, "--json", *args])
    assert proc.returncode == 0, proc.stderr
    return {e["partition"]["name"]: e for e in json.loads(proc.stdout)}


def test_the_space_is_nodes_times_layouts_times_devices_and_precisions():
    doc = _doc()
    # cpu: 16 nodes -> 1,2,4,8,16; 32 cores; cpu only; fp64/fp32/bf16
    assert doc["cpu"]["configurations"] == 5 * _layouts(32) * 3
    # gpu: 4 nodes -> 1,2,4; GPU ranks need their own GPU (at most 4 per node)
    gpu_layouts = sum(32 // r for r in range(1, 5))
    assert doc["gpu"]["configurations"] == 3 * (_layouts(32) + gpu_layouts) * 3


def test_a_kernel_narrows_to_what_it_declares():
    doc = _doc("--kernel", "mltrain", "--list")   # cpu only, three precisions
    assert {c["device"] for c in doc["gpu"]["list"]} == {"cpu"}
    assert doc["gpu"]["configurations"] == 3 * _layouts(32) * 3
    allreduce = _doc("--kernel", "allreduce", "--list")  # no threads, fp64/fp32
    assert {c["threads"] for c in allreduce["cpu"]["list"]} == {1}
    assert allreduce["cpu"]["configurations"] == 5 * 32 * 2


def test_an_unknown_kernel_or_partition_is_one_line():
    proc = run_cli(["cluster", "--cluster", TWO, "--kernel", "nosuch"])
    assert proc.returncode == 2 and "nosuch" in proc.stderr and "Traceback" not in proc.stderr
    proc = run_cli(["cluster", "--cluster", TWO, "--partition", "nosuch"])
    assert proc.returncode == 2 and "nosuch" in proc.stderr


def test_a_partition_is_named_as_recommend_names_it():
    """``cluster`` prints demo/cpu and recommend takes --partition demo/cpu; cluster refused
    it ("no partition 'demo/cpu'") and listed no known names."""
    for name in ("cpu", "demo/cpu"):
        assert list(_doc("--partition", name)) == ["cpu"]
    proc = run_cli(["cluster", "--cluster", TWO, "--partition", "demo/nosuch"])
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().endswith("no partition 'demo/nosuch'; known: demo/cpu, demo/gpu")
    recommend = run_cli(["recommend", "--workload", "stencil", "--size", "128", "--cluster", TWO,
                         "--partition", "demo/nosuch"])
    assert recommend.returncode == 2 and recommend.stderr == proc.stderr  # one resolver


def test_an_empty_kernel_name_is_refused_not_ignored():
    proc = run_cli(["cluster", "--cluster", TWO, "--kernel", ""])
    assert proc.returncode == 2 and "unknown kernel ''; known kernels: " in proc.stderr


def test_fewer_cores_than_gpus_is_said_not_refused(tmp_path):
    """A partition with fewer cores than GPUs is valid (a task may hold several GPUs), but a
    GPU run here uses one GPU per rank and core: said in the table and the JSON."""
    site = tmp_path / "odd.toml"
    site.write_text('[cluster]\nname = "odd"\n[partitions.g]\ncores_per_node = 2\n'
                    'memory_gb = 64\ngpus_per_node = 4\ngpu_model = "a100"\n'
                    'gpu_memory_gb = 40\n')
    table = run_cli(["cluster", "--cluster", str(site)])
    assert table.returncode == 0, table.stderr
    assert "  note: 2 cores per node for 4 GPUs" in table.stdout
    doc = json.loads(run_cli(["cluster", "--cluster", str(site), "--json"]).stdout)
    assert doc[0]["notes"] and "at most 2 GPUs per node are used" in doc[0]["notes"][0]
    assert _doc()["cpu"]["notes"] == []
