"""What a decision needs from a loaded bundle that does not depend on the question, kept once
per bundle object: its training frame, the guard's reference, the learned memory limits, the
knob levels each workload was measured at.

``recommend`` rebuilt these on every call (the training frame read twice, the guard's
reference standardised again, the out-of-memory rows predicted again: about a third of a warm
``recommend``), while ``serve``, the Python API's ``Model`` and ``tune`` ask many questions of
one bundle. A loaded bundle is read-only, so each value is computed on first use and kept as
long as the bundle object lives (a weak reference: a dropped bundle takes its values with it).
An object that cannot be weakly referenced or hashed (some test doubles) is not cached: every
call computes, as before. Callers must not change what they get (the frames are shared).
"""

from __future__ import annotations

import threading
import weakref
from typing import Any, Callable, Hashable

_CACHES: "weakref.WeakKeyDictionary[Any, dict]" = weakref.WeakKeyDictionary()
#: The service computes in worker threads: the dictionaries are changed under this lock (the
#: computation itself is not: two threads asking first compute the same value twice).
_LOCK = threading.Lock()


def memo(bundle, key: Hashable, compute: Callable[[], Any]):
    """``compute()`` the first time ``key`` is asked of ``bundle``, the kept value after.

    An exception is not kept: the next call computes (and raises) again.
    """
    try:
        with _LOCK:
            cache = _CACHES.get(bundle)
            if cache is None:
                cache = _CACHES[bundle] = {}
            if key in cache:
                return cache[key]
    except TypeError:  # not weakly referable or not hashable: nothing to keep it on
        return compute()
    value = compute()
    with _LOCK:
        return cache.setdefault(key, value)


def training_frame(bundle):
    """The bundle's training frame (problem, configuration and outcome of each training row),
    read once per bundle."""
    return memo(bundle, "training_frame", bundle.training_frame)


def training_columns(bundle, need: tuple[str, ...] = ()):
    """The training frame as plain arrays (:class:`~hpcds1mpi.surrogates.columns.Columns`,
    no pandas for a bundle that stores them), read once per bundle; a stand-in bundle's
    ``training_frame`` converted. ``need``: columns the caller reads, which a bundle's stored
    frame may lack (written before they were kept in it): then read with them from its rows,
    once per bundle too (pandas and pyarrow only then: a cold ``recommend`` asks none)."""
    def read():
        if hasattr(bundle, "training_columns"):
            return bundle.training_columns()
        from hpcds1mpi.surrogates.columns import as_columns

        return as_columns(training_frame(bundle))

    columns = memo(bundle, "training_columns", read)
    if all(c in columns for c in need) or getattr(bundle, "_path", None) is None:
        return columns
    return memo(bundle, ("training_columns", need), lambda: bundle.training_columns(need))


def measured_levels(bundle) -> dict:
    """Workload -> the knob levels its training rows ran at
    (:class:`~hpcds1mpi.surrogates.levels.MeasuredLevels`), kernels included, read once per
    bundle: the bundle's ``measured_levels.json``, or its training rows for a bundle older than
    that file. ``{}`` when neither can be read (a stand-in bundle): nothing is known measured,
    and nothing is said about it (a damaged file is reported where the offer reads it)."""
    def read():
        from hpcds1mpi.surrogates.levels import levels_from_frame, read_levels

        try:
            path = getattr(bundle, "_path", None)
            stored = read_levels(path) if path is not None else None
            return stored if stored is not None else levels_from_frame(training_frame(bundle))
        except Exception:  # noqa: BLE001 - see the docstring
            return {}

    return memo(bundle, "measured_levels", read)


def forget(bundle) -> None:
    """Drop what is kept for ``bundle`` (a test that changes a bundle in place)."""
    with _LOCK:
        try:
            _CACHES.pop(bundle, None)
        except TypeError:
            pass
