"""Pruning: only candidates with zero Monte Carlo improvement are left out, checked against BoTorch."""

import numpy as np
import pytest

from hpcds1mpi.surrogates import mobo
from hpcds1mpi.surrogates.pareto import pareto_mask


def test_can_improve_prunes_only_candidates_that_cannot_improve():
    import torch
    from botorch.models import ModelListGP, SingleTaskGP
    from botorch.sampling.normal import SobolQMCNormalSampler

    X = torch.linspace(0, 1, 8, dtype=torch.double)[:, None]
    Y = np.stack([np.exp(3 * X[:, 0].numpy()), np.exp(3 * X[:, 0].numpy())], axis=1)  # no trade-off
    gps = [SingleTaskGP(X, torch.as_tensor(np.log(Y[:, j:j + 1])), train_Yvar=torch.full((8, 1), 1e-8,
                        dtype=torch.double)) for j in range(2)]
    model = ModelListGP(*gps).eval()
    sampler = SobolQMCNormalSampler(torch.Size([128]), seed=0)
    cand = torch.tensor([[0.5], [0.9], [-0.5]], dtype=torch.double)
    assert mobo.improvement_outlook(model, cand, sampler, 2, Y, np.array([30.0, 30.0])) is None  # no base samples yet
    sampler(model.posterior(cand[:1, None]))
    keep, _ = mobo.improvement_outlook(model, cand, sampler, 2, Y, np.array([30.0, 30.0]))
    # x = 0.5 and 0.9 sit between observed points, dominated by the one at x = 0 (both objectives
    # grow with x); x = -0.5 extrapolates below the best observed value (uncertain, can improve)
    assert keep.tolist() == [False, False, True]
    # beyond the reference point: nothing can improve
    assert not mobo.improvement_outlook(model, cand[1:2], sampler, 2, Y, np.array([1e-3, 1e-3]))[0].any()


@pytest.mark.parametrize("block", [256, 2048])
def test_can_improve_blocks_agree_with_one_joint_posterior(monkeypatch, block):
    import torch

    from hpcds1mpi.surrogates.mobo import pruning

    monkeypatch.setattr(pruning, "OUTLOOK_BLOCK", block)  # three blocks, or one
    from botorch.models import ModelListGP, SingleTaskGP
    from botorch.sampling.normal import SobolQMCNormalSampler

    gen = torch.Generator().manual_seed(3)
    X = torch.rand(40, 2, generator=gen, dtype=torch.double)
    Y = np.exp(np.stack([X[:, 0].numpy() + 0.2 * X[:, 1].numpy(), 1 - X[:, 0].numpy()], axis=1))
    model = ModelListGP(*[SingleTaskGP(X, torch.as_tensor(np.log(Y[:, j:j + 1])),
                                       train_Yvar=torch.full((40, 1), 1e-8, dtype=torch.double))
                          for j in range(2)]).eval()
    sampler = SobolQMCNormalSampler(torch.Size([128]), seed=0)
    cand = torch.rand(700, 2, generator=gen, dtype=torch.double) * 1.4 - 0.2
    sampler(model.posterior(cand[:1, None]))
    keep, _ = mobo.improvement_outlook(model, cand, sampler, 2, Y, Y.max(axis=0) * 1.1)
    z = sampler.base_samples.reshape(-1, 2).numpy()
    with torch.no_grad():
        post = model.posterior(cand)  # one joint posterior of all 700
        mean, sd = post.mean.numpy(), post.variance.clamp_min(0).sqrt().numpy()
    ref = Y.max(axis=0) * 1.1
    front = Y[pareto_mask(Y)]
    expected = []
    for mu, sigma in zip(mean, sd):  # candidate by candidate, sample by sample
        points = np.exp(mu + sigma * z)
        improves = [not (any(np.all(f <= p * (1 - 1e-6)) for f in front) or np.any(p >= ref * (1 + 1e-6)))
                    for p in points]
        expected.append(any(improves))
    assert keep.tolist() == expected
    assert 0 < keep.sum() < len(cand)  # both kinds present, so a shuffled block would show


def test_pruned_candidates_have_exactly_zero_monte_carlo_improvement():
    """The pruning against BoTorch itself: the non-smoothed qEHVI (same sampler, partitioning
    and objective as the loop's qLogEHVI) is exactly 0 on every pruned candidate."""
    import torch
    from botorch.acquisition.multi_objective.monte_carlo import qExpectedHypervolumeImprovement
    from botorch.acquisition.multi_objective.objective import GenericMCMultiOutputObjective
    from botorch.models import ModelListGP, SingleTaskGP
    from botorch.models.transforms.outcome import Standardize
    from botorch.sampling.normal import SobolQMCNormalSampler
    from botorch.utils.multi_objective.box_decompositions.non_dominated import (
        FastNondominatedPartitioning,
    )

    gen = torch.Generator().manual_seed(7)
    X = torch.rand(30, 2, generator=gen, dtype=torch.double)
    Y = np.exp(np.stack([2 * X[:, 0].numpy() + X[:, 1].numpy(), 2 * (1 - X[:, 0].numpy())], axis=1))
    model = ModelListGP(*[SingleTaskGP(X, torch.as_tensor(np.log(Y[:, j:j + 1])),
                                       train_Yvar=torch.full((30, 1), 1e-6, dtype=torch.double),
                                       outcome_transform=Standardize(m=1)) for j in range(2)]).eval()
    ref = Y.max(axis=0) * 1.05
    sampler = SobolQMCNormalSampler(torch.Size([128]), seed=0)
    acq = qExpectedHypervolumeImprovement(
        model=model, ref_point=(-ref).tolist(), sampler=sampler,
        partitioning=FastNondominatedPartitioning(ref_point=torch.as_tensor(-ref), Y=torch.as_tensor(-Y)),
        objective=GenericMCMultiOutputObjective(lambda samples, X=None: -samples.exp()))
    cand = torch.rand(500, 2, generator=gen, dtype=torch.double)
    with torch.no_grad():
        ehvi = acq(cand[:, None, :]).numpy()
    keep, gap = mobo.improvement_outlook(model, cand, sampler, 2, Y, ref)
    assert (~keep).sum() > 50 and keep.sum() > 0
    assert np.all(ehvi[~keep] == 0.0)
    assert ehvi[keep].max() > 0 and np.all(gap[ehvi > 0] < 1)


