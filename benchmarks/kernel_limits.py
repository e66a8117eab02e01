"""The machine limits ``benchmarks/kernels.py`` holds each kernel against, and the ratio logic.

Every limit is one sample function returning seconds for one measurement of the same work the
kernel does (or, for bandwidth and FMA stand-ins, of a fixed amount of work whose rate is
known); ``benchmarks/kernels.py`` calls it between kernel runs (kernel, limit, kernel, limit, ...)
and :func:`summarize` turns the interleaved samples into best rates, the ratio, the per-round
ratio range and the spread of each side.

- gemm: one numpy matmul (torch for bf16) of the same N and precision, same thread count.
- stencil, cg: a STREAM-like numpy triad ``a = b + s * c`` (24 bytes per element).
- fft: ``scipy.fft.fftn`` of the same N^3 array in one process, same workers (the faster of
  a fresh output and an in-place transform of a copy).
- nbody: a matmul of the same precision (a fair stand-in for the FMA rate).
- mltrain: the same model trained the idiomatic way (``nn.Sequential`` + ``torch.optim.SGD``)
  in this one torch process, no MPI, same samples, steps and threads.
- io: numpy ``tofile`` + ``fsync`` and ``fromfile`` of the same bytes.
"""

from __future__ import annotations

import os
import time
from typing import Callable

#: Interleaved rounds of (kernel, limit); every side is a best of at least this many samples.
ROUNDS = 5
#: Matmul size of the FMA stand-in for nbody.
FMA_N = 1024
TRIAD_N = 1 << 24


def summarize(kernel_s: list[float], limit_s: list[float], kernel_work: float,
              limit_work: float) -> dict:
    """Rates and ratio of interleaved samples.

    Args:
        kernel_s: the kernel's seconds per round (each already a best of its repeats).
        limit_s: the limit's seconds per round, measured between the kernel's rounds.
        kernel_work, limit_work: the work (flops or bytes) one sample of each side does.

    Returns:
        ``achieved`` and ``limit`` (best rates, work / fastest sample), ``ratio`` (achieved /
        limit), ``ratio_low`` / ``ratio_high`` (the range of round-by-round ratios, each round's
        kernel against the limit measured next to it), ``spread_kernel`` / ``spread_limit``
        (slowest / fastest sample - 1) and ``rounds``.
    """
    if not kernel_s or not limit_s:
        raise ValueError("summarize needs at least one kernel and one limit sample")
    achieved = kernel_work / min(kernel_s)
    limit = limit_work / min(limit_s)
    per_round = [(kernel_work / k) / (limit_work / lim) for k, lim in zip(kernel_s, limit_s)]
    return {
        "achieved": achieved, "limit": limit, "ratio": achieved / limit,
        "ratio_low": min(per_round), "ratio_high": max(per_round),
        "spread_kernel": max(kernel_s) / min(kernel_s) - 1.0,
        "spread_limit": max(limit_s) / min(limit_s) - 1.0,
        "rounds": min(len(kernel_s), len(limit_s)),
    }


def matmul_seconds(n: int, threads: int, precision: str = "fp64",
                   repeats: int = 1) -> Callable[[], float]:
    """A sampler: best-of-``repeats`` seconds of one n x n matmul (numpy; torch for bf16) on
    ``threads`` threads. Inputs are made and the first (warm-up) product run once, here."""
    import numpy as np
    from threadpoolctl import threadpool_limits

    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((n, n)), rng.standard_normal((n, n))
    if precision == "bf16":
        import torch

        ta = torch.from_numpy(a).to(torch.bfloat16)
        tb = torch.from_numpy(b).to(torch.bfloat16)
        out = torch.empty_like(ta)

        def product() -> None:
            torch.matmul(ta, tb, out=out)

        def limited():
            import contextlib

            @contextlib.contextmanager
            def torch_threads():
                previous = torch.get_num_threads()
                torch.set_num_threads(threads)
                try:
                    yield
                finally:
                    torch.set_num_threads(previous)
            return torch_threads()
    else:
        dtype = np.float64 if precision == "fp64" else np.float32
        a, b = a.astype(dtype), b.astype(dtype)
        out = np.empty_like(a)

        def product() -> None:
            np.matmul(a, b, out=out)

        def limited():
            return threadpool_limits(threads)

    with limited():
        product()

    def sample() -> float:
        best = float("inf")
        with limited():
            for _ in range(repeats):
                start = time.perf_counter()
                product()
                best = min(best, time.perf_counter() - start)
        return best

    return sample


