"""Calibrating System 1's confidence on held-out picks: cross-fitted logistic models.

Each held-out pick gives the ensemble's spread and margin at the pick, the workload's measured
noise (where the bundles recorded it) and whether the pick was good (within 5 % of the best).
:func:`calibrate` fits :class:`~hpcds1mpi.decide.confidence.ConfidenceModel`'s logistic map
two ways, on the same 5 cross-fitting folds: on (spread, margin) and on (spread, margin,
noise). Which is kept is the one with the higher cross-fitted AUROC (both are reported; on
56 picks a third coefficient can cost more than it brings). The coefficients shipped are the
kept feature set's fit on every pick.
"""

from __future__ import annotations

import numpy as np

from hpcds1mpi.analysis.pick_quality import auroc, ece


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


def calibrate(spread, margin, good, raw, noise, seed: int = 0) -> dict:
    """The confidence section of the System 1 evaluation (see the module docstring).

    Args:
        spread, margin: (n,) at each held-out pick.
        good: (n,) bool, the pick within 5 % of the best.
        raw: (n,) the confidence the fold models gave (their own calibration or none).
        noise: (n,) workload noise (NaN where unknown).
    """
    from hpcds1mpi.decide.confidence import ConfidenceModel

    spread, margin, good, raw, noise = (np.asarray(x) for x in (spread, margin, good, raw,
                                                                 noise))
    sets = {"log spread, margin / spread": ConfidenceModel.features(spread, margin)}
    if np.isfinite(noise).any():
        sets["log spread, margin / spread, log workload noise"] = ConfidenceModel.features(
            spread, margin, noise)
    fits = {}
    for name, X in sets.items():
        probs = cross_fit(X, good, np.random.default_rng(seed))  # the same folds for each
        fits[name] = {"auroc": auroc(probs, good), "ece": ece(probs, good), "X": X}
    kept = max(fits, key=lambda k: (np.nan_to_num(fits[k]["auroc"], nan=-1.0), -len(k)))
    full = _fit_logistic(fits[kept]["X"], good)
    coef = (float(full.intercept_[0]), *map(float, full.coef_[0])) if full is not None \
        else None
    return {"good_pick_rate": float(good.mean()), "picks": int(len(good)),
            "ece_calibrated_crossfit": fits[kept]["ece"],
            "auroc_calibrated_crossfit": fits[kept]["auroc"],
            "ece_uncalibrated": ece(raw, good), "auroc_uncalibrated": auroc(raw, good),
            "coef": coef, "features": kept,
            "feature_sets": {k: {"auroc_crossfit": v["auroc"], "ece_crossfit": v["ece"]}
                             for k, v in fits.items()}}
