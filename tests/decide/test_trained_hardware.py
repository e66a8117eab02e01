"""The bundle's partition table: hardware columns filled from it, partitions matched to it, a
table's partitions named as the trained ones they correspond to."""

from __future__ import annotations

import math

import pandas as pd

from hpcds1mpi.cluster import Partition
from hpcds1mpi.decide.trained_hardware import (as_trained, hardware_columns,
                                                matching_partition, trained_names)
from tests.fake_bundle import PARTITIONS, FakeBundle


def test_hardware_columns_fill_what_is_missing_and_keep_what_is_there():
    frame = pd.DataFrame({"partition": ["cpu", "gpu-big", "elsewhere"],
                          "memory_gb": [1.0, float("nan"), float("nan")]})
    out = hardware_columns(frame, PARTITIONS)
    assert out["cores_per_node"].tolist()[:2] == [16, 8] and math.isnan(out["cores_per_node"][2])
    assert out["memory_gb"].tolist()[:2] == [1.0, 64.0]
    assert out["gpus_per_node"].tolist()[:2] == [0, 2]
    assert "cores_per_node" not in frame.columns  # the caller's frame is left alone


def test_hardware_columns_of_plain_arrays_are_the_frames():
    """Columns (the recommend path, no pandas) get the same values and kinds."""
    import numpy as np

    from hpcds1mpi.surrogates.columns import Columns, as_columns

    frame = pd.DataFrame({"partition": ["cpu", "gpu-big", "elsewhere", "cpu"],
                          "memory_gb": [1.0, float("nan"), float("nan"), float("nan")]})
    want = hardware_columns(frame, PARTITIONS)
    got = hardware_columns(as_columns(frame), PARTITIONS)
    assert isinstance(got, Columns)
    for col in want.columns:
        assert np.array_equal(np.asarray(got[col]), want[col].to_numpy(),
                              equal_nan=want[col].dtype.kind == "f"), col
        if col != "partition":  # text stays <U in Columns
            assert np.asarray(got[col]).dtype.kind == want[col].dtype.kind, col


def test_matching_partition_by_name_then_by_hardware():
    bundle = FakeBundle()
    assert matching_partition(bundle, Partition("laptop", cores_per_node=6, memory_gb=16)) is None
    # Same hardware under another name (memory within 25 %) is recognised.
    assert matching_partition(bundle, Partition("batch", cores_per_node=16, memory_gb=60)) == "cpu"
    assert matching_partition(bundle, Partition("batch", cores_per_node=16, memory_gb=90)) is None
    # A known name with other hardware is not that partition.
    assert matching_partition(bundle, Partition("cpu", cores_per_node=8, memory_gb=64,
                                                gpus_per_node=2)) == "gpu-big"


def test_a_gpu_the_bundle_records_must_be_the_same_gpu():
    """Was: a K80 12 GB partition matched an H200 143 GB one (same cores, memory and GPU
    count), so the H200's runtimes were used for it as for the same hardware."""
    h200 = {"cores_per_node": 16, "memory_gb": 135.1, "gpus_per_node": 1,
            "gpu_memory_gb": 143.0, "gpu_model": "NVIDIA H200"}
    bundle = FakeBundle(partitions={"local": {**h200, "max_nodes": 1}})

    def part(**gpu):
        return Partition("k80", cores_per_node=16, memory_gb=135, gpus_per_node=1, **gpu)

    assert matching_partition(bundle, part(gpu_memory_gb=12, gpu_model="tesla-k80")) is None
    assert matching_partition(bundle, part(gpu_memory_gb=12)) is None  # memory alone differs
    assert matching_partition(bundle, part(gpu_memory_gb=141, gpu_model="a100")) is None
    assert matching_partition(bundle, part(gpu_memory_gb=141, gpu_model="h200")) == "local"
    assert matching_partition(bundle, part(gpu_memory_gb=141)) == "local"  # model not given
    # "a10" is not "a100": whole words of the name are compared, maker words left out.
    a100 = FakeBundle(partitions={"g": {**h200, "gpu_model": "NVIDIA A100-SXM4-80GB",
                                        "gpu_memory_gb": 80.0, "max_nodes": 1}})
    assert matching_partition(a100, part(gpu_memory_gb=80, gpu_model="A100")) == "g"
    assert matching_partition(a100, part(gpu_memory_gb=80, gpu_model="a10")) is None


