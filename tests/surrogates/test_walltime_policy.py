"""The per-job walltime policy: tight where the model is sure, the request where it is not."""

import numpy as np

from hpcds1mpi.surrogates.walltime_policy import apply_policy, choose_policy


def _jobs(n, seed, drift=0.0):
    """Half the jobs narrow (run time pinned down), half wide; requests far above."""
    rng = np.random.default_rng(seed)
    width = np.where(np.arange(n) % 2 == 0, 0.05, 2.0)
    centre = np.zeros(n)
    y = centre + rng.normal(0, width) + drift
    lim = np.full(n, 6.0)
    y = np.minimum(y, lim)
    return centre, np.ones(n), width, y, lim


def _kill_over(pol, centre, scale, width, y, lim):
    wall, tight = apply_policy(pol, centre, scale, width, lim)
    return float(np.mean(y > wall + 1e-12)), float(np.median(np.exp(wall - y))), tight


def test_kills_within_budget_on_new_jobs_and_wide_jobs_kept():
    budget = 0.05
    pol = choose_policy(*_jobs(4000, 0), budget)
    kill, over, tight = _kill_over(pol, *_jobs(4000, 1))
    assert kill <= budget + 0.01  # the budget is kept on jobs it never saw
    # Only the narrow jobs are tight: the tight case is not applied to every job.
    width = _jobs(4000, 1)[2]
    assert tight[width < 1].mean() > 0.9 and tight[width > 1].mean() < 0.1
    # Tight proposals are tight: most narrow jobs within 1.5x.
    wall = apply_policy(pol, *_jobs(4000, 1)[:3], _jobs(4000, 1)[4])[0]
    y = _jobs(4000, 1)[3]
    assert np.median(np.exp(wall - y)[width < 1]) < 1.5


def test_tight_beats_one_level_for_every_job_on_the_mean():
    """A job kept at its request costs its request; one level for all costs the wide jobs'
    quantile: both cover, but the policy's tight jobs are within a small factor."""
    pol = choose_policy(*_jobs(4000, 0), 0.05)
    assert 0.3 <= pol.share <= 0.7


def test_chosen_on_the_calibration_jobs_only():
    """Choosing on calibration jobs whose newest runs drift longer must keep the budget on
    that newer half (the choice is scored there), not just on the older half."""
    c, s, w, y, lim = _jobs(4000, 2)
    y[2000:] += 0.3 * (w[2000:] < 1)  # the newer half's narrow jobs run 35 % longer
    pol = choose_policy(c, s, w, y, lim, 0.05)
    kill, _, _ = _kill_over(pol, c[2000:], s[2000:], w[2000:], y[2000:], lim[2000:])
    assert kill <= 0.05


def test_no_share_keeps_the_budget_keeps_every_request():
    c, s, w, y, lim = _jobs(2000, 3)
    y[1000:] = lim[1000:]  # every newer job runs to its request: nothing tight can cover
    pol = choose_policy(c, s, w, y, lim, 0.05)
    wall, tight = apply_policy(pol, c, s, w, lim)
    assert not tight.any() and np.all(wall == lim)
