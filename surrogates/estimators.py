"""The regressor and classifier families of the ensemble members, and the baselines.

Families (the paper's settings): Random Forest (100 trees, depth 10), XGBoost and LightGBM
(100 estimators, depth 6, learning rate 0.1). :class:`TabNetDirect` is the paper's direct
baseline (a TabNet regressor on the raw features); :class:`ConstantClassifier` stands in for the
failure classifier when training saw one class only. :func:`predict_member` scores a fitted
member through its library's fastest one-thread path.
"""

from __future__ import annotations

import numpy as np

from hpcds1mpi.errors import ModelError

from .xgboost_scorer import XGBoostScorer

FAMILIES = ("rf", "xgboost", "lightgbm")


def member_budget(n_members: int, member_estimators: int | None = None,
                  learning_rate: float | None = None) -> tuple[int, float]:
    """(trees, learning rate) of each ensemble member.

    By default the ensemble as a whole spends the paper's 100 trees per target: K members of
    100 / K trees each (at least 20), the learning rate raised to keep the same total step
    (0.1 x 100 / trees, at most 0.5). Scoring 10,000 configurations then costs about one
    100-tree model per target, not K (measured: ~11 ms CPU per 100-tree XGBoost model on
    10,000 rows here). ``member_estimators=100`` gives members with the paper's exact settings.
    A ``learning_rate`` given replaces that rule's (System 1's ranking recipes choose it by
    cross-validation: ``ranking_cv.BUDGETS``).
    """
    if member_estimators is None:
        member_estimators = 100 if n_members <= 1 else max(20, int(np.ceil(100 / n_members)))
    if learning_rate is None:
        learning_rate = min(0.5, 0.1 * 100 / member_estimators)
    return member_estimators, float(learning_rate)


def predict_member(model, Z: np.ndarray, classify: bool) -> np.ndarray:
    """One member's prediction through the library's fastest path (one thread).

    Returns:
        (n,) regression value or P(class 1).
    """
    if isinstance(model, XGBoostScorer):
        return model.predict(Z)
    booster = getattr(model, "_Booster", None)
    if booster is not None and hasattr(booster, "inplace_predict"):  # xgboost
        return np.asarray(booster.inplace_predict(Z), dtype=np.float64).reshape(len(Z), -1)[:, -1]
    if booster is not None and type(model).__module__.startswith("lightgbm"):
        return np.asarray(booster.predict(Z, num_threads=1), dtype=np.float64).reshape(
            len(Z), -1)[:, -1]
    if classify:
        return model.predict_proba(Z)[:, -1]
    return model.predict(Z)


def single_threaded(model):
    """Set a fitted model to predict on one thread (small batches; no OpenMP spin-up)."""
    if hasattr(model, "set_params") and "n_jobs" in model.get_params():
        model.set_params(n_jobs=1)
    return model


#: Per family: the module and the (regressor, classifier) classes, and the paper's settings
#: besides trees, seed and threads.
_FAMILY_CLASSES = {
    "rf": ("sklearn.ensemble", "RandomForestRegressor", "RandomForestClassifier"),
    "xgboost": ("xgboost", "XGBRegressor", "XGBClassifier"),
    "lightgbm": ("lightgbm", "LGBMRegressor", "LGBMClassifier"),
}
_FAMILY_PARAMS = {
    "rf": {"max_depth": 10},
    "xgboost": {"max_depth": 6, "tree_method": "hist"},
    "lightgbm": {"max_depth": 6, "min_child_samples": 5, "verbose": -1},
}


def _make(family: str, classify: bool, seed: int, threads: int, n_estimators: int,
          learning_rate: float):
    import importlib

    if family not in _FAMILY_CLASSES:
        raise ModelError(f"unknown model family {family!r}; choose one of {', '.join(FAMILIES)}")
    module, regressor, classifier = _FAMILY_CLASSES[family]
    cls = getattr(importlib.import_module(module), classifier if classify else regressor)
    params = {"n_estimators": n_estimators, "random_state": seed, "n_jobs": threads,
              **_FAMILY_PARAMS[family]}
    if family != "rf":  # boosting only
        params["learning_rate"] = learning_rate
    return cls(**params)


def make_regressor(family: str, *, seed: int = 0, threads: int = 2, n_estimators: int = 100,
                   learning_rate: float = 0.1):
    """A fresh regressor of ``family``; the defaults are the paper's settings."""
    return _make(family, False, seed, threads, n_estimators, learning_rate)


def make_classifier(family: str, *, seed: int = 0, threads: int = 2, n_estimators: int = 100,
                    learning_rate: float = 0.1):
    """A fresh binary classifier of ``family``; the defaults are the paper's settings."""
    return _make(family, True, seed, threads, n_estimators, learning_rate)


class ConstantClassifier:
    """P(failed) when training saw one class only (e.g. no run ever failed)."""

    def __init__(self, p: float = 0.0):
        self.p = p

    def fit(self, X, y) -> "ConstantClassifier":
        self.p_ = float(np.mean(y)) if len(y) else float(self.p)
        return self

    def predict_proba(self, X) -> np.ndarray:
        p = np.full(len(X), getattr(self, "p_", self.p))
        return np.column_stack([1 - p, p])


class TabNetDirect:
    """The paper's direct baseline: a TabNet regressor on the raw (standardised) features."""

    def __init__(self, n_d: int = 8, n_a: int = 8, n_steps: int = 3, max_epochs: int = 60,
                 batch_size: int = 512, seed: int = 0, threads: int = 2):
        self.n_d, self.n_a, self.n_steps, self.max_epochs = n_d, n_a, n_steps, max_epochs
        self.batch_size, self.seed, self.threads = batch_size, seed, threads

    def fit(self, X: np.ndarray, y: np.ndarray) -> "TabNetDirect":
        from .embedding import TabNetEmbedding

        self.embedding_ = TabNetEmbedding(
            n_d=self.n_d, n_a=self.n_a, n_steps=self.n_steps, max_epochs=self.max_epochs,
            batch_size=self.batch_size, seed=self.seed, threads=self.threads,
        ).fit(X, y)
        return self

    def predict(self, X: np.ndarray) -> np.ndarray:
        import torch

        e = self.embedding_
        Xs = np.clip((np.asarray(X, dtype=np.float64) - e.x_mean_) / e.x_scale_,
                     -e.clip, e.clip).astype(np.float32)
        net = e.torch_model_.network
        with torch.no_grad():
            out, _ = net(torch.from_numpy(Xs))
        return out.numpy()[:, 0] * e.y_scale_[0] + e.y_mean_[0]