def test_a_gpu_the_bundle_does_not_record_is_matched_and_said_not_compared():
    """Bundles record cores, memory and GPUs per node: a GPU partition with those is still
    matched (CPU-only matching is unchanged), and one line says its GPU was not compared."""
    from hpcds1mpi.decide.trained_hardware import gpu_not_compared

    bundle = FakeBundle(partitions={"local": {"cores_per_node": 16, "memory_gb": 135.1,
                                              "gpus_per_node": 1, "max_nodes": 1}})
    k80 = Partition("k80", cores_per_node=16, memory_gb=135, gpus_per_node=1,
                    gpu_memory_gb=12, gpu_model="tesla-k80")
    assert matching_partition(bundle, k80) == "local"
    assert gpu_not_compared(bundle, k80) == (
        "GPU tesla-k80 12 GB of partition k80 not compared with the one measured on local: "
        "the model does not record that GPU's model or memory")
    cpu = Partition("cpu", cores_per_node=16, memory_gb=135)
    assert gpu_not_compared(bundle, cpu) == "" and matching_partition(bundle, cpu) is None
    assert gpu_not_compared(FakeBundle(), Partition("x", cores_per_node=8, memory_gb=64,
                                                    gpus_per_node=2, gpu_memory_gb=32)) == ""
    recorded = FakeBundle(partitions={"local": {"cores_per_node": 16, "memory_gb": 135.1,
                                                "gpus_per_node": 1, "gpu_memory_gb": 143.0,
                                                "gpu_model": "NVIDIA H200", "max_nodes": 1}})
    assert gpu_not_compared(recorded, Partition("h", cores_per_node=16, memory_gb=135,
                                                gpus_per_node=1, gpu_memory_gb=141,
                                                gpu_model="h200")) == ""


def _sites():
    """Two site names for gpu-small's hardware, trained cpu under its own name, and hardware
    the bundle never saw."""
    return [Partition("card-a", cores_per_node=8, memory_gb=32.0, gpus_per_node=1,
                      gpu_memory_gb=6.0, max_nodes=1),
            Partition("cpu", cores_per_node=16, memory_gb=64.0, max_nodes=2),
            Partition("card-b", cores_per_node=8, memory_gb=28.0, gpus_per_node=1,
                      gpu_memory_gb=6.0, max_nodes=1),
            Partition("odd", cores_per_node=12, memory_gb=48.0, max_nodes=2)]


def test_trained_names_lists_only_partitions_known_under_another_name():
    assert trained_names(FakeBundle(), _sites()) == {"card-a": "gpu-small", "card-b": "gpu-small"}
    assert trained_names(FakeBundle(), _sites()[1:2]) == {}
    # A trained name on other hardware is asked about as the partition with that hardware.
    moved = Partition("cpu", cores_per_node=8, memory_gb=64, gpus_per_node=2)
    assert trained_names(FakeBundle(), [moved]) == {"cpu": "gpu-big"}


def test_as_trained_renames_a_grid_of_either_kind_and_leaves_it_alone():
    import numpy as np

    from hpcds1mpi.decide.system1_candidates import candidate_columns, candidate_frame
    from hpcds1mpi.surrogates.columns import Columns, as_columns

    parts = _sites()
    renamed = trained_names(FakeBundle(), parts)
    grid = candidate_columns("gemm", 512, parts)
    user = np.asarray(grid["partition"]).copy()
    want = np.where(np.isin(user, ["card-a", "card-b"]), "gpu-small", user)
    got = as_trained(grid, renamed)
    assert isinstance(got, Columns) and np.array_equal(got["partition"], want)
    codes, names = got.coded("partition")  # codes kept: two codes may name one partition
    assert np.array_equal(np.asarray(names)[codes], want)
    assert all(got[c] is grid[c] for c in grid.columns if c != "partition")  # not copied
    assert np.array_equal(grid["partition"], user)  # the grid keeps the user's names
    plain = as_trained(as_columns(grid.to_frame()), renamed)  # Columns without codes
    assert np.array_equal(plain["partition"], want)
    frame = candidate_frame("gemm", 512, parts)  # categorical: categories merged
    cat = as_trained(frame, renamed)["partition"]
    assert list(cat.cat.categories) == ["gpu-small", "cpu", "odd"]
    assert np.array_equal(cat.astype(str).to_numpy(), want)
    assert np.array_equal(frame["partition"].astype(str).to_numpy(), user)
    text = as_trained(frame.astype({"partition": str}), renamed)["partition"]
    assert np.array_equal(text.to_numpy().astype(str), want)
    assert as_trained(grid, {}) is grid and as_trained(frame, {}) is frame


def _cpu_partitions(cpu_model: str) -> dict:
    return {**PARTITIONS, "cpu": {**PARTITIONS["cpu"], "cpu_model": cpu_model}}


def test_a_cpu_named_with_its_marks_and_core_count_is_the_cpu_measured():
    """s31 reviewer: a cluster file's "AMD EPYC 7763" against /proc/cpuinfo's "AMD EPYC 7763
    64-Core Processor" (either side the trained one) was another CPU, so confirm."""
    from hpcds1mpi.decide.trained_hardware import cpu_differs

    pairs = [("AMD EPYC 7763", "AMD EPYC 7763 64-Core Processor"),
             ("Intel(R) Xeon(R) Gold 6248 CPU @ 2.50GHz", "intel xeon gold 6248"),
             ("Intel(R) Core(TM) i7-8700K CPU @ 3.70GHz", "Intel Core i7-8700K")]
    for trained, given in pairs + [(b, a) for a, b in pairs]:
        here = Partition("cpu", cores_per_node=16, memory_gb=64, cpu_model=given)
        assert cpu_differs(FakeBundle(partitions=_cpu_partitions(trained)), here) == "", \
            (trained, given)


