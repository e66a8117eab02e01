"""A job's run time and the walltime to request, predicted from what is known at submission.

:class:`RuntimePredictor` learns from the submission features of finished jobs
(:func:`~hpcds1mpi.surrogates.submit_features.submit_features`):

- the **point** prediction: a LightGBM model with an absolute-error loss on log seconds (the
  median of the log; the accuracy of Tsafrir et al., min/max of predicted and actual, is
  ``exp(-|log error|)``; the loss is ``1 - exp(-|log error|)`` itself), learning the
  correction to an anchor — the median of the last 20 (or 5, or the last run: whichever
  scores best on the newest training slice) finished runs of the job's most specific history
  — with its rounds and the share of the correction kept (0, 1/2, all) chosen on that slice
  by the accuracy, then refit on all training jobs. On Curie and Gaia that slice keeps little
  or none of the correction: the learned corrections did not carry over in time;
- the **walltime**: the longest of the last 20 finished runs of the job's most specific
  history (same request, else same name, else the user), multiplied by a split-conformal factor
  measured on the newest part of the training jobs (a time-ordered calibration slice, so it is
  calibrated on the jobs that look most like the future) so that the target share of them
  would have been covered; that share is kept as ``calibration_coverage_``.

Both are capped at the user's requested time when it is known: a completed job never ran past
it, and the scheduler would not grant more.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from hpcds1mpi.errors import DataError, ModelError

from .submit_features import CATEGORICAL, numeric_columns

#: The anchor of both models, most specific first: the median of the last 20 finished runs of
#: the user's same request, same job name, any job; then the requested time.
ANCHORS = ("request_med20", "name_med20", "user_med20", "log_limit")
#: The statistics the point anchor may use instead of the median of 20 (chosen per log on the
#: newest training slice by accuracy: the median of 5 follows a drift sooner, the last run
#: sooner still).
ANCHOR_STATS = ("med20", "med5", "last1")
#: The walltime model's anchor: the longest of those last 20 runs.
UPPER_ANCHORS = ("request_max20", "name_max20", "user_max20", "log_limit")

#: Shares of the learned correction to the anchor the point prediction may keep.
SHRINKS = (0.0, 0.5, 1.0)

#: Fewest training jobs (the calibration slice included) the predictor will learn from.
MIN_TRAIN = 30


def accuracy_objective(y_true: np.ndarray, y_pred: np.ndarray):
    """Gradient and hessian of ``1 - exp(-|log error|)``, one minus the accuracy of Tsafrir et
    al. per job, for LightGBM. A job far off weighs little (the gradient fades with the error)
    so the model seeks the most common run time of jobs alike, as the accuracy rewards; the
    hessian is floored so that a leaf of only far-off jobs takes a bounded step."""
    e = y_pred - y_true
    w = np.exp(-np.abs(e))
    return np.sign(e) * w, np.maximum(w, 0.1)


def accuracy_metric(y_true: np.ndarray, y_pred: np.ndarray):
    """LightGBM evaluation: the mean accuracy (higher is better)."""
    return "accuracy", float(np.mean(np.exp(-np.abs(y_pred - y_true)))), True


def _lgbm(objective, alpha: float | None, params: dict):
    from lightgbm import LGBMRegressor

    extra = {"alpha": alpha} if alpha is not None else {}
    return LGBMRegressor(objective=objective, verbose=-1, **extra, **params)


def _accuracy(pred: np.ndarray, actual: np.ndarray) -> float:
    """Mean of min/max of predicted and actual (Tsafrir et al.)."""
    return float(np.mean(np.minimum(pred, actual) / np.maximum(pred, actual)))


def conformal_offset(scores: np.ndarray, coverage: float) -> float:
    """The split-conformal offset: the ``ceil((n+1) coverage) / n`` empirical quantile of the
    calibration scores (log actual - log predicted), so that at least ``coverage`` of new jobs
    from the same distribution fall under prediction + offset."""
    s = np.sort(np.asarray(scores, dtype=float))
    if len(s) == 0:
        return 0.0
    k = min(len(s), math.ceil((len(s) + 1) * coverage)) - 1
    return float(s[max(k, 0)])


class RuntimePredictor:
    """Point run time and calibrated upper quantile (walltime) of a job at submission.

    Args:
        coverage: share of jobs the proposed walltime should cover (1 - the kill rate).
        n_estimators, learning_rate, num_leaves, min_child_samples: the boosting models'.
        calibration_fraction: newest share of the training jobs that calibrates the walltime.
        patience: rounds without gain on the calibration slice before the point model stops.
        objective: the point model's loss: "accuracy" (:func:`accuracy_objective`) or a
            LightGBM objective name ("l1", ...).
        n_jobs: threads LightGBM uses (1: on a shared machine more threads spin and slow it).
        seed: random state of the models.
    """

    def __init__(self, coverage: float = 0.95, n_estimators: int = 400,
                 learning_rate: float = 0.05, num_leaves: int = 15,
                 min_child_samples: int = 100, calibration_fraction: float = 0.2,
                 patience: int = 30, objective: str = "accuracy", n_jobs: int = 1,
                 seed: int = 0):
        if not 0.5 <= coverage < 1.0:
            raise ValueError(f"coverage must be in [0.5, 1), got {coverage}")
        if not 0.05 <= calibration_fraction <= 0.5:
            raise ValueError(f"calibration_fraction must be in [0.05, 0.5], "
                             f"got {calibration_fraction}")
        self.coverage = coverage
        self.calibration_fraction = calibration_fraction
        self.patience = patience
        self.objective = accuracy_objective if objective == "accuracy" else objective
        self.params = {"n_estimators": n_estimators, "learning_rate": learning_rate,
                       "num_leaves": num_leaves, "min_child_samples": min_child_samples,
                       # No row or column sampling: the same log gives the same model.
                       "n_jobs": n_jobs, "random_state": seed}

    # ----------------------------------------------------------------------------------
    def _anchor(self, features: pd.DataFrame, anchors=ANCHORS) -> np.ndarray:
        """Log seconds each job's models start from (they learn the correction to it): the
        first of :data:`ANCHORS` the job has, else the training jobs' median."""
        out = np.full(len(features), np.nan)
        for c in anchors:
            if c in features:
                out = np.where(np.isnan(out), pd.to_numeric(features[c], errors="coerce")
                               .to_numpy(dtype=float), out)
        return np.where(np.isnan(out), self.median_, out)

    def _matrix(self, features: pd.DataFrame) -> pd.DataFrame:
        """Features as the models take them: identities as categories of the training set
        (a value never seen in training -> missing), numbers as float."""
        missing = [c for c in self.columns_ if c not in features.columns]
        if missing:
            raise ModelError(f"features lack {', '.join(missing)}: build them with "
                             "submit_features on a job table")
        x = pd.DataFrame(index=features.index)
        for c in self.columns_:
            if c in CATEGORICAL:
                vals = features[c].astype("string").fillna("").to_numpy(dtype=object)
                known = np.isin(vals, self.categories_[c].to_numpy(dtype=object))
                x[c] = pd.Categorical(np.where(known, vals, None),
                                      categories=self.categories_[c])
            else:
                x[c] = pd.to_numeric(features[c], errors="coerce").astype("float64")
        return x

    def fit(self, features: pd.DataFrame, runtime_s, order=None) -> "RuntimePredictor":
        """Learn from finished jobs.

        Args:
            features: their submission features (rows of :func:`submit_features`).
            runtime_s: their run times (s), > 0.
            order: their submit times (any sortable), to find the newest jobs for the
                calibration slice; None means ``features`` is already in submit order.

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
        feats = features.iloc[idx]
        y = np.log(run[idx])
        # Job names are left to the history features: in some logs they are one-off ids.
        self.columns_ = [c for c in CATEGORICAL if c in feats.columns and c != "workload" and
                         (feats[c].astype("string").fillna("") != "").any()]
        self.columns_ += [c for c in numeric_columns(feats)
                          if pd.to_numeric(feats[c], errors="coerce").notna().any()]
        self.categories_ = {c: pd.Index(sorted(set(feats[c].astype("string").fillna("")
                                                   .to_numpy(dtype=object))))
                            for c in self.columns_ if c in CATEGORICAL}
        self.median_ = float(np.median(y))
        x = self._matrix(feats)
        n_cal = max(1, int(round(len(idx) * self.calibration_fraction)))
        fit, cal = slice(0, len(idx) - n_cal), slice(len(idx) - n_cal, None)
        lim_cal, run_cal = self._limit(feats.iloc[cal]), run[idx][cal]
        chains = [tuple(a.replace("med20", stat) for a in ANCHORS) for stat in ANCHOR_STATS]
        self.anchors_ = max(chains, key=lambda ch: _accuracy(
            np.minimum(np.exp(self._anchor(feats.iloc[cal], ch)), lim_cal), run_cal))
        base = self._anchor(feats, self.anchors_)
        y = y - base
        # Boosting rounds of the point model chosen on the newest slice (a time-ordered
        # validation: on a log whose newest jobs differ from the old ones it keeps few
        # corrections to the anchor), then refit on every training job with that many.
        from lightgbm import early_stopping

        probe = _lgbm(self.objective, None, {**self.params, "metric": "None"}).fit(
            x.iloc[fit], y[fit], eval_X=(x.iloc[cal],), eval_y=(y[cal],),
            eval_metric=accuracy_metric,
            callbacks=[early_stopping(self.patience, verbose=False)])
        self.n_rounds_ = max(1, int(probe.best_iteration_ or self.params["n_estimators"]))
        # How much of the correction to keep (0, 1/2, all), chosen on that slice by the
        # accuracy itself: where the newest jobs differ from the old, corrections learned on
        # the old ones can cost more than they give (Gaia: the anchor alone was better).
        corr = probe.predict(x.iloc[cal], num_iteration=self.n_rounds_)
        self.shrink_ = max(SHRINKS, key=lambda w: _accuracy(np.exp(base[cal] + w * corr),
                                                             run_cal))
        self.point_model_ = _lgbm(self.objective, None,
                                  {**self.params, "n_estimators": self.n_rounds_}).fit(x, y)
        # Walltime: the longest of the like recent runs, times the split-conformal factor
        # measured on the newest slice. A LightGBM quantile model on top of it was tried and
        # widened it (Curie 3.3x -> 4.9x median over-request at the same 5 % killed).
        up_base = self._anchor(feats, UPPER_ANCHORS)
        limit = self._limit(feats.iloc[cal])
        self.offset_ = conformal_offset(np.log(run[idx][cal]) - up_base[cal], self.coverage)
        wall = np.minimum(np.exp(up_base[cal] + self.offset_), limit)
        self.calibration_coverage_ = float(np.mean(run[idx][cal] <= wall))
        self.n_train_ = len(idx)
        self.n_calibration_ = n_cal
        return self

    @staticmethod
    def _limit(features: pd.DataFrame) -> np.ndarray:
        """The requested time (s) per job; +inf where unknown."""
        if "log_limit" not in features:
            return np.full(len(features), np.inf)
        lim = np.exp(pd.to_numeric(features["log_limit"], errors="coerce").to_numpy())
        return np.where(np.isfinite(lim), lim, np.inf)

    def _check(self):
        if not hasattr(self, "point_model_"):
            raise ModelError("RuntimePredictor is not fitted: call fit() first")

    def predict(self, features: pd.DataFrame) -> np.ndarray:
        """Point run time (s) per job, capped at its request; shape (n,)."""
        self._check()
        point = np.exp(self._anchor(features, self.anchors_)
                       + self.shrink_ * self.point_model_.predict(self._matrix(features)))
        return np.minimum(point, self._limit(features))

    def walltime(self, features: pd.DataFrame) -> np.ndarray:
        """Walltime to request (s) per job: the calibrated upper quantile, capped at the
        request, at least 1 s; shape (n,)."""
        self._check()
        raw = self._anchor(features, UPPER_ANCHORS) + self.offset_
        return np.maximum(np.minimum(np.exp(raw), self._limit(features)), 1.0)
