"""Regressors and the failure classifier on [features, embedding], and their bootstrap ensemble.

Families (the paper's settings): Random Forest (100 trees, depth 10), XGBoost and LightGBM
(100 estimators, depth 6, learning rate 0.1) on [features, TabNet embedding]; baselines are
the TabNet regressor itself and LightGBM on the raw features.

Targets (:data:`TARGETS`): ``runtime_s`` (regressed in log space), ``energy_j`` (log),
``peak_rss_mb`` (log, System 1's memory checks) on runs with status ``ok``, and ``failed``
(classifier: failed / timeout / oom / crashed / wrong vs ok) on all runs.

:class:`SurrogateModel` is the fitted stack the bundle stores: one feature spec, one TabNet
embedding, and per target an ensemble of members, each trained on a bootstrap over problems
(``(workload, size)`` groups), so every prediction comes with a spread over members.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from hpcds1mpi.errors import DataError, ModelError

from .features import FeatureSpec, build_features, fit_spec, log_baseline

FAMILIES = ("rf", "xgboost", "lightgbm")
REGRESSION_TARGETS = ("runtime_s", "energy_j", "peak_rss_mb")
#: Targets regressed relative to the analytic time estimate (see features.log_baseline):
#: energy = power x runtime scales with the runtime.
BASELINE_TARGETS = ("runtime_s", "energy_j")
TARGETS = (*REGRESSION_TARGETS, "failed")
FAIL_STATUSES = frozenset({"failed", "timeout", "oom", "crashed", "wrong"})
OK_STATUS = "ok"


# --------------------------------------------------------------------------------------------
# estimator factories (the paper's hyper-parameters)

#: Below this many rows a model trains on one thread: OpenMP pools (LightGBM, XGBoost) spin-wait,
#: and on a shared 2-core machine a 2-thread fit of 100 rows was measured 100x slower than 1.
PARALLEL_MIN_ROWS = 20000


def fit_threads(n_rows: int, threads: int) -> int:
    """Threads worth using to fit on ``n_rows`` rows."""
    return threads if n_rows >= PARALLEL_MIN_ROWS else 1


def member_budget(n_members: int, member_estimators: int | None = None) -> tuple[int, float]:
    """(trees, learning rate) of each ensemble member.

    By default the ensemble as a whole spends the paper's 100 trees per target: K members of
    100 / K trees each (at least 20), the learning rate raised to keep the same total step
    (0.1 x 100 / trees, at most 0.5). Scoring 10,000 configurations then costs about one
    100-tree model per target, not K (measured: ~11 ms CPU per 100-tree XGBoost model on
    10,000 rows here). ``member_estimators=100`` gives members with the paper's exact settings.
    """
    if member_estimators is None:
        member_estimators = 100 if n_members <= 1 else max(20, int(np.ceil(100 / n_members)))
    return member_estimators, min(0.5, 0.1 * 100 / member_estimators)


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


def make_regressor(family: str, *, seed: int = 0, threads: int = 2, n_estimators: int = 100,
                   learning_rate: float = 0.1):
    """A fresh regressor of ``family``; the defaults are the paper's settings."""
    if family == "rf":
        from sklearn.ensemble import RandomForestRegressor

        return RandomForestRegressor(n_estimators=n_estimators, max_depth=10,
                                     random_state=seed, n_jobs=threads)
    if family == "xgboost":
        import xgboost as xgb

        return xgb.XGBRegressor(n_estimators=n_estimators, max_depth=6,
                                learning_rate=learning_rate, random_state=seed, n_jobs=threads,
                                tree_method="hist")
    if family == "lightgbm":
        import lightgbm as lgb

        return lgb.LGBMRegressor(n_estimators=n_estimators, max_depth=6,
                                 learning_rate=learning_rate, min_child_samples=5,
                                 random_state=seed, n_jobs=threads, verbose=-1)
    raise ModelError(f"unknown model family {family!r}; choose one of {', '.join(FAMILIES)}")


