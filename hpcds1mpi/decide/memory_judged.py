"""Whether the pick's memory was judged, said in one line of the answer where it was not.

System 1 rules out a configuration whose memory need is above its partition's limit
(:mod:`~hpcds1mpi.decide.memory_limits`). A bundle trained where too few ok runs measured the
ranks' memory has no memory target (``peak_rss_mb``): a program's need is then unknown and not
judged, a kernel's is its declared working set only. ``train`` says the target was left out
(:func:`hpcds1mpi.commands.train.left_out_targets`); the answer says it too, in train's words
(:func:`hpcds1mpi.surrogates.targets.left_out_words`): it had said nothing, and a pick read
as one checked for memory (s37 tester K4, s38 fixer K4). Where the bundle learnt memory but
none of the workload's own ok runs measured it, its need comes from other workloads' runs
only, and that is said.
"""

from __future__ import annotations

import math

import numpy as np

MEMORY = "peak_rss_mb"


def _measured(bundle, workload: str | None) -> tuple[int | None, int | None]:
    """(ok runs with a measured peak, ok runs) of the bundle's training rows, of ``workload``
    only where given; (None, None) where the rows cannot say."""
    from hpcds1mpi.decide import bundle_cache

    def count():
        try:
            frame = bundle_cache.training_columns(bundle)
            ok = np.asarray(frame["status"]).astype(str) == "ok"
            peak = np.asarray(frame[MEMORY], dtype=float)
            if workload is not None:
                ok &= np.asarray(frame["workload"]).astype(str) == workload
        except (AttributeError, KeyError, TypeError, ValueError, OSError):
            return None, None
        return int((ok & np.isfinite(peak) & (peak > 0)).sum()), int(ok.sum())

    return bundle_cache.memo(bundle, ("memory measured", workload), count)


def memory_note(bundle, workload: str, row: dict) -> str:
    """The line for the pick ``row`` (a :class:`~hpcds1mpi.decide.scores.Scores` row: its
    predicted ``peak_rss_mb``, its ``mem_need_mb``) of ``workload``; "" where its memory was
    judged from runs of the workload that measured it."""
    from hpcds1mpi.surrogates.targets import UNMEASURED_WHY, left_out_words

    if not math.isfinite(float(row.get(MEMORY, math.nan))):  # the bundle learnt no memory
        judged = ("was not judged" if not math.isfinite(float(row.get("mem_need_mb", math.nan)))
                  else f"was judged by {workload}'s declared working set only")
        return (f"memory {judged}: the bundle learnt no {MEMORY} target; "
                f"{left_out_words(MEMORY, *_measured(bundle, None))}")
    measured, ok = _measured(bundle, workload)
    if measured == 0 and ok:
        return (f"memory was judged from other workloads' runs only: 0 of {ok} ok run(s) of "
                f"{workload} measured it ({UNMEASURED_WHY})")
    return ""
