"""A job's scored candidates: System 1's table of every configuration with its predictions.

:func:`~hpcds1mpi.decide.system1.score` builds a :class:`Scores`; ``choose``, the guard, the
answer's rows (``recommendation._row``) and System 2 read it. A service keeps a job's
:class:`Scores` for its other objectives' questions (``decide/batch_memo.py``): then it is
*shared*, its columns read-only and its subsets kept, and its rows are read from its columns'
Python values (:meth:`Scores.values`, which an answer's rows read for every table). What is
derived (the frame, subsets, values) is never copied by ``dataclasses.replace``.

Which candidates lie beyond what was measured (:func:`unmeasured_rows`,
:func:`never_measured`, :func:`unmeasured_lines`) is judged here too: the predictions there are extrapolations. And
what was measured around them (:func:`neighbour_runtimes`): a prediction between two measured
sizes is kept within their runtimes (:mod:`~hpcds1mpi.surrogates.neighbour_bounds`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from hpcds1mpi.decide.batch_memo import freeze

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from hpcds1mpi.decide.memory_limits import MemoryLimit


@dataclass
class Scores:
    """Every candidate of a problem with its predictions and why it is (in)feasible.

    Attributes:
        cols: parallel ``(n,)`` arrays, one per candidate: the input columns, the bundle's
            prediction columns, ``mem_need_mb`` (per node on CPU, per GPU on GPU),
            ``mem_limit_mb``, ``feasible`` and ``reason`` (``""`` when feasible, else ``fail``
            / ``memory`` / ``deadline`` / ``energy``).
        workload, size: the problem.
        limits: the memory limits used, per partition.
        measured_best: gives the scoring bundle's fastest measured configurations (confidence).
        neighbour_sizes: partition -> the measured sizes either side of ``size`` that
            bounded its predictions (:func:`~hpcds1mpi.surrogates.neighbour_bounds.
            bound_runtimes`), or None.
        edge: beyond the workload's measured sizes, the same grid scored at the nearest of
            them (:mod:`~hpcds1mpi.decide.beyond_edge`), whose pick's confidence caps this
            one's; None inside them. An edge answer's own ``edge`` is the grid scored halfway
            from the edge to the next measured size (``beyond_edge.inside_size``), which caps
            it in turn.
    """

    cols: dict
    workload: str
    size: int
    limits: dict[str, MemoryLimit] = field(default_factory=dict)
    measured_best: object = field(default=None, repr=False)
    neighbour_sizes: "dict | None" = None
    edge: "Scores | None" = field(default=None, repr=False, compare=False)
    _frame: "pd.DataFrame | None" = field(default=None, init=False, repr=False, compare=False)
    #: Shared by answers (:func:`~hpcds1mpi.decide.batch_memo.freeze`): read-only, subsets kept.
    shared: bool = field(default=False, init=False)
    _subsets: dict = field(default_factory=dict, repr=False, init=False, compare=False)
    _values: dict = field(default_factory=dict, repr=False, init=False, compare=False)
    #: A shared answer's pick confidence per objective and confidence map (system1.choose),
    #: and what a question past a shared edge answer reads of it (beyond_edge.hold_to_edge).
    _caps: dict = field(default_factory=dict, repr=False, init=False, compare=False)

    def __len__(self) -> int:
        return len(self.cols["nodes"])

    @property
    def frame(self) -> "pd.DataFrame":
        """The same columns as a DataFrame (built once, on first use)."""
        if self._frame is None:
            import pandas as pd

            self._frame = pd.DataFrame({k: np.asarray(v) for k, v in self.cols.items()})
        return self._frame

    def subset(self, partition: str) -> "Scores":
        """The candidates on one partition only (same limits)."""
        if self.shared and partition in self._subsets:
            return self._subsets[partition]
        mask = self.cols["partition"] == partition
        sub = Scores({k: v[mask] for k, v in self.cols.items()}, self.workload, self.size,
                     self.limits, self.measured_best, self.neighbour_sizes,
                     None if self.edge is None else self.edge.subset(partition))
        if self.shared:
            self._subsets[partition] = freeze(sub)
        return sub

    def values(self, name: str) -> list:
        """Column ``name`` as a list of Python values (``int``, ``float``, ``str``, ``bool``),
        converted once and kept (the columns are not changed after scoring). An answer reads
        ~40 rows of 14 columns; element by element, as numpy scalars, that cost the service
        ~0.05 ms a question, and a job's scores serve each of its objectives' answers."""
        got = self._values.get(name)
        if got is None:
            got = self._values[name] = np.asarray(self.cols[name]).tolist()
        return got

    def row(self, index: int) -> dict:
        """One candidate as a plain dict of Python values."""
        if self.shared:  # a job's kept scores: its objectives' answers read rows again
            return {k: self.values(k)[index] for k in self.cols}
        out = {}
        for k, v in self.cols.items():
            value = v[index]
            out[k] = value.item() if hasattr(value, "item") else value
        return out


def neighbour_runtimes(bundle):
    """The :class:`~hpcds1mpi.surrogates.neighbour_bounds.NeighbourRuntimes` of ``bundle``'s
    training rows, fitted once per loaded bundle (empty where it keeps none)."""
    from hpcds1mpi.decide import bundle_cache
    from hpcds1mpi.surrogates.neighbour_bounds import NeighbourRuntimes

    def fit():
        try:
            return NeighbourRuntimes.fit(bundle_cache.training_columns(bundle))
        except (AttributeError, KeyError):  # no training rows, or none with outcomes
            return NeighbourRuntimes({})

    return bundle_cache.memo(bundle, ("neighbour_runtimes",), fit)


def repeat_spread(bundle):
    """The :class:`~hpcds1mpi.surrogates.repeat_spread.RepeatSpread` of ``bundle``'s training
    rows (their fastest and slowest repeats), fitted once per loaded bundle; empty where it
    keeps none."""
    from hpcds1mpi.decide import bundle_cache
    from hpcds1mpi.surrogates.repeat_spread import RepeatSpread

    def fit():
        try:
            return RepeatSpread.fit(bundle_cache.training_columns(bundle))
        except (AttributeError, KeyError, TypeError):  # no training rows, or none with outcomes
            return RepeatSpread()

    return bundle_cache.memo(bundle, ("repeat_spread",), fit)


#: The column System 1 adds: True where a candidate is beyond the measured levels
#: (:func:`unmeasured_rows`); such a pick's confidence is at most ``DOUBTED_CONFIDENCE``.
UNMEASURED = "unmeasured"
#: The knobs whose measured levels are compared, as (column, what the line calls it).
_KNOBS = (("nodes", "nodes"), ("threads", "threads"), ("ranks_per_node", "ranks per node"),
          ("device", "device"), ("precision", "precision"))


def _measured(levels, column: str) -> tuple:
    return tuple(getattr(levels, column + "s" if column in ("device", "precision") else column))


def unmeasured_rows(cols: dict, levels) -> np.ndarray:
    """``(n,)`` True where a candidate is beyond what its workload was measured at: more nodes
    than the most measured, or a thread count, ranks per node, device or precision no training
    run had. Its predictions there are extrapolated.

    Args:
        cols: parallel ``(n,)`` arrays with the configuration columns.
        levels: the workload's :class:`~hpcds1mpi.surrogates.levels.MeasuredLevels`; None (a
            workload never measured: the guard escalates it) marks nothing, and so does a
            knob without recorded levels.
    """
    out = np.zeros(len(cols["nodes"]), dtype=bool)
    if levels is None:
        return out
    for column, _ in _KNOBS:
        measured = _measured(levels, column)
        if not measured:
            continue
        values = cols[column]
        if column == "nodes":  # between measured node counts is interpolation
            out |= values > max(measured)
            continue
        seen = values == measured[0]  # a few levels: compare each (no sort of the grid)
        for level in measured[1:]:
            seen |= values == level
        out |= ~seen
    return out


class NeverMeasured(NamedTuple):
    """One knob of a candidate at a level its workload never ran (:func:`never_measured`)."""

    column: str
    name: str
    value: object
    measured: tuple

    @property
    def level(self) -> str:
        """The level, short: ``"precision fp32"``, ``"nodes above 1"`` (every node count above
        the most measured is one level: beyond it is extrapolation alike)."""
        if self.column == "nodes":
            return f"nodes above {max(self.measured)}"
        return f"{self.name} {self.value}"

    @property
    def line(self) -> str:
        """Why the prediction is extrapolated, with the levels measured."""
        if self.column == "nodes":
            return f"nodes {self.value} above the most measured ({max(self.measured)})"
        seen = ", ".join(str(v) for v in self.measured)
        return f"{self.name} {self.value} never measured (measured: {seen})"


def never_measured(row: dict, levels) -> list[NeverMeasured]:
    """The knobs of one candidate (a :meth:`Scores.row`, or ``Configuration.as_dict()``) at a
    level the workload's recorded ``levels`` never had, one per knob (see
    :func:`unmeasured_rows`; a knob without recorded levels, or ``levels`` None, says none).
    ``unmeasured_lines`` and System 2's guesses (``decide/tune_predictions.py``) read this."""
    if levels is None:
        return []
    out = []
    for column, name in _KNOBS:
        measured, value = _measured(levels, column), row[column]
        if not measured:
            continue
        if (value > max(measured)) if column == "nodes" else (value not in measured):
            out.append(NeverMeasured(column, name, value, measured))
    return out


def unmeasured_lines(row: dict, levels) -> list[str]:
    """Why one candidate (a :meth:`Scores.row`) is extrapolated, one line per knob (none when
    it is not: see :func:`unmeasured_rows`)."""
    return [knob.line for knob in never_measured(row, levels)]


__all__ = ["NeverMeasured", "Scores", "UNMEASURED", "neighbour_runtimes", "never_measured",
           "unmeasured_lines", "unmeasured_rows"]
