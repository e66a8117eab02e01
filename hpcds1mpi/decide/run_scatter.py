"""Where a single run of a pick may land: the band ``recommend`` shows beside the model's
interval where that interval does not hold it (the members, fitted to the same medians, agree
at a measured point however much its repeats scattered).

The band is what was measured (s38 tester B3: read as the median +- half the workload's noise,
symmetric and clipped at 0, one slow launch in three had given "about 0 ms-403 ms" for
launches of 150 ms or 600 ms), by the best evidence the bundle has:

* ``measured``: the pick ran at this size: the fastest and slowest repeat of those runs;
* ``repeats``: the pick's predicted median times its workload's typical ratios of fastest and
  of slowest repeat to the run's median (``surrogates/repeat_spread.py``);
* ``noise``: a bundle trained before its training frame kept each run's fastest and slowest
  repeat has only the workload's noise, ``(max - min) / median``: every repeat of a run with
  that noise lies within that width of its median, on a side unrecorded, so the band is the
  median +- the noise, its lower end unknown (None) where the noise is 100 % or more.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Callable

from hpcds1mpi.decide.timed_out import TIMED_OUT_AFTER
from hpcds1mpi.surrogates.repeat_spread import FAST_RATIO, FASTEST, SLOW_RATIO, SLOWEST

if TYPE_CHECKING:  # pragma: no cover
    from hpcds1mpi.decide.system1 import Choice

_MODEL = "the interval above is the model's"


def run_scatter(choice: "Choice", show_time: Callable[[float], str]) -> dict | None:
    """Where a single run of ``choice``'s pick may land, or None where nothing measured says
    or the model's interval already holds the band.

    Args:
        show_time: how the line writes a time in seconds (``recommendation.format_time``).

    Returns:
        ``{"runtime_lo", "runtime_hi", "source", "noise", "line"}``: the band in seconds
        (``runtime_lo`` None where unknown), ``measured`` / ``repeats`` / ``noise`` (the
        module docstring), the workload's noise (None: unknown) and the line the table, the
        JSON answer and the console show.
    """
    cols, i = choice.scores.cols, choice.index

    def value(col: str) -> float:
        return float(cols[col][i]) if col in cols else math.nan

    median, noise = value("runtime_s"), float(choice.noise)
    if not (math.isfinite(median) and median > 0) or math.isfinite(value(TIMED_OUT_AFTER)):
        return None  # a timed-out pick's median is a lower bound, no run's centre (s41 D6)
    fastest, slowest = value(FASTEST), value(SLOWEST)
    fast, slow = value(FAST_RATIO), value(SLOW_RATIO)
    if math.isfinite(fastest) and math.isfinite(slowest) and fastest > 0:
        lo, hi, source = fastest, slowest, "measured"
        runs = int(value("measured_runs")) if "measured_runs" in cols else 0
        why = (f"the fastest and slowest repeat of its {runs} run{'s' if runs != 1 else ''} "
               "at this size" if runs > 0 else "the fastest and slowest repeat measured here")
    elif math.isfinite(fast) and math.isfinite(slow) and fast > 0:
        lo, hi, source = median * fast, median * slow, "repeats"
        why = (f"this workload's runs measured their fastest repeat at {fast:.2f}x and their "
               f"slowest at {slow:.2f}x their median, typically")
    elif math.isfinite(noise) and noise > 0:
        lo = median * (1.0 - noise) if noise < 1.0 else None
        hi, source = median * (1.0 + noise), "noise"
        why = (f"this workload's repeats measured {noise:.0%} apart, fastest to slowest, on "
               "a side of the median this bundle did not record (one trained again does)")
    else:
        return None
    model_lo, model_hi = value("runtime_lo"), value("runtime_hi")
    if (lo is None or lo >= model_lo) and hi <= model_hi:  # False for an unknown (NaN) end
        return None
    band = (f"about {show_time(lo)}–{show_time(hi)}" if lo is not None
            else f"up to about {show_time(hi)}")
    return {"runtime_lo": lo, "runtime_hi": hi, "source": source,  # JSON's None: unknown
            "noise": noise if math.isfinite(noise) else None,
            "line": f"a single run: {band} ({why}; {_MODEL})"}