def make_classifier(family: str, *, seed: int = 0, threads: int = 2, n_estimators: int = 100,
                    learning_rate: float = 0.1):
    """A fresh binary classifier of ``family``; the defaults are the paper's settings."""
    if family == "rf":
        from sklearn.ensemble import RandomForestClassifier

        return RandomForestClassifier(n_estimators=n_estimators, max_depth=10,
                                      random_state=seed, n_jobs=threads)
    if family == "xgboost":
        import xgboost as xgb

        return xgb.XGBClassifier(n_estimators=n_estimators, max_depth=6,
                                 learning_rate=learning_rate, random_state=seed,
                                 n_jobs=threads, tree_method="hist")
    if family == "lightgbm":
        import lightgbm as lgb

        return lgb.LGBMClassifier(n_estimators=n_estimators, max_depth=6,
                                  learning_rate=learning_rate, min_child_samples=5,
                                  random_state=seed, n_jobs=threads, verbose=-1)
    raise ModelError(f"unknown model family {family!r}; choose one of {', '.join(FAMILIES)}")


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


# --------------------------------------------------------------------------------------------
# targets


def failure_labels(status: pd.Series) -> np.ndarray:
    """1.0 failed, 0.0 ok, NaN for statuses that are neither (unsupported, cancelled, ...)."""
    s = status.astype(str).to_numpy()
    out = np.full(len(s), np.nan)
    out[s == OK_STATUS] = 0.0
    out[np.isin(s, list(FAIL_STATUSES))] = 1.0
    return out


def target_values(frame: pd.DataFrame, target: str) -> np.ndarray:
    """Training values of ``target`` (log for regression targets); NaN where not applicable."""
    n = len(frame)
    if target == "failed":
        return failure_labels(frame["status"]) if "status" in frame.columns else np.zeros(n)
    if target not in frame.columns:
        return np.full(n, np.nan)
    values = pd.to_numeric(frame[target], errors="coerce").to_numpy(dtype=np.float64,
                                                                    na_value=np.nan)
    ok = frame["status"].astype(str).to_numpy() == OK_STATUS if "status" in frame.columns \
        else np.ones(n, bool)
    with np.errstate(invalid="ignore", divide="ignore"):
        logged = np.where(ok & (values > 0), np.log(values), np.nan)
    return np.where(np.isfinite(logged), logged, np.nan)


def problem_groups(frame: pd.DataFrame) -> np.ndarray:
    """(n,) integer id of each row's problem = (workload, size)."""
    size = frame["size"].astype(str) if "size" in frame.columns else ""
    key = frame["workload"].astype(str) + "\x00" + size
    return pd.factorize(key)[0]


