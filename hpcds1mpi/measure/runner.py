"""Run one kernel on one configuration over a communicator: warm-up, timed repeats, check.

Collective over ``comm``: every rank of it calls :func:`execute`. The wall time of a repeat is
the slowest rank's (an ``Allreduce(MAX)`` of each rank's elapsed time after a barrier).
"""

from __future__ import annotations

import contextlib
import sys
import time
import traceback
from dataclasses import dataclass, field

import numpy as np

from hpcds1mpi.config import Configuration, check_supported
from hpcds1mpi.errors import HpcdsError, UnsupportedError


@dataclass
class Outcome:
    """What one configuration produced, as seen by one rank (reduced values are global).

    Attributes:
        status: one of :data:`hpcds1mpi.config.STATUSES`.
        error: the error text (first failing rank's) or "".
        wall: per repeat, the slowest rank's seconds.
        rank_wall: per repeat, this rank's seconds.
        rank_mpi: per repeat, this rank's seconds inside MPI calls.
        rank_cpu: this rank's process CPU seconds over all timed repeats.
        rel_error: relative error against the fp64 serial reference (NaN if not checked).
        blas_threads: the BLAS thread count threadpoolctl reported inside the run.
        torch_threads: torch's intra-op thread count inside the run (0 if torch is not loaded).
    """

    status: str = "ok"
    error: str = ""
    wall: list[float] = field(default_factory=list)
    rank_wall: list[float] = field(default_factory=list)
    rank_mpi: list[float] = field(default_factory=list)
    rank_cpu: float = 0.0
    rel_error: float = float("nan")
    blas_threads: int = 0
    torch_threads: int = 0


@contextlib.contextmanager
def thread_limits(threads: int, uses_torch: bool = False):
    """Limit BLAS/OpenMP pools (threadpoolctl) and torch to ``threads`` for the block."""
    from threadpoolctl import threadpool_limits

    torch = sys.modules.get("torch")
    if uses_torch and torch is None:
        import torch
    previous = torch.get_num_threads() if torch is not None else None
    with threadpool_limits(limits=threads):
        if torch is not None:
            torch.set_num_threads(threads)
        try:
            yield
        finally:
            if torch is not None and previous is not None:
                torch.set_num_threads(previous)


def observed_blas_threads() -> int:
    """The largest thread count any loaded BLAS/OpenMP pool reports right now."""
    from threadpoolctl import threadpool_info

    counts = [int(info.get("num_threads", 0)) for info in threadpool_info()]
    return max(counts) if counts else 0


def _agree(comm, failed: bool) -> bool:
    """True on every rank if any rank failed."""
    from hpcds1mpi.runtime.mpi import get_mpi

    flag = np.array([1 if failed else 0], dtype=np.int32)
    out = np.empty_like(flag)
    comm.Allreduce(flag, out, op=get_mpi().MAX)
    return bool(out[0])


def _first_error(comm, text: str) -> str:
    texts = comm.allgather(text)
    return next((t for t in texts if t), "")


