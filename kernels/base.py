"""The kernel contract: one class per workload, one registry, one signature.

A kernel is collective over ``ctx.comm``. The runner calls, on every rank of the communicator:

1. ``state = kernel.setup(ctx, size)`` — build inputs deterministically from ``ctx.seed``
   on the host (untimed).
2. ``result = kernel.run(ctx, state)`` — the timed work. On GPU this includes the host-to-device
   transfer of the inputs (a real job pays it) and a device synchronise before returning.
3. ``rel_error = kernel.check(ctx, state, result)`` — collective; the relative error against an
   fp64 serial reference, the same value on every rank. Compared with ``tolerance[precision]``.
4. ``kernel.work(size, ranks)`` — analytic work, communication and memory per rank
   (a :class:`WorkModel`), used by the surrogates to extrapolate across node counts.
"""

from __future__ import annotations

from dataclasses import asdict, astuple, dataclass, field
from typing import Any, ClassVar

import numpy as np

DEFAULT_TOLERANCE = {"fp64": 1e-9, "fp32": 1e-3, "bf16": 5e-2}


#: The runs-table columns of a :class:`WorkModel`, in its field order (per rank).
WORK_COLUMNS: tuple[str, ...] = ("work_flops", "work_bytes", "comm_messages", "comm_bytes",
                                 "mem_bytes_per_rank")


@dataclass
class WorkModel:
    """Analytic cost of one ``run`` call, per rank.

    Attributes:
        flops: floating-point operations per rank.
        bytes_moved: memory traffic per rank (bytes read + written, compulsory).
        messages: point-to-point messages (or collective calls) per rank.
        comm_bytes: bytes sent per rank.
        memory_bytes: peak working-set memory per rank.
    """

    flops: float
    bytes_moved: float
    messages: float
    comm_bytes: float
    memory_bytes: float

    def as_dict(self) -> dict:
        return asdict(self)

    def columns(self) -> dict[str, float]:
        """The work model as a sweep records it in the runs table (:data:`WORK_COLUMNS`)."""
        return dict(zip(WORK_COLUMNS, astuple(self)))


@dataclass
class KernelContext:
    """What a kernel gets to run with.

    Attributes:
        comm: the communicator (a :class:`hpcds1mpi.runtime.mpi.TimedComm`).
        device: ``"cpu"`` or ``"gpu"``.
        precision: ``"fp64"``, ``"fp32"`` or ``"bf16"``.
        threads: threads per rank (kernels pass it to scipy.fft ``workers`` etc.; BLAS and torch
            thread pools are already limited by the runner).
        seed: base seed; inputs must be a pure function of (seed, size, rank layout).
        xp: the array module for ``device`` (numpy, cupy or the fake cupy).
        gpu_aware: whether device buffers may be handed to MPI directly.
        local_rank: rank within the node (chooses the GPU).
        extra: free-form options from the sweep plan.
    """

    comm: Any
    device: str = "cpu"
    precision: str = "fp64"
    threads: int = 1
    seed: int = 0
    xp: Any = np
    gpu_aware: bool = False
    local_rank: int = 0
    extra: dict = field(default_factory=dict)