def test_sampler_draws_are_mean_plus_sd_times_base_sample_per_output():
    """What the pruning assumes of BoTorch: for one point, output j's draw is mu_j + sd_j * z_j
    in output order, with Standardize and with a third (feasibility) output."""
    import torch
    from botorch.models import ModelListGP, SingleTaskGP
    from botorch.models.transforms.outcome import Standardize
    from botorch.sampling.normal import SobolQMCNormalSampler

    gen = torch.Generator().manual_seed(1)
    X = torch.rand(12, 2, generator=gen, dtype=torch.double)
    ys = [X[:, :1] * 3, 1 - X[:, 1:] * 5, torch.sign(X[:, :1] - 0.5)]
    model = ModelListGP(*[SingleTaskGP(X, y, outcome_transform=Standardize(m=1)) for y in ys]).eval()
    sampler = SobolQMCNormalSampler(torch.Size([128]), seed=0)
    cand = torch.rand(40, 2, generator=gen, dtype=torch.double)
    with torch.no_grad():
        post = model.posterior(cand[:, None, :])
        draws = sampler(post)[..., 0, :]  # (128, 40, 3)
        z = sampler.base_samples.reshape(-1, 3)
        expected = post.mean[:, 0, :] + post.variance[:, 0, :].sqrt() * z[:, None, :]
    assert torch.allclose(draws, expected, atol=1e-9)


def test_weakly_dominated_two_objectives_matches_pairwise():
    rng = np.random.default_rng(5)
    front = rng.random((9, 2))
    points = np.vstack([rng.random((402, 2)), front, front + [0.0, 1e-9], front - [1e-9, 0.0]])
    pairwise = np.array([any(np.all(f <= p) for f in front) for p in points])
    assert mobo.weakly_dominated(points, front).tolist() == pairwise.tolist()
    assert mobo.weakly_dominated(points.reshape(-1, 3, 2), front).ravel().tolist() == pairwise.tolist()
    assert not mobo.weakly_dominated(points, np.empty((0, 2))).any()
    three = rng.random((5, 3))
    cloud = rng.random((50, 3))
    assert mobo.weakly_dominated(cloud, three).tolist() == [any(np.all(f <= p) for f in three) for p in cloud]


def test_samplewise_dominated_candidates_score_no_higher_than_their_dominator():
    """Against BoTorch's qLogEHVI (the loop's acquisition, smoothing included): a candidate
    another beats in every sample scores no higher than it, so the argmax over the rest is the
    argmax over all."""
    import torch
    from botorch.acquisition.multi_objective.logei import qLogExpectedHypervolumeImprovement

    from hpcds1mpi.surrogates.mobo.pruning import samplewise_dominated
    from tests.surrogates.mobo.test_acquisition import _setup

    kwargs, cand, sampler = _setup(seed=4)
    acq = qLogExpectedHypervolumeImprovement(sampler=sampler(), **kwargs)
    with torch.no_grad():
        values = acq(cand).numpy()
        post = kwargs["model"].posterior(cand)
        mean = post.mean[:, 0, :].numpy()
        sd = post.variance[:, 0, :].clamp_min(0).sqrt().numpy()
    z = acq.sampler.base_samples.reshape(-1, 2).numpy()
    beaten = samplewise_dominated(mean, sd, z, block=64)  # several blocks
    assert 30 < beaten.sum() < len(beaten) - 5
    assert int(np.argmax(np.where(beaten, -np.inf, values))) == int(np.argmax(values))
    lo, hi = mean + sd * z.min(axis=0), mean + sd * z.max(axis=0)
    for b in np.flatnonzero(beaten):  # each beaten one has a kept dominator at least as good
        by = np.flatnonzero(np.all(lo <= lo[b], axis=1) & np.all(hi <= hi[b], axis=1) & ~beaten)
        assert len(by) and values[by].max() >= values[b]
    # the premise, sample by sample: a dominator's draws are below in every sample and output
    samples = mean[:, None, :] + sd[:, None, :] * z[None]
    for b in np.flatnonzero(beaten)[:20]:
        by = np.flatnonzero(np.all(lo <= lo[b], axis=1) & np.all(hi <= hi[b], axis=1) & ~beaten)
        assert np.all(samples[by[0]] <= samples[b] + 1e-12)


def test_samplewise_dominated_keeps_one_of_identical_candidates():
    mean = np.array([[0.0, 0.0], [0.0, 0.0], [1.0, 1.0]])
    sd = np.array([[0.1, 0.1], [0.1, 0.1], [0.1, 0.1]])
    z = np.array([[-1.0, 1.0], [1.0, -1.0]])
    assert samplewise_dominated_list(mean, sd, z) == [False, True, True]


def samplewise_dominated_list(mean, sd, z):
    from hpcds1mpi.surrogates.mobo.pruning import samplewise_dominated

    return samplewise_dominated(mean, sd, z).tolist()
