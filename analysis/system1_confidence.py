"""Calibrating System 1's confidence on held-out picks: cross-fitted logistic models.

Each held-out pick gives the ensemble's spread and margin at the pick, the workload's measured
noise (where the bundles recorded it), the share of the measured sizes around it at which the
picked configuration measured fastest (where the bundles keep their training rows) and whether
the pick was good (within 5 % of the best). :func:`calibrate` fits
:class:`~hpcds1mpi.decide.confidence.ConfidenceModel`'s logistic map on each of a few input
sets (:data:`INPUT_SETS`), cross-fitted on 5 folds, the same folds for every set, repeated
over :data:`REPEATS` fold draws (one draw of 56 picks moves the AUROC by several points), and
by leave-pair-out (:func:`leave_pair_out_auroc`). The set kept is the one with the highest
leave-pair-out AUROC, ties to the smaller set; the coefficients shipped are its fit on every
pick. Every set's figures are reported.

Why leave-pair-out: with a few bad picks among many good ones, the out-of-fold probabilities
of 5 fold models are pooled into one ranking although each fold's model has its own intercept
and slope, so the pooled AUROC reads far below what any one model achieves (on the held-out-
edges reference, 4 bad picks in 72: a monotone map of one input read 0.40 pooled where the
input itself ranks at 0.83). Leaving out one good and one bad pick, fitting on the rest and
asking whether the good one scores higher is the nearly unbiased estimate for small samples
(Airola et al., "An experimental comparison of cross-validation techniques for estimating the
area under the ROC curve", Comput. Stat. Data Anal. 2011).
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
#: Good-bad pairs scored by leave-pair-out (a seeded sample where there are more), and by its
#: nested form, which chooses the input set inside each pair's training picks.
PAIRS = 400
NESTED_PAIRS = 150
#: Pairs each set is scored on inside one held-out pair's training picks, to choose it there.
INNER_PAIRS = 40


class _Logistic:
    """L2-penalised logistic regression, the intercept unpenalised — the optimum of
    scikit-learn's ``LogisticRegression(C=1.0)`` (the same convex objective), found by Newton's
    method: leave-pair-out fits it thousands of times on a few dozen picks, where sklearn's
    per-fit overhead (~1 ms) was most of the evaluation's time."""

    def __init__(self, X, y, c: float = 1.0, steps: int = 50):
        X, y = np.asarray(X, float), np.asarray(y, float)
        A = np.column_stack([np.ones(len(X)), X])
        ridge = np.full(A.shape[1], 1.0 / c)
        ridge[0] = 0.0
        theta = np.zeros(A.shape[1])

        def loss(t):
            z = A @ t
            return float(np.sum(np.logaddexp(0.0, z) - y * z) + 0.5 * np.sum(ridge * t * t))

        current = loss(theta)
        for _ in range(steps):
            p = 1.0 / (1.0 + np.exp(-(A @ theta)))
            grad = A.T @ (p - y) + ridge * theta
            hess = (A * (p * (1 - p))[:, None]).T @ A + np.diag(ridge) + 1e-10 * np.eye(len(theta))
            step = np.linalg.solve(hess, grad)
            scale = 1.0
            while scale > 1e-6 and loss(theta - scale * step) > current:
                scale /= 2
            theta = theta - scale * step
            new = loss(theta)
            if current - new < 1e-12 * max(1.0, abs(current)):
                current = new
                break
            current = new
        self.intercept_ = theta[:1]
        self.coef_ = theta[None, 1:]

    def decision_function(self, X):
        return self.intercept_[0] + np.asarray(X, float) @ self.coef_[0]

    def predict_proba(self, X):
        p = 1.0 / (1.0 + np.exp(-self.decision_function(X)))
        return np.column_stack([1 - p, p])


def _fit_logistic(X, y):
    if len(set(np.asarray(y).tolist())) < 2:
        return None
    return _Logistic(X, y)


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


def _pairs(good: np.ndarray, limit: int, rng: np.random.Generator) -> np.ndarray:
    """``(k, 2)`` (good, bad) index pairs: all of them, or ``limit`` drawn without repeats."""
    pos, neg = np.flatnonzero(good), np.flatnonzero(~good)
    pairs = np.array([(i, j) for i in pos for j in neg], dtype=int).reshape(-1, 2)
    if len(pairs) > limit:
        pairs = pairs[rng.choice(len(pairs), limit, replace=False)]
    return pairs