class Kernel:
    """Base class. Subclasses set the class attributes and implement the four methods."""

    name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    decomposition: ClassVar[str] = ""
    communication: ClassVar[str] = ""
    size_meaning: ClassVar[str] = ""
    precisions: ClassVar[tuple[str, ...]] = ("fp64", "fp32")
    devices: ClassVar[tuple[str, ...]] = ("cpu", "gpu")
    uses_threads: ClassVar[bool] = True
    threads_via: ClassVar[str] = "BLAS (threadpoolctl)"
    default_sizes: ClassVar[tuple[int, ...]] = ()
    tolerance: ClassVar[dict[str, float]] = DEFAULT_TOLERANCE
    #: Optional: ``test_size`` (the small size tests/mpi_kernel_check.py uses; default the
    #: smallest of ``default_sizes``) and ``test_extra`` (a dict passed as ``extra`` there).
    #: A reason the kernel cannot run here (missing optional library); None when it can.
    unavailable: ClassVar[str | None] = None
    #: Options the kernel reads from a plan's ``extra``, checked when the plan loads:
    #: name -> ``(int | float, smallest, largest)`` or ``(str, allowed words or None)``; any
    #: other key is refused (a typo would be ignored silently). None (a plugin that declares
    #: nothing): keys are not checked.
    options: ClassVar[dict[str, tuple] | None] = None

    def check_extra(self, extra: dict) -> None:
        """Raise :class:`hpcds1mpi.errors.ConfigError` for a value of an option this kernel
        reads (:attr:`options`) that it cannot use (``sweeps = 0`` measured no work as an ok
        run; ``"lots"`` failed every run), or for a key it does not read (when it declares
        its options)."""
        import math

        from hpcds1mpi.errors import ConfigError

        if self.options is None:
            return
        unread = sorted(set(extra) - set(self.options))
        if unread:
            reads = (f"the keys it reads: {', '.join(sorted(self.options))}" if self.options
                     else "it reads none: drop extra")
            raise ConfigError(f"kernel {self.name!r} does not read extra "
                              f"{', '.join(unread)}; {reads}")
        for key, (kind, *limits) in self.options.items():
            if key not in extra:
                continue
            value = extra[key]
            if kind is str:
                ok = isinstance(value, str) and (limits[0] is None or value in limits[0])
                want = "a word" if limits[0] is None else f"one of {', '.join(limits[0])}"
            else:
                number = type(value) is int or (kind is float and type(value) is float
                                                 and math.isfinite(value))
                ok = number and limits[0] <= value <= limits[1]
                want = (f"a whole number from {limits[0]:,} to {limits[1]:,}" if kind is int
                        else f"a number from {limits[0]:g} to {limits[1]:g}")
            if not ok:
                raise ConfigError(f"kernel {self.name!r}: extra {key} = {value!r}; it must be "
                                  f"{want}")

    def setup(self, ctx: KernelContext, size: int) -> Any:
        raise NotImplementedError

    def run(self, ctx: KernelContext, state: Any) -> Any:
        raise NotImplementedError

    def check(self, ctx: KernelContext, state: Any, result: Any) -> float:
        raise NotImplementedError

    def work(self, size: int, ranks: int) -> WorkModel:
        raise NotImplementedError

    def min_size(self, ranks: int) -> int:
        """The smallest size this kernel can decompose over ``ranks`` (1 if any)."""
        return 1

    def validate_size(self, size: int, ranks: int) -> None:
        """Raise :class:`hpcds1mpi.errors.ConfigError` for a size that cannot be decomposed."""
        from hpcds1mpi.errors import ConfigError

        if not isinstance(size, (int, np.integer)) or size < 1:
            raise ConfigError(f"size must be a positive integer, got {size!r}")
        low = self.min_size(ranks)
        if size < low:
            raise ConfigError(
                f"kernel {self.name!r} needs size >= {low} on {ranks} ranks, got {size}"
            )


def block_range(n: int, parts: int, index: int) -> tuple[int, int]:
    """The half-open range [start, stop) of block ``index`` when ``n`` items split into
    ``parts`` nearly equal blocks (the first ``n % parts`` blocks get one more)."""
    base, extra = divmod(n, parts)
    start = index * base + min(index, extra)
    return start, start + base + (1 if index < extra else 0)


def balanced_dims(n: int, ndims: int) -> list[int]:
    """Split ``n`` ranks into an ``ndims``-D grid as balanced as possible, largest first.

    Pure Python (like ``MPI.Compute_dims`` for the usual counts) so analytic work models can be
    evaluated without starting MPI; kernels use the same function for their real grids.
    """
    factors, rest, p = [], n, 2
    while p * p <= rest:
        while rest % p == 0:
            factors.append(p)
            rest //= p
        p += 1
    if rest > 1:
        factors.append(rest)
    dims = [1] * ndims
    for f in sorted(factors, reverse=True):
        dims[dims.index(min(dims))] *= f
    return sorted(dims, reverse=True)


def relative_error(got: np.ndarray, want: np.ndarray) -> float:
    """``||got - want|| / ||want||`` in fp64 (0 when both are zero)."""
    got = np.asarray(got, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    denom = float(np.linalg.norm(want))
    num = float(np.linalg.norm(got - want))
    if denom == 0.0:
        return num
    return num / denom


def global_relative_error(comm, got: np.ndarray, want: np.ndarray) -> float:
    """Relative error of a distributed array: every rank passes its local block."""
    from hpcds1mpi.runtime.mpi import get_mpi

    MPI = get_mpi()
    got = np.asarray(got, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    sums = np.array([np.sum((got - want) ** 2), np.sum(want**2)], dtype=np.float64)
    total = np.empty_like(sums)
    comm.Allreduce(sums, total, op=MPI.SUM)
    if total[1] == 0.0:
        return float(np.sqrt(total[0]))
    return float(np.sqrt(total[0] / total[1]))
