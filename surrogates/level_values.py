"""A bundle's stored measured-levels values read back (``measured_levels.json``): each
value as the level's field holds it, or None / () where it is damaged or not there (a bundle
older than the field)."""

from __future__ import annotations

import math
import os.path

from hpcds1mpi.launch.sweep_step import READING_KEYS as MEASURE_KEYS

from .program_command import RUN_KEYS


def stored_folder(value) -> str | None:
    """``value`` as an absolute folder, or None when it is not one."""
    return value if isinstance(value, str) and os.path.isabs(value) else None


def stored_configs(value, lines: int) -> tuple:
    """``command_configs`` as stored (lists), as tuples; () when damaged or not one per line."""
    if not isinstance(value, list) or len(value) != lines:
        return ()
    try:
        return tuple(tuple(tuple(run) for run in runs if len(run) == len(RUN_KEYS))
                     for runs in value)
    except TypeError:
        return ()


def stored_seconds(value) -> dict | None:
    """``value`` as label -> seconds (finite, >= 0), or None when it is not one."""
    if not isinstance(value, dict):
        return None
    out = {str(k): float(v) for k, v in value.items()
           if isinstance(v, (int, float)) and math.isfinite(v) and v >= 0}
    return out or None


def stored_measure_options(value) -> dict | None:
    """``value`` as reading options (:data:`MEASURE_KEYS`, strings), or None when it is not;
    a key it lacks is "" (a record written before the key existed, e.g. ``fail_regex``:
    its sweep could not use it)."""
    if not isinstance(value, dict) or not all(isinstance(value.get(k, ""), str)
                                              for k in MEASURE_KEYS):
        return None
    return {k: value.get(k, "") for k in MEASURE_KEYS}


def stored_time(value) -> float | None:
    """An epoch time as kept (a finite positive number), else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        try:
            value = float(value)
        except (TypeError, ValueError):
            return None
    return float(value) if math.isfinite(value) and value > 0 else None


def stored_idle_threads(value) -> dict | None:
    """``idle_threads`` as kept (thread levels, cores busy per rank, the ratio to 1 thread or
    None), or None when it is not one."""
    def number(v) -> bool:
        return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)

    if not isinstance(value, dict) or not isinstance(value.get("threads"), list):
        return None
    threads, ratio = value["threads"], value.get("vs_one_thread")
    if not threads or not all(isinstance(t, int) and t >= 2 for t in threads) or not number(
            value.get("busy")) or not (ratio is None or number(ratio)):
        return None
    return {"threads": threads, "busy": float(value["busy"]),
            "vs_one_thread": None if ratio is None else float(ratio)}
