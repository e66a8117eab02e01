"""Regressors and the failure classifier on [features, embedding], and their bootstrap ensemble.

Families (the paper's settings): Random Forest (100 trees, depth 10), XGBoost and LightGBM
(100 estimators, depth 6, learning rate 0.1) on [features, TabNet embedding]; baselines are
the TabNet regressor itself and LightGBM on the raw features.

Targets (:data:`TARGETS`): ``runtime_s`` (regressed in log space), ``energy_j`` (log),
``peak_rss_mb`` (log, System 1's memory checks) on runs with status ``ok``, and ``failed``
(classifier: failed / timeout / oom / crashed / wrong vs ok) on all runs.

:class:`SurrogateModel` is the fitted stack the bundle stores: one feature spec, one TabNet
embedding, and per target an ensemble of members, each trained on a Bayesian bootstrap over
problems (``(workload, size)`` groups re-weighted, :func:`bootstrap_weights`), so every
prediction comes with a spread over members.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from hpcds1mpi.config import FAILURE_STATUSES, OK
from hpcds1mpi.errors import DataError, ModelError

from .features import (baseline_from_roofline, build_features, feature_block, fit_spec,
                       log_baseline)

FAMILIES = ("rf", "xgboost", "lightgbm")
REGRESSION_TARGETS = ("runtime_s", "energy_j", "peak_rss_mb")
#: Targets regressed relative to the analytic time estimate (see features.log_baseline):
#: energy = power x runtime scales with the runtime.
BASELINE_TARGETS = ("runtime_s", "energy_j")
TARGETS = (*REGRESSION_TARGETS, "failed")
#: Member features of the shipped bundle: the problem (workload identity and description, log
#: size) and the configuration knobs and hardware, not the work-model features derived from
#: them (the analytic baseline already carries those). On the reference telemetry this scored
#: about as well held out (size-interp 24.6 vs 22.6 %, size-largest 24.8 vs 26.7 %, runtime
#: MAPE, mean of 2 seeds) and lets a 10,000-candidate grid collapse to a few tree regions.
KNOB_FEATURES: tuple[str, ...] = (
    "workload_code", "comm_allreduce", "comm_alltoall", "comm_halo", "comm_gather",
    "uses_threads", "log_size", "nodes", "ranks_per_node", "threads", "device_code",
    "precision_bytes", "partition_code", "cores_per_node", "memory_gb", "gpus_per_node",
)


# --------------------------------------------------------------------------------------------
# estimator factories (the paper's hyper-parameters)

#: Below this many rows a model trains on one thread: OpenMP pools (LightGBM, XGBoost) spin-wait,
#: and on a shared 2-core machine a 2-thread fit of 100 rows was measured 100x slower than 1.
PARALLEL_MIN_ROWS = 20000


#: From this many scored rows on, prediction spreads over the usable cores (threads: the
#: members' C libraries and numpy's matrix products release the GIL); below it one thread is
#: faster (System 1's grids score a few hundred tree regions).
PREDICT_PARALLEL_ROWS = 4096
#: Rows grouped first to decide whether tree-region grouping pays (see ``_predict_regions``).
REGION_PROBE_ROWS = 512
#: From this many scored rows on, XGBoost members are scored by the compiled forest
#: (surrogates/forest.py); fewer rows are cheaper through libxgboost than a numba import.
FOREST_MIN_ROWS = 2048


def predict_threads() -> int:
    """Cores prediction may use: this process's CPU affinity, at most 8."""
    from hpcds1mpi.runtime.binding import initial_cpus

    return max(1, min(8, len(initial_cpus())))


def parallel_map(fn, items: list, n_rows: int) -> list:
    """``[fn(item) for item in items]``, on the usable cores when ``n_rows`` is large enough."""
    from hpcds1mpi.runtime.pools import pool

    workers = pool(predict_threads() if n_rows >= PREDICT_PARALLEL_ROWS else 1)
    if workers is None or len(items) <= 1:
        return [fn(item) for item in items]
    return list(workers.map(fn, items))


