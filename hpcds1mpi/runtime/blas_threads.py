"""numpy's BLAS on one thread for a block of small matrix products (the guard's distance, the
bundle's embedding and design matrix).

The guard's distance is one ``(48, d) @ (d, n)`` product per question. OpenBLAS hands a product
of that size to its thread pool, and on a busy machine the woken threads spin: 25-30 ms of CPU
per ``recommend`` (40 ms in all, 11 ms on one thread, same answer; the service answers one
question after another, so that was most of its cost). A limit through threadpoolctl costs
~10 us once its controller exists (~1 ms, made on first use).
"""

from __future__ import annotations

from contextlib import nullcontext

_CONTROLLER: list = []


def one_blas_thread():
    """A context in which numpy's BLAS uses one thread (nothing changes without threadpoolctl)."""
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:  # pragma: no cover - a dependency, but the answer does not need it
        return nullcontext()
    if not _CONTROLLER:
        _CONTROLLER.append(ThreadpoolController())
    return _CONTROLLER[0].limit(limits=1, user_api="blas")
