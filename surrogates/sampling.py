"""Intelligent sample acquisition, exactly as the paper describes it.

1. Build a numeric view of the data (the feature matrix).
2. Train a light predictor per target; its *out-of-fold* predictions give each sample a
   difficulty: the absolute error for regression targets, ``1 - P(correct class)`` for
   classification targets. (Out-of-fold because in-sample errors of a tree model are ~0.)
3. Map difficulty linearly to a keep probability ``p = clip(scale * d, floor, 1)``, where ``d`` is
   the difficulty divided by its mean (so targets on different scales combine: a sample's
   difficulty is the mean of its per-target normalised difficulties).
4. Tune ``scale`` in a small bisection loop until the expected keep rate ``mean(p)`` hits the
   target rate.
5. Keep each sample by an independent Bernoulli draw.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from hpcds1mpi.errors import DataError

RATES = (0.5, 0.75, 1.0)
DEFAULT_FLOOR = 0.05
#: The light predictor of each fold is fitted on at most this many rows of the other folds
#: (every row still gets an out-of-fold difficulty). On the 231,000-row job table the full
#: folds made sampling cost more than the 25 % smaller fit saved (benchmarks/train_scale.md).
LIGHT_MAX_ROWS = 20_000


@dataclass
class SamplingRecord:
    """What a sampling run did, stored in the model bundle.

    Attributes:
        target_rate: requested fraction of samples to keep.
        achieved_rate: kept / total.
        expected_rate: mean keep probability after tuning the scale.
        scale: the tuned scale factor.
        floor: the smallest keep probability.
        seed: seed of the light predictors' folds and the Bernoulli draw.
        n_total: samples offered.
        n_kept: samples kept.
        targets: target names the difficulty was built from.
        iterations: bisection steps used.
    """

    target_rate: float
    achieved_rate: float
    expected_rate: float
    scale: float
    floor: float
    seed: int
    n_total: int
    n_kept: int
    targets: list[str]
    iterations: int

    def as_dict(self) -> dict:
        return asdict(self)


def _light_model(kind: str, seed: int, n_rows: int):
    import lightgbm as lgb

    from .parallel import fit_threads

    params = dict(n_estimators=30, num_leaves=15, learning_rate=0.2, min_child_samples=5,
                  random_state=seed, n_jobs=fit_threads(n_rows, 2), verbose=-1)
    return lgb.LGBMRegressor(**params) if kind == "regression" else lgb.LGBMClassifier(**params)


def difficulty(X: np.ndarray, y: np.ndarray, kind: str, *, seed: int = 0,
               folds: int = 3, max_rows: int = LIGHT_MAX_ROWS) -> np.ndarray:
    """Per-sample difficulty under a light out-of-fold predictor.

    Args:
        X: (n, f) numeric view of the samples.
        y: (n,) target; NaN marks samples the target does not apply to.
        kind: ``"regression"`` (absolute error) or ``"classification"`` (1 - P(correct)).
        seed: fold assignment and model seed.
        folds: number of folds.
        max_rows: rows each fold's light predictor is fitted on at most (a random subset).

    Returns:
        (n,) difficulty, NaN where ``y`` is NaN.
    """
    n = len(y)
    out = np.full(n, np.nan)
    have = np.flatnonzero(np.isfinite(y))
    if len(have) < 2 * folds:
        return out
    rng = np.random.default_rng(seed)
    fold_of = rng.integers(0, folds, size=len(have))
    for k in range(folds):
        test, train = have[fold_of == k], have[fold_of != k]
        if len(test) == 0:
            continue
        if len(train) > max_rows:  # a light predictor: a random subset of the other folds
            train = np.sort(rng.choice(train, max_rows, replace=False))
        if kind == "classification":
            classes = np.unique(y[train])
            if len(classes) < 2:
                # One class in training: it is predicted with certainty.
                out[test] = (y[test] != classes[0]).astype(float)
                continue
            model = _light_model(kind, seed, len(train)).fit(X[train], y[train].astype(int))
            proba = model.predict_proba(X[test])
            labels, classes = y[test].astype(int), np.asarray(model.classes_)
            col = np.minimum(np.searchsorted(classes, labels), len(classes) - 1)
            p_true = np.where(classes[col] == labels, proba[np.arange(len(test)), col], 0.0)
            out[test] = 1.0 - p_true
        else:
            model = _light_model(kind, seed, len(train)).fit(X[train], y[train])
            out[test] = np.abs(model.predict(X[test]) - y[test])
    return out


def combine(difficulties: list[np.ndarray]) -> np.ndarray:
    """Mean over targets of each target's difficulty divided by its mean (NaN skipped).

    Returns:
        (n,) combined difficulty; samples with no target get the mean (1.0).
    """
    stack = []
    for d in difficulties:
        mean = np.nanmean(d) if np.isfinite(d).any() else np.nan
        if not np.isfinite(mean) or mean <= 0:
            continue
        stack.append(d / mean)
    if not stack:
        return np.ones(len(difficulties[0]) if difficulties else 0)
    arr = np.vstack(stack)
    counts = np.isfinite(arr).sum(axis=0)
    total = np.nansum(arr, axis=0)
    return np.where(counts > 0, total / np.maximum(counts, 1), 1.0)


def keep_probabilities(d: np.ndarray, rate: float, floor: float = DEFAULT_FLOOR,
                       iterations: int = 60) -> tuple[np.ndarray, float, int]:
    """Tune ``scale`` so that ``mean(clip(scale * d, floor, 1)) == rate``.

    Returns:
        (keep probability (n,), scale, bisection steps used).
    """
    if not 0.0 < rate <= 1.0:
        raise DataError(f"sample rate must be in (0, 1], got {rate}")
    floor = min(floor, rate)
    d = np.maximum(np.nan_to_num(d, nan=0.0), 0.0)
    if rate >= 1.0:
        return np.ones_like(d), float("inf"), 0
    lo, hi = 0.0, 1.0
    # Grow the upper bracket until the expected rate reaches the target.
    while np.mean(np.clip(hi * d, floor, 1.0)) < rate and hi < 1e12:
        hi *= 2.0
    steps = 0
    for steps in range(1, iterations + 1):
        mid = 0.5 * (lo + hi)
        if np.mean(np.clip(mid * d, floor, 1.0)) < rate:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-9 * max(hi, 1e-12):
            break
    return np.clip(hi * d, floor, 1.0), hi, steps


def intelligent_sample(X: np.ndarray, targets: dict[str, tuple[np.ndarray, str]], rate: float,
                       *, seed: int = 0, floor: float = DEFAULT_FLOOR
                       ) -> tuple[np.ndarray, SamplingRecord]:
    """Choose which samples to keep.

    Args:
        X: (n, f) numeric view.
        targets: name -> ((n,) values with NaN where absent, "regression" | "classification").
        rate: target keep rate (0.5, 0.75, 1.0 in the paper).
        seed: seed for folds and the Bernoulli draw.
        floor: smallest keep probability (exploration).

    Returns:
        (boolean keep mask (n,), record).
    """
    n = len(X)
    if n == 0:
        raise DataError("no samples to sample from")
    if rate >= 1.0:
        keep = np.ones(n, dtype=bool)
        record = SamplingRecord(1.0, 1.0, 1.0, float("inf"), floor, seed, n, n,
                                sorted(targets), 0)
        return keep, record
    ds = [difficulty(X, y, kind, seed=seed) for y, kind in targets.values()]
    d = combine(ds)
    p, scale, steps = keep_probabilities(d, rate, floor)
    rng = np.random.default_rng(seed + 7919)
    keep = rng.random(n) < p
    record = SamplingRecord(
        target_rate=float(rate), achieved_rate=float(keep.mean()), expected_rate=float(p.mean()),
        scale=float(scale), floor=float(min(floor, rate)), seed=int(seed), n_total=int(n),
        n_kept=int(keep.sum()), targets=sorted(targets), iterations=int(steps),
    )
    return keep, record
