"""One candidate of a recommendation as its answer shows it: the table's and the script's row
(:func:`row`), the JSON row (:func:`json_row`), and plain JSON-able data (:func:`clean`).

A row says whether its predictions are extrapolated to a knob level the workload was never
measured at (``unmeasured``, System 1's :data:`~hpcds1mpi.decide.scores.UNMEASURED` column)
and how many runs at this exact size its values are (``measured_runs``; 0: modelled).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from hpcds1mpi.decide.system1 import Choice

#: The predicted numbers of a row (floats; non-finite ones are None in JSON).
ROW_NUMBERS = ("runtime_s", "runtime_lo", "runtime_hi", "energy_j", "energy_lo", "energy_hi",
               "fail_prob", "mem_need_mb")
#: Scores columns a row carries when System 1 gave them (s31 tester Q5 and QA), with defaults.
ROW_MARKS = (("unmeasured", bool, False), ("measured_runs", int, 0))


class CleanRow(dict):
    """A row of :func:`json_row`: plain Python values already (non-finite floats as None), so
    :func:`clean` copies it without walking it (~40 rows an answer)."""


def row(choice: "Choice", i: int) -> dict:
    """One candidate as the table and the script read it (floats as they are)."""
    value = choice.scores.values  # each column as Python values, converted once per job
    cols = choice.scores.cols
    i = int(i)
    # The configuration as ``choice.config(i)`` gives it, read without building one (its
    # checks hold for every grid row; ~4,000 of them cost serve ~0.1 ms a question).
    return {"partition": str(value("partition")[i]), "nodes": int(value("nodes")[i]),
            "ranks_per_node": int(value("ranks_per_node")[i]),
            "threads": int(value("threads")[i]), "device": str(value("device")[i]),
            "precision": str(value("precision")[i]),
            **{k: float(value(k)[i]) for k in ROW_NUMBERS},
            **{k: kind(value(k)[i]) if k in cols else default for k, kind, default in ROW_MARKS}}


def json_row(choice: "Choice", i: int, **extra) -> CleanRow:
    """:func:`row` as the JSON answer shows it (non-finite floats as None; ``extra``: plain
    values added after)."""
    out = row(choice, i)
    for k in ROW_NUMBERS:
        if not math.isfinite(out[k]):
            out[k] = None
    return CleanRow(out, **extra)


def clean(value):
    """``value`` as plain JSON-able data: numpy scalars as Python numbers, non-finite floats
    as None. The common exact types are settled first (an answer holds ~150 values: the
    ``isinstance`` chain cost ``serve`` ~1 ms a question); anything else, subclasses
    included, goes the general way."""
    kind = type(value)
    if kind is CleanRow:
        return dict(value)
    if kind is float:
        return value if math.isfinite(value) else None
    if kind is str or kind is int or kind is bool or value is None:
        return value
    if kind is dict:
        return {k: clean(v) for k, v in value.items()}
    if kind is list:
        return [clean(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: clean(v) for k, v in value.items()}
    if isinstance(value, list):
        return [clean(v) for v in value]
    if isinstance(value, (np.floating, np.integer)):
        return clean(value.item())
    return value


__all__ = ["CleanRow", "ROW_NUMBERS", "clean", "json_row", "row"]
