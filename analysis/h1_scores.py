"""Scores of the H1 evaluation: MAPE and R², their breakdowns, the model-free reference,
and the mean over seeds.

MAPE is computed on the linear scale; R² on log values (runtimes span decades; a linear R² only
measures the largest runs).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

#: The model-free reference row (see :func:`interpolation_reference`); never "best".
REFERENCE_MODEL = "reference: log-log interpolation, same config (no model)"


def mape(truth: np.ndarray, guess: np.ndarray) -> float:
    return float(np.mean(np.abs(guess - truth) / truth))


def r2(truth: np.ndarray, guess: np.ndarray) -> float:
    ss_tot = float(np.sum((truth - truth.mean()) ** 2))
    return 1.0 - float(np.sum((truth - guess) ** 2)) / ss_tot if ss_tot > 0 else float("nan")


def scores(log_truth: np.ndarray, log_guess: np.ndarray, workloads: np.ndarray | None = None,
           noise: np.ndarray | None = None) -> dict:
    """MAPE (linear), R² (log), and the MAPE per workload and per noise tercile.

    Args:
        log_truth, log_guess: (n,) natural-log values.
        workloads: (n,) workload names, for the per-workload breakdown.
        noise: (n,) each row's repeat spread ((max - min) / median), for the breakdown by
            measurement noise (terciles of the test rows).
    """
    out = {"mape": mape(np.exp(log_truth), np.exp(log_guess)),
           "r2_log": r2(log_truth, log_guess), "n_test": int(len(log_truth))}
    rel = np.abs(np.exp(log_guess) - np.exp(log_truth)) / np.exp(log_truth)
    if workloads is not None:
        out["mape_by_workload"] = {str(w): float(rel[workloads == w].mean())
                                   for w in np.unique(workloads)}
    if noise is not None and np.isfinite(noise).sum() >= 3:
        edges = np.nanquantile(noise, [1 / 3, 2 / 3])
        bins = np.digitize(np.nan_to_num(noise, nan=np.inf), edges)
        out["mape_by_noise"] = {
            f"{lab} (noise {lo:.2f}-{hi:.2f})": float(rel[bins == b].mean())
            for b, lab in enumerate(("low", "mid", "high")) if (bins == b).any()
            for lo, hi in [(np.nanmin(noise[bins == b]), np.nanmax(noise[bins == b]))]}
    return out


def interpolation_reference(train: pd.DataFrame, test: pd.DataFrame, target: str
                            ) -> np.ndarray:
    """Model-free reference: log target interpolated in log size between the training sizes of
    the same workload and configuration (linear extrapolation from the last two beyond them).

    It uses no learned parameters, so its error on held-out sizes is mostly the measurement
    noise of the telemetry (the test row's and its two neighbours'): a rough floor for how well
    any model can do on this data. NaN where the configuration has < 2 training sizes.

    Returns:
        (len(test),) predicted log target.
    """
    from hpcds1mpi.surrogates.targets import target_values

    key_cols = ["workload", "nodes", "ranks_per_node", "threads", "device", "precision"]
    y_train = target_values(train, target)
    out = np.full(len(test), np.nan)
    size_train = np.log(pd.to_numeric(train["size"], errors="coerce").to_numpy(float))
    size_test = np.log(pd.to_numeric(test["size"], errors="coerce").to_numpy(float))
    train_keys = train[key_cols].astype(str).agg("|".join, axis=1).to_numpy()
    test_keys = test[key_cols].astype(str).agg("|".join, axis=1).to_numpy()
    for key in np.unique(test_keys):
        have = (train_keys == key) & np.isfinite(y_train) & np.isfinite(size_train)
        if have.sum() < 2:
            continue
        order = np.argsort(size_train[have])
        xs, ys = size_train[have][order], y_train[have][order]
        rows = test_keys == key
        x = size_test[rows]
        slope_hi = (ys[-1] - ys[-2]) / (xs[-1] - xs[-2])
        slope_lo = (ys[1] - ys[0]) / (xs[1] - xs[0])
        out[rows] = np.where(x > xs[-1], ys[-1] + slope_hi * (x - xs[-1]),
                             np.where(x < xs[0], ys[0] + slope_lo * (x - xs[0]),
                                      np.interp(x, xs, ys)))
    return out



def average_seeds(rows: list[dict]) -> list[dict]:
    """One row per (model, target): numeric fields averaged over seeds, MAPE spread kept.

    Adds ``mape_std`` (std over seeds) and ``n_seeds``; per-workload / per-noise MAPEs are
    averaged key by key.
    """
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        groups.setdefault((r["model"], r["target"]), []).append(r)
    out = []
    for group in groups.values():
        merged = dict(group[0])
        for key, value in group[0].items():
            if key in ("seed", "n_test", "n_train_offered") or isinstance(value, bool):
                continue
            if isinstance(value, (int, float)):
                merged[key] = float(np.mean([g[key] for g in group]))
            elif isinstance(value, dict):
                merged[key] = {k: float(np.mean([g[key][k] for g in group if k in g[key]]))
                               for k in value}
        merged["mape_std"] = float(np.std([g["mape"] for g in group]))
        merged["n_seeds"] = len(group)
        merged.pop("seed", None)
        out.append(merged)
    return out

