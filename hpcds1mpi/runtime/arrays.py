"""One buffer helper for numpy / cupy / torch, and a fake device for GPU paths on CPU.

Kernels never import cupy themselves: they ask :func:`array_module` for the module of a device.
On machines without a GPU, ``HPCDS1MPI_FAKE_GPU=1`` makes ``device="gpu"`` use
:mod:`FakeCupy` — numpy arrays that expose ``__cuda_array_interface__`` over host memory — so the
GPU code paths (device transfers, staging through host memory) run in tests on CPU. Its runs
are recorded with ``gpu_source`` :data:`FAKE_GPU_SOURCE`: they measured the CPU, not a GPU.
"""

from __future__ import annotations

import os
import types

import numpy as np

from hpcds1mpi.errors import UnsupportedError

NUMPY_DTYPES = {"fp64": np.float64, "fp32": np.float32}


#: The ``gpu_source`` of a run on the fake device: it measured GPU code paths on the CPU, so it
#: is never a GPU measurement (``train`` and ``learn`` must leave such runs out).
FAKE_GPU_SOURCE = "fake"


def fake_gpu_enabled() -> bool:
    """Whether ``HPCDS1MPI_FAKE_GPU`` asks for the fake device (GPU paths on CPU): a switch for
    tests; the runs it makes are marked ``gpu_source`` :data:`FAKE_GPU_SOURCE`."""
    return os.environ.get("HPCDS1MPI_FAKE_GPU", "") not in ("", "0")


class FakeDeviceArray(np.ndarray):
    """A host array pretending to live on a GPU (exposes ``__cuda_array_interface__``)."""

    @property
    def __cuda_array_interface__(self):  # noqa: D401 - protocol attribute
        iface = self.__array_interface__
        return {"shape": iface["shape"], "typestr": iface["typestr"], "data": iface["data"],
                "strides": iface["strides"], "version": 3}


def _fake_module() -> types.SimpleNamespace:
    """A cupy-shaped namespace over numpy whose arrays are :class:`FakeDeviceArray`."""

    def wrap(fn):
        def inner(*args, **kwargs):
            out = fn(*args, **kwargs)
            return out.view(FakeDeviceArray) if isinstance(out, np.ndarray) else out
        return inner

    ns = types.SimpleNamespace()
    for name in dir(np):
        if not name.startswith("_"):
            attr = getattr(np, name)
            setattr(ns, name, wrap(attr) if callable(attr) and not isinstance(attr, type) else attr)
    ns.asnumpy = lambda a: np.array(a, copy=True).view(np.ndarray)
    # Real cupy.asarray copies host data to the device: the fake must not alias host memory.
    ns.asarray = lambda a, dtype=None: (
        a if isinstance(a, FakeDeviceArray) and dtype is None
        else np.array(a, dtype=dtype, copy=True).view(FakeDeviceArray)
    )
    ns.fft = types.SimpleNamespace(**{
        n: wrap(getattr(np.fft, n)) for n in ("fft", "ifft", "fftn", "ifftn", "rfft", "irfft")
    })
    ns.__name__ = "fakecupy"
    ns.is_fake = True
    ns.cuda = types.SimpleNamespace(
        Device=lambda i=0: types.SimpleNamespace(use=lambda: None, synchronize=lambda: None,
                                                 id=i),
        runtime=types.SimpleNamespace(getDeviceCount=lambda: 1),
    )
    return ns


_FAKE = None


def array_module(device: str):
    """The array module for ``device``: numpy, cupy, or the fake cupy.

    Raises:
        UnsupportedError: GPU asked and neither cupy nor the fake device is available.
    """
    global _FAKE
    if device == "cpu":
        return np
    if fake_gpu_enabled():
        if _FAKE is None:
            _FAKE = _fake_module()
        return _FAKE
    try:
        import cupy
    except ImportError:
        raise UnsupportedError(
            "GPU runs need cupy (pip install 'hpcds1mpi[gpu]'); none found on this machine"
        ) from None
    return cupy


def is_device_array(a) -> bool:
    """Whether ``a`` lives on a device (cupy, the fake device): it has the CUDA protocol."""
    return hasattr(a, "__cuda_array_interface__")


def to_device(xp, host_array: np.ndarray):
    """Copy a host array to the device of ``xp`` (a real job pays this: call it inside timing)."""
    if xp is np:
        return host_array
    return xp.asarray(host_array)


def to_host(a) -> np.ndarray:
    """A numpy view/copy of any array (cupy, fake device, torch, numpy)."""
    if isinstance(a, np.ndarray) and not isinstance(a, FakeDeviceArray):
        return a
    if isinstance(a, FakeDeviceArray):
        return np.array(a, copy=True).view(np.ndarray)
    if hasattr(a, "get"):  # cupy
        return a.get()
    if hasattr(a, "detach"):  # torch
        return a.detach().cpu().float().numpy() if str(a.dtype) == "torch.bfloat16" \
            else a.detach().cpu().numpy()
    return np.asarray(a)


def mpi_buffer(a, gpu_aware: bool):
    """The object to hand to an MPI buffer call: the device array itself when the MPI is
    GPU-aware, else a host copy (the caller copies results back with :func:`from_host`)."""
    if not is_device_array(a) or gpu_aware:
        return a
    return to_host(a)


def from_host(xp, host: np.ndarray, like):
    """Write a host buffer back into device array ``like`` (after a staged receive)."""
    if xp is np or like is host:
        return like
    like[...] = xp.asarray(host)
    return like


def synchronize(xp) -> None:
    """Wait for the device to finish (timing must not stop before the GPU does)."""
    if xp is np or getattr(xp, "is_fake", False):
        return
    xp.cuda.Device().synchronize()


def numpy_dtype(precision: str):
    """The numpy dtype of ``precision``.

    Raises:
        UnsupportedError: bf16, which numpy lacks (kernels compute it in torch).
    """
    try:
        return NUMPY_DTYPES[precision]
    except KeyError:
        raise UnsupportedError(f"{precision} has no numpy dtype; this kernel needs torch for it") \
            from None
