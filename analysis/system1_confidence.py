"""Calibrating System 1's confidence on held-out picks: cross-fitted logistic models.

Each held-out pick gives the ensemble's spread and margin at the pick, the workload's measured
noise (where the bundles recorded it), the share of the measured sizes around it at which the
picked configuration measured fastest (where the bundles keep their training rows) and whether
the pick was good (within 5 % of the best). :func:`calibrate` fits
:class:`~hpcds1mpi.decide.confidence.ConfidenceModel`'s logistic map on each of a few input
sets (:data:`INPUT_SETS`), cross-fitted on 5 folds, the same folds for every set, repeated
over :data:`REPEATS` fold draws (one draw of 56 picks moves the AUROC by several points). The
set kept is the one with the highest mean cross-fitted AUROC, ties to the smaller set; the
coefficients shipped are its fit on every pick. Every set's figures are reported.
"""

from __future__ import annotations

import numpy as np

from hpcds1mpi.analysis.pick_quality import auroc, ece

#: The input sets tried (names of :data:`hpcds1mpi.decide.confidence.INPUTS`): the spread
#: and margin of before; with the workload's noise; with the measured best around; and the
#: uncalibrated probability's own z (alone, a monotone map: its order of the picks is kept).
INPUT_SETS = (("log_spread", "margin_ratio"),
              ("log_spread", "margin_ratio", "log_noise"),
              ("log_margin", "measured_best_share"),
              ("log_spread", "margin_ratio", "measured_best_share"),
              ("uncalibrated_z",),
              ("uncalibrated_z", "measured_best_share"))
#: Fold draws averaged per input set.
REPEATS = 10


def _fit_logistic(X, y):
    from sklearn.linear_model import LogisticRegression

    if len(set(y)) < 2:
        return None
    return LogisticRegression(C=1.0).fit(X, y)


def cross_fit(X: np.ndarray, good: np.ndarray, rng: np.random.Generator,
              parts: int = 5) -> np.ndarray:
    """Out-of-fold probabilities of a logistic model of ``good`` on ``X``."""
    probs = np.full(len(good), np.nan)
    idx = rng.permutation(len(good))
    for part in np.array_split(idx, parts):
        train_idx = np.setdiff1d(idx, part)
        model = _fit_logistic(X[train_idx], good[train_idx])
        probs[part] = model.predict_proba(X[part])[:, 1] if model is not None else \
            good[train_idx].mean() if len(train_idx) else 0.5
    return probs


def calibrate(spread, margin, good, raw, noise, measured_best_share=None,
              seed: int = 0) -> dict:
    """The confidence section of the System 1 evaluation (see the module docstring).

    Args:
        spread, margin: (n,) at each held-out pick.
        good: (n,) bool, the pick within 5 % of the best.
        raw: (n,) the confidence the fold models gave (their own calibration or none).
        noise: (n,) workload noise (NaN where unknown).
        measured_best_share: (n,) share of the measured sizes around at which the pick
            measured fastest (NaN where unknown; None: not offered).
    """
    from hpcds1mpi.decide.confidence import design

    spread, margin, good, raw, noise = (np.asarray(x) for x in (spread, margin, good, raw,
                                                                 noise))
    share = np.full(len(good), np.nan) if measured_best_share is None else \
        np.asarray(measured_best_share, float)
    offered = {"log_noise": np.isfinite(noise).any(),
               "measured_best_share": np.isfinite(share).any()}
    fits = {}
    for inputs in INPUT_SETS:
        if not all(offered.get(name, True) for name in inputs):
            continue
        X = design(inputs, spread, margin, noise, share)
        draws = [cross_fit(X, good, np.random.default_rng(seed + r)) for r in range(REPEATS)]
        fits[inputs] = {"auroc": float(np.mean([auroc(p, good) for p in draws])),
                        "ece": float(np.mean([ece(p, good) for p in draws])), "X": X}
    kept = max(fits, key=lambda k: (np.nan_to_num(fits[k]["auroc"], nan=-1.0), -len(k)))
    nested = nested_auroc({k: v["X"] for k, v in fits.items()}, good, seed)
    full = _fit_logistic(fits[kept]["X"], good)
    coef = (float(full.intercept_[0]), *map(float, full.coef_[0])) if full is not None \
        else None
    return {"good_pick_rate": float(good.mean()), "picks": int(len(good)),
            "ece_calibrated_crossfit": fits[kept]["ece"],
            "auroc_calibrated_crossfit": fits[kept]["auroc"],
            # The choice of the set made inside each outer fold too: no optimism from choosing
            # the best of several sets on the picks it is scored on.
            "auroc_nested_crossfit": nested,
            "ece_uncalibrated": ece(raw, good), "auroc_uncalibrated": auroc(raw, good),
            "coef": coef, "inputs": list(kept), "features": ", ".join(kept),
            "crossfit_draws": REPEATS,
            "feature_sets": {", ".join(k): {"auroc_crossfit": v["auroc"],
                                            "ece_crossfit": v["ece"]}
                             for k, v in fits.items()}}


def nested_auroc(sets: dict, good: np.ndarray, seed: int = 0, parts: int = 5) -> float:
    """AUROC of the whole calibration (choose the input set, fit it) held out: in each of
    ``parts`` outer folds the set is chosen by its cross-fitted AUROC on that fold's training
    picks alone, fitted on them and scored on the fold's picks; the mean over
    :data:`REPEATS` fold draws. ``sets``: name -> ``(n, k)`` inputs of the same picks."""
    good = np.asarray(good)
    names = list(sets)
    scores = []
    for r in range(REPEATS):
        rng = np.random.default_rng(seed + 1000 + r)
        idx = rng.permutation(len(good))
        probs = np.full(len(good), np.nan)
        for part in np.array_split(idx, parts):
            train = np.setdiff1d(idx, part)

            def inner(name, train=train):
                p = cross_fit(sets[name][train], good[train], np.random.default_rng(seed + r))
                return (np.nan_to_num(auroc(p, good[train]), nan=-1.0), -len(name))

            chosen = max(names, key=inner)
            model = _fit_logistic(sets[chosen][train], good[train])
            probs[part] = model.predict_proba(sets[chosen][part])[:, 1] if model is not None \
                else (good[train].mean() if len(train) else 0.5)
        scores.append(auroc(probs, good))
    return float(np.mean(scores))
