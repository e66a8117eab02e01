"""Where a single run of a pick may land, given its workload's measured repeat noise: the
band ``recommend`` shows beside the model's interval where it is wider."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from hpcds1mpi.decide.system1 import Choice


def run_scatter(choice: "Choice", row: dict) -> dict | None:
    """Where a single run of the pick may land given its workload's measured repeat noise
    (``(max - min) / median`` over repeats, read as the median +- half of it):
    ``{"noise", "runtime_lo", "runtime_hi"}``, or None where the noise is unknown or the
    model's interval already holds that band. The members, fitted to the same medians, agree
    at a measured point however much its repeats scattered."""
    noise, median = float(choice.noise), float(row["runtime_s"])
    if not (math.isfinite(noise) and noise > 0 and math.isfinite(median) and median > 0):
        return None
    lo, hi = median * max(1.0 - noise / 2, 0.0), median * (1.0 + noise / 2)
    model_lo, model_hi = (float(row[k]) if row[k] is not None else math.nan
                          for k in ("runtime_lo", "runtime_hi"))
    if lo >= model_lo and hi <= model_hi:  # False for an unknown (NaN) end
        return None
    return {"noise": noise,
            "runtime_lo": min(lo, model_lo) if math.isfinite(model_lo) else lo,
            "runtime_hi": max(hi, model_hi) if math.isfinite(model_hi) else hi}
