"""The guard's one-line reasons (:mod:`hpcds1mpi.decide.guard_reasons`): a partition unlike
the trained ones names what differs, and where only its memory does, that a sweep inside a
Slurm allocation records the node's RealMemory (s31 verifier V3)."""

from __future__ import annotations

import json

import pytest

from hpcds1mpi.cluster import Partition
from hpcds1mpi.decide.guard_reasons import hardware_reason
from tests.fake_bundle import FakeBundle
from tests.helpers import run_cli

#: s31 verifier V3's bundle: calibrated inside a Slurm allocation of 2-core nodes whose
#: RealMemory is 4000 MB, so train recorded 4 GB.
SLURM_TRAINED = {"debug": {"cores_per_node": 2, "memory_gb": 4.0, "gpus_per_node": 0,
                           "gpu_memory_gb": 0.0, "max_nodes": 2}}
SAID = ("only the memory differs: if the model's runs were measured inside a Slurm allocation, "
        "4 GB is what Slurm gave them (the node's RealMemory) and the cluster file's "
        "memory_gb = 25.3 disagrees with it: give partition debug memory_gb = 4 in the "
        "cluster file (--cluster FILE), as Slurm says, rather than measure again")


def test_a_memory_that_alone_differs_names_slurms_reading_not_only_a_new_calibration():
    """s31 verifier V3: a cluster file of 25.3 GB against runs measured where Slurm said 4 GB
    was told to "measure stencil at size 4 here", which had just been done."""
    bundle = FakeBundle(partitions=SLURM_TRAINED)
    line = hardware_reason(bundle, Partition("debug", cores_per_node=2, memory_gb=25.3))
    assert "memory 25.3 GB per node, trained on 4 GB" in line and SAID in line, line
    assert "\n" not in line


def test_other_differences_or_a_partition_read_from_slurm_say_no_such_thing():
    bundle = FakeBundle(partitions=SLURM_TRAINED)
    more_cores = Partition("debug", cores_per_node=4, memory_gb=25.3)
    assert "RealMemory" not in hardware_reason(bundle, more_cores)
    allocated = Partition("debug", cores_per_node=2, memory_gb=25.3, allocated_cores_per_node=2)
    assert "RealMemory" not in hardware_reason(bundle, allocated)
    local = hardware_reason(bundle, Partition("local", cores_per_node=2, memory_gb=25.3))
    assert "this machine's memory as its OS reports it disagrees" in local, local


def test_recommend_with_a_cluster_file_unlike_the_shipped_bundles_memory_says_so(tmp_path):
    """Through the CLI: the shipped bundle's 2-core partition of 25.3 GB, asked as 4 GB."""
    cluster = tmp_path / "t.toml"
    cluster.write_text("[clusters.t]\n[clusters.t.partitions.debug]\ncores_per_node = 2\n"
                       "memory_gb = 4\nmax_nodes = 2\n")
    proc = run_cli(["recommend", "--cluster", str(cluster), "--workload", "stencil", "--size",
                    "128", "--json"], timeout=120,
                   env={"HPCDS1MPI_CACHE": str(tmp_path / "cache"),
                        "HPCDS1MPI_HISTORY": str(tmp_path / "none.json")})
    assert proc.returncode == 0, proc.stderr
    reasons = json.loads(proc.stdout)["verdict"]["reasons"]
    line = next(r for r in reasons if "unlike any machine" in r)
    assert "only the memory differs" in line and "the cluster file's memory_gb = 4 " \
        "disagrees" in line and "rather than measure again" in line, line


def test_a_size_reason_says_which_side_of_the_measured_sizes_whether_confirm_or_escalate():
    """s31 reviewer: the confirm-level reason said only "outside the measured range"."""
    from hpcds1mpi.decide.guard import GuardCalibration, judge, reference

    bundle = FakeBundle()  # sizes 256-2048
    calibration = GuardCalibration(auto_threshold=1e9, escalate_threshold=2e9, k=3)
    cpu = Partition("cpu", cores_per_node=16, memory_gb=64)
    for size, level, said in [(200, "confirm", "size 200 is 1.3x below the measured range "
                               "256–2048 (extrapolation)"),
                              (3000, "confirm", "size 3000 is 1.5x beyond the measured range "
                               "256–2048 (extrapolation)"),
                              (100, "escalate", "size 100 is 2.6x below the measured range "
                               "256–2048"),
                              (5000, "escalate", "size 5000 is 2.4x beyond the measured range "
                               "256–2048")]:
        got = judge(bundle, "gemm", size, cpu, calibration, reference(bundle))
        assert got.checks["size_range"] == level and said in got.reasons, (size, got.reasons)


@pytest.mark.parametrize("size, said", [
    (2100, "size 2100 is 2.5 % beyond the measured range 256–2048 (extrapolation)"),
    (250, "size 250 is 2.3 % below the measured range 256–2048 (extrapolation)"),
    (2200, "size 2200 is 7.4 % beyond"), (2253, "size 2253 is 1.1x beyond"),
])
def test_a_size_just_outside_the_measured_range_is_not_said_to_be_1x_beyond(size, said):
    """Size 200 against a largest measured 192 read "1.0x beyond the measured range", as if
    not beyond at all (s40 tester D3): under 10 % out it is a percentage."""
    from hpcds1mpi.decide.guard import GuardCalibration, judge, reference

    bundle = FakeBundle()  # sizes 256-2048
    calibration = GuardCalibration(auto_threshold=1e9, escalate_threshold=2e9, k=3)
    cpu = Partition("cpu", cores_per_node=16, memory_gb=64)
    got = judge(bundle, "gemm", size, cpu, calibration, reference(bundle))
    assert any(r.startswith(said) for r in got.reasons), got.reasons


@pytest.mark.parametrize("size, level, said", [
    (4014, "confirm", "size 4014 is 1.96x beyond the measured range 256–2048 (extrapolation)"),
    (4178, "escalate", "size 4178 is 2.04x beyond the measured range 256–2048"),
    (4096, "confirm", "size 4096 is 2.0x beyond the measured range 256–2048 (extrapolation)"),
    (4097, "escalate", "size 4097 is just over 2x beyond the measured range 256–2048"),
    (131, "confirm", "size 131 is 1.95x below the measured range 256–2048 (extrapolation)"),
    (4300, "escalate", "size 4300 is 2.1x beyond"),
])
def test_a_size_near_twice_the_measured_range_says_which_side_of_2x_it_is(size, level, said):
    """1.96x (confirm) and 2.04x (escalate) beyond both read "2.0x beyond": where one decimal
    rounds onto the guard's 2x edge, the ratio gets two, or "just over 2x"."""
    from hpcds1mpi.decide.guard import GuardCalibration, judge, reference

    bundle = FakeBundle()  # sizes 256-2048
    calibration = GuardCalibration(auto_threshold=1e9, escalate_threshold=2e9, k=3)
    cpu = Partition("cpu", cores_per_node=16, memory_gb=64)
    got = judge(bundle, "gemm", size, cpu, calibration, reference(bundle))
    assert got.checks["size_range"] == level
    assert any(r.startswith(said) for r in got.reasons), got.reasons
