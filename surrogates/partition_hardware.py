"""The hardware a bundle records per partition, from its training rows: what the guard and
System 1 compare a partition asked about with."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

#: The partition columns that describe its hardware.
HARDWARE_COLUMNS = ("cores_per_node", "memory_gb", "gpus_per_node", "gpu_memory_gb",
                    "max_nodes")


def partition_hardware(data: "pd.DataFrame") -> dict[str, dict]:
    """Per partition of the runs ``data``, its hardware as most of its runs record it, and the
    CPU its runs were measured on where they name one (for the guard, s31 tester Q4), with its
    signature where they record one (which generation a generic name is: s38 tester K2).

    Most runs, not the first row: learn appends a run read again (quickstart's rerun learning
    its sweep into a bundle learn extended), so a tune's few runs from an allocation of the same
    nodes (its memory share: 4 GB of 25.3) had come first and the partition became "unlike any
    machine the model was trained on" (s37 tester K3)."""
    columns = [c for c in HARDWARE_COLUMNS if c in data.columns]
    partitions = {}
    for name, rows in data.groupby(data["partition"].astype(str)):
        partitions[name] = {c: most_recorded(rows[c]) for c in columns}
        for column in ("cpu_model", "cpu_signature"):  # the signature: s38 tester K2
            cpus = set(rows[column].dropna().astype(str)) - {""} if column in rows else ()
            if len(cpus) == 1:
                partitions[name][column] = cpus.pop()
    return partitions


def most_recorded(values: "pd.Series"):
    """The value most of ``values`` hold (the first of them on a tie; None when none is
    recorded), as a plain Python value."""
    counts = Counter(v.item() if isinstance(v, np.generic) else v for v in values.dropna())
    return max(counts, key=counts.get) if counts else None
