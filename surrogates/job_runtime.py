"""A job's run time and the walltime to request, predicted from what is known at submission.

:class:`RuntimePredictor` learns from the submission features of finished jobs
(:func:`~hpcds1mpi.surrogates.submit_features.submit_features`):

- the **point** prediction *chooses* among candidate run times of the job's own history
  (:data:`CANDIDATES`: the median of the last 5 or 20 and the last run of the user's same
  request at the same pace, of the same request, of the user; the request itself): a
  LightGBM classifier learns from the older 80 % of the training jobs which candidate was
  closest (weighted by how much the choice mattered), and the prediction is the candidate
  with the highest expected accuracy under the classifier's probabilities (a Bayes choice:
  the accuracy of Tsafrir et al., min/max of predicted and actual, of candidate k if the
  truth were candidate j). A tree cannot output a continuous feature, only pick one, so
  this keeps each candidate's value exact. The choice is *gated* per job: it replaces the
  best single candidate only where its expected gain over it (under the same probabilities)
  exceeds a gate, chosen on the newest 20 % of the training jobs (time-ordered validation)
  among "always", quantiles of the gains and "never" -- so on that slice it ties or beats the
  single candidate (``mode_`` "single" when "never" wins, ``gate_``). Where a log gives
  no history at all (no end times: every candidate is the request), a LightGBM regression
  of log run time from the request and partition, with the accuracy as its loss, is tried
  instead;
- the **walltime** (:class:`~hpcds1mpi.surrogates.walltime_model.WalltimeModel`): a
  conformalized upper quantile — either the best single candidate plus a LightGBM quantile
  regression of its residual, with a normalized conformal margin, or (kept where it validates
  better) the longest of the last 5 / 20 like runs times a Mondrian conformal factor — with the
  variant and the conformal level chosen on the newest 20 % of the training jobs so that their
  newer half is covered at the target. The share covered on the whole slice is
  ``calibration_coverage_``.

Both are capped at the user's requested time when it is known: a completed job never ran past
it, and the scheduler would not grant more.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from hpcds1mpi.errors import DataError, ModelError

from .submit_features import CATEGORICAL, numeric_columns
from .walltime_model import (MIN_BIN, UPPER_ANCHORS, WalltimeModel, conformal_offset,
                             mondrian_offsets)

__all__ = ["RuntimePredictor", "accuracy_objective", "bayes_choice", "choose_gate",
           "gated_choice", "conformal_offset",
           "mondrian_offsets", "MIN_BIN", "UPPER_ANCHORS", "CANDIDATES", "FALLBACK"]

#: Candidate point predictions (log s), most specific first. A missing one takes the first of
#: :data:`FALLBACK` the job has; candidates that repeat an earlier one on the training jobs
#: (a log without job names: "name" is the user) are dropped.
CANDIDATES = ("pace_med5", "pace_med20", "pace_last1", "request_med5", "request_med20",
              "request_last1", "name_med5", "name_med20", "user_med5", "log_limit")
FALLBACK = ("request_med5", "name_med5", "user_med5", "log_limit")
#: Identities the point choice does not see: who was active in the training months says
#: little about which of their own histories will be right in the next ones.
UNSEEN = ("user", "account", "workload")

#: Fewest training jobs (the calibration slice included) the predictor will learn from.
MIN_TRAIN = 30
#: Quantiles of the validation jobs' expected gains at which the choice's gate is tried.
GATE_QUANTILES = tuple(np.round(np.arange(0.05, 1.0, 0.05), 2))


def accuracy_objective(y_true: np.ndarray, y_pred: np.ndarray):
    """Gradient and hessian of ``1 - exp(-|log error|)``, one minus the accuracy of Tsafrir et
    al. per job, for LightGBM (the hessian floored so a leaf of far-off jobs takes a bounded
    step)."""
    e = y_pred - y_true
    w = np.exp(-np.abs(e))
    return np.sign(e) * w, np.maximum(w, 0.1)


def _accuracy(pred: np.ndarray, actual: np.ndarray) -> float:
    """Mean of min/max of predicted and actual (Tsafrir et al.)."""
    return float(np.mean(np.minimum(pred, actual) / np.maximum(pred, actual)))


def bayes_choice(cands: np.ndarray, proba: np.ndarray) -> np.ndarray:
    """Per row, the candidate (log s) with the highest expected accuracy when the truth is
    candidate j with probability ``proba[:, j]``: ``argmax_k sum_j p_j exp(-|c_k - c_j|)``."""
    return gated_choice(cands, proba, cands[:, 0], -np.inf)[0]


def gated_choice(cands: np.ndarray, proba: np.ndarray, single: np.ndarray, gate: float
                 ) -> tuple[np.ndarray, np.ndarray]:
    """The Bayes choice (:func:`bayes_choice`) where its expected accuracy beats that of the
    ``single`` candidate (log s, per row) by more than ``gate``, else ``single``.

    Returns:
        (chosen log s, expected gain per row: the choice's expected accuracy minus the
        single candidate's, under ``proba``; it can be negative when the single candidate is
        not among the classifier's classes, and then the single candidate is kept).
    """
    close = np.exp(-np.abs(cands[:, :, None] - cands[:, None, :]))
    expected = np.einsum("nkj,nj->nk", close, proba)
    best = expected.argmax(axis=1)
    rows = np.arange(len(cands))
    own = np.einsum("nj,nj->n", np.exp(-np.abs(single[:, None] - cands)), proba)
    gain = expected[rows, best] - own
    return np.where(gain > gate, cands[rows, best], single), gain


def choose_gate(cands: np.ndarray, proba: np.ndarray, single: np.ndarray, y: np.ndarray,
                grid=GATE_QUANTILES) -> tuple[float, float]:
    """The gate (:func:`gated_choice`) with the best accuracy on validation jobs ``y`` (log
    s): tried at -inf (always the choice), at the :data:`GATE_QUANTILES` of the expected gains
    and at +inf (always the single candidate), so it ties or beats both there; a tie goes to
    the larger gate (fewer departures from the single candidate).

    Returns:
        (gate, its validation accuracy).
    """
    gain = gated_choice(cands, proba, single, -np.inf)[1]
    gates = sorted({-np.inf, np.inf, *np.quantile(gain, grid).tolist()}, reverse=True)
    best = None
    for g in gates:
        acc = float(np.mean(np.exp(-np.abs(gated_choice(cands, proba, single, g)[0] - y))))
        if best is None or acc > best[1] + 1e-12:
            best = (g, acc)
    return best


class RuntimePredictor:
    """Point run time and calibrated upper quantile (walltime) of a job at submission.

    Args:
        coverage: share of jobs the proposed walltime should cover (1 - the kill rate).
        n_estimators, learning_rate, num_leaves, min_child_samples: the choosing
            classifier's (its rounds stop early on the validation slice).
        calibration_fraction: newest share of the training jobs that validates the point
            choice and calibrates the walltime.
        patience: rounds without gain on that slice before the classifier stops.
        choose: "gated" (per job, the classifier's choice only where its expected gain
            over the best single candidate passes a gate chosen on the validation slice;
            :func:`choose_gate`), "validate" (session 10's: the choice for every job or for
            none, whichever validates better), "choice" or "single" (always; ablations).
        refit: refit the chosen classifier on all training jobs (the slice included) with
            the rounds found, as the last step.
        n_jobs: threads LightGBM uses (1: on a shared machine more threads spin and slow it).
        seed: random state of the classifier.
    """

    def __init__(self, coverage: float = 0.95, n_estimators: int = 300,
                 learning_rate: float = 0.1, num_leaves: int = 15,
                 min_child_samples: int = 100, calibration_fraction: float = 0.2,
                 patience: int = 20, refit: bool = True, choose: str = "gated",
                 n_jobs: int = 1, seed: int = 0):
        if not 0.5 <= coverage < 1.0:
            raise ValueError(f"coverage must be in [0.5, 1), got {coverage}")
        if not 0.05 <= calibration_fraction <= 0.5:
            raise ValueError(f"calibration_fraction must be in [0.05, 0.5], "
                             f"got {calibration_fraction}")
        self.coverage = coverage
        self.calibration_fraction = calibration_fraction
        self.patience = patience
        self.refit = refit
        if choose not in ("gated", "validate", "choice", "single"):
            raise ValueError(f"choose must be gated, validate, choice or single, "
                             f"got {choose!r}")
        self.choose = choose
        self.params = {"n_estimators": n_estimators, "learning_rate": learning_rate,
                       "num_leaves": num_leaves, "min_child_samples": min_child_samples,
                       # No row or column sampling: the same log gives the same model.
                       "max_bin": 63, "n_jobs": n_jobs, "random_state": seed, "verbose": -1}

    # ----------------------------------------------------------------------------------
    def _chain(self, features: pd.DataFrame, chain) -> np.ndarray:
        """Log seconds: per job the first column of ``chain`` it has, else the training
        jobs' median; capped at the job's request."""
        out = np.full(len(features), np.nan)
        for c in chain:
            if c in features:
                out = np.where(np.isnan(out), pd.to_numeric(features[c], errors="coerce")
                               .to_numpy(dtype=float), out)
        out = np.where(np.isnan(out), self.median_, out)
        return np.minimum(out, np.log(self._limit(features)))

    def _candidates(self, features: pd.DataFrame, names=None) -> np.ndarray:
        """(n, k) candidate run times (log s), each filled from :data:`FALLBACK`."""
        return np.column_stack([self._chain(features, (c,) + FALLBACK)
                                for c in (names or self.candidates_)])

    def _matrix(self, features: pd.DataFrame) -> pd.DataFrame:
        """Features as the classifier takes them: the partition as a category of the training
        set (a value never seen in training -> missing), numbers as float, and each
        candidate's distance to the first."""
        self._require(features)
        x = pd.DataFrame(index=features.index)
        for c in self.columns_:
            if c in CATEGORICAL:
                vals = features[c].astype("string").fillna("").to_numpy(dtype=object)
                known = np.isin(vals, self.categories_[c].to_numpy(dtype=object))
                x[c] = pd.Categorical(np.where(known, vals, None),
                                      categories=self.categories_[c])
            else:
                x[c] = pd.to_numeric(features[c], errors="coerce").astype("float64")
        cands = self._candidates(features)
        for j, c in enumerate(self.candidates_[1:], 1):
            x[f"d_{c}"] = cands[:, j] - cands[:, 0]
        return x

    def fit(self, features: pd.DataFrame, runtime_s, order=None) -> "RuntimePredictor":
        """Learn from finished jobs.

        Args:
            features: their submission features (rows of :func:`submit_features`).
            runtime_s: their run times (s), > 0.
            order: their submit times (any sortable), to find the newest jobs for the
                validation slice; None means ``features`` is already in submit order.

        Raises:
            DataError: fewer than :data:`MIN_TRAIN` jobs with a positive run time.
        """
        run = np.asarray(runtime_s, dtype=float)
        good = np.isfinite(run) & (run > 0)
        if good.sum() < MIN_TRAIN:
            raise DataError(f"{int(good.sum())} finished jobs with a run time: need at least "
                            f"{MIN_TRAIN} to learn run times")
        idx = np.flatnonzero(good)
        if order is not None:
            idx = idx[np.argsort(np.asarray(order)[idx], kind="stable")]
        feats, run = features.iloc[idx], run[idx]
        y = np.log(run)
        self.median_ = float(np.median(y))
        n_cal = max(1, int(round(len(idx) * self.calibration_fraction)))
        fit, cal = slice(0, len(idx) - n_cal), slice(len(idx) - n_cal, None)
        self._fit_point(feats, y, fit, cal)
        self._fit_walltime(feats, y, fit, cal)
        self.n_train_ = len(idx)
        self.n_calibration_ = n_cal
        return self

    def _fit_point(self, feats: pd.DataFrame, y: np.ndarray, fit: slice, cal: slice):
        """The candidates, the classifier that chooses among them, and whether its choice
        or the best single candidate is kept (by the accuracy on the validation slice)."""
        names = [c for c in CANDIDATES if c in feats.columns]
        cands = self._candidates(feats, names)
        keep = [j for j in range(len(names)) if not any(
            np.mean(np.isclose(cands[:, j], cands[:, i])) > 0.999 for i in range(j))]
        self.candidates_ = [names[j] for j in keep]
        cands = cands[:, keep]
        self.columns_ = [c for c in CATEGORICAL if c in feats.columns and c not in UNSEEN and
                         (feats[c].astype("string").fillna("") != "").any()]
        self.columns_ += [c for c in numeric_columns(feats)
                          if pd.to_numeric(feats[c], errors="coerce").notna().any()]
        self.categories_ = {c: pd.Index(sorted(set(feats[c].astype("string").fillna("")
                                                   .to_numpy(dtype=object))))
                            for c in self.columns_ if c in CATEGORICAL}
        acc = np.exp(-np.abs(cands - y[:, None]))
        single = [float(np.mean(acc[cal, j])) for j in range(len(self.candidates_))]
        self.best_single_ = int(np.argmax(single))
        # The point of each validation job as made before any refit on it (the walltime's
        # risk gate learns how far real run times fall from it).
        self.cal_point_ = cands[cal, self.best_single_]
        self.validation_ = {"single": max(single)}
        self.mode_, self.classifier_ = "single", None
        if len(self.candidates_) < 2:
            # No history at all (a log without end times): learn from the request instead.
            self._fit_regression(feats, y, fit, cal)
            return
        label = acc.argmax(axis=1)
        classes = np.unique(label[fit])
        if len(classes) < 2 or self.choose == "single":
            return  # one candidate always wins: nothing to choose
        from lightgbm import LGBMClassifier, early_stopping

        # Weight: how much the choice mattered for the job (all candidates alike: nothing).
        weight = acc.max(axis=1) - acc.min(axis=1) + 1e-6
        x = self._matrix(feats)
        # Labels renumbered to the classes seen (a candidate never best is never chosen).
        code = np.searchsorted(classes, label)
        seen = np.isin(label, classes)
        # Two classes are LightGBM's binary case: its "multiclass" needs three or more.
        objective = "multiclass" if len(classes) > 2 else "binary"
        clf = LGBMClassifier(objective=objective, **self.params)
        cal_rows = np.arange(len(y))[cal][seen[cal]]
        if len(cal_rows) == 0:
            return  # no validation job has a candidate the classifier could learn
        clf.fit(x.iloc[fit], code[fit], sample_weight=weight[fit],
                eval_X=(x.iloc[cal_rows],), eval_y=(code[cal_rows],),
                eval_sample_weight=[weight[cal_rows]],
                callbacks=[early_stopping(self.patience, verbose=False)])
        self.classes_ = classes
        proba, single = clf.predict_proba(x.iloc[cal]), cands[cal, self.best_single_]
        chosen = bayes_choice(cands[cal][:, classes], proba)
        self.validation_["choice"] = float(np.mean(np.exp(-np.abs(chosen - y[cal]))))
        self.gate_ = -np.inf
        if self.choose == "gated":
            # Chosen on the validation slice (training jobs only): +inf is "single", so the
            # gated choice ties or beats the single candidate there.
            self.gate_, self.validation_["gated"] = choose_gate(cands[cal][:, classes], proba,
                                                                single, y[cal])
            self.validation_["gate"] = (self.gate_ if np.isfinite(self.gate_) else
                                        "always" if self.gate_ < 0 else "never")
            if not np.isfinite(self.gate_) and self.gate_ > 0:
                return
        elif self.choose == "validate" and (self.validation_["choice"]
                                            <= self.validation_["single"]):
            return
        self.mode_, self.classifier_ = "choice", clf
        self.cal_point_ = gated_choice(cands[cal][:, classes], proba, single, self.gate_)[0]
        if self.refit:
            # The newest jobs look most like the future: refit on all of them, as many rounds.
            rounds = max(1, int(clf.best_iteration_ or self.params["n_estimators"]))
            self.classifier_ = LGBMClassifier(objective=objective, **{
                **self.params, "n_estimators": rounds}).fit(x[seen], code[seen],
                                                            sample_weight=weight[seen])

    def _fit_regression(self, feats: pd.DataFrame, y: np.ndarray, fit: slice, cal: slice):
        """LightGBM on log run time with the accuracy as loss, from the request and the
        partition; rounds stopped on the validation slice, kept only if it beats the single
        candidate there (``mode_`` "regression"). Not tried where no feature can be split
        into two leaves of ``min_child_samples`` fit jobs (a small log; a request and
        partition shared by nearly every job): LightGBM drops every such feature, and on a
        custom loss then stops ("num_features() > 0") instead of fitting the median."""
        from lightgbm import LGBMRegressor, early_stopping
        from lightgbm.basic import LightGBMError

        x = self._matrix(feats)
        if len(x.iloc[fit]) < 2 * self.params["min_child_samples"]:
            return  # no split of any feature can leave that many jobs on both sides
        params = {**self.params, "objective": accuracy_objective, "metric": "None"}
        try:
            probe = LGBMRegressor(**params).fit(
                x.iloc[fit], y[fit] - self.median_, eval_X=(x.iloc[cal],),
                eval_y=(y[cal] - self.median_,), eval_metric=lambda t, p: (
                    "accuracy", float(np.mean(np.exp(-np.abs(p - t)))), True),
                callbacks=[early_stopping(self.patience, verbose=False)])
        except LightGBMError as exc:
            if "num_features()" not in str(exc):
                raise
            return  # every feature dropped as unsplittable: keep the single candidate
        pred = self.median_ + probe.predict(x.iloc[cal])
        pred = np.minimum(pred, np.log(self._limit(feats.iloc[cal])))
        self.validation_["regression"] = float(np.mean(np.exp(-np.abs(pred - y[cal]))))
        if self.validation_["regression"] <= self.validation_["single"]:
            return
        rounds = max(1, int(probe.best_iteration_ or self.params["n_estimators"]))
        self.mode_, self.cal_point_ = "regression", pred
        self.classifier_ = LGBMRegressor(**{**params, "n_estimators": rounds}).fit(
            x, y - self.median_) if self.refit else probe

    def _fit_walltime(self, feats: pd.DataFrame, y: np.ndarray, fit: slice, cal: slice):
        """The walltime half (:class:`~hpcds1mpi.surrogates.walltime_model.WalltimeModel`)."""
        base = (self.candidates_[self.best_single_],) + FALLBACK
        self.walltime_ = WalltimeModel(self.coverage, self.params, self.patience).fit(
            self, feats, y, fit, cal, base)
        self.calibration_coverage_ = self.walltime_.calibration_coverage_

    @staticmethod
    def _limit(features: pd.DataFrame) -> np.ndarray:
        """The requested time (s) per job; +inf where unknown."""
        if "log_limit" not in features:
            return np.full(len(features), np.inf)
        lim = np.exp(pd.to_numeric(features["log_limit"], errors="coerce").to_numpy())
        return np.where(np.isfinite(lim), lim, np.inf)

    def _check(self):
        if not hasattr(self, "mode_"):
            raise ModelError("RuntimePredictor is not fitted: call fit() first")

    def _require(self, features: pd.DataFrame):
        """Refuse features without a column the model was fitted with."""
        missing = [c for c in self.columns_ if c not in features.columns]
        if missing:
            raise ModelError(f"features lack {', '.join(missing)}: build them with "
                             "submit_features on a job table")

    def predict(self, features: pd.DataFrame, matrix: pd.DataFrame | None = None
                ) -> np.ndarray:
        """Point run time (s) per job, capped at its request; shape (n,). ``matrix``: the
        jobs' :meth:`_matrix` where the caller has built it already."""
        self._check()
        self._require(features)
        cands = self._candidates(features)
        if self.mode_ != "single" and matrix is None:
            matrix = self._matrix(features)
        if self.mode_ == "single":
            point = cands[:, self.best_single_]
        elif self.mode_ == "regression":
            point = self.median_ + self.classifier_.predict(matrix)
        else:
            point = gated_choice(cands[:, self.classes_],
                                 self.classifier_.predict_proba(matrix),
                                 cands[:, self.best_single_], self.gate_)[0]
        return np.minimum(np.exp(point), self._limit(features))

    def walltime(self, features: pd.DataFrame) -> np.ndarray:
        """Walltime to request (s) per job: the calibrated upper quantile, capped at the
        request, at least 1 s; shape (n,)."""
        self._check()
        self._require(features)
        return self.walltime_.walltime(self, features)

    def walltime_tight(self, features: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        """(:meth:`walltime`, and where the proposal is tight rather than the kept request),
        from one pass of the walltime model; shapes (n,)."""
        self._check()
        self._require(features)
        return self.walltime_.walltime_tight(self, features)
