"""The input files each program's runs read, as a bundle keeps them: their stamps (size,
modification time, SHA-256), so that a question about a job whose input was edited since can
be told so.

A sweep stamps the files its command names (:mod:`hpcds1mpi.measure.input_stamps`), but only
its ``--resume`` compared them: a model trained on the sweep kept none, and after BAGEL's
``h16.json`` was edited (another basis), ``recommend`` and ``advise`` still called the layout's
4.81 s "measured (1 run at this size)" where the edited input ran in 1.37 s (s48 tester O4).
So the training rows carry their sweep's stamps (``input_stamps``:
:func:`~hpcds1mpi.records.telemetry_rows.input_stamps`), ``learn`` keeps them with the old rows,
and the manifest records them per workload under :data:`KEY` (:func:`measured_inputs`), with
when its last run ended: a file the program rewrites itself changes during the runs, only a
change after them is an edit. :mod:`hpcds1mpi.decide.edited_inputs` compares them with the
files now. A bundle trained before keeps none, and nothing is compared.
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover - pandas is imported by the caller
    import pandas as pd

#: The manifest's entry: workload -> ``{"files": {path: [stamp, ...]}, "until": seconds}``.
KEY = "measured_inputs"
#: The training rows' column holding their sweep's stamps (JSON: absolute path -> stamp).
COLUMN = "input_stamps"


def measured_inputs(frame: "pd.DataFrame") -> dict:
    """``{KEY: {workload: {"files": ..., "until": ...}}}`` from training rows ``frame``: per
    workload, each stamped file (absolute path) with every stamp its rows recorded of it, and
    the latest ``finished_at`` of those rows; ``{}`` where no row carries stamps (kernels, job
    logs, telemetry from before the stamps), so the manifest holds no entry."""
    import pandas as pd

    if COLUMN not in frame.columns or "workload" not in frame.columns:
        return {}
    texts = frame[COLUMN]
    rows = frame[texts.notna() & (texts.astype(str) != "")]
    out = {}
    for workload, group in rows.groupby(rows["workload"].astype(str), sort=True):
        files: dict[str, list] = {}
        for text in group[COLUMN].astype(str).unique():
            try:
                stamps = json.loads(text)
            except ValueError:
                continue
            for path, stamp in (stamps.items() if isinstance(stamps, dict) else ()):
                if stamp not in files.setdefault(path, []):
                    files[path].append(stamp)
        ends = pd.to_numeric(group["finished_at"], errors="coerce") \
            if "finished_at" in group.columns else pd.Series(dtype=float)
        until = float(ends.max()) if ends.notna().any() else math.nan
        if files and math.isfinite(until):  # no end known: no edit can be told from a run
            out[workload] = {"files": files, "until": until}
    return {KEY: out} if out else {}


def recorded_inputs(bundle, workload: str) -> tuple[dict, float] | None:
    """(absolute path -> the stamps its runs recorded, when the last of those runs ended) of
    ``workload`` in ``bundle``'s manifest; None where it records none (a bundle trained
    before, a kernel) or the entry is not one :func:`measured_inputs` writes."""
    manifest = getattr(bundle, "manifest", None)
    entry = (manifest.get(KEY) or {}).get(workload) if isinstance(manifest, dict) else None
    if not isinstance(entry, dict):
        return None
    files, until = entry.get("files"), entry.get("until")
    if not isinstance(files, dict) or not isinstance(until, (int, float)):
        return None
    return {str(p): [s for s in stamps if isinstance(s, list) and len(s) == 3]
            for p, stamps in files.items() if isinstance(stamps, list)}, float(until)


__all__ = ["COLUMN", "KEY", "measured_inputs", "recorded_inputs"]