def map_row_blocks(fn, n_rows: int) -> list:
    """``fn(start, stop)`` over consecutive row blocks, one per usable core (blocks of at least
    ``PREDICT_PARALLEL_ROWS / 2`` rows; one block when small), in row order."""
    blocks = max(1, min(predict_threads(), n_rows // (PREDICT_PARALLEL_ROWS // 2)))
    bounds = np.linspace(0, n_rows, blocks + 1).astype(int)
    return parallel_map(lambda b: fn(b[0], b[1]), list(zip(bounds[:-1], bounds[1:])), n_rows)


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


def forest_predict(forest, index: list[int], jobs: list, Z: np.ndarray) -> list[np.ndarray]:
    """Every job's (target, member) prediction: members ``index`` through the compiled forest
    (row blocks on the usable cores), the others one by one."""
    X32 = np.ascontiguousarray(Z, dtype=np.float32)
    parts = map_row_blocks(lambda start, stop: forest.margins(X32, start, stop), len(X32))
    values = forest.finish(np.hstack(parts))
    out: list = [None] * len(jobs)
    for row, i in enumerate(index):
        out[i] = values[row]
    for i, (target, model) in enumerate(jobs):
        if out[i] is None:
            out[i] = predict_member(model, Z, target == "failed")
    return out


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
    out[s == OK] = 0.0
    out[np.isin(s, list(FAILURE_STATUSES))] = 1.0
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
    ok = frame["status"].astype(str).to_numpy() == OK if "status" in frame.columns \
        else np.ones(n, bool)
    with np.errstate(invalid="ignore", divide="ignore"):
        logged = np.where(ok & (values > 0), np.log(values), np.nan)
    return np.where(np.isfinite(logged), logged, np.nan)


def problem_groups(frame: pd.DataFrame) -> np.ndarray:
    """(n,) integer id of each row's problem = (workload, size)."""
    size = frame["size"].astype(str) if "size" in frame.columns else ""
    key = frame["workload"].astype(str) + "\x00" + size
    return pd.factorize(key)[0]


def bootstrap_weights(groups: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Row weights of a Bayesian bootstrap over problems (Rubin 1981).

    Every problem gets one weight drawn from Exp(1) (the Dirichlet weights of the Bayesian
    bootstrap, scaled to mean 1 per row); its rows share it. The ensemble's spread then comes
    from re-weighting whole problems, as a bootstrap drawing problems with replacement would,
    but no problem is left out: with a few sizes per workload (the reference sweep has 9, 5 of
    them in a training split) a drawn-with-replacement member often saw one or two sizes of a
    workload and extrapolated wildly (measured: held-out MAPE 51 % vs 24 % for seed 0).

    Returns:
        (n,) positive weights, mean 1.
    """
    uniq, inverse = np.unique(groups, return_inverse=True)
    if len(uniq) < 2:
        w = rng.exponential(1.0, size=len(groups))
    else:
        w = rng.exponential(1.0, size=len(uniq))[inverse]
    return w / w.mean()


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
        member_features: feature names the ensemble members see (default: all features, plus
            the embedding). The baseline and the embedding still use every feature. A short
            list of the problem and the configuration knobs lets System 1 score a 10,000-row
            grid as a few hundred tree regions (:func:`tree_regions`).
    """

    def __init__(self, family: str = "xgboost", n_members: int = 5, use_embedding: bool = True,
                 embedding_params: dict | None = None, seed: int = 0, threads: int = 2,
                 use_baseline: bool = True, member_estimators: int | None = None,
                 member_features: list[str] | None = None):
        if family not in FAMILIES:
            raise ModelError(f"unknown model family {family!r}; choose one of {', '.join(FAMILIES)}")
        self.family, self.n_members, self.use_embedding = family, n_members, use_embedding
        self.embedding_params = dict(embedding_params or {})
        self.seed, self.threads, self.use_baseline = seed, threads, use_baseline
        self.member_estimators = member_estimators
        self.member_features = list(member_features) if member_features else None

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
        Z = self._member_view(self._design(X))
        groups = problem_groups(frame)
        rng = np.random.default_rng(self.seed)
        self.members_: dict[str, list] = {}
        for target in self.targets_:
            y = targets[target]
            have = np.flatnonzero(np.isfinite(y))
            members = []
            for k in range(self.n_members):
                weight = bootstrap_weights(groups[have], rng) if self.n_members > 1 else None
                members.append(self._fit_one(target, Z[have], y[have], self.seed + k, weight))
            self.members_[target] = members
        self.n_features_in_ = X.shape[1]
        return self

    def _fit_one(self, target: str, Z: np.ndarray, y: np.ndarray, seed: int,
                 weight: np.ndarray | None = None):
        threads = fit_threads(len(Z), self.threads)
        trees, lr = member_budget(self.n_members, self.member_estimators)
        kw = {"seed": seed, "threads": threads, "n_estimators": trees, "learning_rate": lr}
        if target == "failed":
            labels = y.astype(int)
            if len(np.unique(labels)) < 2:
                return ConstantClassifier().fit(Z, labels)
            model = make_classifier(self.family, **kw).fit(Z, labels, sample_weight=weight)
        else:
            model = make_regressor(self.family, **kw).fit(Z, y, sample_weight=weight)
        return to_scorer(single_threaded(model), target == "failed")

    def _member_view(self, Z: np.ndarray) -> np.ndarray:
        """The columns of the design matrix the members were trained on."""
        if not self.member_features:
            return Z
        cols = getattr(self, "_member_columns", None)
        if cols is None:
            missing = [c for c in self.member_features if c not in self.spec_.names]
            if missing:
                raise ModelError(f"member features {', '.join(missing)} are not built by this "
                                 "feature builder; retrain the bundle")
            cols = self._member_columns = np.array(
                [self.spec_.names.index(c) for c in self.member_features])
        return Z[:, cols]

    def _design(self, X: np.ndarray) -> np.ndarray:
        if self.embedding_ is None:
            return X
        # Row blocks on the usable cores (the numpy and compiled passes release the GIL).
        # Each block's rows are embedded exactly as alone: row-wise arithmetic.
        parts = map_row_blocks(lambda start, stop: self.embedding_.transform(X[start:stop]),
                               len(X))
        return np.hstack([X, np.vstack(parts)])

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

    def _thresholds(self) -> dict[int, np.ndarray] | None:
        """Split thresholds of every member (None when a member's are unknown)."""
        if not hasattr(self, "_thresholds_cache"):
            parts = []
            for members in self.members_.values():
                for m in members:
                    if isinstance(m, ConstantClassifier):
                        continue
                    if not isinstance(m, XGBoostScorer) or m.thresholds is None:
                        parts = None
                        break
                    parts.append(m.thresholds)
                if parts is None:
                    break
            self._thresholds_cache = merge_thresholds(parts) if parts is not None else None
        return self._thresholds_cache

    def predict_regions(self, Z: np.ndarray
                        ) -> tuple[dict[str, np.ndarray], np.ndarray | None, dict]:
        """Member predictions of the distinct tree regions of ``Z``, before the baseline.

        When every member's split thresholds are known, rows that all trees treat alike are
        scored once (:func:`tree_regions`; exact: the same numbers as scoring every row).

        Args:
            Z: (n, f + d) design matrix.

        Returns:
            ``preds``: target -> (n_members, k) values of k region representatives (k = n
            without grouping); ``inverse``: (n,) region of each row, or None when k = n and
            rows map to themselves; ``baseline``: target -> (n,) log baseline to add to the
            regression targets of each row (0.0 where none).
        """
        base = log_baseline(Z, self.spec_) if self.use_baseline else None
        return self._predict_regions(self._member_view(Z), base)

    def predict_frame_regions(self, frame: pd.DataFrame
                              ) -> tuple[dict[str, np.ndarray], np.ndarray | None, dict]:
        """:meth:`predict_regions` of an input frame, building only the features it needs.

        With member features and no embedding (the shipped bundle) that is the members'
        features and the baseline's time estimate, not the whole feature table.
        """
        if self.embedding_ is not None or not self.member_features:
            return self.predict_regions(self.design_matrix(frame))
        self.spec_.check_inputs(frame)
        names = [*self.member_features, "log_t_roofline"]
        block = feature_block(frame, self.spec_, names)
        base = baseline_from_roofline(block[-1]) if self.use_baseline else None
        return self._predict_regions(block[:-1].T, base)

    def _predict_regions(self, Z_members: np.ndarray, base: np.ndarray | None):
        thresholds = self._thresholds() if len(Z_members) > 256 else None
        first = inverse = None
        if thresholds is not None and len(Z_members) > 4 * REGION_PROBE_ROWS:
            # Rows of a job table are mostly distinct regions: a probe of the first rows
            # tells before paying for the whole grouping (~8 ms per 10,000 rows).
            probe, _ = tree_regions(Z_members[:REGION_PROBE_ROWS], thresholds)
            if len(probe) > 0.5 * REGION_PROBE_ROWS:
                thresholds = None
        if thresholds is not None:
            first, inverse = tree_regions(Z_members, thresholds)
            if len(first) > 0.5 * len(Z_members):  # little to gain
                first = inverse = None
        Z_score = Z_members if first is None else Z_members[first]
        jobs = [(target, m) for target, members in self.members_.items() for m in members]
        forest = self._forest() if len(Z_score) >= FOREST_MIN_ROWS else None
        if forest is not None:
            values = forest_predict(forest[0], forest[1], jobs, Z_score)
        else:
            values = parallel_map(
                lambda job: predict_member(job[1], Z_score, job[0] == "failed"),
                jobs, len(Z_score))
        preds, baseline = {}, {}
        for target in self.members_:
            preds[target] = np.vstack([v for (t, _), v in zip(jobs, values) if t == target])
            baseline[target] = base if (base is not None and target in BASELINE_TARGETS) \
                else 0.0
        return preds, inverse, baseline

    def _forest(self):
        """(compiled-layout forest of the XGBoost members, their job indices), or None when
        numba is missing (or ``HPCDS1MPI_NO_JIT=1``) or no member can be laid out."""
        if not hasattr(self, "_forest_cache"):
            from . import forest

            self._forest_cache = None
            jobs = [m for members in self.members_.values() for m in members]
            index = [i for i, m in enumerate(jobs) if isinstance(m, XGBoostScorer)]
            if index and forest.available():
                try:
                    self._forest_cache = (forest.Forest([jobs[i].json_model() for i in index]),
                                          index)
                except ValueError:  # a model the layout does not reproduce: libxgboost
                    pass
        return self._forest_cache

    def predict_design(self, Z: np.ndarray) -> dict[str, np.ndarray]:
        """Member predictions from a design matrix (n, f + d).

        Returns:
            target -> (n_members, n): log values for regression targets, P(failed) for
            ``failed``.
        """
        preds, inverse, baseline = self.predict_regions(Z)
        out = {}
        for target, values in preds.items():
            if inverse is not None:
                values = values[:, inverse]
            out[target] = values + baseline[target]
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

    def __init__(self, raw: bytes, classify: bool,
                 thresholds: dict[int, np.ndarray] | None = None):
        import ctypes

        lib = self.library()
        self.raw, self.classify = bytes(raw), classify
        #: feature index -> sorted float32 split thresholds of every tree (None: unknown).
        self.thresholds = thresholds
        self._handle = ctypes.c_void_p()
        self._check(lib.XGBoosterCreate(None, ctypes.c_uint64(0), ctypes.byref(self._handle)))
        self._check(lib.XGBoosterSetParam(self._handle, b"nthread", b"1"))
        buf = ctypes.create_string_buffer(self.raw, len(self.raw))
        # Loading runs on the library's global OpenMP pool, whatever the booster's nthread: on
        # a busy 2-core machine its spin-waiting made one 20-tree load take 8-24 ms instead of
        # 0.16 ms (measured). One global thread while loading, the caller's setting after.
        previous = self._global_threads(1)
        try:
            self._check(lib.XGBoosterLoadModelFromBuffer(self._handle, buf,
                                                         ctypes.c_uint64(len(self.raw))))
        finally:
            self._global_threads(previous)

    @classmethod
    def _global_threads(cls, n: int | None) -> int | None:
        """Set libxgboost's global ``nthread`` to ``n`` (None: leave it); return the old one."""
        import ctypes
        import json

        lib = cls.library()
        out = ctypes.c_char_p()
        if lib.XGBGetGlobalConfig(ctypes.byref(out)) != 0 or not out.value:
            return None
        old = json.loads(out.value.decode()).get("nthread")
        if old == 0:  # "unset": OpenMP's default; the library ignores a request to set 0
            import os

            first = (os.environ.get("OMP_NUM_THREADS") or "").split(",")[0].strip()
            old = int(first) if first.isdigit() and int(first) > 0 else (os.cpu_count() or 1)
        if n is not None and old is not None and n != old:
            lib.XGBSetGlobalConfig(json.dumps({"nthread": int(n)}).encode())
        return old

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

    def json_model(self) -> dict:
        """The model as XGBoost's JSON document (trees, objective, base score)."""
        import ctypes
        import json

        length = ctypes.c_uint64()
        buf = ctypes.POINTER(ctypes.c_char)()
        self._check(self.library().XGBoosterSaveModelToBuffer(
            self._handle, b'{"format": "json"}', ctypes.byref(length), ctypes.byref(buf)))
        return json.loads(ctypes.string_at(buf, length.value))

    def predict(self, Z: np.ndarray) -> np.ndarray:
        """(n,) prediction (P(class 1) for a classifier) of a (n, f) matrix."""
        import ctypes
        import json

        Z = np.ascontiguousarray(Z, dtype=np.float64)
        interface = json.dumps({"data": [Z.ctypes.data, True], "shape": list(Z.shape),
                                "strides": None, "typestr": "<f8", "version": 3}).encode()
        # A classifier's margins, turned into probabilities by forest.logistic: the same
        # function as the compiled forest's, so both paths give the same bits.
        config = json.dumps({"type": 1 if self.classify else 0, "training": False,
                             "iteration_begin": 0,
                             "iteration_end": 0, "missing": float("nan"),
                             "strict_shape": False, "cache_id": 0}).encode()
        shape = ctypes.POINTER(ctypes.c_uint64)()
        dims = ctypes.c_uint64()
        out = ctypes.POINTER(ctypes.c_float)()
        self._check(self.library().XGBoosterPredictFromDense(
            self._handle, ctypes.c_char_p(interface), ctypes.c_char_p(config), None,
            ctypes.byref(shape), ctypes.byref(dims), ctypes.byref(out)))
        size = int(np.prod([shape[i] for i in range(dims.value)]))
        values = np.ctypeslib.as_array(out, shape=(size,)).reshape(len(Z), -1)[:, -1]
        if self.classify:
            from .forest import logistic

            return logistic(values)
        return values.astype(np.float64)

    def __del__(self):
        handle = getattr(self, "_handle", None)
        lib = type(self)._lib  # the class, not the module global: gone at interpreter exit
        if handle is not None and handle.value and lib is not None:
            lib.XGBoosterFree(handle)

    def __getstate__(self):
        return {"raw": self.raw, "classify": self.classify, "thresholds": self.thresholds}

    def __setstate__(self, state):
        self.__init__(state["raw"], state["classify"], state.get("thresholds"))


def split_thresholds(booster) -> dict[int, np.ndarray]:
    """Every split threshold of an XGBoost booster, per feature index.

    Returns:
        feature index -> sorted unique float32 thresholds (XGBoost compares float32 values:
        ``x < threshold`` goes left).
    """
    import json

    model = json.loads(bytes(booster.save_raw("json")))
    found: dict[int, list] = {}
    for tree in model["learner"]["gradient_booster"]["model"]["trees"]:
        left = np.asarray(tree["left_children"])
        inner = left != -1
        features = np.asarray(tree["split_indices"])[inner]
        values = np.asarray(tree["split_conditions"], dtype=np.float32)[inner]
        for f, v in zip(features.tolist(), values):
            found.setdefault(int(f), []).append(v)
    return {f: np.unique(np.asarray(v, dtype=np.float32)) for f, v in found.items()}


def merge_thresholds(parts: list[dict[int, np.ndarray]]) -> dict[int, np.ndarray]:
    """Union of several models' thresholds, per feature."""
    out: dict[int, np.ndarray] = {}
    for part in parts:
        for f, thr in part.items():
            out[f] = np.union1d(out[f], thr) if f in out else thr
    return out


def tree_regions(Z: np.ndarray, thresholds: dict[int, np.ndarray]
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Group rows that every tree sends down the same paths.

    Two rows whose features fall between the same pair of neighbouring thresholds, for every
    feature any tree splits on, get the same prediction from every tree: each comparison
    ``x < t`` has the same answer. The rows of a System 1 grid differ in a few knobs, mostly
    outside the range the trees were trained on, so 10,000 candidates fall into a few hundred
    regions and scoring one row per region is exact and much cheaper.

    Args:
        Z: (n, f) design matrix.
        thresholds: feature index -> sorted float32 thresholds (:func:`merge_thresholds`).

    Returns:
        ``first`` (k,) one row index per region, ``inverse`` (n,) each row's region.
    """
    n = len(Z)
    key = np.zeros(n, dtype=np.int64)
    span = 1
    for f, thr in thresholds.items():
        x = Z[:, f].astype(np.float32)
        base = len(thr) + 2
        code = np.searchsorted(thr, x, side="right")
        code[np.isnan(x)] = base - 1  # missing values take the trees' default direction
        if span * base >= 2 ** 62:  # keep the mixed-radix key in int64
            key, uniques = pd.factorize(key)
            key = key.astype(np.int64)
            span = len(uniques)
        key = key * base + code
        span *= base
    inverse, _ = pd.factorize(key)
    # factorize numbers regions in order of first appearance: a region starts where the
    # running maximum of the codes grows.
    if n == 0:
        return np.zeros(0, dtype=np.int64), inverse
    new_region = np.empty(n, dtype=bool)
    new_region[0] = True
    new_region[1:] = inverse[1:] > np.maximum.accumulate(inverse)[:-1]
    return np.flatnonzero(new_region), inverse


def to_scorer(model, classify: bool):
    """The lightest object that predicts like ``model`` (XGBoost -> :class:`XGBoostScorer`)."""
    if type(model).__module__.startswith("xgboost"):
        booster = model.get_booster()
        return XGBoostScorer(booster.save_raw("ubj"), classify, split_thresholds(booster))
    return model
