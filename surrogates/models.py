"""The fitted stack the bundle stores: features, TabNet embedding, bootstrap ensembles.

:class:`SurrogateModel` holds one feature spec, one TabNet embedding, and per target (see
:mod:`.targets`) an ensemble of members of one family (:mod:`.estimators`), each trained on a
Bayesian bootstrap over problems (``(workload, size)`` groups re-weighted,
:func:`~.targets.bootstrap_weights`), so every prediction comes with a spread over members.
Prediction groups rows into tree regions (:mod:`.regions`), scores XGBoost members without
importing xgboost (:mod:`.xgboost_scorer`) or through the compiled forest (:mod:`.forest`), and
spreads big tables over the cores (:mod:`.parallel`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

import numpy as np

from hpcds1mpi.errors import DataError, ModelError

from . import parallel
from .estimators import (FAMILIES, ConstantClassifier, make_classifier, make_regressor,
                         member_budget, predict_member, single_threaded)
from .features import (baseline_from_roofline, build_features, feature_block, fit_spec,
                       log_baseline)
from .ranking import (LEVEL_FEATURES, ProblemLevels, centred_targets, near_best_weights,
                      noise_weights, problem_means, workload_noise)
from .regions import merge_thresholds, tree_regions
from .targets import (BASELINE_TARGETS, MIN_TARGET_RUNS, REGRESSION_TARGETS, TARGETS,
                      bootstrap_weights, problem_groups, target_values)
from .xgboost_scorer import XGBoostScorer, to_scorer

if TYPE_CHECKING:  # pragma: no cover - pandas only when a caller hands a DataFrame
    import pandas as pd

# Saved bundles pickle their members: a members.pkl written before the estimators and the
# scorer had their own modules (the shipped default model among them) names
# hpcds1mpi.surrogates.models.XGBoostScorer and .ConstantClassifier, so both stay importable
# here (tests/surrogates/test_models.py loads the shipped members).
__all__ = ["KNOB_FEATURES", "SurrogateModel", "forest_predict", "XGBoostScorer",
           "ConstantClassifier"]

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
#: Rows grouped first to decide whether tree-region grouping pays (see ``_predict_regions``).
REGION_PROBE_ROWS = 512
#: From this many scored rows on, XGBoost members are scored by the compiled forest
#: (surrogates/forest.py); fewer rows are cheaper through libxgboost than a numba import, in a
#: process that has not compiled the forest yet (``SurrogateModel._forest_for``).
FOREST_MIN_ROWS = 2048


def forest_predict(forest, index: list[int], jobs: list, Z: np.ndarray) -> list[np.ndarray]:
    """Every job's (target, member) prediction: members ``index`` through the compiled forest
    (row blocks on the usable cores), the others one by one."""
    X32 = np.ascontiguousarray(Z, dtype=np.float32)
    parts = parallel.map_row_blocks(lambda start, stop: forest.margins(X32, start, stop), len(X32))
    return member_predictions(forest.finish(np.hstack(parts)), index, jobs, Z)


def member_predictions(values: np.ndarray, index: list[int], jobs: list, Z: np.ndarray
                       ) -> list[np.ndarray]:
    """Every job's (target, member) prediction: row ``r`` of ``values`` (the compiled
    forest's answers) for job ``index[r]``, the other members scored one by one on ``Z``."""
    out: list = [None] * len(jobs)
    for row, i in enumerate(index):
        out[i] = values[row]
    for i, (target, model) in enumerate(jobs):
        if out[i] is None:
            out[i] = predict_member(model, Z, target == "failed")
    return out


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
        member_learning_rate: the members' learning rate (default: see :func:`member_budget`).
        member_features: feature names the ensemble members see (default: all features, plus
            the embedding). The baseline and the embedding still use every feature. A short
            list of the problem and the configuration knobs lets System 1 score a 10,000-row
            grid as a few hundred tree regions (:func:`tree_regions`).
        centre: targets whose members learn the order within a problem (each problem's mean
            taken out, put back by :class:`~.ranking.ProblemLevels`); ``"auto"``: runtime and
            energy where the data have several configurations per problem (:mod:`.ranking`);
            ``()`` (default, as before issue 20): members regress the absolute values.
        focus: weight of a centred target's rows falls as exp(-focus x log(runtime / the
            problem's best)) (:func:`~.ranking.near_best_weights`): the members fit the
            configurations a pick is made among more closely than the hopeless ones.
        denoise: weigh runtime and energy rows by 1 / (1 + their measured repeat noise)
            (:func:`~.ranking.noise_weights`): a run whose repeats scatter by 300 % says less.
    """

    def __init__(self, family: str = "xgboost", n_members: int = 5, use_embedding: bool = True,
                 embedding_params: dict | None = None, seed: int = 0, threads: int = 2,
                 use_baseline: bool = True, member_estimators: int | None = None,
                 member_features: list[str] | None = None, centre=(), focus: float = 0.0,
                 denoise: bool = False, member_learning_rate: float | None = None):
        if family not in FAMILIES:
            raise ModelError(f"unknown model family {family!r}; choose one of {', '.join(FAMILIES)}")
        self.family, self.n_members, self.use_embedding = family, n_members, use_embedding
        self.embedding_params = dict(embedding_params or {})
        self.seed, self.threads, self.use_baseline = seed, threads, use_baseline
        self.member_estimators = member_estimators
        self.member_learning_rate = member_learning_rate
        self.member_features = list(member_features) if member_features else None
        self.centre, self.focus, self.denoise = centre, float(focus), bool(denoise)
        #: target -> ProblemLevels of the centred targets (empty: nothing centred).
        self.levels_: dict[str, ProblemLevels] = {}
        #: workload -> median measured repeat noise of its training runs (System 1's
        #: confidence: a noisy kernel's order is hard to learn and to judge).
        self.noise_: dict[str, float] = {}

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
        self.targets_ = [t for t in REGRESSION_TARGETS
                         if np.isfinite(targets[t]).sum() >= MIN_TARGET_RUNS]
        if "runtime_s" not in self.targets_:
            raise DataError("training data has fewer than 2 ok runs with a runtime; "
                            "measure more configurations")
        if np.isfinite(targets["failed"]).sum() >= MIN_TARGET_RUNS:
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
        self.levels_ = {}
        self.noise_ = workload_noise(frame)
        codes, log_sizes = (X[:, self.spec_.names.index(c)] for c in LEVEL_FEATURES)
        for target in centred_targets(self.centre, groups, targets):
            means = problem_means(targets[target], groups)
            self.levels_[target] = ProblemLevels.fit(codes, log_sizes, means)
            targets[target] = targets[target] - means
        rng = np.random.default_rng(self.seed)
        self.members_: dict[str, list] = {}
        for target in self.targets_:
            y = targets[target]
            have = np.flatnonzero(np.isfinite(y))
            focus = near_best_weights(target_values(frame, target), groups, self.focus) \
                if target in self.levels_ and self.focus else None
            if self.denoise and target in BASELINE_TARGETS:
                quiet = noise_weights(frame)
                focus = quiet if focus is None else focus * quiet
            members = []
            for k in range(self.n_members):
                weight = bootstrap_weights(groups[have], rng) if self.n_members > 1 else None
                if focus is not None:
                    weight = focus[have] * (1.0 if weight is None else weight)
                members.append(self._fit_one(target, Z[have], y[have], self.seed + k, weight))
            self.members_[target] = members
        self.n_features_in_ = X.shape[1]
        return self

    def _fit_one(self, target: str, Z: np.ndarray, y: np.ndarray, seed: int,
                 weight: np.ndarray | None = None):
        threads = parallel.fit_threads(len(Z), self.threads)
        trees, lr = member_budget(self.n_members, self.member_estimators,
                                  getattr(self, "member_learning_rate", None))
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

    def _design(self, X: np.ndarray, groups: Sequence[int] | None = None) -> np.ndarray:
        """[X, embedding of X]; ``groups``: row counts of the tables stacked in ``X`` (None:
        one), each embedded as that table alone.

        A row's embedding depends on the rows embedded with it (its float32 products round
        differently for other row counts: BLAS kernels, the compiled pass from
        ``JIT_MIN_ROWS`` rows on), and the trees split on it, so a job scored with other jobs
        must be embedded in its own call, split into the same row blocks as alone.
        """
        if self.embedding_ is None:
            return X
        parts, start = [], 0
        for n in (len(X),) if groups is None else groups:
            table = X[start:start + n]
            # Row blocks on the usable cores (the numpy and compiled passes release the GIL).
            parts += parallel.map_row_blocks(
                lambda a, b, table=table: self.embedding_.transform(table[a:b]), n)
            start += n
        return np.hstack([X, np.vstack(parts)])

    # -- predict -------------------------------------------------------------------------
    def design_matrix(self, frame: pd.DataFrame, groups: Sequence[int] | None = None
                      ) -> np.ndarray:
        """[features, embedding] of ``frame``: (n, f + d); ``groups`` as :meth:`_design`."""
        return self._design(build_features(frame, self.spec_).to_numpy(), groups)

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
        levels = [Z[:, self.spec_.names.index(c)] for c in LEVEL_FEATURES] \
            if self.levels_ else None
        return self._predict_regions(self._member_view(Z), base, levels)

    def predict_frame_regions(self, frame: pd.DataFrame, groups: Sequence[int] | None = None
                              ) -> tuple[dict[str, np.ndarray], np.ndarray | None, dict]:
        """:meth:`predict_regions` of an input frame, building only the features it needs
        (``groups``: the row counts of the tables stacked in it, as :meth:`_design`).

        With member features and no embedding (the shipped bundle) that is the members'
        features and the baseline's time estimate, not the whole feature table.
        """
        if self.embedding_ is not None or not self.member_features:
            return self.predict_regions(self.design_matrix(frame, groups))
        return self._predict_regions(*self.member_block(frame))

    def member_block(self, frame) -> tuple:
        """The members' features of ``frame`` (rows x features), the baseline's log time
        estimate (or None) and the ranking levels' features (or None): only the columns the
        members and the baseline need (checked inputs)."""
        self.spec_.check_inputs(frame)
        extra = [c for c in LEVEL_FEATURES if c not in self.member_features] \
            if self.levels_ else []
        names = [*self.member_features, *extra, "log_t_roofline"]
        block = feature_block(frame, self.spec_, names)
        base = baseline_from_roofline(block[-1]) if self.use_baseline else None
        levels = [block[names.index(c)] for c in LEVEL_FEATURES] if self.levels_ else None
        return block[:len(self.member_features)].T, base, levels

    def _predict_regions(self, Z_members: np.ndarray, base: np.ndarray | None,
                         levels: list[np.ndarray] | None = None):
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
        forest = self._forest_for(len(Z_score))
        if forest is not None:
            values = forest_predict(forest[0], forest[1], jobs, Z_score)
            self._forest_warm = True
        else:
            values = parallel.parallel_map(
                lambda job: predict_member(job[1], Z_score, job[0] == "failed"),
                jobs, len(Z_score))
        preds, baseline = {}, {}
        for target in self.members_:
            preds[target] = np.vstack([v for (t, _), v in zip(jobs, values) if t == target])
            baseline[target] = base if (base is not None and target in BASELINE_TARGETS) \
                else 0.0
            if target in self.levels_ and levels is not None:
                # The problem's level, taken out in training (one value per problem).
                baseline[target] = baseline[target] + self.levels_[target].predict(*levels)
        return preds, inverse, baseline

    def _forest_for(self, n_rows: int):
        """The compiled forest (:meth:`_forest`) to score ``n_rows`` rows with, or None for
        libxgboost.

        Its one-time cost (~0.55 s in a cold process: the layout ~0.25 s, importing numba and
        loading the compiled walk ~0.3 s) is worth paying from :data:`FOREST_MIN_ROWS` rows
        on. Once paid (:meth:`warm_forest`, or a large table scored before) it is faster at
        every size, with the same bits: measured on the shipped bundle, 0.15 against 2.5 ms
        for 18 rows, 0.7 against 2.9 ms for 115, 2.1 against 4.0 ms for 500 (libxgboost's
        set-up per call and per member dominates small tables).
        """
        if n_rows >= FOREST_MIN_ROWS or getattr(self, "_forest_warm", False):
            return self._forest()
        return None

    def warm_forest(self) -> bool:
        """Lay out and compile the forest now, so that every later prediction of this model in
        this process scores through it (for long-lived processes: the service). False when
        there is none (numba missing, ``HPCDS1MPI_NO_JIT=1``, no XGBoost member)."""
        forest = self._forest()
        if forest is None:
            return False
        layout = forest[0]
        layout.margins(np.zeros((1, int(layout.feature.max()) + 1), dtype=np.float32))
        self._forest_warm = True
        return True

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
