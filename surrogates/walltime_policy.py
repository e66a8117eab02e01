"""Per job: a tight walltime where the model is sure, the user's own request where it is not.

The walltime goal is an *aggregate* kill rate and a *median* over-request, so one coverage
level for every job wastes the kill budget on jobs whose run time the model cannot pin down.
:func:`choose_policy` splits the jobs by the predicted tail width (the distance from the
median to the upper quantile regression, log s): at most a threshold ``tau`` the job is
**tight** -- it gets ``min(exp(c + k s), request)`` with ``k`` a conformal offset of the tight
jobs' scores -- above it the job is **kept** at its request (a completed job never ran past its
request, so a kept job adds no kill). A job with no request is always tight.

How ``tau`` and ``k`` are chosen (training part only): on the older half of the calibration
slice, for each tight share in :data:`SHARES` (``tau`` the width quantile), ``k`` is the
conformal offset at the level that spends the budget on the tight jobs alone
(``1 - budget * SAFETY / share``); each pair is scored on the newer half, and of those whose
kill rate there is within the budget the least median over-request wins (ties: the larger
tight share). ``k`` is then re-measured on the whole slice and the larger of the two kept
(never loosened against drift). If no share keeps the budget on the newer half, every job
is kept at its request: the model says it cannot be sure.
"""

from __future__ import annotations

from dataclasses import dataclass

import math

import numpy as np

#: Tight shares tried (the share of jobs with a request given a tight proposal).
SHARES = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
#: Share of the budget the older half's level spends (room for drift to the newer half).
SAFETY = 0.8


@dataclass
class Policy:
    """The chosen split: width threshold, conformal offset and what it gave on the newer half."""

    tau: float
    k: float
    level: float
    share: float
    kill: float
    over: float

    def to_dict(self) -> dict:
        return {"tau": self.tau if np.isfinite(self.tau) else None, "k": self.k, "level": self.level, "tight_share": self.share,
                "validation_kill_rate": self.kill, "validation_over_request": self.over}


def conformal_offset(scores: np.ndarray, coverage: float) -> float:
    """The split-conformal offset: the ``ceil((n+1) coverage) / n`` empirical quantile of the
    calibration scores, so that at least ``coverage`` of new jobs from the same distribution
    score at most it."""
    s = np.sort(np.asarray(scores, dtype=float))
    if len(s) == 0:
        return 0.0
    k = min(len(s), math.ceil((len(s) + 1) * coverage)) - 1
    return float(s[max(k, 0)])


def tight_mask(policy: Policy, width, lim) -> np.ndarray:
    """Per job, whether it is tight: its width at most ``tau`` or its request unknown."""
    return (width <= policy.tau) | ~np.isfinite(lim)


def apply_policy(policy: Policy, centre, scale, width, lim):
    """(log walltime, tight mask) per job: tight (:func:`tight_mask`) jobs get
    ``min(centre + k scale, request)``, the others their request."""
    tight = tight_mask(policy, width, lim)
    wall = np.where(tight, np.minimum(centre + policy.k * scale, lim), lim)
    return wall, tight


def choose_policy(centre, scale, width, y, lim, budget: float, shares=SHARES) -> Policy:
    """Choose ``tau`` and ``k`` on calibration jobs in submit order (see the module's note).

    Args:
        centre, scale: per job, the walltime recipe ``exp(centre + k scale)`` (log s).
        width: per job, the predicted tail width the split is made on.
        y: log run times; lim: log requests (+inf where unknown).
        budget: the share of jobs that may be killed (1 - coverage).
    """
    n = len(y)
    half = n // 2
    score = (y - centre) / scale
    o, w = slice(0, half), slice(half, n)
    has_req = np.isfinite(lim)
    best = None
    for share in shares:
        tau = float(np.quantile(width[o][has_req[o]], share)) if has_req[o].any() else np.inf
        if share >= 1.0:
            tau = np.inf
        level = max(0.5, 1 - min(budget * SAFETY / share, 0.5))
        pol = Policy(tau, 0.0, level, share, 0.0, 0.0)
        pol.k = conformal_offset(score[o][tight_mask(pol, width[o], lim[o])], level)
        wall, tight = apply_policy(pol, centre[w], scale[w], width[w], lim[w])
        pol.kill = float(np.mean(y[w] > wall + 1e-12))
        pol.over = float(np.median(np.exp(wall - y[w])))
        pol.share = float(np.mean(tight[has_req[w]])) if has_req[w].any() else 1.0
        if pol.kill <= budget and (best is None or (pol.over, -pol.share) < (best.over,
                                                                             -best.share)):
            best = pol
    if best is None:  # nothing keeps the budget: keep every request
        k = conformal_offset(score, 1 - budget)
        return Policy(-np.inf, k, 1 - budget, 0.0, 0.0, float("nan"))
    best.k = max(best.k, conformal_offset(score[tight_mask(best, width, lim)], best.level))
    return best
