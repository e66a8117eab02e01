"""The user's own jobs as evidence for a walltime proposal (:mod:`hpcds1mpi.decide.walltime`):
jobs killed at their time limit, the jobs like the one proposed for, the partition a job that
names none runs in, and why a history is too thin to learn from.

The model learns only from completed jobs (a killed job's run time is not how long its work
takes); these jobs still say something the proposal must not contradict: a TIMEOUT run needed
more than its limit, and a request the user's own like jobs finished within is no "too short"
request.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

#: A killed job's run time is only known to exceed its limit: a retry asks for this many times
#: its longest kill, so repeated kills cost a geometric series, not one more minute each time.
KILL_GROWTH = 2.0
#: A TIMEOUT run within this share of its limit hit it (a DEADLINE kill may come earlier).
HIT_SHARE = 0.99


@dataclass
class Kills:
    """The user's jobs like this one killed at their time limit (TIMEOUT) by the submit time.

    Attributes:
        n: how many.
        limit_s: the longest limit that killed one (s).
        run_s: the longest such run (s): the job needs more than this.
        whose: the jobs, as the lines name them ("named 'x'", or "with this request").
    """

    n: int
    limit_s: float
    run_s: float
    whose: str

    def above(self) -> float:
        """A walltime above every kill (s)."""
        return KILL_GROWTH * self.run_s


def _numbers(hist: pd.DataFrame, col: str) -> np.ndarray:
    if col not in hist:
        return np.full(len(hist), np.nan)
    return pd.to_numeric(hist[col], errors="coerce").to_numpy(dtype=float)


def _equals(hist: pd.DataFrame, col: str, value) -> np.ndarray:
    """Rows whose ``col`` is ``value`` (all rows when ``value`` is None: not asked)."""
    if value is None:
        return np.ones(len(hist), bool)
    if col not in hist:
        return np.zeros(len(hist), bool)
    if isinstance(value, str):
        return (hist[col].astype("string") == value).fillna(False).to_numpy()
    return np.isclose(_numbers(hist, col), float(value))


def same_request(hist: pd.DataFrame, time_limit_s, procs, partition) -> np.ndarray:
    """Rows that asked what the job asks (time limit, processors, partition; a part not given
    matches any); none when none is given (nothing to compare)."""
    if time_limit_s is None and procs is None and partition is None:
        return np.zeros(len(hist), bool)
    return (_equals(hist, "time_limit_s", time_limit_s) & _equals(hist, "req_procs", procs)
            & _equals(hist, "partition", partition))


def request_words(time_limit_s, procs, partition) -> str:
    """The request as a line says it ("60 s, 2 processors and partition 'debug'")."""
    parts = [f"{time_limit_s:.0f} s" if time_limit_s else "",
             f"{procs} processor{'s' if procs != 1 else ''}" if procs else "",
             f"partition {partition!r}" if partition else ""]
    parts = [p for p in parts if p]
    return ", ".join(parts[:-1]) + (" and " if len(parts) > 1 else "") + parts[-1] if parts \
        else "this request"


def killed_at_limit(hist: pd.DataFrame, ended: np.ndarray, name_rows: np.ndarray,
                    like_rows: np.ndarray, name: str | None) -> Kills | None:
    """The kills among the user's jobs ended by the submit time (``ended``): of this name
    (``name_rows``) where the history knows it, else like this one (``like_rows``)."""
    status = hist["status"].astype("string").str.lower() if "status" in hist \
        else pd.Series(pd.NA, index=hist.index, dtype="string")
    raw = hist["state_raw"].astype("string").str.upper() if "state_raw" in hist \
        else pd.Series(pd.NA, index=hist.index, dtype="string")
    timeout = ((status == "timeout") | raw.str.startswith("TIMEOUT")).fillna(False).to_numpy()
    limit, run = _numbers(hist, "time_limit_s"), _numbers(hist, "runtime_s")
    hit = timeout & (limit > 0) & ~(run < HIT_SHARE * limit)  # a missing run: killed at limit
    named = name is not None and bool(np.any(ended & name_rows))
    rows = ended & hit & (name_rows if named else like_rows)
    if not rows.any():
        return None
    runs = np.fmax(run[rows], limit[rows])  # the kill came at the limit, or after it
    whose = f"named {name!r}" if named else "with this request"
    return Kills(int(rows.sum()), float(np.max(limit[rows])), float(np.max(runs)), whose)


def default_partition(hist: pd.DataFrame, mine: np.ndarray, named: np.ndarray) -> str | None:
    """The partition a job that names none runs in, where the user's finished jobs of this
    name (else all of them) ran in one alone: the scheduler's default took them too, or the
    user keeps to it; None where they ran in several or the log names none."""
    if "partition" not in hist:
        return None
    for rows in (named, mine):
        if rows.any():
            parts = hist.loc[rows, "partition"].astype("string").dropna().unique()
            return str(parts[0]) if len(parts) == 1 and str(parts[0]) else None
    return None


def too_thin(hist: pd.DataFrame, done: np.ndarray, completed: np.ndarray,
             end: pd.Series, need: int) -> str:
    """Why a history with fewer than ``need`` usable jobs (``done``: completed with a run
    time, ended by the submit time) cannot teach run times, and what to do."""
    no_end = int(np.sum(completed & end.isna().to_numpy()))
    other = int(np.sum(~completed))
    why = [f"{no_end} completed jobs have no start or end time, so none is known to have "
           "ended before this job (ingest a log that records Start and End)" if no_end else "",
           f"{other} jobs did not complete (failed, killed, cancelled) and do not count"
           if other else ""]
    return (f"cannot propose: the history has {int(done.sum())} completed jobs with a known "
            f"end, need at least {need} to learn run times"
            + "".join(f"; {w}" for w in why if w) + "; give a longer history of completed jobs")
