"""One optimisation problem (candidates, objective, fixed reference point) and one method's result.

A failed evaluation (``feasible`` False) is recorded with NaN objectives, is never on a front
and never enters a hypervolume.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from hpcds1mpi.errors import ConfigError

from ..objectives import TableObjective
from ..pareto import exact_front, hypervolume, pareto_mask, reference_point
from .candidates import encode

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd


@dataclass
class Problem:
    """One optimisation problem: a finite candidate set, an objective, a fixed reference point.

    Attributes:
        candidates: ``(n, ...)`` candidate rows (configuration + problem columns).
        objective: the objective (see ``hpcds1mpi.surrogates.objectives``).
        columns: the objective columns minimised, e.g. ``["runtime_s", "energy_j"]``.
        ref_point: ``(m,)`` fixed reference point; :meth:`fix_reference_point` sets it.
        X: ``(n, d)`` encoded inputs (filled in on creation).
        table: the objective's output for every candidate, once :meth:`evaluate_all` ran.
    """

    candidates: "pd.DataFrame"
    objective: Any
    columns: list[str]
    ref_point: np.ndarray | None = None
    X: np.ndarray = field(default=None, repr=False)  # type: ignore[assignment]
    table: "pd.DataFrame | None" = field(default=None, repr=False)
    ref_basis: str = "given"

    def __post_init__(self) -> None:
        self.candidates = self.candidates.reset_index(drop=True)
        if len(self.columns) < 2:
            raise ConfigError("multi-objective optimisation needs two objectives")
        if self.X is None:
            self.X = encode(self.candidates)

    def evaluate(self, indices: Sequence[int]) -> tuple[np.ndarray, np.ndarray, list[str]]:
        """Evaluate candidates by index.

        Returns:
            ``(Y, feasible, status)``: ``(k, m)`` values (NaN rows where infeasible), ``(k,)``
            booleans, ``k`` status strings.
        """
        by_row = getattr(self.objective, "rows", None)
        if by_row is not None and getattr(self.objective, "frame", None) is self.candidates:
            out = by_row(indices)  # a CandidateTable of these candidates: by row number
        else:
            out = self.objective(self.candidates.iloc[list(indices)])
        feasible = out["feasible"].to_numpy(bool, copy=True)
        Y = out[self.columns].to_numpy(float, copy=True)
        Y[~feasible] = np.nan
        feasible &= np.all(np.isfinite(Y), axis=1)
        return Y, feasible, [str(s) for s in out["status"]]

    def evaluate_all(self) -> tuple[np.ndarray, np.ndarray]:
        """Evaluate every candidate (kept in :attr:`table`); ``(n, m)`` values and ``(n,)`` mask."""
        if self.table is None:
            self.table = self.objective(self.candidates)
        feasible = self.table["feasible"].to_numpy(bool)
        Y = self.table[self.columns].to_numpy(float, copy=True)
        Y[~feasible] = np.nan
        return Y, feasible & np.all(np.isfinite(Y), axis=1)

    def subset(self, keep: np.ndarray) -> "Problem":
        """This problem on the candidates ``keep`` (``(n,)`` booleans) alone, their evaluated
        rows carried over (nothing is evaluated again); the reference point is fixed anew by
        :meth:`fix_reference_point`.

        Raises:
            ConfigError: ``keep`` keeps no candidate.
        """
        keep = np.asarray(keep, dtype=bool)
        if not keep.any():
            raise ConfigError("no candidate left in the problem")
        table = None if self.table is None else self.table[keep].reset_index(drop=True)
        return Problem(self.candidates[keep], self.objective, self.columns, table=table)

    def fix_reference_point(self, margin: float = 0.1, basis: str = "front") -> np.ndarray:
        """Fix the reference point once for this problem, from the whole candidate set.

        ``basis="front"`` (default): nadir of the exact Pareto front plus ``margin`` times the
        front's range (BoTorch's ``infer_reference_point`` rule, applied once to the exact front
        instead of to each method's own data). ``basis="all"``: nadir of every feasible
        candidate plus ``margin`` times their range; that box is so large that the region near
        the front barely moves the hypervolume, so every method's ratio to the exact front
        sits close to 1 and the metric stops telling methods apart.
        """
        Y, feasible = self.evaluate_all()
        if not feasible.any():
            raise ConfigError("no feasible configuration in the candidate set")
        if basis == "front":
            _, front = exact_front(Y, feasible)
            self.ref_point = reference_point(front, margin)
        elif basis == "all":
            self.ref_point = reference_point(Y[feasible], margin)
        else:
            raise ConfigError(f"unknown reference-point basis {basis!r}; use front or all")
        self.ref_basis = basis
        return self.ref_point

    def exact(self) -> tuple[np.ndarray, np.ndarray]:
        """Indices ``(k,)`` and values ``(k, m)`` of the exact Pareto front of the candidate set."""
        Y, feasible = self.evaluate_all()
        return exact_front(Y, feasible)


@dataclass
class RunResult:
    """One method's run on one problem.

    Attributes:
        indices: candidate indices in evaluation order (``budget`` of them).
        Y: ``(budget, m)`` objective values in that order, NaN rows for failed evaluations.
        feasible, status: per evaluation.
        hv_trace: hypervolume after each evaluation (fixed reference point).
        iteration_s: wall time of each model-based iteration (fit + acquisition + evaluation).
        fit_s, acq_s: time spent fitting GPs and scoring the acquisition, per iteration.
    """

    method: str
    seed: int
    budget: int
    n_init: int
    ref_point: np.ndarray
    indices: list[int]
    Y: np.ndarray
    feasible: np.ndarray
    status: list[str]
    hv_trace: np.ndarray
    iteration_s: list[float]
    fit_s: list[float]
    acq_s: list[float]
    wall_s: float
    policy: str = ""
    pruned: list[int] = field(default_factory=list)

    def front(self) -> np.ndarray:
        """``(k, m)`` Pareto front of the feasible evaluations."""
        Yf = self.Y[self.feasible]
        return np.unique(Yf[pareto_mask(Yf)], axis=0) if len(Yf) else Yf

    def front_indices(self) -> list[int]:
        """Candidate indices on the front (every distinct candidate; ties all kept)."""
        Y = np.where(self.feasible[:, None], self.Y, np.nan)
        mask = pareto_mask(Y)
        return list(dict.fromkeys(self.indices[i] for i in np.flatnonzero(mask)))

    def hv_at(self, evaluations: int) -> float:
        """Hypervolume after the first ``evaluations`` evaluations."""
        k = min(evaluations, len(self.hv_trace))
        return float(self.hv_trace[k - 1]) if k > 0 else 0.0

    def summary(self) -> dict:
        return {
            "method": self.method, "seed": self.seed, "budget": self.budget, "n_init": self.n_init,
            "policy": self.policy, "ref_point": self.ref_point.tolist(),
            "evaluations": len(self.indices), "failed_evaluations": int((~self.feasible).sum()),
            "hv": float(self.hv_trace[-1]) if len(self.hv_trace) else 0.0,
            "wall_s": self.wall_s,
            "mean_iteration_s": float(np.mean(self.iteration_s)) if self.iteration_s else 0.0,
        }


def default_n_init(problem: Problem) -> int:
    """Initial design size: d + 1 points, at least 4."""
    return max(4, problem.X.shape[1] + 1)


def hv_trace(Y: np.ndarray, feasible: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """Hypervolume of the first k evaluations for every k (``(n,)``)."""
    trace = np.zeros(len(Y))
    front = np.empty((0, Y.shape[1]))
    for k in range(len(Y)):
        if feasible[k]:
            front = np.vstack([front, Y[k]])
            front = front[pareto_mask(front)]
        trace[k] = hypervolume(front, ref) if len(front) else 0.0
    return trace



class CandidateTable(TableObjective):
    """A problem's table replayed for the candidate rows it was computed on, looked up by row
    number (:meth:`Problem.evaluate` asks by index): the BO loop asks for one candidate an
    iteration, and the generic lookup (a string key per configuration, built in pandas) cost
    about 10 ms each time. Other configurations still go through the keys; ``calls`` counts
    both.

    Args:
        problem: the problem, its table filled (:meth:`Problem.evaluate_all`).
        source: the source label of the objective that made the table.
    """

    def __init__(self, problem: Problem, source: str) -> None:
        super().__init__(problem.candidates, problem.table, source)
        self.frame = problem.candidates

    def rows(self, indices: Sequence[int]) -> "pd.DataFrame":
        """The table's rows ``indices`` (row numbers of the candidate frame)."""
        self.calls += len(indices)
        return self._table.iloc[list(indices)]
