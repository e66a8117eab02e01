"""A tight walltime only where a classifier says the job will not run past it.

The walltime goals are an aggregate kill rate and a *median* over-request: a job whose run
time is hard to pin down costs nothing when it keeps its own request (a completed job never ran
past it), so the kill budget is best spent on the jobs least likely to overrun. The conformal
recipes of :mod:`.walltime_model` rank jobs by a predicted tail *width*; :class:`RiskGate`
ranks them by the probability that they overrun the proposal itself: for each factor ``k`` in
:data:`FACTORS` a LightGBM classifier learns ``run > k x point`` from the submission features,
the point prediction and the request's headroom over it. A job is **tight** -- it gets
``min(k x point, request)`` -- when its risk is at most a threshold, else it keeps its request.

How ``k`` and the threshold are chosen (training jobs only): the classifiers learn on the older
:data:`LEARN_SHARE` of the calibration slice, whose point predictions were made out of sample;
on the newer rest each ``(k, tight share)`` is scored, the kill rate must stay within the
budget times :data:`SAFETY`, and the least median over-request wins -- measured *as if* the
tight share came out :data:`SHARE_DRIFT` lower on new jobs, since a median sits on the edge
between tight jobs and kept requests (on Curie's inner fold a share of 0.65 became 0.56 on the
next months). :class:`~.walltime_model.WalltimeModel` keeps the gate only when it beats its
own recipe on the same jobs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

#: Factors over the point prediction a tight walltime may be.
FACTORS = (1.35, 1.5, 1.7, 2.0, 2.5, 3.0)
#: Tight shares tried on the choosing jobs (quantiles of their risks).
SHARES = tuple(np.round(np.arange(0.6, 1.0001, 0.05), 2))
#: Older share of the calibration slice the classifiers learn on; the rest chooses.
LEARN_SHARE = 2 / 3
#: Share of the kill budget the choice may spend (room for drift to new jobs).
SAFETY = 0.8
#: How much lower the tight share may come out on new jobs, for the over-request it is judged by.
SHARE_DRIFT = 0.1
#: Fewest calibration jobs, and overruns per factor, the gate learns from.
MIN_JOBS, MIN_POSITIVE = 600, 30


def gate_matrix(x: pd.DataFrame, log_point: np.ndarray, log_limit: np.ndarray) -> pd.DataFrame:
    """The classifiers' inputs: the point half's feature matrix, the point prediction and the
    request's headroom over it (log s; missing where there is no request)."""
    out = x.copy()
    out["gate_log_point"] = log_point
    headroom = log_limit - log_point
    out["gate_headroom"] = np.where(np.isfinite(headroom), headroom, np.nan)
    return out


@dataclass
class RiskGate:
    """The chosen factor, its classifier and risk threshold, and what they gave when chosen."""

    factor: float
    classifier: object
    threshold: float
    share: float
    kill: float
    over: float

    @classmethod
    def fit(cls, x: pd.DataFrame, log_point: np.ndarray, y: np.ndarray, log_limit: np.ndarray,
            budget: float, params: dict) -> "RiskGate | None":
        """Learn and choose on calibration jobs in submit order (see the module's note); None
        when there are too few jobs or no factor keeps the budget.

        Args:
            x: the jobs' feature matrix (:meth:`RuntimePredictor._matrix`).
            log_point: their point predictions made out of sample (log s).
            y: their log run times; log_limit: log requests (+inf where unknown).
            budget: the share of jobs that may be killed.
            params: LightGBM settings (threads, seed).
        """
        n = len(y)
        if n < MIN_JOBS:
            return None
        from lightgbm import LGBMClassifier

        cut = int(n * LEARN_SHARE)
        xm = gate_matrix(x, log_point, log_limit)
        learn, choose = slice(0, cut), slice(cut, n)
        ratio = y - log_point
        yc, lc, pc = y[choose], log_limit[choose], log_point[choose]
        best = None
        for factor in FACTORS:
            label = (ratio > np.log(factor)).astype(int)
            if label[learn].sum() < MIN_POSITIVE or label[learn].sum() == cut:
                continue
            clf = LGBMClassifier(n_estimators=150, learning_rate=0.05, num_leaves=31,
                                 min_child_samples=50, max_bin=63, verbose=-1,
                                 n_jobs=params.get("n_jobs", 1),
                                 random_state=params.get("random_state", 0))
            clf.fit(xm.iloc[learn], label[learn])
            risk = clf.predict_proba(xm.iloc[choose])[:, 1]
            for share in SHARES:
                threshold = float(np.quantile(risk, share)) if share < 1 else np.inf
                kill, over = _score(risk, threshold, factor, pc, yc, lc)
                if kill > budget * SAFETY:
                    continue
                lower = float(np.quantile(risk, max(share - SHARE_DRIFT, 0.0)))
                over = max(over, _score(risk, lower, factor, pc, yc, lc)[1])
                if best is None or over < best.over:
                    best = cls(factor, clf, threshold, float(share), kill, over)
        return best

    def risk(self, x: pd.DataFrame, log_point, log_limit) -> np.ndarray:
        """Per job, the probability that it runs past ``factor`` x its point prediction."""
        return self.classifier.predict_proba(gate_matrix(x, log_point, log_limit))[:, 1]

    def wall(self, x: pd.DataFrame, log_point, log_limit) -> tuple[np.ndarray, np.ndarray]:
        """(log walltime, tight mask) per job; a job without a request is always tight."""
        tight = (self.risk(x, log_point, log_limit) <= self.threshold) | ~np.isfinite(log_limit)
        return _wall(tight, self.factor, log_point, log_limit), tight

    def to_dict(self) -> dict:
        return {"factor": self.factor, "risk_threshold": self.threshold,
                "tight_share": self.share, "validation_kill_rate": self.kill,
                "validation_over_request": self.over}


def _wall(tight, factor, log_point, log_limit) -> np.ndarray:
    return np.where(tight, np.minimum(log_point + np.log(factor), log_limit), log_limit)


def _score(risk, threshold, factor, log_point, y, log_limit) -> tuple[float, float]:
    """(kill rate, median over-request) of the gate at ``threshold`` on these jobs."""
    tight = (risk <= threshold) | ~np.isfinite(log_limit)
    wall = _wall(tight, factor, log_point, log_limit)
    return float(np.mean(y > wall + 1e-12)), float(np.median(np.exp(wall - y)))
