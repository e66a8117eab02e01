"""Every registered kernel gives the fp64 serial reference's answer under real MPI.

One ``mpiexec -n K python tests/mpi_kernel_check.py`` launch per rank count K (1, 2, 3, 4: the odd
count catches uneven-split bugs) runs every kernel at every precision; the tests below read its
JSON lines. The same launch also injects a corrupted result (``--modes normal,corrupt`` at
K = 1 and 3), which the check must reject as ``wrong``. GPU code paths run on the fake device
(``HPCDS1MPI_FAKE_GPU=1``), staged through host memory and, at 2 ranks, also handed to MPI
directly (``HPCDS1MPI_GPU_AWARE=1``).
"""

from __future__ import annotations

import functools

import pytest

from hpcds1mpi import kernels
from tests.helpers import kernel_check

pytestmark = pytest.mark.mpi

RANK_COUNTS = (1, 2, 3, 4)
CORRUPT_RANK_COUNTS = (1, 3)
PRECISIONS = ("fp64", "fp32", "bf16")
#: 4 ranks on 2 cores: MPICH's busy polling would spend a time slice per collective; throttled
#: polling (usleep after a few idle polls) keeps the oversubscribed launches fast.
OVERSUBSCRIBED_ENV = {"MPIR_CVAR_CH4_PROGRESS_THROTTLE": "1",
                      "MPIR_CVAR_CH4_PROGRESS_THROTTLE_NO_PROGRESS_COUNT": "16"}

NAMES = kernels.names()
DECLARED = [(name, p) for name in NAMES for p in kernels.get(name).precisions]
UNDECLARED = [(name, p) for name in NAMES for p in PRECISIONS
              if p not in kernels.get(name).precisions]


@functools.lru_cache(maxsize=None)
def launch(ranks: int, device: str = "cpu", gpu_aware: bool = False) -> dict:
    """Results of one launch, keyed by (kernel, precision, mode)."""
    modes = "normal,corrupt" if (device == "cpu" and ranks in CORRUPT_RANK_COUNTS) else "normal"
    env = dict(OVERSUBSCRIBED_ENV)
    if device == "gpu":
        env["HPCDS1MPI_FAKE_GPU"] = "1"
        env["HPCDS1MPI_GPU_AWARE"] = "1" if gpu_aware else "0"
    return kernel_check(ranks, modes, device, env)


def _result(results: dict, name: str, precision: str, mode: str = "normal") -> dict:
    key = (name, precision, mode)
    assert key in results, f"no result for {key}; got {sorted(results)}"
    return results[key]


def _skip_if_unavailable(record: dict) -> None:
    """An unavailable kernel must say so as ``unsupported`` with its reason — then skip."""
    if record["unavailable"]:
        assert record["status"] == "unsupported", record
        assert record["unavailable"] in record["error"], record
        pytest.skip(f"{record['kernel']} unavailable here: {record['unavailable']}")


@pytest.mark.parametrize("ranks", RANK_COUNTS)
@pytest.mark.parametrize("name,precision", DECLARED)
def test_kernel_matches_serial_reference(ranks, name, precision):
    record = _result(launch(ranks), name, precision)
    _skip_if_unavailable(record)
    assert record["status"] == "ok", record
    assert record["array_module"] == "numpy", record
    tolerance = kernels.get(name).tolerance[precision]
    assert record["rel_error"] is not None and record["rel_error"] <= tolerance, record


@pytest.mark.parametrize("ranks", CORRUPT_RANK_COUNTS)
@pytest.mark.parametrize("name,precision", DECLARED)
def test_corrupted_result_is_rejected(ranks, name, precision):
    record = _result(launch(ranks), name, precision, "corrupt")
    _skip_if_unavailable(record)
    assert record["status"] == "wrong", record
    assert "relative error" in record["error"], record


@pytest.mark.parametrize("name,precision", UNDECLARED)
def test_undeclared_precision_is_unsupported(name, precision):
    record = _result(launch(1), name, precision)
    assert record["status"] == "unsupported", record
    assert precision in record["error"], record


def _gpu_record(results: dict, name: str, precision: str) -> dict:
    record = _result(results, name, precision)
    _skip_if_unavailable(record)
    kernel = kernels.get(name)
    if "gpu" not in kernel.devices:
        assert record["status"] == "unsupported", record
        if getattr(kernel, "uses_torch", False):
            import torch

            assert not torch.cuda.is_available(), "torch sees CUDA but the kernel refused gpu"
            pytest.skip(f"{name} runs on GPU through torch CUDA, which is unavailable here")
        pytest.skip(f"{name} declares no GPU path: {record['error']}")
    if getattr(kernel, "uses_torch", False) and precision == "bf16":
        # bf16 goes through torch: on the fake (cupy-shaped) device it needs torch CUDA.
        import torch

        if not torch.cuda.is_available() and record["status"] != "ok":
            pytest.skip(f"{name} bf16 on GPU needs torch CUDA, unavailable here: "
                        f"{record['error']}")
    return record


@pytest.mark.parametrize("ranks,gpu_aware", [(1, False), (3, False), (2, True)])
@pytest.mark.parametrize("name,precision", DECLARED)
def test_fake_gpu_path_matches_reference(ranks, gpu_aware, name, precision):
    record = _gpu_record(launch(ranks, "gpu", gpu_aware), name, precision)
    assert record["status"] == "ok", record
    assert record["array_module"] == "fakecupy", record
    assert record["rel_error"] <= kernels.get(name).tolerance[precision], record


def test_every_builtin_kernel_is_registered():
    """The harness only checks what is registered: the eight built-ins must all be there."""
    from hpcds1mpi.kernels import BUILTIN_MODULES

    assert set(BUILTIN_MODULES) <= set(NAMES)
