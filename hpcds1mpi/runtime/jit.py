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


def compiled(fn):
    """``fn`` compiled by numba (GIL released, cached on disk by numba), or None without numba
    or with ``HPCDS1MPI_NO_JIT=1``. Compiled once per process (per argument types)."""
    if os.environ.get(NO_JIT_ENV) == "1":
        return None
    if fn not in _COMPILED:
        try:
            import numba
        except ImportError:
            _COMPILED[fn] = None
        else:
            try:
                _COMPILED[fn] = numba.njit(nogil=True, cache=True)(fn)
            except RuntimeError:  # no writable cache location (read-only install, no $HOME)
                _COMPILED[fn] = numba.njit(nogil=True)(fn)
    return _COMPILED[fn]
