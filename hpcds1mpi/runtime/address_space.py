"""The address space the model libraries need, against a login node's ``ulimit -v``.

torch, scipy and their OpenBLAS reserve far more address space than they touch. Under a
smaller ``RLIMIT_AS`` (s36 tester E4: ``ulimit -v 1500000``) ``train`` died with a 37-line
traceback (``libtorch_cpu.so: failed to map segment``) and ``learn`` hung for ever, ignoring
SIGTERM, in OpenBLAS's allocation retry loop while scipy loaded. :func:`check_room` refuses
in one line before they load; :func:`import_error_line` says a failed load in one line.

Measured by bisection on ``ulimit -v`` (2-core VM, torch 2 / scipy 1.x): ``train`` needs
2.34 GB with 1 usable CPU, 2.44 GB with 2; ``learn`` 2.50 GB and 2.69 GB. So about 2.3 GB,
plus 0.2 GB per usable CPU (OpenBLAS's buffers per thread), and a margin on top.
"""

from __future__ import annotations

import os

#: Address space (bytes) the model libraries need before any CPU's share, and per usable CPU.
_BASE = 2.3e9
_PER_CPU = 0.2e9
#: The margin asked above the measured need (other library versions, a larger model).
_MARGIN = 1.15

#: Top-level packages whose failed load is the model libraries' (said in one line).
MODEL_LIBRARIES = ("torch", "scipy", "xgboost", "lightgbm", "sklearn", "botorch", "gpytorch",
                   "pytorch_tabnet")


def needed_bytes(cpus: int | None = None) -> int:
    """The address space (bytes) train and learn ask for on ``cpus`` usable CPUs (default:
    this process's)."""
    if cpus is None:
        try:
            cpus = len(os.sched_getaffinity(0))
        except (AttributeError, OSError):
            cpus = os.cpu_count() or 1
    return int((_BASE + _PER_CPU * max(1, cpus)) * _MARGIN)


def check_room(command: str) -> None:
    """Refuse ``command`` in one line where ``ulimit -v`` leaves less address space than the
    model libraries need: call it before they load.

    Raises:
        RuntimeFailure: naming the limit, the need and what to do (exit 1).
    """
    import resource

    from hpcds1mpi.errors import RuntimeFailure

    limit = resource.getrlimit(resource.RLIMIT_AS)[0]
    need = needed_bytes()
    if limit == resource.RLIM_INFINITY or limit >= need:
        return
    raise RuntimeFailure(
        f"virtual memory is limited to {limit / 1e9:.1f} GB (ulimit -v {limit // 1024}); "
        f"{command} loads torch and scipy, which need about {need / 1e9:.1f} GB of address "
        f"space here: raise it (ulimit -v {-(-need // 1024)} or unlimited), or run "
        f"{command} in a batch job")


def import_error_line(exc: ImportError) -> str | None:
    """One line for a model library that failed to load (a shared object that could not be
    mapped under a memory limit, a broken install), or None for any other ImportError."""
    import sys
    import traceback

    names = {exc.name or ""} | {frame.filename for frame in traceback.extract_tb(
        exc.__traceback__)}
    library = next((lib for lib in MODEL_LIBRARIES for name in names
                    if name == lib or name.startswith(lib + ".") or f"/{lib}/" in name), None)
    if library is None:
        return None
    reason = " ".join(str(exc).split())
    limited = ""
    try:
        import resource

        limit = resource.getrlimit(resource.RLIMIT_AS)[0]
        if limit != resource.RLIM_INFINITY:
            limited = (f"; virtual memory is limited to {limit / 1e9:.1f} GB (ulimit -v "
                       f"{limit // 1024}): raise it to at least "
                       f"{-(-needed_bytes() // 1024)}, or run in a batch job")
    except (ImportError, OSError, ValueError):
        pass
    fix = limited or f"; reinstall it in this environment ({sys.prefix})"
    return f"cannot load {library} ({reason}){fix}"
