"""System 1 for many questions at once: one candidate table, one ``Bundle.predict``.

A question's own work in :func:`~hpcds1mpi.decide.system1.score` is small (its grid is a few
to a few hundred rows); most of its cost is the ensemble's fixed cost per ``predict`` call
(every member walked once per call, measured ~6 ms on the shipped bundle for a 9-row grid).
:func:`score_many` builds each question's grid, stacks them into one table, predicts once,
and finishes each question with the same code :func:`score` uses
(:func:`~hpcds1mpi.decide.system1.scores_from_prediction`), so each answer equals the
one-question answer (the forest's answer for a row does not depend on the other rows, and a
bundle's embedding is computed for each question's rows as alone, :func:`each_alone`; the
tests hold them equal, bit for bit, on the shipped bundle and on one with an embedding).

A question whose input is wrong (size <= 0, no partition, a device no partition has) gets
its own exception in its place in the answer list; the others are answered. Should the
stacked predict itself fail, every question is predicted alone, so one question's error is
never another's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

import numpy as np

from hpcds1mpi.decide import system1 as s1
from hpcds1mpi.errors import ModelError
from hpcds1mpi.surrogates.columns import Columns, is_columns

if TYPE_CHECKING:  # pragma: no cover
    from hpcds1mpi.cluster import Partition
    from hpcds1mpi.decide.memory_limits import MemoryLimit


@dataclass
class Question:
    """One problem as :func:`~hpcds1mpi.decide.system1.score` takes it."""

    workload: str
    size: int
    partitions: Sequence["Partition"]
    constraints: s1.Constraints | None = None
    limits: "dict[str, MemoryLimit] | None" = None
    uses_threads: bool = True


def _frame(bundle, q: Question):
    """The question's candidate table (:func:`~hpcds1mpi.decide.system1.grid`: checked as
    :func:`~hpcds1mpi.decide.system1.score` checks it, raising alike)."""
    return s1.grid(bundle, q.workload, q.size, q.partitions, q.constraints, q.uses_threads)


def stack_tables(frames: list):
    """One table of every frame's rows, in order."""
    if all(is_columns(f) for f in frames):
        return Columns({k: np.concatenate([f[k] for f in frames]) for k in frames[0].columns})
    import pandas as pd

    return pd.concat([f if not is_columns(f) else f.to_frame() for f in frames],
                     ignore_index=True)


def table_rows(table, start: int, stop: int):
    """Rows ``start:stop`` of a prediction (Columns or DataFrame)."""
    if is_columns(table):
        return Columns({k: table[k][start:stop] for k in table.columns})
    return table.iloc[start:stop].reset_index(drop=True)


def each_alone(bundle, method: str):
    """``bundle.<method>`` as :func:`stacked_call` calls it, ``(table, groups)``: a bundle
    that takes ``groups`` (``takes_groups``) answers each stacked table as alone; a
    stand-in's method is asked for the stack as is (its rows do not depend on each other).

    (A bundle's embedding of a row depends on the rows embedded with it: float32 products
    round by the table's size, and a tree split on it moved a job's interval by tens of
    percent, s39 tester G3.)
    """
    fn = getattr(bundle, method)
    if getattr(bundle, "takes_groups", False):
        return fn
    return lambda table, groups=None: fn(table)


def stacked_call(fn, tables: list, what: str):
    """``fn(stack, groups)`` of all ``tables`` stacked (:func:`stack_tables`; ``groups``: their
    row counts, :func:`each_alone`), one answer row per input row; None when it fails or
    answers the wrong number of rows (the caller then asks each table alone, so one table's
    error is never another's)."""
    try:
        got = fn(stack_tables(tables), [len(t) for t in tables])
        if len(got) != sum(len(t) for t in tables):
            raise ModelError(f"{what} has the wrong length")
        return got
    except Exception:  # noqa: BLE001 - the caller's one-by-one path reports each error
        return None


def question_key(q: Question):
    """What :func:`~hpcds1mpi.decide.system1.score` reads of ``q`` (the bundle aside), as a
    hashable key; None when its limits are given (not kept). The size's type is in it: a
    size of the wrong type is refused, not taken for an equal integer."""
    if q.limits is not None:
        return None
    return (str(q.workload), type(q.size), q.size, tuple(repr(p) for p in q.partitions),
            repr(q.constraints or s1.Constraints()), bool(q.uses_threads))


def score_many(bundle, questions: Sequence[Question], memo=None) -> list:
    """Score every question with one predict call.

    Questions asked twice (:func:`question_key`: the same job for two objectives) are scored
    once and share their (read-only) scores; with ``memo`` (a
    :class:`~hpcds1mpi.decide.batch_memo.Kept`, for this bundle) scores kept from earlier
    calls are used and this call's are kept.

    Returns:
        one entry per question, in order: its :class:`~hpcds1mpi.decide.system1.Scores`, or
        the exception :func:`score` would have raised for it (never raised here).
    """
    from hpcds1mpi.decide.batch_memo import freeze

    out: list = [None] * len(questions)
    frames: dict[int, object] = {}
    asked: dict[int, object] = {}  # what the bundle is asked (s1.model_table of the frame)
    first: dict = {}  # key -> the question scored for it
    same: dict[int, int] = {}  # question -> the earlier one with its key
    keys: dict[int, object] = {}
    for i, q in enumerate(questions):
        key = question_key(q)
        if key is not None:
            kept = memo.get(key) if memo is not None else None
            if kept is not None:
                out[i] = kept
                continue
            if key in first:
                same[i] = first[key]
                continue
            first[key], keys[i] = i, key
        try:
            frames[i] = _frame(bundle, q)
            asked[i] = s1.model_table(bundle, frames[i], q.partitions)
        except Exception as exc:  # noqa: BLE001 - the question's own error, kept in place
            frames.pop(i, None)
            out[i] = exc
    order = list(frames)
    # None: predict each alone, so a question's error stays its own.
    predict = each_alone(bundle, "predict")
    pred = stacked_call(predict, [asked[i] for i in order], "model answer") if order else None
    start = 0
    for i in order:
        q, frame = questions[i], frames[i]
        try:
            part = predict(asked[i]) if pred is None \
                else table_rows(pred, start, start + len(frame))
            out[i] = s1.scores_from_prediction(bundle, q.workload, int(q.size), q.partitions,
                                               q.constraints or s1.Constraints(), q.limits,
                                               frame, part)
            if i in keys and (memo is not None or i in same.values()):
                freeze(out[i])  # shared
                if memo is not None:
                    memo.put(keys[i], out[i])
        except Exception as exc:  # noqa: BLE001
            out[i] = exc
        start += len(frame)
    for i, j in same.items():
        out[i] = out[j]
    return out
