"""Acquisition over the remaining candidates, scored only where an improvement is possible.

:func:`improvement_outlook` tells which candidates can improve under one of the sampler's fixed
base samples (the others have exactly zero Monte Carlo improvement), :func:`weakly_dominated`
is its dominance search, :func:`samplewise_dominated` finds candidates another one beats in
every sample (they cannot be the maximum), and :func:`discrete_argmax` takes the best of the scored candidates
(exact discrete maximisation: no continuous optimum is rounded).
"""

from __future__ import annotations

import numpy as np

from ..pareto import pareto_mask

#: Candidates per posterior call of :func:`improvement_outlook` (bounds its memory).
OUTLOOK_BLOCK = 2048


def improvement_outlook(model, X, sampler, n_objectives: int, Y_seen: np.ndarray,
                        ref: np.ndarray | None, marginals: tuple | None = None
                        ) -> tuple[np.ndarray, np.ndarray] | None:
    """Which candidates can improve under at least one of the sampler's fixed base samples,
    and how far each is from improving.

    The GPs model log outcomes and, for q = 1, output j's sample at a candidate is
    ``mu_j + sigma_j * z_j`` with ``z`` one of the sampler's fixed base samples, so each of the
    sampler's samples is a known point ``exp(mu + sigma * z)`` in raw space. When every one of
    those points is weakly dominated by an observed point (or lies beyond the reference point),
    every sample's improvement is exactly zero, and the log acquisition keeps only its
    smoothing tail (softplus / soft-max temperatures), which sits below any candidate with a
    positive improvement larger than that smoothing scale. Such candidates are left out. This
    is exact for the non-smoothed Monte Carlo acquisition; for the smoothed one the choice could
    differ when the best possible improvement is within the smoothing scale, and it does differ
    when no candidate can improve (the loop then scores only the ``raw_samples`` with the
    smallest gap instead of all); ``benchmarks/mobo.py`` compares picks with and without
    pruning. A relative slack of 1e-6 keeps rounding from pruning a candidate that touches the
    front. (Checking each
    sample, not one optimistic corner ``exp(mu + sigma * min z)`` per candidate, left ~4x fewer
    candidates to score on a 4,000-candidate space with a 59-point front.)

    Args:
        model: the fitted model (outputs 0..n_objectives-1 are the log objectives).
        X: ``(k, d)`` candidates.
        sampler: the acquisition's QMC sampler, after at least one use (base samples fixed).
        n_objectives: objectives modelled (2 for MOBO, 1 for SOBO).
        Y_seen: ``(n, n_objectives)`` raw objective values observed (feasible ones).
        ref: ``(n_objectives,)`` reference point (MOBO), or None (SOBO: improvement over the
            best observed value).
        marginals: ``(mean (k, n_objectives), sd (k, n_objectives))`` of the candidates'
            posteriors when the caller has them (:class:`~.marginals.Marginals`); None: asked
            of the model here.

    Returns:
        ``(mask (k,), gap (k,))``, or None when the sampler has no base samples for this model
        yet. ``gap`` is the factor by which a candidate's optimistic corner (every objective at
        its best sample) must still shrink to improve: below 1 can improve at the corner, and
        it orders the candidates that cannot.
    """
    import torch

    base = getattr(sampler, "base_samples", None)
    if base is None or base.shape[-1] != model.num_outputs:
        return None
    z = base.reshape(-1, base.shape[-1])[:, :n_objectives].cpu().numpy()  # (S, n_objectives)
    slack = 1e-6
    front = Y_seen[pareto_mask(Y_seen)] if ref is not None else None
    best = np.min(Y_seen[:, 0])  # SOBO's incumbent
    keep, gaps = [], []
    with torch.no_grad():
        # Only each candidate's marginal is needed: the candidates as a batch of one-point
        # posteriors (what the q = 1 acquisition itself computes) give the marginals without
        # any candidate-by-candidate covariance.
        for start in range(0, len(X), OUTLOOK_BLOCK):
            if marginals is not None:
                mean = marginals[0][start:start + OUTLOOK_BLOCK]
                sd = marginals[1][start:start + OUTLOOK_BLOCK]
            else:
                post = model.posterior(X[start:start + OUTLOOK_BLOCK].unsqueeze(-2))
                mean = post.mean[..., 0, :n_objectives].cpu().numpy()
                sd = post.variance[..., 0, :n_objectives].clamp_min(0).sqrt().cpu().numpy()
            # The optimistic corner (every objective at its best sample) bounds every sample
            # from below: where the corner cannot improve, no sample can.
            zmin = z.min(axis=0)
            corner = np.exp(mean + sd * zmin)  # (b, m)
            if ref is None:
                keep.append(corner[:, 0] < best * (1 + slack))
                gaps.append(corner[:, 0] / best)
                continue
            hope = ~(weakly_dominated(corner * (1 - slack), front)
                     | np.any(corner >= ref * (1 + slack), axis=1))
            kept = np.zeros(len(corner), dtype=bool)
            if hope.any():
                points = np.exp(mean[hope, None, :] + sd[hope, None, :] * z[None, :, :])
                dominated = weakly_dominated(points * (1 - slack), front)
                beyond = np.any(points >= ref * (1 + slack), axis=2)
                kept[hope] = np.any(~(dominated | beyond), axis=1)
            keep.append(kept)
            # Shrinking the corner by t escapes front point f once t > min_j corner_j / f_j,
            # and enters the reference box once t > max_j corner_j / ref_j.
            escape = np.max(np.min(corner[:, None, :] / front[None, :, :], axis=2), axis=1)
            gaps.append(np.maximum(escape, np.max(corner / ref, axis=1)))
    return np.concatenate(keep), np.concatenate(gaps)


