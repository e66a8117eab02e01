"""The unit of every telemetry column: the one list, written as each column dataset's ``units``
attribute (:mod:`.snapshot_write`) and shown in docs/telemetry.md's tables (a test holds the
two together).

A column named here has that physical unit; any other number is dimensionless (a count, a
fraction, a code), ``"1"`` as CF and UDUNITS write it; text has ``""``. Files written before
the attribute read as they did: nothing reads it back.
"""

from __future__ import annotations

#: Seconds since the Unix epoch, as CF writes a time axis (docs/telemetry.md: "Unix s").
EPOCH_S = "s since 1970-01-01T00:00:00Z"
#: A number without a unit.
DIMENSIONLESS = "1"

#: table -> column -> unit, for the columns that have one.
UNITS: dict[str, dict[str, str]] = {
    "runs": {
        "runtime_s": "s", "runtime_min_s": "s", "runtime_max_s": "s", "cpu_s": "s",
        "peak_rss_mb": "MiB", "gpu_busy_s": "s", "gpu_peak_mem_mb": "MiB", "energy_j": "J",
        "avg_power_w": "W", "work_flops": "flop", "work_bytes": "B",
        "comm_messages": "messages", "comm_bytes": "B", "mem_bytes_per_rank": "B",
        "memory_gb": "GB", "started_at": EPOCH_S, "finished_at": EPOCH_S, "elapsed_s": "s",
        "measured_s": "s", "setup_s": "s",
    },
    "machines": {"memory_gb": "GB", "gpu_memory_gb": "GB", "first_seen": EPOCH_S},
    "repeats": {"wall_s": "s"},
    "ranks": {"cpu_s": "s", "peak_rss_mb": "MiB", "wall_s_median": "s", "mpi_s_median": "s"},
    "rank_repeats": {"wall_s": "s", "mpi_s": "s"},
    "provenance": {"merged_at": EPOCH_S},
}


def column_units(table: str, column: str, kind: str) -> str:
    """The ``units`` attribute of ``table``'s ``column`` of ``kind`` (``str``/``int``/
    ``float``, :data:`.layout.TABLES`)."""
    if kind == "str":
        return ""
    return UNITS.get(table, {}).get(column, DIMENSIONLESS)


def shown_units(unit: str) -> str:
    """How docs/telemetry.md's tables write ``unit`` (blank: none; ``Unix s``: epoch)."""
    return {EPOCH_S: "Unix s", DIMENSIONLESS: "", "": ""}.get(unit, unit)