def test_a_short_cpu_name_matches_any_longer_one_and_another_model_differs():
    """The shipped bundle records "AMD EPYC" (its machines table's name) and no signature:
    which generation it was is unknown, so no EPYC is taken for it (s38 tester K2); a bundle
    that records the signature of its "AMD EPYC" matches every EPYC that names a model or has
    no signature to compare; another model number or maker is another CPU."""
    from hpcds1mpi.decide.model_bundle import load_model
    from hpcds1mpi.decide.trained_hardware import cpu_differs, trained_partitions

    bundle = load_model(None)
    hw = trained_partitions(bundle)["local"]
    assert hw["cpu_model"] == "AMD EPYC" and not hw.get("cpu_signature")

    def local(cpu):
        return Partition("local", cores_per_node=int(hw["cores_per_node"]),
                         memory_gb=float(hw["memory_gb"]), cpu_model=cpu)

    for cpu in ("AMD EPYC 7763 64-Core Processor", "AMD EPYC"):
        assert "the model's partition local was recorded on CPU 'AMD EPYC', a name that does " \
            "not say which CPU generation" in cpu_differs(bundle, local(cpu)), cpu
    signed = FakeBundle(partitions={"cpu": {**PARTITIONS["cpu"], "cpu_model": "AMD EPYC",
                                            "cpu_signature": "AuthenticAMD family 25"}})
    for cpu in ("AMD EPYC 7763 64-Core Processor", "AMD EPYC"):
        assert cpu_differs(signed, Partition("cpu", cores_per_node=16, memory_gb=64,
                                             cpu_model=cpu)) == "", cpu
    assert "CPU Intel(R) Xeon(R) Gold 6248 CPU @ 2.50GHz but the model was measured on CPU " \
        "AMD EPYC" in cpu_differs(bundle, local("Intel(R) Xeon(R) Gold 6248 CPU @ 2.50GHz"))
    assert "AMD EPYCA" in cpu_differs(bundle, local("AMD EPYCA 1"))  # a word, not letters
    other = FakeBundle(partitions=_cpu_partitions("AMD EPYC 7763 64-Core Processor"))
    for cpu in ("AMD EPYC 7713 64-Core Processor", "AMD EPYC 776"):
        assert "was measured on CPU AMD EPYC 7763" in cpu_differs(
            other, Partition("cpu", cores_per_node=16, memory_gb=64, cpu_model=cpu)), cpu


def test_runs_of_a_cpu_generation_not_known_to_be_this_one_are_not_measurements_here():
    """s38 tester K2: the shipped bundle's gemm 1536 bf16 (22.1 ms) was "measured" on a VM of
    the same name, "AMD EPYC", and another generation (9 ms measured there). A trained
    partition of a generic name without its signature, or with another signature than this
    machine's, is the same hardware (asked under its name) but its runs are not measured
    here; the same signature, or a specific name, is."""
    from hpcds1mpi.decide.trained_hardware import (cpu_differs, matching_partition,
                                                   measured_partition)

    zen5 = "AuthenticAMD family 26 model 2 stepping 1; avx512f avx512_bf16"
    here = Partition("cpu", cores_per_node=16, memory_gb=64, cpu_model="AMD EPYC",
                     cpu_signature=zen5)

    def trained(**cpu) -> FakeBundle:
        return FakeBundle(partitions={"cpu": {**PARTITIONS["cpu"], **cpu}})

    untold = trained(cpu_model="AMD EPYC")
    assert matching_partition(untold, here) == "cpu" and measured_partition(untold, here) is None
    assert "taken as other hardware" in cpu_differs(untold, here)
    zen = trained(cpu_model="AMD EPYC", cpu_signature="AuthenticAMD family 23 model 1")
    assert measured_partition(zen, here) is None
    assert cpu_differs(zen, here).startswith(
        f"partition cpu's CPU 'AMD EPYC' is {zen5}, but the model's partition cpu was measured "
        "on AuthenticAMD family 23 model 1 under that name: another CPU generation")
    same = trained(cpu_model="AMD EPYC", cpu_signature=zen5)
    assert measured_partition(same, here) == "cpu" and cpu_differs(same, here) == ""
    named = trained(cpu_model="AMD EPYC 9575F 64-Core Processor")
    assert measured_partition(named, Partition("cpu", 16, 64, cpu_model="AMD EPYC 9575F")) \
        == "cpu"
    assert measured_partition(untold, Partition("cpu", 16, 64)) == "cpu"  # no CPU named here
