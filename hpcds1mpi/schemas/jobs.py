"""The schema of a job table (ingest's output, :data:`hpcds1mpi.records.ingest.JOB_COLUMNS`):
the range of every numeric column, checked column by column with numpy masks.

A 300k-job log is 300k rows: they are not validated one by one through pydantic. Each rule is
one vectorised comparison; a row that breaks a rule is dropped and counted under the first
reason it breaks (``runtime_s negative``), so the report's malformed count is the truth. A
missing value (NaN in the table) is not malformed: readers report what is missing themselves.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from .limits import MAX_COUNT, MAX_GPUS_PER_NODE, MAX_MEMORY_GB, MAX_SECONDS

if TYPE_CHECKING:
    import numpy as np

#: Largest average power of one job, W (100 MW: more than any machine draws).
MAX_JOB_WATTS = 1e8

#: (column, lowest, highest) of every numeric job-table column that has a range; the bounds
#: are inclusive and generous (:mod:`.limits`): a value past them is a corrupt record.
JOB_RANGES: list[tuple[str, float, float]] = [
    ("runtime_s", 0.0, MAX_SECONDS),
    ("nodes", 1, MAX_COUNT),
    ("ranks", 0, MAX_COUNT),
    ("threads", 0, MAX_COUNT),
    ("cores", 0, MAX_COUNT * 1024),
    ("gpus", 0, MAX_COUNT * MAX_GPUS_PER_NODE),
    ("req_nodes", 1, MAX_COUNT),
    ("req_procs", 0, MAX_COUNT * 1024),
    ("req_gpus", 0, MAX_COUNT * MAX_GPUS_PER_NODE),
    ("wait_s", 0.0, MAX_SECONDS),
    ("cpu_s", 0.0, MAX_SECONDS * MAX_COUNT * 1024),
    ("peak_rss_mb", 0.0, MAX_MEMORY_GB * 1000),
    ("energy_j", 0.0, MAX_JOB_WATTS * MAX_SECONDS),
    ("avg_power_w", 0.0, MAX_JOB_WATTS),
    ("time_limit_s", 0.0, 100 * MAX_SECONDS),
    ("mem_req_gb", 0.0, MAX_MEMORY_GB * MAX_COUNT),
]


def malformed_rows(table) -> tuple["np.ndarray", Counter]:
    """Which rows of a job table break a column's range, and why.

    Args:
        table: a DataFrame with (some of) the columns of :data:`JOB_RANGES`; the others are
            not looked at.

    Returns:
        (bool array, one entry per row: True for a malformed row; Counter reason -> rows, each
        row counted once, under the first rule it breaks, e.g. ``"runtime_s negative"``,
        ``"nodes not finite (inf)"``, ``"runtime_s absurd (> 3.15e+07)"``).
    """
    import numpy as np
    import pandas as pd

    n = len(table)
    bad = np.zeros(n, dtype=bool)
    reasons: Counter = Counter()

    def count(mask, reason: str) -> None:
        nonlocal bad
        mask = mask & ~bad
        hits = int(mask.sum())
        if hits:
            reasons[reason] += hits
            bad |= mask

    for column, low, high in JOB_RANGES:
        if column not in table.columns:
            continue
        values = pd.to_numeric(table[column], errors="coerce").to_numpy(dtype=float,
                                                                        na_value=np.nan)
        with np.errstate(invalid="ignore"):
            count(np.isinf(values), f"{column} not finite (inf)")
            count(values < 0, f"{column} negative")
            count(values < low, f"{column} below {low:g}")
            count(values > high, f"{column} absurd (> {high:.3g})")
    return bad, reasons


def drop_malformed(table, dropped: Counter):
    """``table`` without its malformed rows (:func:`malformed_rows`); each counted in
    ``dropped`` under its reason."""
    bad, reasons = malformed_rows(table)
    dropped.update(reasons)
    if not bad.any():
        return table
    return table[~bad].reset_index(drop=True)
