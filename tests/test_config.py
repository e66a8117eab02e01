"""Configuration space: validation and enumeration against a partition."""

from __future__ import annotations

import numpy as np
import pytest

from hpcds1mpi.cluster import Partition
from hpcds1mpi.config import (Configuration, check_fits, check_supported, configuration_grid,
                              enumerate_configs)
from hpcds1mpi.errors import ConfigError, UnsupportedError
from tests.fake_bundle import fake_partitions

PARTS = fake_partitions()

CPU = Partition(name="cpu", cores_per_node=4, memory_gb=16, max_nodes=4)
GPU = Partition(name="gpu", cores_per_node=4, memory_gb=16, max_nodes=2, gpus_per_node=2,
                gpu_memory_gb=16)


@pytest.mark.parametrize("kwargs", [
    {"nodes": 0}, {"ranks_per_node": -1}, {"threads": 1.5}, {"device": "tpu"},
    {"precision": "fp16"}, {"nodes": True},
])
def test_bad_configuration_values_raise(kwargs):
    with pytest.raises(ConfigError):
        Configuration(**kwargs)


def test_numpy_integers_are_taken_and_stored_as_ints():
    """np.int64(2) was refused with "nodes must be a positive integer, got np.int64(2)"."""
    import json

    config = Configuration(np.int64(2), np.int32(2), np.uint8(1))
    assert config == Configuration(2, 2, 1) and hash(config) == hash(Configuration(2, 2, 1))
    assert all(type(v) is int for v in (config.nodes, config.ranks_per_node, config.threads))
    assert json.loads(json.dumps(config.as_dict()))["nodes"] == 2  # np.int64 is not JSON


@pytest.mark.parametrize("value, words", [
    (0, "nodes must be at least 1, got 0"),
    (np.int64(0), "nodes must be at least 1, got 0"),
    (2.0, "nodes must be an int or a numpy integer, not float (2.0); pass int(value)"),
    (2.5, "nodes must be an int or a numpy integer, not float (2.5)"),
    (True, "nodes must be an int or a numpy integer, not bool (True)"),
    ("2", "nodes must be an int or a numpy integer, not str ('2')"),
])
def test_a_wrong_count_says_what_is_wrong_without_contradicting_itself(value, words):
    with pytest.raises(ConfigError) as err:
        Configuration(value)
    assert str(err.value) == words


def test_check_fits_rejects_oversubscription_and_missing_gpus():
    check_fits(Configuration(2, 2, 2), CPU)
    with pytest.raises(ConfigError, match="cores per node"):
        check_fits(Configuration(1, 4, 2), CPU)
    with pytest.raises(ConfigError, match="no GPUs"):
        check_fits(Configuration(1, 1, 1, "gpu"), CPU)
    with pytest.raises(ConfigError, match="at most 4"):
        check_fits(Configuration(8, 1, 1), CPU)
    with pytest.raises(ConfigError, match="GPUs per node"):
        check_fits(Configuration(1, 4, 1, "gpu"), GPU)


def test_unsupported_precision_is_declared():
    with pytest.raises(UnsupportedError, match="bf16"):
        check_supported(Configuration(precision="bf16"), ("fp64", "fp32"), ("cpu",), "k")


def test_enumeration_is_exactly_the_valid_set():
    configs = list(enumerate_configs(CPU, precisions=["fp64"]))
    # nodes {1,2,4} x every (r, t) with r*t <= 4: (1,1..4),(2,1..2),(3,1),(4,1) = 8 pairs
    assert len(configs) == 3 * 8
    assert all(c.ranks_per_node * c.threads <= 4 for c in configs)
    assert len(set(configs)) == len(configs)


def test_enumeration_respects_threadless_kernels_and_gpus():
    configs = list(enumerate_configs(GPU, uses_threads=False, precisions=["fp32"]))
    assert {c.threads for c in configs} == {1}
    gpu = [c for c in configs if c.device == "gpu"]
    assert gpu and all(c.ranks_per_node <= 2 for c in gpu)
    assert not [c for c in enumerate_configs(CPU) if c.device == "gpu"]