def bootstrap_rows(groups: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Row indices of a bootstrap over problems (groups drawn with replacement)."""
    uniq = np.unique(groups)
    if len(uniq) < 2:
        return rng.integers(0, len(groups), size=len(groups))
    order = np.argsort(groups, kind="stable")
    starts = np.searchsorted(groups[order], uniq)
    ends = np.append(starts[1:], len(groups))
    chosen = rng.integers(0, len(uniq), size=len(uniq))
    return np.concatenate([order[starts[g]:ends[g]] for g in chosen])


# --------------------------------------------------------------------------------------------
# the fitted stack


class SurrogateModel:
    """Feature spec + TabNet embedding + per-target bootstrap ensembles.

    Args:
        family: downstream family for the ensemble members (``xgboost`` default: its
            predictor was measured 4x faster than LightGBM's on 10,000 rows).
        n_members: ensemble members per target.
        use_embedding: append the TabNet embedding to the features.
        embedding_params: keyword arguments of :class:`~.embedding.TabNetEmbedding`.
        seed: base seed.
        threads: threads for training and prediction.
        use_baseline: regress runtime and energy relative to the analytic time estimate.
        member_estimators: trees per member (default: see :func:`member_budget`).
    """

    def __init__(self, family: str = "xgboost", n_members: int = 5, use_embedding: bool = True,
                 embedding_params: dict | None = None, seed: int = 0, threads: int = 2,
                 use_baseline: bool = True, member_estimators: int | None = None):
        if family not in FAMILIES:
            raise ModelError(f"unknown model family {family!r}; choose one of {', '.join(FAMILIES)}")
        self.family, self.n_members, self.use_embedding = family, n_members, use_embedding
        self.embedding_params = dict(embedding_params or {})
        self.seed, self.threads, self.use_baseline = seed, threads, use_baseline
        self.member_estimators = member_estimators

    def _baseline(self, target: str, Z: np.ndarray) -> np.ndarray | float:
        if self.use_baseline and target in BASELINE_TARGETS:
            return log_baseline(Z, self.spec_)
        return 0.0

    # -- fit -----------------------------------------------------------------------------
    def fit(self, frame: pd.DataFrame) -> "SurrogateModel":
        """Fit on a (normalised, checked) runs or job table.

        Args:
            frame: rows with the input columns, ``status`` and the target columns.
        """
        self.spec_ = fit_spec(frame)
        features = build_features(frame, self.spec_)
        X = features.to_numpy()
        targets = {t: target_values(frame, t) - (
            log_baseline(X, self.spec_) if use_base else 0.0)
            for t in TARGETS for use_base in [self.use_baseline and t in BASELINE_TARGETS]}
        self.targets_ = [t for t in REGRESSION_TARGETS if np.isfinite(targets[t]).sum() >= 2]
        if "runtime_s" not in self.targets_:
            raise DataError("training data has fewer than 2 ok runs with a runtime; "
                            "measure more configurations")
        if np.isfinite(targets["failed"]).sum() >= 2:
            self.targets_.append("failed")
        self.embedding_ = None
        if self.use_embedding:
            from .embedding import TabNetEmbedding

            emb_targets = [t for t in REGRESSION_TARGETS if t in self.targets_]
            Y = np.column_stack([targets[t] for t in emb_targets])
            # Rows with every embedding target; a target present on < 90 % of runtime rows is
            # dropped from TabNet's outputs rather than shrinking its training set.
            runtime_rows = np.isfinite(Y[:, 0])
            keep_cols = [0] + [j for j in range(1, Y.shape[1])
                               if np.isfinite(Y[runtime_rows, j]).mean() >= 0.9]
            Y = Y[:, keep_cols]
            rows = np.isfinite(Y).all(axis=1)
            params = {"seed": self.seed, "threads": self.threads, **self.embedding_params}
            self.embedding_ = TabNetEmbedding(**params).fit(X[rows], Y[rows])
            self.embedding_targets_ = [emb_targets[j] for j in keep_cols]
        Z = self._design(X)
        groups = problem_groups(frame)
        rng = np.random.default_rng(self.seed)
        self.members_: dict[str, list] = {}
        for target in self.targets_:
            y = targets[target]
            have = np.flatnonzero(np.isfinite(y))
            members = []
            for k in range(self.n_members):
                idx = have[bootstrap_rows(groups[have], rng)] if self.n_members > 1 else have
                members.append(self._fit_one(target, Z[idx], y[idx], self.seed + k))
            self.members_[target] = members
        self.n_features_in_ = X.shape[1]
        return self

    def _fit_one(self, target: str, Z: np.ndarray, y: np.ndarray, seed: int):
        threads = fit_threads(len(Z), self.threads)
        trees, lr = member_budget(self.n_members, self.member_estimators)
        kw = {"seed": seed, "threads": threads, "n_estimators": trees, "learning_rate": lr}
        if target == "failed":
            labels = y.astype(int)
            if len(np.unique(labels)) < 2:
                return ConstantClassifier().fit(Z, labels)
            model = make_classifier(self.family, **kw).fit(Z, labels)
        else:
            model = make_regressor(self.family, **kw).fit(Z, y)
        return to_scorer(single_threaded(model), target == "failed")

    def _design(self, X: np.ndarray) -> np.ndarray:
        if self.embedding_ is None:
            return X
        return np.hstack([X, self.embedding_.transform(X)])

    # -- predict -------------------------------------------------------------------------
    def design_matrix(self, frame: pd.DataFrame) -> np.ndarray:
        """[features, embedding] of ``frame``: (n, f + d)."""
        return self._design(build_features(frame, self.spec_).to_numpy())

    def check_features(self, features: pd.DataFrame) -> None:
        """Refuse a feature table that does not match the recorded spec (ModelError)."""
        self.spec_.check_features(features)

    def predict_features(self, features: pd.DataFrame) -> dict[str, np.ndarray]:
        """Member predictions from a feature table built by ``build_features``.

        Returns:
            target -> (n_members, n): log values for regression targets, P(failed) for
            ``failed``.
        """
        self.check_features(features)
        return self.predict_design(self._design(features.to_numpy()))

    def predict_design(self, Z: np.ndarray) -> dict[str, np.ndarray]:
        """Member predictions from a design matrix (n, f + d)."""
        out = {}
        for target, members in self.members_.items():
            classify = target == "failed"
            preds = np.vstack([predict_member(m, Z, classify) for m in members])
            out[target] = preds if classify else preds + self._baseline(target, Z)
        return out

    def predict_members(self, frame: pd.DataFrame) -> dict[str, np.ndarray]:
        """Member predictions for an input frame (see :meth:`predict_features`)."""
        return self.predict_features(build_features(frame, self.spec_))


# --------------------------------------------------------------------------------------------
# scoring without importing xgboost (cold start)


class XGBoostScorer:
    """An XGBoost model scored through ``libxgboost``'s C API (ctypes), without importing the
    ``xgboost`` package.

    ``import xgboost`` pulls in scikit-learn and scipy and was measured at 1.5-5 s cold on this
    machine; ``recommend`` must answer in 1.5 s. The bundle stores each XGBoost member's raw
    model (UBJSON); this class loads it into the same library and calls
    ``XGBoosterPredictFromDense`` exactly as ``Booster.inplace_predict`` does.

    Args:
        raw: the model bytes from ``Booster.save_raw("ubj")``.
        classify: the model is a binary classifier (prediction is P(class 1)).
    """

    _lib = None

    def __init__(self, raw: bytes, classify: bool):
        import ctypes

        lib = self.library()
        self.raw, self.classify = bytes(raw), classify
        self._handle = ctypes.c_void_p()
        self._check(lib.XGBoosterCreate(None, ctypes.c_uint64(0), ctypes.byref(self._handle)))
        buf = ctypes.create_string_buffer(self.raw, len(self.raw))
        self._check(lib.XGBoosterLoadModelFromBuffer(self._handle, buf,
                                                     ctypes.c_uint64(len(self.raw))))
        self._check(lib.XGBoosterSetParam(self._handle, b"nthread", b"1"))

    @classmethod
    def library(cls):
        """``libxgboost`` loaded by path (finding the package does not import it)."""
        if cls._lib is None:
            import ctypes
            import importlib.util
            import sys
            from pathlib import Path

            spec = importlib.util.find_spec("xgboost")
            if spec is None or spec.origin is None:
                raise ModelError("xgboost is not installed; pip install xgboost")
            name = {"darwin": "libxgboost.dylib", "win32": "xgboost.dll"}.get(sys.platform,
                                                                               "libxgboost.so")
            path = Path(spec.origin).parent / "lib" / name
            lib = ctypes.cdll.LoadLibrary(str(path))
            lib.XGBGetLastError.restype = ctypes.c_char_p
            cls._lib = lib
        return cls._lib

    def _check(self, rc: int) -> None:
        if rc != 0:
            raise ModelError(f"xgboost: {self.library().XGBGetLastError().decode()}")

    def predict(self, Z: np.ndarray) -> np.ndarray:
        """(n,) prediction (P(class 1) for a classifier) of a (n, f) matrix."""
        import ctypes
        import json

        Z = np.ascontiguousarray(Z, dtype=np.float64)
        interface = json.dumps({"data": [Z.ctypes.data, True], "shape": list(Z.shape),
                                "strides": None, "typestr": "<f8", "version": 3}).encode()
        config = json.dumps({"type": 0, "training": False, "iteration_begin": 0,
                             "iteration_end": 0, "missing": float("nan"),
                             "strict_shape": False, "cache_id": 0}).encode()
        shape = ctypes.POINTER(ctypes.c_uint64)()
        dims = ctypes.c_uint64()
        out = ctypes.POINTER(ctypes.c_float)()
        self._check(self.library().XGBoosterPredictFromDense(
            self._handle, ctypes.c_char_p(interface), ctypes.c_char_p(config), None,
            ctypes.byref(shape), ctypes.byref(dims), ctypes.byref(out)))
        size = int(np.prod([shape[i] for i in range(dims.value)]))
        values = np.ctypeslib.as_array(out, shape=(size,)).astype(np.float64)
        return values.reshape(len(Z), -1)[:, -1]

    def __del__(self):
        handle = getattr(self, "_handle", None)
        if handle is not None and handle.value and XGBoostScorer._lib is not None:
            XGBoostScorer._lib.XGBoosterFree(handle)

    def __getstate__(self):
        return {"raw": self.raw, "classify": self.classify}

    def __setstate__(self, state):
        self.__init__(state["raw"], state["classify"])


def to_scorer(model, classify: bool):
    """The lightest object that predicts like ``model`` (XGBoost -> :class:`XGBoostScorer`)."""
    if type(model).__module__.startswith("xgboost"):
        return XGBoostScorer(model.get_booster().save_raw("ubj"), classify)
    return model
