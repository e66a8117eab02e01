"""What System 1 is compared with on measured telemetry.

* :func:`rules_order` — rules of thumb: GPU when the partition has one, else every core a
  rank, one thread, fp64 (the most common default);
* :func:`random_expectation` — a uniformly random order, as its exact expected value;
* :func:`lgbm_rank_orders` — a LightGBM ranker (lambdarank) on raw features;
* :func:`neighbour_oracle` — the measured noise ceiling: no model, only the neighbouring sizes.
"""

from __future__ import annotations

import math

import numpy as np

from hpcds1mpi.analysis.pick_quality import (
    GOOD_SPEED,
    PROBLEM_COLS,
    best_runtime,
    config_label,
)
from hpcds1mpi.config import OK
from hpcds1mpi.decide.confidence import GOOD_PICK_TOLERANCE


def rules_order(sub) -> list:
    """The rules-of-thumb order of a problem's measured rows (row positions, best first)."""
    gpu = sub["device"] == "gpu"
    cores = sub["ranks_per_node"] * sub["threads"]
    # "Every core a rank" means the node's cores, not more: a sweep with oversubscribed
    # layouts (issue 20) would otherwise make the rule pick 4 ranks x 4 threads on 2 cores.
    over = (cores > sub["cores_per_node"]).to_numpy() if "cores_per_node" in sub.columns \
        else np.zeros(len(sub), bool)
    key = np.lexsort((
        (sub["precision"] != "fp64").to_numpy(),
        sub["threads"].to_numpy(),
        -cores.to_numpy(),
        -sub["nodes"].to_numpy(),
        over,
        ~gpu.to_numpy() if gpu.any() else np.zeros(len(sub), bool),
    ))
    return list(key)


def random_expectation(sub) -> tuple[float, float, float]:
    """Expected speed, crash probability and runs-to-5 % of a uniformly random order."""
    best = best_runtime(sub)
    ok = (sub["status"] == OK).to_numpy()
    rt = sub["runtime_s"].to_numpy(float)
    speeds = np.where(ok, best / np.where(ok, rt, 1.0), 0.0)
    good = ok & (rt <= best * (1 + GOOD_PICK_TOLERANCE))
    n, g = len(sub), int(good.sum())
    runs = (n + 1) / (g + 1) if g else float(n)  # expected position of the first good one
    return float(speeds.mean()), float((~ok).mean()), float(runs)


def lgbm_rank_orders(train, tests) -> list[list]:
    """LightGBM lambdarank on raw features (the seed's ranking baseline).

    Args:
        train: the fold's training runs.
        tests: the held-out problems' measured rows, one DataFrame each.

    Returns:
        one order (row positions, best first) per test problem.
    """
    import lightgbm as lgb

    from hpcds1mpi.surrogates.features import build_features, fit_spec

    ok = train[train["status"] == OK].copy()
    ok = ok.sort_values(PROBLEM_COLS).reset_index(drop=True)
    spec = fit_spec(train)
    X = build_features(ok, spec).to_numpy()
    labels, groups = [], []
    for _, g in ok.groupby(PROBLEM_COLS, sort=True):
        best = g["runtime_s"].min()
        ratio = best / g["runtime_s"]
        labels.append(np.clip(np.floor(ratio * 10), 0, 10).astype(int).to_numpy())
        groups.append(len(g))
    model = lgb.LGBMRanker(n_estimators=100, max_depth=6, learning_rate=0.1, verbose=-1,
                           min_child_samples=5, n_jobs=2)
    model.fit(X, np.concatenate(labels), group=groups)
    return [list(np.argsort(-model.predict(build_features(sub, spec).to_numpy()),
                            kind="stable")) for sub in tests]


def neighbour_oracle(frame) -> dict:
    """Measured noise ceiling: for each interior size, the configuration fastest (sum of log
    ratios to the best) at the two neighbouring measured sizes, judged at the held-out size."""
    speeds = []
    ok = frame[frame["status"] == OK].copy()
    ok["cfg"] = [config_label(r) for _, r in ok.iterrows()]
    for (_w, _p), g in ok.groupby(["workload", "partition"]):
        sizes = sorted(g["size"].unique())
        for i in range(1, len(sizes) - 1):
            here = g[g["size"] == sizes[i]].groupby("cfg")["runtime_s"].min()
            score = 0.0
            for n in (sizes[i - 1], sizes[i + 1]):
                nb = g[g["size"] == n].groupby("cfg")["runtime_s"].min()
                score = score + np.log(nb / nb.min())
            score = score.reindex(here.index).dropna()
            if len(score):
                speeds.append(float(here.min() / here[score.idxmin()]))
    s = np.asarray(speeds)
    return {"median_pct_of_best": float(100 * np.median(s)),
            "geomean_pct_of_best": float(100 * math.exp(np.mean(np.log(s)))),
            "picks_within_5pct": float(np.mean(s >= GOOD_SPEED)), "problems": int(len(s))}
