"""Buffers for numpy / cupy / the fake GPU: the module of a device, copies to and from the
device, and what goes to MPI with and without a GPU-aware library."""

from __future__ import annotations

import numpy as np
import pytest

from hpcds1mpi.errors import UnsupportedError
from hpcds1mpi.runtime import arrays


@pytest.fixture
def fake(monkeypatch):
    monkeypatch.setenv("HPCDS1MPI_FAKE_GPU", "1")
    return arrays.array_module("gpu")


def test_cpu_is_numpy_and_the_fake_gpu_is_cupy_shaped(fake):
    assert arrays.array_module("cpu") is np
    assert fake.__name__ == "fakecupy" and fake.is_fake
    a = fake.ones(4)
    assert isinstance(a, arrays.FakeDeviceArray) and arrays.is_device_array(a)
    iface = a.__cuda_array_interface__
    assert iface["shape"] == (4,) and iface["version"] == 3
    assert not arrays.is_device_array(np.ones(4))
    assert isinstance(fake.fft.fft(a), arrays.FakeDeviceArray)


def test_gpu_without_cupy_or_the_fake_is_unsupported(monkeypatch):
    monkeypatch.setenv("HPCDS1MPI_FAKE_GPU", "0")
    try:
        import cupy  # noqa: F401
    except ImportError:
        with pytest.raises(UnsupportedError, match="need cupy"):
            arrays.array_module("gpu")
    else:
        pytest.skip("cupy is installed here")


def test_device_copies_do_not_alias_host_memory(fake):
    host = np.arange(4.0)
    dev = arrays.to_device(fake, host)
    host[0] = 99.0
    assert dev[0] == 0.0  # a device copy, as cupy.asarray makes
    assert arrays.to_device(np, host) is host
    back = arrays.to_host(dev)
    assert type(back) is np.ndarray and back.tolist() == [0.0, 1.0, 2.0, 3.0]
    back[1] = -1.0
    assert dev[1] == 1.0
    assert arrays.to_host(host) is host


def test_mpi_buffer_staged_unless_gpu_aware(fake):
    dev = fake.arange(3.0)
    assert arrays.mpi_buffer(dev, gpu_aware=True) is dev
    staged = arrays.mpi_buffer(dev, gpu_aware=False)
    assert type(staged) is np.ndarray and staged.tolist() == [0.0, 1.0, 2.0]
    staged[:] = 7.0  # a receive into the host copy ...
    assert arrays.from_host(fake, staged, dev) is dev and dev.tolist() == [7.0, 7.0, 7.0]
    host = np.zeros(2)
    assert arrays.mpi_buffer(host, gpu_aware=False) is host
    assert arrays.from_host(np, host, host) is host
    arrays.synchronize(fake)  # the fake device has nothing to wait for


def test_numpy_dtype():
    assert arrays.numpy_dtype("fp64") is np.float64 and arrays.numpy_dtype("fp32") is np.float32
    with pytest.raises(UnsupportedError, match="needs torch"):
        arrays.numpy_dtype("bf16")
