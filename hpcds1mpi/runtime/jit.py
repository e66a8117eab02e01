"""Optional numba compilation of the few hot loops (the stencil sweep, the embedding pass).

numba is a dependency, but every compiled loop keeps its numpy counterpart: numba may be
missing on a site install, ``HPCDS1MPI_NO_JIT=1`` selects numpy for comparisons and tests, and
short inputs are cheaper in numpy than importing numba (~0.3 s) in a cold ``recommend``.
"""

from __future__ import annotations

import os

#: Set to "1" to run the numpy paths even where numba is installed (comparisons, tests).
NO_JIT_ENV = "HPCDS1MPI_NO_JIT"
_COMPILED: dict = {}


def compiled(fn, fastmath: bool = False):
    """``fn`` compiled by numba (GIL released, cached on disk by numba), or None without numba
    or with ``HPCDS1MPI_NO_JIT=1``. Compiled once per process (per argument types).

    ``fastmath``: let LLVM reassociate (vectorised reductions) and use approximate reciprocal
    square roots refined to full precision, with numpy's error model (a division by zero gives
    inf instead of a raise, whose branch would keep the loop scalar); for loops whose check
    tolerates reordered sums. numba's disk cache is keyed on the function's source, not on
    these options: compile each function with one set of options only.
    """
    if os.environ.get(NO_JIT_ENV) == "1":
        return None
    key = (fn, fastmath)
    if key not in _COMPILED:
        try:
            import numba
        except ImportError:
            _COMPILED[key] = None
        else:
            _full_width_vectors()
            options = {"fastmath": True, "error_model": "numpy"} if fastmath else {}
            try:
                _COMPILED[key] = numba.njit(nogil=True, cache=True, **options)(fn)
            except RuntimeError:  # no writable cache location (read-only install, no $HOME)
                _COMPILED[key] = numba.njit(nogil=True, **options)(fn)
    return _COMPILED[key]


def _full_width_vectors() -> None:
    """Let LLVM use the CPU's widest vectors (AVX-512 where present) in the loops compiled here.

    LLVM's tuning for recent Intel server CPUs prefers 256-bit vectors; on the all-pairs nbody
    loop 512-bit ones were ~1.4x faster in fp64 (measured). Only numba's own setting is changed
    (no environment variable, so child processes are untouched), only when the user has not set
    ``NUMBA_CPU_FEATURES`` and before numba's CPU code generator exists (it reads the setting
    once, at its first compilation): a process that compiled something earlier keeps its
    choice. Without fastmath, vector width does not change results (no reassociation).
    """
    from numba.core import config

    if config.CPU_FEATURES is not None or getattr(_full_width_vectors, "done", False):
        return
    _full_width_vectors.done = True
    import llvmlite.binding as llvm

    try:
        features = llvm.get_host_cpu_features().flatten()
    except RuntimeError:  # the host's features cannot be read: leave numba's defaults
        return
    if "+avx512f" in features.split(","):
        config.CPU_FEATURES = features + ",-prefer-256-bit"
