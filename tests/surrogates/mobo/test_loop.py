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
