"""The pre-filter's posteriors followed across iterations (surrogates/mobo/marginals.py): the
same numbers as GPyTorch's, and the same BO picks as asking GPyTorch every iteration."""

import numpy as np
import pytest

from hpcds1mpi.surrogates import mobo
from hpcds1mpi.surrogates.mobo import loop
from hpcds1mpi.surrogates.mobo.marginals import Marginals
from hpcds1mpi.surrogates.objectives import TableObjective
from tests.surrogates.mobo import make_problem

torch = pytest.importorskip("torch")


def _gp(X, y, state=None):
    from botorch.models import SingleTaskGP
    from botorch.models.transforms.outcome import Standardize

    gp = SingleTaskGP(X, y, outcome_transform=Standardize(m=1))
    if state is not None:
        gp.load_state_dict(state, strict=False)
    return gp.eval()


def _gpytorch(gp, X):
    with torch.no_grad():
        post = gp.posterior(X.unsqueeze(-2))
        return post.mean[..., 0, 0].numpy(), post.variance[..., 0, 0].clamp_min(0).sqrt().numpy()


def test_followed_posterior_is_gpytorchs_after_new_points_and_a_refit():
    from botorch.fit import fit_gpytorch_mll
    from gpytorch.mlls import ExactMarginalLogLikelihood

    gen = torch.Generator().manual_seed(0)
    cand = torch.rand(300, 3, generator=gen, dtype=torch.double)
    f = lambda X: torch.sin(4 * X[:, :1]) + X[:, 1:2] ** 2 - X[:, 2:3]  # noqa: E731
    marg = Marginals(cand)
    X = cand[:12]
    gp = _gp(X, f(X))
    fit_gpytorch_mll(ExactMarginalLogLikelihood(gp.likelihood, gp))
    gp.eval()
    state = {k: v.clone() for k, v in gp.state_dict().items() if not k.startswith("outcome")}
    rows = np.arange(5, 300)
    for n in (12, 13, 16, 17):  # conditioning only: one, three, one new point
        X = cand[:n]
        gp = _gp(X, f(X), state)
        mean, sd = marg.of(gp, 1, rows)
        ref_mean, ref_sd = _gpytorch(gp, cand[rows])
        np.testing.assert_allclose(mean[:, 0], ref_mean, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(sd[:, 0], ref_sd, rtol=1e-7, atol=1e-10)
    assert marg.full_solves == 1  # extended three times, factorised once
    state["covar_module.raw_lengthscale"] = state["covar_module.raw_lengthscale"] * 1.1  # a refit
    gp = _gp(cand[:17], f(cand[:17]), state)
    mean, sd = marg.of(gp, 1, rows)
    assert marg.full_solves == 2
    np.testing.assert_allclose(sd[:, 0], _gpytorch(gp, cand[rows])[1], rtol=1e-7, atol=1e-10)


def test_a_model_it_does_not_know_is_left_to_gpytorch():
    from botorch.models import SingleTaskGP

    X = torch.rand(8, 2, dtype=torch.double)
    fixed_noise = SingleTaskGP(X, X[:, :1], train_Yvar=torch.full((8, 1), 1e-6,
                                                                   dtype=torch.double)).eval()
    assert Marginals(X).of(fixed_noise, 1, np.arange(8)) is None


def test_bo_picks_are_the_same_as_asking_gpytorch_every_iteration(monkeypatch):
    problem = make_problem(space="full")
    problem.objective = TableObjective(problem.candidates, problem.table, "modelled")
    followed = mobo.run(problem, "mobo", 16, seed=2)
    calls = []
    original = Marginals.of

    def count(self, *a, **k):
        calls.append(1)
        return original(self, *a, **k)

    monkeypatch.setattr(Marginals, "of", count)
    again = mobo.run(problem, "mobo", 16, seed=2)
    assert calls and again.indices == followed.indices
    monkeypatch.setattr(Marginals, "of", lambda self, *a, **k: None)  # GPyTorch's posteriors
    asked = mobo.run(problem, "mobo", 16, seed=2)
    assert asked.indices == followed.indices
    np.testing.assert_array_equal(asked.hv_trace, followed.hv_trace)
    assert loop.Marginals is Marginals


def test_the_model_check_under_warnings_as_errors():
    """s32 tester T3: BoTorch's and GPyTorch's imports warn that torch.jit.script is deprecated."""
    from tests.runtime.test_quiet_imports import under_warnings_as_errors

    proc = under_warnings_as_errors("""
        from hpcds1mpi.surrogates.mobo.marginals import _supported
        print(_supported(object()))
        """)
    assert proc.returncode == 0 and proc.stdout.strip() == "False", proc.stderr[-2000:]