def execute(
    comm,
    kernel,
    size: int,
    config: Configuration,
    *,
    seed: int = 0,
    warmup: int = 1,
    min_time: float = 0.0,
    min_repeats: int = 1,
    max_repeats: int = 3,
    check: bool = True,
    local_rank: int = 0,
    extra: dict | None = None,
    corrupt: bool = False,
    on_repeat=None,
) -> Outcome:
    """Run ``kernel`` at ``size`` under ``config`` on ``comm`` (a raw ``MPI.Comm``).

    Repeats run until both ``min_repeats`` and ``min_time`` seconds of measured time are reached,
    or ``max_repeats``. ``corrupt=True`` perturbs the result before checking (fault injection for
    tests of the correctness check). ``on_repeat(time.monotonic())`` is called as each measured
    repeat begins (rank 0's watchdog: what its timeout cut short).
    """
    from hpcds1mpi.runtime import arrays
    from hpcds1mpi.runtime.mpi import TimedComm, get_mpi, gpu_aware
    from hpcds1mpi.kernels.base import KernelContext

    MPI = get_mpi()
    out = Outcome()
    try:
        if kernel.unavailable:
            raise UnsupportedError(f"kernel {kernel.name!r} unavailable: {kernel.unavailable}")
        reason_of = getattr(kernel, "unsupported_reason", None)
        reason = reason_of(config.device, config.precision) if reason_of else None
        if reason:
            raise UnsupportedError(
                f"kernel {kernel.name!r} cannot run {config.device}/{config.precision}: {reason}")
        check_supported(config, kernel.precisions, kernel.devices, kernel.name)
        if not kernel.uses_threads and config.threads != 1:
            raise UnsupportedError(f"kernel {kernel.name!r} cannot use threads; use 1 thread")
        kernel.validate_size(size, comm.Get_size())
        xp = arrays.array_module(config.device)
    except UnsupportedError as exc:
        out.status, out.error = "unsupported", str(exc)
        return out
    except HpcdsError as exc:
        out.status, out.error = "failed", str(exc)
        return out

    timed = TimedComm(comm)
    ctx = KernelContext(
        comm=timed, device=config.device, precision=config.precision, threads=config.threads,
        seed=seed, xp=xp, gpu_aware=gpu_aware() if config.device == "gpu" else False,
        local_rank=local_rank, extra=dict(extra or {}),
    )
    uses_torch = getattr(kernel, "uses_torch", False)
    error_text = ""
    result = None
    with thread_limits(config.threads, uses_torch=uses_torch):
        try:
            state = kernel.setup(ctx, size)
            for _ in range(warmup):
                result = kernel.run(ctx, state)
            measured = 0.0
            cpu_start = time.process_time()
            for rep in range(max_repeats):
                timed.reset()
                comm.Barrier()
                if on_repeat is not None:
                    on_repeat(time.monotonic())
                start = time.perf_counter()
                result = kernel.run(ctx, state)
                elapsed = time.perf_counter() - start
                if rep == 0:
                    out.blas_threads = observed_blas_threads()
                    torch = sys.modules.get("torch")
                    out.torch_threads = torch.get_num_threads() if torch is not None else 0
                out.rank_wall.append(elapsed)
                out.rank_mpi.append(timed.mpi_seconds)
                slowest = np.empty(1)
                comm.Allreduce(np.array([elapsed]), slowest, op=MPI.MAX)
                out.wall.append(float(slowest[0]))
                measured += float(slowest[0])
                # Every rank sees the same reduced time, so every rank stops at the same repeat.
                if rep + 1 >= min_repeats and measured >= min_time:
                    break
            out.rank_cpu = time.process_time() - cpu_start
        except MemoryError as exc:
            error_text = f"oom: {exc or 'MemoryError'}"
        except Exception as exc:  # noqa: BLE001 - any kernel failure is a recorded status
            error_text = f"{type(exc).__name__}: {exc}"
            if isinstance(exc, HpcdsError):  # a kernel's own error says it in one line
                sys.stderr.write(f"hpcds1mpi: {kernel.name} size {size}: {exc}\n")
            else:
                traceback.print_exc(file=sys.stderr)  # a bug: keep its traceback
    if _agree(comm, bool(error_text)):
        text = _first_error(comm, error_text)
        out.status = "oom" if text.startswith("oom") else "failed"
        out.error = text
        return out
    if check:
        try:
            if corrupt:
                result = corrupt_result(result)
            out.rel_error = float(kernel.check(ctx, state, result))
        except Exception as exc:  # noqa: BLE001
            error_text = f"check failed: {type(exc).__name__}: {exc}"
        if _agree(comm, bool(error_text)):
            out.status, out.error = "failed", _first_error(comm, error_text)
            return out
        tol = kernel.tolerance[config.precision]
        if not np.isfinite(out.rel_error) or out.rel_error > tol:
            out.status = "wrong"
            out.error = (
                f"relative error {out.rel_error:.3e} above the {config.precision} tolerance {tol:.1e}"
            )
    return out


def corrupt_result(result):
    """Perturb a kernel result in place-independent fashion (fault injection for tests)."""
    if isinstance(result, dict):
        return {k: corrupt_result(v) for k, v in result.items()}
    if isinstance(result, (tuple, list)):
        return type(result)(corrupt_result(v) for v in result)
    if hasattr(result, "detach"):
        return result * 1.5 + 1.0
    if isinstance(result, np.ndarray) or hasattr(result, "__cuda_array_interface__"):
        return result * 1.5 + 1.0
    if isinstance(result, (float, int, np.floating)):
        return result * 1.5 + 1.0
    return result
