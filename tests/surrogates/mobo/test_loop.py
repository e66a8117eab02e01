"""The BO loop: the optimised fitting policy against the straightforward one, and the
candidates it scores when nothing can improve."""

import dataclasses

import numpy as np

from hpcds1mpi.surrogates import mobo
from hpcds1mpi.surrogates.mobo import loop
from hpcds1mpi.surrogates.objectives import TableObjective
from hpcds1mpi.surrogates.pareto import hypervolume
from tests.surrogates.mobo import make_problem


def test_when_nothing_can_improve_the_closest_raw_samples_are_scored(monkeypatch):
    problem = make_problem(space="full")
    problem.objective = TableObjective(problem.candidates, problem.table, "modelled")
    raw = mobo.PAPER_PROFILE.raw_samples
    assert len(problem.candidates) > 2 * raw
    gap = np.random.default_rng(0).permutation(len(problem.candidates)).astype(float)
    seen = []

    def outlook(model, X, *args, **kwargs):  # nothing improves; gap by candidate
        rows = [int(np.flatnonzero(np.all(problem.X == x, axis=1))[0]) for x in X.numpy()]
        seen.append(rows)
        return np.zeros(len(X), dtype=bool), gap[rows]

    monkeypatch.setattr(loop, "improvement_outlook", outlook)
    # without the sample-wise dominance step, exactly the raw_samples closest are scored
    res = mobo.run(problem, "mobo", 10, seed=0,
                   policy=dataclasses.replace(mobo.OPTIMISED, dominance=False))
    remaining = len(problem.candidates) - np.arange(res.n_init, 10)
    assert res.pruned == (remaining - raw).tolist()
    for rows, pick in zip(seen, res.indices[res.n_init:]):
        closest = sorted(rows, key=lambda r: gap[r])[:raw]
        assert pick in closest  # chosen among the raw_samples smallest gaps, not at random
    # with it (the default), a subset of those
    seen.clear()
    res = mobo.run(problem, "mobo", 10, seed=0)
    assert all(p >= r for p, r in zip(res.pruned, (remaining - raw).tolist()))
    for rows, pick in zip(seen, res.indices[res.n_init:]):
        assert pick in sorted(rows, key=lambda r: gap[r])[:raw]


def test_optimised_loop_matches_straightforward_on_nodes_space():
    problem = make_problem(space="nodes")
    problem.objective = TableObjective(problem.candidates, problem.table, "modelled")
    fast = mobo.run(problem, "mobo", 7, seed=1, n_init=4, policy=mobo.OPTIMISED)
    slow = mobo.run(problem, "mobo", 7, seed=1, n_init=4, policy=mobo.STRAIGHTFORWARD)
    assert fast.indices[:4] == slow.indices[:4]  # same initial design
    _, front = problem.exact()
    exact_hv = hypervolume(front, problem.ref_point)
    assert fast.hv_trace[-1] / exact_hv > 0.9 and slow.hv_trace[-1] / exact_hv > 0.9
    assert len(fast.pruned) == 3 and not slow.pruned  # the pruning was consulted each iteration


def test_refit_growth_waits_until_the_training_set_grew(monkeypatch):
    """Hyperparameters are refined every refit_every iterations while the training set is small,
    then only once it grew by refit_growth of its size at the last refit."""
    import botorch.optim.fit
    import torch

    refits = []
    monkeypatch.setattr(botorch.optim.fit, "fit_gpytorch_mll_scipy",
                        lambda mll, **kw: "options" in kw and refits.append(len(mll.model.train_targets)))
    fitter = loop.GPFitter(dataclasses.replace(mobo.OPTIMISED, refit_growth=0.2))
    gen = torch.Generator().manual_seed(0)
    X = torch.rand(160, 2, generator=gen, dtype=torch.double)
    y = torch.sin(6 * X[:, :1]) + X[:, 1:]
    for n in range(8, 160):  # one more point each iteration, as in the loop
        fitter.model([(X[:n], y[:n])])
    # every 10 iterations up to 58 points, then after 20 % growth (and a multiple of 10)
    assert refits == [18, 28, 38, 48, 58, 78, 98, 118, 148]  # the loop's refits (with options)
    plain = []
    monkeypatch.setattr(botorch.optim.fit, "fit_gpytorch_mll_scipy",
                        lambda mll, **kw: "options" in kw and plain.append(len(mll.model.train_targets)))
    fitter = loop.GPFitter(dataclasses.replace(mobo.OPTIMISED, refit_growth=0.0))
    for n in range(8, 160):
        fitter.model([(X[:n], y[:n])])
    assert plain == list(range(18, 160, 10))  # growth 0: every refit_every iterations


def test_the_loop_under_warnings_as_errors():
    """Was (s32 tester T3): mobo with PYTHONWARNINGS=error died importing BoTorch, whose
    import warns that torch.jit.script is deprecated."""
    from tests.runtime.test_quiet_imports import under_warnings_as_errors

    proc = under_warnings_as_errors("""
        from hpcds1mpi.surrogates import mobo
        from hpcds1mpi.surrogates.objectives import TableObjective
        from tests.surrogates.mobo import make_problem
        problem = make_problem(space="nodes")
        problem.objective = TableObjective(problem.candidates, problem.table, "modelled")
        print(len(mobo.run(problem, "mobo", 6, seed=1, n_init=4).indices))
        """)
    assert proc.returncode == 0 and proc.stdout.strip() == "6", proc.stderr[-2000:]
