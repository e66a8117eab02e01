"""The GPU paths on a real CUDA GPU (skipped on machines without one, such as CI's).

tests/kernels/test_kernels.py runs every GPU code path on the fake device (host memory behind a
cupy-shaped module). These tests run the same kernels on a real GPU through cupy (torch CUDA for
bf16 gemm and mltrain), under real MPI, staged through host memory (the mpich wheel is not
CUDA-aware); and one sweep writes GPU telemetry with the GPU's own energy counter (NVML).
``scripts/gpu-check`` runs them with the GPU benchmark on a GPU machine.
"""

from __future__ import annotations

import functools

import pytest

from hpcds1mpi import kernels
from tests.helpers import kernel_check, run_cli

REAL_GPU_ENV = {"HPCDS1MPI_FAKE_GPU": "0", "HPCDS1MPI_GPU_AWARE": "0"}


def real_gpu_count() -> int:
    """CUDA GPUs cupy sees in this process, ignoring the fake device (0 when cupy is absent)."""
    try:
        import cupy

        return int(cupy.cuda.runtime.getDeviceCount())
    except Exception:  # noqa: BLE001 - no cupy, no driver or no device: no real GPU
        return 0


pytestmark = [pytest.mark.mpi, pytest.mark.skipif(
    real_gpu_count() == 0, reason="no real CUDA GPU visible to cupy on this machine "
                                  "(scripts/gpu-check runs these on a GPU machine)")]

GPU_KERNELS = [name for name in kernels.names() if "gpu" in kernels.get(name).devices]
GPU_DECLARED = [(name, p) for name in GPU_KERNELS for p in kernels.get(name).precisions]


@functools.lru_cache(maxsize=None)
def launch(ranks: int, modes: str) -> dict:
    """One launch of every kernel on the real GPU, keyed by (kernel, precision, mode)."""
    return kernel_check(ranks, modes, "gpu", REAL_GPU_ENV, timeout=300)


def test_every_gpu_capable_builtin_declares_gpu_here():
    """With a real GPU, mltrain (torch CUDA) must offer the GPU like the cupy kernels do."""
    assert {"gemm", "stencil", "fft", "cg", "nbody", "mltrain"} <= set(GPU_KERNELS)


@pytest.mark.parametrize("ranks", (1, 2))
@pytest.mark.parametrize("name,precision", GPU_DECLARED)
def test_kernel_on_real_gpu_matches_serial_reference(ranks, name, precision):
    record = launch(ranks, "normal")[(name, precision, "normal")]
    assert record["status"] == "ok", record
    assert record["array_module"] == "cupy", record  # the real device, not the fake
    assert record["rel_error"] <= kernels.get(name).tolerance[precision], record


@pytest.mark.parametrize("name,precision", GPU_DECLARED)
def test_corrupted_gpu_result_is_rejected(name, precision):
    record = launch(1, "corrupt")[(name, precision, "corrupt")]
    assert record["status"] == "wrong", record


def test_gpu_sweep_writes_measured_gpu_telemetry(tmp_path):
    """A GPU sweep row says device gpu, holds the GPU's memory and busy time, and its energy
    uses the GPU's own counter (NVML) where one is readable, labelled as such."""
    from hpcds1mpi.records import telemetry

    out = tmp_path / "gpu.h5"
    proc = run_cli(["sweep", "--kernel", "gemm", "--sizes", "4096", "--devices", "gpu",
                    "--precisions", "fp32", "--ranks-per-node", "1", "--threads", "1",
                    "--min-repeats", "3", "--max-repeats", "3", "--out", str(out)],
                   timeout=300, env=REAL_GPU_ENV)
    assert proc.returncode == 0, proc.stderr[-3000:]
    runs = telemetry.read_runs(out)
    assert len(runs) == 1, runs
    row = runs.iloc[0]
    assert row["status"] == "ok" and row["device"] == "gpu", row.to_dict()
    # Three 4096^2 fp32 matrices are 192 MiB on the device.
    assert row["gpu_peak_mem_mb"] >= 192, row.to_dict()
    if _nvml_readable():
        assert row["gpu_source"] == "nvml", row.to_dict()
        assert row["energy_source"] == "nvml+modelled", row.to_dict()
        assert row["gpu_busy_s"] > 0 and row["energy_j"] > 0, row.to_dict()


def _nvml_readable() -> bool:
    try:
        import pynvml

        pynvml.nvmlInit()
        handle = pynvml.nvmlDeviceGetHandleByIndex(0)
        pynvml.nvmlDeviceGetTotalEnergyConsumption(handle)
        return True
    except Exception:  # noqa: BLE001 - no NVML, or no energy counter on this GPU
        return False
