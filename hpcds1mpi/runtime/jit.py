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
    tolerates reordered sums.
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
            options = {"fastmath": True, "error_model": "numpy"} if fastmath else {}
            try:
                _COMPILED[key] = numba.njit(nogil=True, cache=True, **options)(fn)
            except RuntimeError:  # no writable cache location (read-only install, no $HOME)
                _COMPILED[key] = numba.njit(nogil=True, **options)(fn)
    return _COMPILED[key]