def weakly_dominated(points: np.ndarray, front: np.ndarray) -> np.ndarray:
    """Whether each of ``points`` (``(..., m)``) is weakly dominated by a row of ``front``
    (``(k, m)``, minimisation). Two objectives: one sorted search per point (the front's
    smallest second objective among rows whose first is at most the point's); more: pairwise."""
    if len(front) == 0:
        return np.zeros(points.shape[:-1], dtype=bool)
    if front.shape[1] != 2:
        out = np.zeros(points.shape[:-1], dtype=bool)
        for f in front:
            out |= np.all(f <= points, axis=-1)
        return out
    order = np.argsort(front[:, 0], kind="stable")
    first = front[order, 0]
    best_second = np.minimum.accumulate(front[order, 1])
    at = np.searchsorted(first, points[..., 0], side="right")  # rows with first <= the point's
    return (at > 0) & (best_second[np.maximum(at - 1, 0)] <= points[..., 1])


def samplewise_dominated(mean: np.ndarray, sd: np.ndarray, z: np.ndarray,
                         block: int = 512) -> np.ndarray:
    """Which candidates another candidate beats in every one of the sampler's fixed samples.

    With q = 1 and independent GPs, candidate ``a``'s sample ``s`` of log objective ``j`` is
    ``mean[a, j] + sd[a, j] * z[s, j]``: linear in ``z``, so when ``a``'s value is at most
    ``b``'s at both ``min_s z[s, j]`` and ``max_s z[s, j]`` for every ``j``, it is at most
    ``b``'s in every sample. Every Monte Carlo acquisition the loop uses (qLogEHVI, qLogEI,
    smoothing included) is a mean over samples of a function that does not decrease as any
    objective of the sample decreases (the objective is ``-exp(sample)``, the smoothed
    improvements are monotone), so such a ``b`` scores no higher than ``a`` and is never the
    strict maximum: leaving it out does not change the discrete argmax. Exact ties keep the
    lower index, as :func:`discrete_argmax` does. (Without failures only: a feasibility GP's
    sample enters the weight too, and is not looked at here.)

    Args:
        mean, sd: ``(k, m)`` posterior mean and standard deviation of the log objectives.
        z: ``(S, m)`` the sampler's base samples of those outputs.
        block: candidates compared at once (bounds memory at ``block x k x 2m``).

    Returns:
        ``(k,)`` True where a candidate is beaten sample by sample.
    """
    lo = mean + sd * z.min(axis=0)
    hi = mean + sd * z.max(axis=0)
    corners = np.concatenate([lo, hi], axis=1)  # (k, 2m): every sample lies between
    k = len(corners)
    order = np.arange(k)
    out = np.zeros(k, dtype=bool)
    for start in range(0, k, block):
        b = corners[start:start + block]  # (B, 2m), the candidates that may be beaten
        le = np.all(corners[None, :, :] <= b[:, None, :], axis=2)  # (B, k): a <= b everywhere
        lt = np.any(corners[None, :, :] < b[:, None, :], axis=2)
        earlier = order[None, :] < order[start:start + block, None]
        out[start:start + block] = np.any(le & (lt | earlier), axis=1)
    return out


def discrete_argmax(acq, choices, batch_size: int) -> int:
    """Index of the best of ``choices`` (``(k, d)``) under a q = 1 acquisition."""
    import torch

    values = torch.cat([acq(chunk.unsqueeze(1)) for chunk in torch.split(choices, batch_size)])
    return int(torch.argmax(values))