def grid_set(grid):
    from hpcds1mpi.config import DEVICES, PRECISIONS

    return {(int(n), int(r), int(t), DEVICES[d], PRECISIONS[p]) for n, r, t, d, p in zip(
        grid["nodes"], grid["ranks_per_node"], grid["threads"], grid["device_code"],
        grid["precision_code"])}


@pytest.mark.parametrize("name", ["cpu", "gpu-small", "gpu-big"])
def test_grid_is_exactly_the_valid_configuration_space(name):
    part = PARTS[name]
    expected = {(c.nodes, c.ranks_per_node, c.threads, c.device, c.precision)
                for c in enumerate_configs(part)}
    grid = configuration_grid(part)
    assert len(grid["nodes"]) == len(expected)
    assert grid_set(grid) == expected
    limited = configuration_grid(part, max_nodes=1, devices=["cpu"], precisions=["fp32"])
    assert grid_set(limited) == {(c.nodes, c.ranks_per_node, c.threads, c.device, c.precision)
                                 for c in enumerate_configs(part, nodes=[1], devices=["cpu"],
                                                            precisions=["fp32"])}


def test_grid_rejects_gpu_on_cpu_partition():
    with pytest.raises(ConfigError, match="no GPUs"):
        configuration_grid(PARTS["cpu"], devices=["gpu"])



def test_without_a_partition_the_product_is_kept_and_accept_filters():
    configs = list(enumerate_configs(None, nodes=[2, 1], ranks_per_node=[4], threads=[1, 2],
                                     devices=["gpu", "cpu"], precisions=["fp32"],
                                     accept=lambda c: c.threads == 1 or c.device == "cpu"))
    # 4 ranks x 2 threads on a GPU would not fit any real node; without a partition nothing
    # is checked against hardware, only accept() filters.
    assert [c.label() for c in configs] == [
        "N1xR4xT1-gpu-fp32", "N1xR4xT1-cpu-fp32", "N1xR4xT2-cpu-fp32",
        "N2xR4xT1-gpu-fp32", "N2xR4xT1-cpu-fp32", "N2xR4xT2-cpu-fp32"]
    with pytest.raises(ConfigError, match="must be given"):
        list(enumerate_configs(None, nodes=[1]))


def test_a_space_too_big_to_hold_is_one_line_not_a_hang():
    """cores_per_node = 10^6 is within the schema's counts: `cluster`, `sweep --list` and
    `mobo --space full` enumerated cores x cores layouts for ever (10^12 at 10^6 cores)."""
    import time

    from hpcds1mpi.cluster import Partition
    from hpcds1mpi.config import MAX_CONFIGURATIONS, configuration_grid, enumerate_configs

    huge = Partition(name="big", cores_per_node=10**6, memory_gb=256.0, max_nodes=10**6)
    began = time.perf_counter()
    with pytest.raises(ConfigError, match="span .* configurations, over 1,000,000"):
        configuration_grid(huge)
    with pytest.raises(ConfigError, match="span .* configurations"):
        next(enumerate_configs(huge))
    with pytest.raises(ConfigError, match="the ranges span 2,000,000,000,000"):
        next(enumerate_configs(None, nodes=[1, 2], ranks_per_node=range(1, 10**6 + 1),
                               threads=range(1, 10**6 + 1), precisions=["fp64"], devices=["cpu"]))
    assert time.perf_counter() - began < 10
    # 4,096 cores (a mesh of 16.8M cells before): the grid and the enumerator agree, quickly
    wide = Partition(name="w", cores_per_node=4096, memory_gb=256.0, max_nodes=1)
    grid = configuration_grid(wide, precisions=["fp64"])
    assert len(grid["nodes"]) <= MAX_CONFIGURATIONS
    listed = [(c.ranks_per_node, c.threads) for c in enumerate_configs(wide, precisions=["fp64"])]
    assert sorted(listed) == sorted(zip(grid["ranks_per_node"].tolist(), grid["threads"].tolist()))
    assert all(r * t <= 4096 for r, t in listed) and (4096, 1) in listed and (1, 4096) in listed