def _pair_win(model, X, i, j) -> float:
    """1 where the fitted model scores the good pick ``i`` above the bad ``j``, 0.5 a tie
    (or no model: one class in training), else 0."""
    if model is None:
        return 0.5
    a, b = model.decision_function(X[[i, j]])
    return 1.0 if a > b else 0.5 if a == b else 0.0


def leave_pair_out_auroc(X: np.ndarray, good: np.ndarray, seed: int = 0,
                         limit: int = PAIRS) -> float:
    """Leave-pair-out AUROC of a logistic model of ``good`` on ``X``: for each (good, bad) pair
    (at most ``limit``, drawn), fit on every other pick and score the pair; NaN with one
    class."""
    good = np.asarray(good, bool)
    pairs = _pairs(good, limit, np.random.default_rng(seed))
    if not len(pairs):
        return float("nan")
    wins = []
    for i, j in pairs:
        train = np.setdiff1d(np.arange(len(good)), (i, j))
        wins.append(_pair_win(_fit_logistic(X[train], good[train]), X, i, j))
    return float(np.mean(wins))


def nested_leave_pair_out_auroc(sets: dict, good: np.ndarray, seed: int = 0,
                                limit: int = NESTED_PAIRS) -> float:
    """:func:`leave_pair_out_auroc` of the whole calibration: for each pair the input set is
    chosen on the other picks alone as :func:`calibrate` chooses it (their leave-pair-out
    AUROC, on :data:`INNER_PAIRS` pairs), fitted there and scored on the pair, so choosing
    among the sets flatters nothing."""
    good = np.asarray(good, bool)
    pairs = _pairs(good, limit, np.random.default_rng(seed + 2000))
    if not len(pairs):
        return float("nan")
    names = list(sets)
    wins = []
    for k, (i, j) in enumerate(pairs):
        train = np.setdiff1d(np.arange(len(good)), (i, j))

        def inner(name, train=train, k=k):
            score = leave_pair_out_auroc(sets[name][train], good[train], seed + k, INNER_PAIRS)
            return (np.nan_to_num(score, nan=-1.0), -len(name))

        chosen = max(names, key=inner)
        model = _fit_logistic(sets[chosen][train], good[train])
        wins.append(_pair_win(model, sets[chosen], i, j))
    return float(np.mean(wins))


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
                        "ece": float(np.mean([ece(p, good) for p in draws])), "X": X,
                        "lpo": leave_pair_out_auroc(X, good, seed)}
    kept = max(fits, key=lambda k: (np.nan_to_num(fits[k]["lpo"], nan=-1.0), -len(k)))
    nested = nested_auroc({k: v["X"] for k, v in fits.items()}, good, seed)
    nested_lpo = nested_leave_pair_out_auroc({k: v["X"] for k, v in fits.items()}, good, seed)
    full = _fit_logistic(fits[kept]["X"], good)
    coef = (float(full.intercept_[0]), *map(float, full.coef_[0])) if full is not None \
        else None
    return {"good_pick_rate": float(good.mean()), "picks": int(len(good)),
            "ece_calibrated_crossfit": fits[kept]["ece"],
            "auroc_calibrated_crossfit": fits[kept]["auroc"],
            # The choice of the set made inside each outer fold too: no optimism from choosing
            # the best of several sets on the picks it is scored on.
            "auroc_nested_crossfit": nested,
            # Leave-pair-out (the module docstring says why): the kept set's, and the whole
            # calibration's with the set chosen inside each pair's training picks.
            "auroc_leave_pair_out": fits[kept]["lpo"],
            "auroc_nested_leave_pair_out": nested_lpo,
            "ece_uncalibrated": ece(raw, good), "auroc_uncalibrated": auroc(raw, good),
            "coef": coef, "inputs": list(kept), "features": ", ".join(kept),
            "crossfit_draws": REPEATS,
            "feature_sets": {", ".join(k): {"auroc_crossfit": v["auroc"],
                                            "ece_crossfit": v["ece"],
                                            "auroc_leave_pair_out": v["lpo"]}
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
