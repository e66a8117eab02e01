"""How long a program's ``--setup`` took, as its rows recorded it (``setup_s``), for a job
script's time limit: a 65 s setup before a 0.4 s solver had got ``--time=00:01:00`` and the job
hit the limit (s30 tester O1). Kept per configuration in the bundle's levels
(:attr:`~hpcds1mpi.surrogates.levels.MeasuredLevels.setup_s`).
"""

from __future__ import annotations

import math

#: The key of the workload's longest setup, for a configuration that recorded none.
ANY = ""


def setup_seconds(rows: "pd.DataFrame") -> dict[str, float]:  # noqa: F821
    """The longest setup wall seconds per configuration label (``N1xR2xT1-cpu-fp64``) of one
    program's rows, and the longest of all under :data:`ANY`; {} when no row recorded one
    (no ``--setup``, or rows from before the column). A setup that failed is left out: its
    time is where it stopped (a timeout's is ``--timeout``), not what a setup takes."""
    import pandas as pd

    from hpcds1mpi.config import Configuration
    from hpcds1mpi.measure.setup_command import FAILED

    need = {"setup_s", "nodes", "ranks_per_node", "threads", "device", "precision"}
    if len(rows) == 0 or not need <= set(rows.columns):
        return {}
    seconds = pd.to_numeric(rows["setup_s"], errors="coerce")
    errors = rows["error"].astype(str) if "error" in rows.columns else pd.Series("", rows.index)
    kept = rows[seconds.notna() & (seconds >= 0) & ~errors.str.startswith(FAILED)]
    out: dict[str, float] = {}
    for (_, row), value in zip(kept.iterrows(), seconds[kept.index]):
        try:
            label = Configuration(int(row["nodes"]), int(row["ranks_per_node"]),
                                  int(row["threads"]), str(row["device"]),
                                  str(row["precision"])).label()
        except (TypeError, ValueError):
            continue
        out[label] = max(out.get(label, 0.0), float(value))
        out[ANY] = max(out.get(ANY, 0.0), float(value))
    return out


def setup_allowance(recorded, label: str) -> tuple[float, str]:
    """(seconds a job of the configuration ``label`` must allow for its setup, and where they
    come from, for the script's comment) from ``recorded`` (:func:`setup_seconds`' dict, as a
    bundle keeps it; None or malformed: nothing known, (0, ""))."""
    if not isinstance(recorded, dict):
        return 0.0, ""
    for key, whence in ((label, "the longest measured for this configuration"),
                        (ANY, "the longest measured for this program")):
        value = recorded.get(key)
        if isinstance(value, (int, float)) and math.isfinite(value) and value >= 0:
            return float(value), whence
    return 0.0, ""