def triad_seconds(n: int = TRIAD_N) -> Callable[[], float]:
    """A sampler: seconds of one STREAM-like triad ``a = b + s * c`` over ``n`` fp64 elements
    in numpy (two ufunc passes, no temporaries), counted as STREAM does: 24 bytes/element."""
    import numpy as np

    b = np.random.default_rng(1).random(n)
    c = np.random.default_rng(2).random(n)
    a = np.empty(n)
    np.multiply(c, 3.0, out=a)

    def sample() -> float:
        start = time.perf_counter()
        np.multiply(c, 3.0, out=a)
        np.add(a, b, out=a)
        return time.perf_counter() - start

    return sample


def fft_seconds(n: int, precision: str, threads: int) -> Callable[[], float]:
    """A sampler: seconds of ``scipy.fft.fftn`` of the fft kernel's own N^3 input (seed 0),
    in one process with ``threads`` workers."""
    import scipy.fft

    from hpcds1mpi.kernels.fft import COMPLEX_DTYPES, input_planes

    data = input_planes(0, n, 0, n).astype(COMPLEX_DTYPES[precision])
    scipy.fft.fftn(data, workers=threads)

    def sample() -> float:
        # The faster of the two library forms that keep the input: a fresh output, or a copy
        # transformed in place (often faster: no page faults on a fresh output per axis).
        start = time.perf_counter()
        scipy.fft.fftn(data, workers=threads)
        fresh = time.perf_counter() - start
        start = time.perf_counter()
        scipy.fft.fftn(data.copy(), workers=threads, overwrite_x=True)
        return min(fresh, time.perf_counter() - start)

    return sample


def torch_training_seconds(batch: int, precision: str, threads: int) -> Callable[[], float]:
    """A sampler: seconds of the mltrain kernel's model trained the idiomatic torch way in
    this process (``nn.Sequential``, ``torch.optim.SGD``, no MPI): the same samples, teacher,
    initial parameters, steps, learning rate, loss and dtype (bf16: autocast)."""
    import contextlib

    import torch

    from hpcds1mpi.kernels import mltrain as m

    dtype = torch.float64 if precision == "fp64" else torch.float32
    x_np = m.sample_rows(0, m._STREAM_X, m.IN_FEATURES, 0, batch)
    x = torch.from_numpy(x_np).to(dtype)
    y = torch.from_numpy(m.teacher(0, x_np)).to(dtype)
    init = torch.from_numpy(m.initial_parameters(0)).to(dtype)
    model = torch.nn.Sequential(
        torch.nn.Linear(m.IN_FEATURES, m.HIDDEN), torch.nn.Tanh(),
        torch.nn.Linear(m.HIDDEN, m.HIDDEN), torch.nn.Tanh(),
        torch.nn.Linear(m.HIDDEN, m.OUT_FEATURES)).to(dtype)
    params = list(model.parameters())

    def amp():
        return (torch.autocast(device_type="cpu", dtype=torch.bfloat16) if precision == "bf16"
                else contextlib.nullcontext())

    def train() -> None:
        with torch.no_grad():
            torch.nn.utils.vector_to_parameters(init, params)
        optimizer = torch.optim.SGD(params, lr=m.LEARNING_RATE)
        for _ in range(m.STEPS):
            optimizer.zero_grad()
            with amp():
                out = model(x)
            loss = 0.5 * ((out.to(y.dtype) - y) ** 2).sum() / batch
            loss.backward()
            optimizer.step()

    def sample() -> float:
        previous = torch.get_num_threads()
        torch.set_num_threads(threads)
        try:
            start = time.perf_counter()
            train()
            return time.perf_counter() - start
        finally:
            torch.set_num_threads(previous)

    sample()
    return sample


