"""Kernel registry: one decorator, one lookup, third-party kernels through entry points.

Built-in kernels live one per file in this folder and register with :func:`register`. A kernel
module whose optional library is missing still registers; it sets ``unavailable`` and the runner
reports why only when that kernel is asked for.

The registry is lazy: a built-in kernel's module is named after the kernel, so :func:`names`
lists the built-ins without importing them and :func:`get` / :func:`support` of a built-in
import that one module (``recommend`` asks about one workload; importing all eight kernels and
scanning every installed package's entry points cost a cold start ~25 ms). Entry points are
read only when a name is not a built-in, or when every kernel is listed.
"""

from __future__ import annotations

import importlib

from hpcds1mpi.errors import UnknownKernelError

from .base import Kernel, KernelContext, WorkModel  # noqa: F401

ENTRY_POINT_GROUP = "hpcds1mpi.kernels"
BUILTIN_MODULES = ("stencil", "gemm", "fft", "cg", "nbody", "mltrain", "allreduce", "io")

_REGISTRY: dict[str, type[Kernel]] = {}
_LOADED = False  # every built-in module and every entry point imported


def register(cls: type[Kernel]) -> type[Kernel]:
    """Class decorator adding a kernel to the registry under ``cls.name``."""
    if not cls.name:
        raise ValueError(f"{cls.__name__} has no name")
    _REGISTRY[cls.name] = cls
    return cls


def _load_builtin(mod: str) -> None:
    """Import one built-in kernel module (it registers itself); a missing file is skipped."""
    try:
        importlib.import_module(f"{__name__}.{mod}")
    except ModuleNotFoundError as exc:
        if exc.name != f"{__name__}.{mod}":
            raise


def _load_all() -> None:
    global _LOADED
    if _LOADED:
        return
    _LOADED = True
    for mod in BUILTIN_MODULES:
        _load_builtin(mod)
    from importlib.metadata import entry_points

    for ep in entry_points(group=ENTRY_POINT_GROUP):
        cls = ep.load()
        if isinstance(cls, type) and issubclass(cls, Kernel):
            register(cls)


def names() -> list[str]:
    """Names of every registered kernel, sorted (entry points included)."""
    _load_all()
    return sorted(_REGISTRY)


def is_kernel(name: str) -> bool:
    """Whether ``name`` is a registered kernel: a built-in without importing any module, any
    other name after reading the entry points."""
    return name in BUILTIN_MODULES or name in _REGISTRY or name in names()


#: Between a kernel's name and its options in a workload label (``stencil+sweeps.100``,
#: :mod:`hpcds1mpi.records.kernel_options`).
OPTIONS_SEPARATOR = "+"


def declaring(workload: str) -> str | None:
    """The registered kernel whose declarations (threads, precisions, devices, working set)
    ``workload`` keeps: the kernel itself, or the kernel of one of its option decks
    (``stencil+sweeps.100``: options change what a run computes, never what it can run on;
    s41 tester D5, D17: such a deck was offered bf16 and no memory floor); None otherwise."""
    name = str(workload)
    if is_kernel(name):
        return name
    base, sep, _ = name.partition(OPTIONS_SEPARATOR)
    return base if sep and base and is_kernel(base) else None


def get(name: str) -> Kernel:
    """A fresh instance of the kernel called ``name`` (a built-in imports only its module).

    Raises:
        UnknownKernelError: naming the kernels that exist.
    """
    if name in BUILTIN_MODULES and name not in _REGISTRY:
        _load_builtin(name)
    if name not in _REGISTRY:
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
        name = declaring(workload)  # an option deck keeps its kernel's (s41 tester D17)
        if name is None:
            return True, None, None
        k = get(name)
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

    if not spec.strip():
        raise ConfigError("--kernel-module is empty; give a module name or a .py file")
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
    except ConfigError:
        raise
    except ImportError as exc:
        raise ConfigError(f"cannot import kernel module {spec!r}: {exc}") from None
    except SyntaxError as exc:
        raise ConfigError(f"kernel module {spec} failed to import (SyntaxError at line "
                          f"{exc.lineno}: {exc.msg}); fix the module") from None
    except SystemExit:
        raise ConfigError(f"kernel module {spec} exited while it was imported; a kernel module "
                          "only defines kernels") from None
    except Exception as exc:  # noqa: BLE001 - the site's own code: any error of it is its own
        reason = " ".join(str(exc).split())[:300]
        raise ConfigError(f"kernel module {spec} failed to import ({type(exc).__name__}: "
                          f"{reason}); fix the module") from None
    return sorted(set(_REGISTRY) - before)


def refuse_option_deck(kernel: str) -> None:
    """Refuse ``tune --kernel`` of a kernel's option deck (``stencil+sweeps.100``), which tune
    cannot give its runs, naming the way to measure it (s41 tester D15).

    Raises:
        ConfigError: ``kernel`` is a registered kernel's option deck.
    """
    from hpcds1mpi.errors import ConfigError

    if (deck_of := declaring(kernel)) not in (None, kernel):
        raise ConfigError(f"--kernel {kernel!r} is kernel {deck_of} with kernel options, "
                          "which tune cannot give its runs; measure that deck with "
                          f"sweep --plan FILE ([[kernel]] name = \"{deck_of}\", its "
                          "options in extra), then hpcds1mpi learn")
