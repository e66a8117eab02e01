"""New runs merged into training rows: a run read again is one row, a configuration measured
again is two.

A ``run_id`` names a configuration of a problem (workload, size, layout, device, precision,
seed, a program's options: ``measure.plan.RunSpec.run_id``), not one measurement: a sweep, a
``tune`` around its pick and the same plan swept again next week give one configuration the
same id. So a row of the new runs whose ``run_id`` (on the same machine) the training rows
already hold is one of three things (:func:`merge_runs`):

- **the same record read again** (the same ``started_at``): the file learnt twice, or a
  resumed sweep's file that still holds the runs the bundle learnt. The newest copy is kept:
  this is why the rule used to be "the newest row wins", and it keeps ``learn`` idempotent.
  Rows without ``started_at`` (tables written before it was recorded) cannot tell a re-read
  from a new measurement and are treated as a re-read, as before.
- **a retry within one sweep** (the same ``sweep_id``, the earlier row ``crashed`` or
  ``interrupted``): ``sweep --resume`` measured it again and its file keeps only the retry;
  learn keeps what ``train`` on that file would.
- **another measurement** (anything else): both rows are kept. Two honest measurements of
  one configuration under different load are both evidence; keeping only the newest let one
  noisy run (a tune's first run at 2.2x the sweep's time) flip the pick without a word. What
  learns from the rows averages a configuration's repeats: the members fit every row (in log
  runtime, so their geometric mean), System 1's measured-neighbour rules take the mean log
  runtime of a configuration's rows at a size (``surrogates/neighbour_bounds.py``,
  ``surrogates/size_neighbours.py``). A re-measurement after a fix of the machine or program
  is a new machine state, not a repeat: train a new bundle on it.

Repeats that disagree by more than either measured (``noise``: (max - min) / median of its
repeats, at least :data:`MIN_SPREAD`) are named, one line each (:func:`disagreement_lines`),
so that a loaded machine is seen, not averaged away in silence.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

#: Statuses ``sweep --resume`` measures again (the retry replaces the row in its file).
RETRIED_STATUSES = frozenset({"crashed", "interrupted"})
#: The smallest relative spread two measurements of one configuration are allowed before
#: they are said to disagree: a run without repeats has no measured noise, and a few
#: percent apart is ordinary run-to-run variation.
MIN_SPREAD = 0.10


@dataclass(frozen=True)
class MergedRuns:
    """Old training rows plus new ones (:func:`merge_runs`).

    Attributes:
        frame: the merged rows, old first, index 0..n-1.
        replaced: new rows that replaced an old record of the same run (read again, retried).
        repeated: new rows kept beside an earlier measurement of their configuration.
        disagreements: one line per repeated configuration whose measurements disagree by
            more than their noise (:func:`disagreement_lines`).
    """

    frame: pd.DataFrame
    replaced: int = 0
    repeated: int = 0
    disagreements: tuple[str, ...] = ()


def merge_runs(old: pd.DataFrame, new: pd.DataFrame) -> MergedRuns:
    """``old`` rows plus ``new`` ones: a record read again or a crashed run retried keeps the
    newest row, a configuration measured again keeps both (the module's docstring says why).
    Rows without a ``run_id`` (job-log rows) are all kept."""
    old = old.drop(columns=["kept"], errors="ignore")
    merged = pd.concat([old, new], ignore_index=True, sort=False)
    is_new = np.arange(len(merged)) >= len(old)
    if "run_id" not in merged.columns:
        return MergedRuns(merged)
    keys = _run_keys(merged)
    repeated = keys.notna() & keys.duplicated(keep=False)
    superseded = np.zeros(len(merged), dtype=bool)
    read_again = np.zeros(len(merged), dtype=bool)  # the same record as an earlier row
    started = _column(merged, "started_at")
    sweep, status = _texts(merged, "sweep_id"), _texts(merged, "status")
    for rows in merged.index[repeated].groupby(keys[repeated]).values():
        rows = sorted(rows)  # in merge order: old rows, then new ones as read
        for i, later in enumerate(rows[1:], start=1):
            for earlier in rows[:i]:
                same = _same_record(started[later], started[earlier])
                if same or _retry(sweep[later], sweep[earlier], status[earlier]):
                    superseded[earlier] = True
                    read_again[later] |= same
    kept = merged[~superseded].reset_index(drop=True)
    kept_keys = keys[~superseded].reset_index(drop=True)
    # a new measurement of a configuration measured before (not a record read once more)
    again = (is_new & ~read_again)[~superseded] \
        & (kept_keys.notna() & kept_keys.duplicated()).to_numpy()
    lines = disagreement_lines(kept, kept_keys, np.flatnonzero(again))
    return MergedRuns(kept, replaced=int(superseded.sum()), repeated=int(again.sum()),
                      disagreements=tuple(lines))


def _run_keys(frame: pd.DataFrame) -> pd.Series:
    """``machine_id`` + ``run_id`` of each row; NA for rows without a ``run_id``."""
    ids = frame["run_id"]
    has_id = ids.notna() & (ids.astype(str) != "")
    machine = frame["machine_id"].astype(str).where(frame["machine_id"].notna(), "") \
        if "machine_id" in frame.columns else pd.Series("", index=frame.index)
    return (machine + "\x1f" + ids.astype(str)).where(has_id)


def _same_record(start_later: float, start_earlier: float) -> bool:
    """Whether two rows of the same machine and ``run_id`` are one record read twice: the
    same start, or a start unknown (a table from before ``started_at`` was recorded)."""
    return math.isnan(start_later) or math.isnan(start_earlier) or start_later == start_earlier


def _retry(sweep_later: str, sweep_earlier: str, status_earlier: str) -> bool:
    """Whether a later row of the same machine and ``run_id`` is its sweep's retry of a run
    that ``--resume`` measures again."""
    return bool(sweep_later) and sweep_later == sweep_earlier \
        and status_earlier in RETRIED_STATUSES


def _column(frame: pd.DataFrame, column: str) -> np.ndarray:
    """``column`` as floats (NaN where missing or not a number; all NaN when absent)."""
    if column not in frame.columns:
        return np.full(len(frame), np.nan)
    return pd.to_numeric(frame[column], errors="coerce").to_numpy(float)


def _texts(frame: pd.DataFrame, column: str) -> np.ndarray:
    """``column`` as strings ("" where missing or absent)."""
    if column not in frame.columns:
        return np.full(len(frame), "", dtype=object)
    values = frame[column]
    return values.astype(str).where(values.notna(), "").to_numpy(object)


def disagreement_lines(frame: pd.DataFrame, keys: pd.Series, rows) -> list[str]:
    """One line for each of ``rows`` (positions in ``frame``, a repeated measurement) whose
    ok runtime is further from an earlier ok measurement of its configuration (the same
    ``keys`` value) than the larger of their noises (at least :data:`MIN_SPREAD`) allows."""
    runtime, noise = _column(frame, "runtime_s"), _column(frame, "noise")
    ok = (_texts(frame, "status") == "ok") & np.isfinite(runtime) & (runtime > 0)
    wanted = set(keys.iloc[list(rows)])
    positions: dict = {}  # key -> its ok rows, in merge order
    for position, key in enumerate(keys):
        if ok[position] and key in wanted:
            positions.setdefault(key, []).append(position)
    lines, configuration = [], _configurations(frame)
    for row in rows:
        earlier = np.array([p for p in positions.get(keys.iloc[row], []) if p < row], dtype=int)
        if not ok[row] or not len(earlier):
            continue
        ratios = np.maximum(runtime[earlier], runtime[row]) / np.minimum(runtime[earlier],
                                                                         runtime[row])
        allowed = 1 + np.fmax(np.fmax(noise[earlier], noise[row]), MIN_SPREAD)
        if not (ratios > allowed).any():
            continue
        worst = int(np.argmax(ratios / allowed))  # the pair furthest beyond its noise
        before = ", ".join(f"{runtime[i]:.3g} s" for i in earlier[:3]) \
            + (f" and {len(earlier) - 3} more" if len(earlier) > 3 else "")
        lines.append(
            f"{configuration(row)}: now {runtime[row]:.3g} s, before {before} "
            f"({ratios[worst]:.1f}x apart, beyond the noise either measured: "
            f"{_percent(noise[row])} now, {_percent(noise[earlier[worst]])} before); both kept and "
            "averaged, but something differed between the runs (other jobs on the node?): "
            "measure it again under the load your jobs will see")
    return lines


def _configurations(frame: pd.DataFrame):
    """A function of a row's position giving ``cp2k size 250, 1 node x 1 rank x 2 threads``
    (device and precision unless cpu fp64); the columns are read once."""
    numbers = {c: _column(frame, c) for c in ("size", "nodes", "ranks_per_node", "threads")}
    texts = {c: _texts(frame, c) for c in ("workload", "device", "precision")}

    def number(column: str, row: int):
        n = numbers[column][row]
        return int(n) if np.isfinite(n) and n == n // 1 else n  # 250, never 250.0

    def count(column: str, row: int, word: str) -> str:
        n = number(column, row)
        return f"{n} {word}{'' if n == 1 else 's'}"

    def describe(row: int) -> str:
        kind = (texts["device"][row], texts["precision"][row])
        extra = f" {kind[0]} {kind[1]}" if kind != ("cpu", "fp64") else ""
        return (f"{texts['workload'][row]} size {number('size', row)}, "
                f"{count('nodes', row, 'node')} x {count('ranks_per_node', row, 'rank')} x "
                f"{count('threads', row, 'thread')}{extra}")
    return describe


def _percent(noise: float) -> str:
    return "unknown (one repeat)" if not math.isfinite(noise) else f"{100 * noise:.0f} %"


__all__ = ["MIN_SPREAD", "MergedRuns", "RETRIED_STATUSES", "disagreement_lines", "merge_runs"]
