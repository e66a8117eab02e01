"""Kernel registry: one decorator, one lookup, third-party kernels through entry points.

Built-in kernels live one per file in this folder and register with :func:`register`. A kernel
module whose optional library is missing still registers; it sets ``unavailable`` and the runner
reports why only when that kernel is asked for.
"""

from __future__ import annotations

import importlib

from hpcds1mpi.errors import UnknownKernelError

from .base import Kernel, KernelContext, WorkModel  # noqa: F401

ENTRY_POINT_GROUP = "hpcds1mpi.kernels"
BUILTIN_MODULES = ("stencil", "gemm", "fft", "cg", "nbody", "mltrain", "allreduce", "io")

_REGISTRY: dict[str, type[Kernel]] = {}
_LOADED = False


def register(cls: type[Kernel]) -> type[Kernel]:
    """Class decorator adding a kernel to the registry under ``cls.name``."""
    if not cls.name:
        raise ValueError(f"{cls.__name__} has no name")
    _REGISTRY[cls.name] = cls
    return cls


def _load_all() -> None:
    global _LOADED
    if _LOADED:
        return
    _LOADED = True
    for mod in BUILTIN_MODULES:
        try:
            importlib.import_module(f"{__name__}.{mod}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{mod}":
                raise
    from importlib.metadata import entry_points

    for ep in entry_points(group=ENTRY_POINT_GROUP):
        cls = ep.load()
        if isinstance(cls, type) and issubclass(cls, Kernel):
            register(cls)


def names() -> list[str]:
    """Names of every registered kernel, sorted."""
    _load_all()
    return sorted(_REGISTRY)


def get(name: str) -> Kernel:
    """A fresh instance of the kernel called ``name``.

    Raises:
        UnknownKernelError: naming the kernels that exist.
    """
    _load_all()
    try:
        return _REGISTRY[name]()
    except KeyError:
        raise UnknownKernelError(
            f"unknown kernel {name!r}; known kernels: {', '.join(sorted(_REGISTRY))}"
        ) from None


def support(workload: str) -> tuple[bool, list[str] | None, list[str] | None]:
    """(uses threads, precisions, devices) a registered kernel declares; for any other workload
    (an external program, a job-log label) ``(True, None, None)``: nothing declared here — what
    such a workload may be offered is what it was measured with (``surrogates/levels.py``,
    ``decide/offer.py``)."""
    try:
        if workload not in names():
            return True, None, None
        k = get(workload)
    except Exception:  # noqa: BLE001 - a broken plugin must not stop a recommendation
        return True, None, None
    return (bool(k.uses_threads), list(k.precisions) or None, list(k.devices) or None)


def offered(workload: str | None, partition) -> tuple[bool, list[str] | None, list[str]]:
    """What may be offered for ``workload`` on ``partition``: (uses threads, precisions — None
    for all —, devices). A registered kernel gets what it declares (:func:`support`); a user's
    program (``None``) or any other workload is not limited here (its measured levels limit it:
    ``surrogates/levels.py``, ``decide/offer.py``); devices only those the partition has.
    The one rule behind sweeps' ``valid_only``, ``cluster``, MOBO's candidates and ``tune``."""
    uses_threads, precisions, devices = (True, None, None) if workload is None \
        else support(workload)
    have = ["cpu", "gpu"] if partition.gpus_per_node else ["cpu"]
    return uses_threads, precisions, [d for d in (devices or have) if d in have]


def load_plugin(spec: str) -> list[str]:
    """Import extra kernels from a module name or a ``.py`` file path; return the new names.

    Used by ``--kernel-module`` so a site (or a test) can add kernels without packaging them.
    """
    import importlib.util
    from pathlib import Path

    from hpcds1mpi.errors import ConfigError

    _load_all()
    before = set(_REGISTRY)
    try:
        if spec.endswith(".py"):
            path = Path(spec)
            if not path.is_file():
                raise ConfigError(f"kernel module {spec} not found")
            mod_spec = importlib.util.spec_from_file_location(f"hpcds1mpi_plugin_{path.stem}", path)
            module = importlib.util.module_from_spec(mod_spec)
            mod_spec.loader.exec_module(module)
        else:
            importlib.import_module(spec)
    except ImportError as exc:
        raise ConfigError(f"cannot import kernel module {spec!r}: {exc}") from None
    return sorted(set(_REGISTRY) - before)