def raw_file_seconds(nbytes: int, workdir: str) -> Callable[[], tuple[float, float]]:
    """A sampler: (write + fsync seconds, read seconds) of ``nbytes`` with numpy
    ``tofile`` / ``fromfile`` in ``workdir`` (the read is served from the page cache)."""
    import numpy as np

    data = np.random.default_rng(3).standard_normal(nbytes // 8)
    path = os.path.join(workdir, f"hpcds1mpi-bench-{os.getpid()}.bin")

    def sample() -> tuple[float, float]:
        try:
            start = time.perf_counter()
            with open(path, "wb") as f:
                data.tofile(f)
                f.flush()
                os.fsync(f.fileno())
            write_s = time.perf_counter() - start
            start = time.perf_counter()
            np.fromfile(path, dtype=np.float64)
            read_s = time.perf_counter() - start
        finally:
            if os.path.exists(path):
                os.remove(path)
        return write_s, read_s

    return sample


def limit_for(name: str, size: int, precision: str, threads: int, quick: bool = False
              ) -> tuple[Callable[[], float], float, str, str, str] | None:
    """The limit of a 1-rank kernel run: (sampler, work of one sample, unit, what it is, goal),
    or None for kernels held against something else (io, allreduce).

    The work is in the unit the row shows: flops for GFLOP/s rows, bytes for GB/s rows.
    """
    from hpcds1mpi.kernels import get

    if name == "gemm":
        lib = "torch" if precision == "bf16" else "numpy"
        return (matmul_seconds(size, threads, precision), 2.0 * size ** 3, "GFLOP/s",
                f"one {lib} {precision} matmul, {threads} thr", ">= 90%")
    if name in ("stencil", "cg"):
        return (triad_seconds(TRIAD_N // 4 if quick else TRIAD_N), 24.0 * (
            TRIAD_N // 4 if quick else TRIAD_N), "GB/s", "numpy triad, 24 B/elem", ">= 60%")
    if name == "fft":
        flops = get("fft").work(size, 1).flops
        return (fft_seconds(size, precision, threads), flops, "GFLOP/s",
                f"scipy.fft.fftn, 1 process, {threads} workers (best form)", ">= 80%")
    if name == "nbody":
        return (matmul_seconds(FMA_N, threads, precision), 2.0 * FMA_N ** 3, "GFLOP/s",
                f"{precision} numpy matmul N={FMA_N} (FMA stand-in)", ">= 30%")
    if name == "mltrain":
        flops = get("mltrain").work(size, 1).flops
        return (torch_training_seconds(size, precision, threads), flops, "GFLOP/s",
                "same model, nn.Sequential + optim.SGD, no MPI", ">= 90%")
    return None


def cache_triad_for(name: str, size: int) -> tuple[Callable[[], float], float, str] | None:
    """For the memory-bound kernels: a triad whose three arrays together are the kernel's
    working set (``memory_bytes`` of its work model), (sampler, bytes of one sample, what).

    On a machine whose last-level cache holds the kernel's arrays, the DRAM triad is not the
    limit the kernel meets; this one is measured beside it so the row can say which it is.
    """
    if name not in ("stencil", "cg"):
        return None
    from hpcds1mpi.kernels import get

    working = get(name).work(size, 1).memory_bytes
    n = max(1024, int(working // 24))
    return (triad_seconds(n), 24.0 * n,
            f"numpy triad over a working set the kernel's size ({24 * n / 1e6:.0f} MB)")
