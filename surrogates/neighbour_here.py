"""A configuration measured at the size asked is predicted by its runs there, not the model.

At a size the bundle measured, the trees still answer from leaves shared with other sizes and
layouts: the shipped bundle ran stencil 2 x 1 fp32 at 256 in 77.6 ms, yet was read 64.4 ms
(58.6-73.3 ms), and 259 of its 450 measured one-node layouts lay outside their own interval
(s31 tester Q1). A user who asks about a run the bundle has expects that run back.
:func:`hold_to_measured` sets each such candidate's runtime to the median of its ok runs at
the size (on the hardware they ran on), its interval to hold every one of those runs and at
least the model's relative width and the workload's measured repeat noise around it, and its
energy to the runs' power times that runtime; :data:`MEASURED_RUNS` says how many runs it
rests on. Sizes between measured ones are :mod:`~.neighbour_bounds`' and beyond them
:mod:`~.neighbour_beyond`'s. Leave-size-out evaluation is unchanged: the held-out size is
never in its fold's training rows.
"""

from __future__ import annotations

import numpy as np

from .columns import distinct
from .neighbour_bounds import _CONFIG, _SCALED, MODEL, NeighbourRuntimes, _measured_as
from .size_neighbours import config_codes

#: Column :func:`hold_to_measured` adds: how many ok runs of the candidate's configuration
#: the bundle has at the size asked, on its hardware (0: none, its prediction is modelled).
MEASURED_RUNS = "measured_runs"


def runs_here(measured: NeighbourRuntimes, workload: str, partition: str, size: float,
              table) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(rows, spread (rows, 3), log power (rows,), counts (rows,))``: the rows of
    ``table`` (configuration columns) whose configuration ran ok at ``size`` on
    ``(workload, partition)``, with the median, least and largest log runtime of those runs,
    their mean log power (mean log energy less mean log runtime; NaN where unknown) and their
    number."""
    key = (str(workload), str(partition))
    group, spreads = measured.groups.get(key), measured.spreads.get(key)
    empty = np.zeros(0, dtype=np.int64)
    if group is None or spreads is None:
        return empty, np.zeros((0, 3)), np.zeros(0), empty
    levels, keys, values = group
    at = np.flatnonzero(np.isclose(levels, size, rtol=1e-9, atol=0.0))
    if not len(at):
        return empty, np.zeros((0, 3)), np.zeros(0), empty
    wanted = np.int64(at[0]) << 44 | config_codes(table)
    pos = np.clip(np.searchsorted(keys, wanted), 0, len(keys) - 1)
    rows = np.flatnonzero(keys[pos] == wanted)
    found = pos[rows]
    energies = measured.energies.get(key)
    log_energy = energies[found] if energies is not None else np.full(len(rows), np.nan)
    return rows, spreads[0][found], log_energy - values[found], spreads[1][found]


def hold_to_measured(cols: dict, measured: NeighbourRuntimes, workload: str, size: float,
                     trained: dict | None = None) -> np.ndarray:
    """Replace, in place, the prediction of each candidate of ``cols`` whose configuration ran
    ok at ``size`` by those runs (see the module docstring); :data:`MEASURED_RUNS` is added
    to ``cols`` (and :data:`~.neighbour_bounds.MODEL`, the model's runtime, where any moved).

    Args:
        cols: System 1's candidate columns (configuration and prediction arrays).
        measured: the bundle's :class:`~.neighbour_bounds.NeighbourRuntimes`.
        trained: partition -> the measured partition of its hardware, None where none has it
            (absent: itself).

    Returns:
        ``(n,)`` True where a prediction was replaced.
    """
    partitions = np.asarray(cols["partition"])
    n = len(partitions)
    counts = np.zeros(n, dtype=np.int64)
    cols[MEASURED_RUNS] = counts
    if not measured.groups or str(workload) not in measured.workloads:
        return counts > 0
    new = {c: np.array(cols[c], dtype=float) for c in _SCALED}  # copies: answers may share
    model = new["runtime_s"].copy()
    noise = np.asarray(cols.get("runtime_noise", np.full(n, np.nan)), dtype=float)
    for part in distinct(partitions).tolist():
        name = _measured_as(trained, part)
        if name is None:
            continue
        on = np.flatnonzero(partitions == part)
        table = {c: np.asarray(cols[c])[on] for c in _CONFIG}
        rows, spread, log_power, count = runs_here(measured, workload, name, size, table)
        idx = on[rows]
        point, lo, hi = (new[f"runtime_{k}"][idx] for k in ("s", "lo", "hi"))
        usable = np.isfinite(point) & (point > 0)
        with np.errstate(invalid="ignore", divide="ignore"):
            wide_lo = np.where(usable & np.isfinite(lo), np.fmin(lo / point, 1.0), 1.0)
            wide_hi = np.where(usable & np.isfinite(hi), np.fmax(hi / point, 1.0), 1.0)
        half = np.where(np.isfinite(noise[idx]), np.clip(noise[idx], 0.0, 1.0) / 2, 0.0)
        run = np.exp(spread[:, 0])
        ends = {"s": run,
                "lo": np.minimum(np.exp(spread[:, 1]), run * np.minimum(wide_lo, 1 - half)),
                "hi": np.maximum(np.exp(spread[:, 2]), run * np.maximum(wide_hi, 1 + half))}
        power = np.exp(log_power)  # the runs' power; NaN where unknown
        for side, e_side in (("s", "j"), ("lo", "lo"), ("hi", "hi")):
            before, after = new[f"runtime_{side}"][idx], ends[side]
            with np.errstate(invalid="ignore", divide="ignore"):
                scaled = new[f"energy_{e_side}"][idx] * (after / before)
            energy = np.where(np.isfinite(power), power * after, scaled)
            new[f"energy_{e_side}"][idx] = energy
            new[f"runtime_{side}"][idx] = after
        e = new["energy_j"][idx]  # lo <= point <= hi
        new["energy_lo"][idx] = np.fmin(new["energy_lo"][idx], e)
        new["energy_hi"][idx] = np.fmax(new["energy_hi"][idx], e)
        counts[idx] = count
    if (counts > 0).any():
        cols.setdefault(MODEL, model)
        cols.update(new)
    return counts > 0


__all__ = ["MEASURED_RUNS", "hold_to_measured", "runs_here"]
