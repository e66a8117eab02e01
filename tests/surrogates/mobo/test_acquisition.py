"""QOneLogEHVI: BoTorch's qLogEHVI for q = 1 without its no-op batch steps, the same numbers."""

import pytest


def _setup(seed=0, n=60, constraint=False):
    import torch
    from botorch.acquisition.multi_objective.objective import GenericMCMultiOutputObjective
    from botorch.models import ModelListGP, SingleTaskGP
    from botorch.models.transforms.outcome import Standardize
    from botorch.sampling.normal import SobolQMCNormalSampler
    from botorch.utils.multi_objective.box_decompositions.non_dominated import (
        FastNondominatedPartitioning,
    )

    gen = torch.Generator().manual_seed(seed)
    X = torch.rand(n, 3, generator=gen, dtype=torch.double)
    Y = torch.stack([X[:, 0] + 0.3 * X[:, 1], 1 - X[:, 0] + 0.2 * X[:, 2]], dim=-1)
    ys = [Y[:, :1], Y[:, 1:]] + ([torch.sign(X[:, 2:] - 0.7)] if constraint else [])
    model = ModelListGP(*[SingleTaskGP(X, y, outcome_transform=Standardize(m=1)) for y in ys]).eval()
    raw = Y.exp()
    ref = -raw.max(dim=0).values * 1.1
    kwargs = dict(model=model, ref_point=ref.tolist(),
                  partitioning=FastNondominatedPartitioning(ref_point=ref, Y=-raw),
                  objective=GenericMCMultiOutputObjective(lambda s, X=None: -s[..., :2].exp()),
                  constraints=[lambda Z: Z[..., 2]] if constraint else None)
    cand = torch.rand(300, 1, 3, generator=gen, dtype=torch.double) * 1.2 - 0.1
    return kwargs, cand, lambda: SobolQMCNormalSampler(torch.Size([128]), seed=0)


@pytest.mark.parametrize("constraint", [False, True])
def test_same_values_as_botorch_qlogehvi(constraint):
    import torch
    from botorch.acquisition.multi_objective import logei
    from botorch.acquisition.multi_objective.logei import qLogExpectedHypervolumeImprovement

    from hpcds1mpi.surrogates.mobo.acquisition import q_one_log_ehvi

    kwargs, cand, sampler = _setup(constraint=constraint)
    theirs = qLogExpectedHypervolumeImprovement(sampler=sampler(), **kwargs)
    ours = q_one_log_ehvi(sampler=sampler(), **kwargs)
    assert isinstance(ours, qLogExpectedHypervolumeImprovement)
    with torch.no_grad():
        expected, got = theirs(cand), ours(cand)
    assert torch.equal(got, expected)  # bit for bit, not just close
    assert expected.max() - expected.min() > 5  # values that tell candidates apart
    if logei._C is None:  # pragma: no cover - no compiler: the shortcut is not taken
        pytest.skip("BoTorch's fused qLogEHVI kernel is not available here")


def test_shortcut_taken_when_it_applies(monkeypatch):
    """Without constraints the q = 1 path is ours (BoTorch's generic one is not called)."""
    import torch
    from botorch.acquisition.multi_objective import logei

    from hpcds1mpi.surrogates.mobo.acquisition import q_one_log_ehvi

    kwargs, cand, sampler = _setup()
    acq = q_one_log_ehvi(sampler=sampler(), **kwargs)
    if logei._C is None:  # pragma: no cover
        pytest.skip("BoTorch's fused qLogEHVI kernel is not available here")
    calls = []
    generic = logei.qLogExpectedHypervolumeImprovement._compute_log_qehvi
    monkeypatch.setattr(logei.qLogExpectedHypervolumeImprovement, "_compute_log_qehvi",
                        lambda self, *a, **k: calls.append(1) or generic(self, *a, **k))
    with torch.no_grad():
        acq(cand[:5])
    assert not calls


def test_values_from_marginals_match_the_acquisition_on_its_posterior():
    import numpy as np
    import torch

    from hpcds1mpi.surrogates.mobo.acquisition import log_ehvi_from_marginals, q_one_log_ehvi

    kwargs, cand, sampler = _setup(seed=2)
    acq = q_one_log_ehvi(sampler=sampler(), **kwargs)
    with torch.no_grad():
        expected = acq(cand)  # BoTorch's forward: GPyTorch posterior, the sampler's draws
        post = kwargs["model"].posterior(cand)
        mean = post.mean[:, 0, :].numpy()
        sd = post.variance[:, 0, :].clamp_min(0).sqrt().numpy()
    z = acq.sampler.base_samples.reshape(-1, 2).numpy()
    got = log_ehvi_from_marginals(acq, mean, sd, z, batch_size=128)  # three batches
    assert got.shape == expected.shape
    assert torch.allclose(got, expected, rtol=1e-9, atol=1e-9)
    assert int(torch.argmax(got)) == int(torch.argmax(expected))
    assert np.ptp(expected.numpy()) > 5


def test_the_acquisition_class_under_warnings_as_errors():
    """s32 tester T3: BoTorch's import warns that torch.jit.script is deprecated."""
    from tests.runtime.test_quiet_imports import under_warnings_as_errors

    proc = under_warnings_as_errors("""
        from hpcds1mpi.surrogates.mobo.acquisition import _class
        print(_class().__name__)
        """)
    assert proc.returncode == 0 and proc.stdout.strip() == "QOneLogEHVI", proc.stderr[-2000:]
