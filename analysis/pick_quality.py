"""How good a pick, or a ranked order, is on the measured runs of one problem.

A problem's measured runs are a DataFrame ``sub`` (one row per configuration, with ``status``,
``runtime_s`` and, where measured, ``runtime_min_s`` and ``noise``). A pick is a row position in
it; an order is a list of row positions, best first. A pick is *good* when its runtime is within
:data:`~hpcds1mpi.decide.confidence.GOOD_PICK_TOLERANCE` (5 %) of the best measured one: the
event System 1's confidence predicts. AUROC and ECE judge such confidences.
"""

from __future__ import annotations

import math

import numpy as np

from hpcds1mpi.config import OK
from hpcds1mpi.decide.confidence import GOOD_PICK_TOLERANCE

#: The columns naming a problem, and a configuration within it.
PROBLEM_COLS = ["workload", "size", "partition"]
CONFIG_COLS = ["nodes", "ranks_per_node", "threads", "device", "precision"]
#: ``best / picked`` runtime at or above this is a good pick (within 5 % of the best).
GOOD_SPEED = 1 / (1 + GOOD_PICK_TOLERANCE)


def config_label(row) -> str:
    """``NODESxRANKSxTHREADS device precision`` of one measured row."""
    return (f"{int(row['nodes'])}x{int(row['ranks_per_node'])}x{int(row['threads'])} "
            f"{row['device']} {row['precision']}")


def best_runtime(sub) -> float:
    """The best measured runtime of a problem (NaN when nothing ran ``ok``)."""
    ok = sub[sub["status"] == OK]["runtime_s"]
    return float(ok.min()) if len(ok) else float("nan")


def speed(sub, idx: int) -> tuple[float, bool]:
    """(best / picked runtime, crashed) for measured row ``idx``; a crash has speed 0."""
    best = best_runtime(sub)
    row = sub.iloc[idx]
    if row["status"] != OK or not np.isfinite(row["runtime_s"]):
        return 0.0, True
    return float(best / row["runtime_s"]), False


def runs_to_within(sub, order, tol: float = GOOD_PICK_TOLERANCE) -> int:
    """Runs needed, measuring in ``order``, until one is within ``tol`` of the best."""
    best = best_runtime(sub)
    for k, idx in enumerate(order, 1):
        row = sub.iloc[idx]
        if row["status"] == OK and row["runtime_s"] <= best * (1 + tol):
            return k
    return len(order)


def within_noise(sub, idx: int) -> bool:
    """Whether measured row ``idx`` is within the measured noise of the best row.

    Its fastest repeat is no slower than the best configuration's median: the two cannot be
    told apart by the repeats that were measured (one-sided, as ``system2.run_noise``).
    """
    ok = sub[sub["status"] == OK]
    best = ok.loc[ok["runtime_s"].idxmin()]
    row = sub.iloc[idx]
    if row["status"] != OK:
        return False
    fastest = row.get("runtime_min_s")
    fastest = float(fastest) if fastest is not None and np.isfinite(fastest) and fastest > 0 \
        else float(row["runtime_s"])
    return bool(fastest <= float(best["runtime_s"]))


def summary(speeds, crashes, runs) -> dict:
    """One method over many problems: median and geometric mean % of best, share of picks
    within 5 % of the best, crashing picks, median runs to 5 %."""
    s = np.asarray(speeds, float)
    return {"median_pct_of_best": float(100 * np.median(s)) if len(s) else None,
            "geomean_pct_of_best": float(100 * math.exp(np.mean(np.log(np.maximum(s, 1e-3)))))
            if len(s) else None,
            "within_5pct": float(np.mean(s >= GOOD_SPEED)) if len(s) else None,
            "crashing_picks": float(np.sum(crashes)), "problems": int(len(s)),
            "median_runs_to_5pct": float(np.median(runs)) if len(runs) else None}


def noise_summary(records: list[dict]) -> dict:
    """Shares of picks within 5 %, within the measured noise of the best, and either."""
    if not records:
        return {}
    good = [r["pct_of_best"] >= 100 / (1 + GOOD_PICK_TOLERANCE) for r in records]
    noisy = [r["within_noise_of_best"] for r in records]
    return {"picks_within_5pct": float(np.mean(good)),
            "picks_within_noise_of_best": float(np.mean(noisy)),
            "picks_within_5pct_or_noise": float(np.mean([a or b for a, b in zip(good, noisy)]))}


def auroc(scores, labels) -> float:
    """Area under the ROC curve of ``scores`` at separating true from false ``labels``
    (ties count half; NaN when one class is empty)."""
    scores, labels = np.asarray(scores, float), np.asarray(labels, bool)
    pos, neg = scores[labels], scores[~labels]
    if len(pos) == 0 or len(neg) == 0:
        return float("nan")
    greater = (pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()
    return float(greater / (len(pos) * len(neg)))


def ece(probs, labels, bins: int = 10) -> float:
    """Expected calibration error of probabilities against 0/1 outcomes, in equal-width bins."""
    probs, labels = np.asarray(probs, float), np.asarray(labels, float)
    edges = np.linspace(0, 1, bins + 1)
    total = 0.0
    for lo, hi in zip(edges[:-1], edges[1:]):
        sel = (probs >= lo) & (probs < hi if hi < 1 else probs <= hi)
        if sel.any():
            total += sel.mean() * abs(probs[sel].mean() - labels[sel].mean())
    return float(total)
