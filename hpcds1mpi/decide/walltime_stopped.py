"""The user's runs stopped while still running -- preempted, or their node failed -- as
evidence for a walltime proposal (:mod:`hpcds1mpi.decide.walltime`).

Such a run's elapsed time is a lower bound of its run time, as a TIMEOUT kill's is: it was
still working when the scheduler or the hardware stopped it. The proposal counts each as a
run of at least that long where it is raised to cover the user's jobs like it, and says how
many of them ran past it (s43 tester H2: 10 runs preempted after 3,000-3,500 s beside 60
completed in 2,000-2,600 s got --time 00:44:00, "meant to cover about 95 %", unsaid).

A job the user cancelled is not counted: the user chose to stop it (a hung run, a wrong
input, a result no longer wanted), so its elapsed time says nothing of what the work needs,
and one hung job cancelled after days would raise every later proposal.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

#: Slurm states of a run stopped from outside while it still ran (``state_raw``'s first word).
STOPPED_STATES = ("PREEMPTED", "NODE_FAIL")


@dataclass
class Stopped:
    """The user's jobs like this one stopped while still running, by the submit time.

    Attributes:
        n: how many.
        run_s: the longest such run (s): a job like them needs at least this.
        whose: the jobs, as the line names them ("named 'x'", or "with this request").
        states: how many of each state ("PREEMPTED": 8, "NODE_FAIL": 2).
        n_past: how many ran longer than the proposal (set by :func:`stopped_like`).
        proposed_s: the proposal they are measured against (s).
    """

    n: int
    run_s: float
    whose: str
    states: dict
    n_past: int = 0
    proposed_s: float = 0.0

    def line(self) -> str:
        """What ``recommend`` says of them."""
        jobs = f"your {self.n} job{'s' if self.n != 1 else ''}{' ' if self.whose else ''}" \
            f"{self.whose}"
        states = ", ".join(f"{k} {v}" for k, v in self.states.items())
        was = "was" if self.n == 1 else "were"
        head = (f"{jobs} {was} stopped while still running ({states}) after up to "
                f"{self.run_s:.0f} s: such a job needs at least its run, how much more is not "
                "known")
        if not self.n_past:
            return f"walltime: {head}; {self.proposed_s:.0f} s is above every one of them"
        return (f"warning: {head}; {self.n_past} of them ran past {self.proposed_s:.0f} s, "
                "and a job like them would be killed there")


def stopped_mask(hist: pd.DataFrame) -> np.ndarray:
    """Rows stopped while still running (:data:`STOPPED_STATES`) with a run time above 0."""
    if "state_raw" not in hist:
        return np.zeros(len(hist), bool)
    first = hist["state_raw"].astype("string").str.strip().str.upper().str.split().str[0]
    run = pd.to_numeric(hist["runtime_s"], errors="coerce").to_numpy(dtype=float)
    return first.isin(STOPPED_STATES).fillna(False).to_numpy() & (run > 0)


def stopped_runs(hist: pd.DataFrame, rows: np.ndarray) -> np.ndarray:
    """The run times (s) of the stopped jobs among ``rows``: lower bounds of their run times."""
    rows = rows & stopped_mask(hist)
    return pd.to_numeric(hist["runtime_s"], errors="coerce").to_numpy(dtype=float)[rows]


def stopped_like(hist: pd.DataFrame, rows: np.ndarray, whose: str,
                 proposed_s: float) -> Stopped | None:
    """The stopped jobs among ``rows`` (the user's, ended, like the job; ``whose`` names them)
    measured against the proposal ``proposed_s``; None where there are none."""
    rows = rows & stopped_mask(hist)
    if not rows.any():
        return None
    run = pd.to_numeric(hist["runtime_s"], errors="coerce").to_numpy(dtype=float)[rows]
    first = hist["state_raw"].astype("string").str.strip().str.upper().str.split().str[0]
    states = first[rows].value_counts()
    return Stopped(int(rows.sum()), float(np.max(run)), whose,
                   {str(k): int(v) for k, v in states.items()},
                   n_past=int(np.sum(run > proposed_s * (1 + 1e-9))), proposed_s=proposed_s)
