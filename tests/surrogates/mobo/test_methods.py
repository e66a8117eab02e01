"""Every method on one budget and one fixed reference point; random search; exact; failures.

Budgets are tiny (a handful of BO iterations) so the file runs in well under a minute on 2 cores.
"""

import numpy as np
import pytest

from hpcds1mpi.errors import ConfigError
from hpcds1mpi.surrogates import mobo
from hpcds1mpi.surrogates.analytic_objective import AnalyticObjective
from hpcds1mpi.surrogates.pareto import hypervolume
from tests.surrogates.mobo import PART, FailingObjective, make_problem


@pytest.mark.parametrize("method", ["mobo", "sobo-runtime", "sobo-energy", "random"])
def test_each_method_respects_budget_and_fixed_reference_point(method):
    problem = make_problem()
    ref_before = problem.ref_point.copy()
    budget = 10
    result = mobo.run(problem, method, budget, seed=3, n_init=8)
    assert len(result.indices) == budget == len(result.Y) == len(result.hv_trace)
    if method != "random":
        assert len(set(result.indices)) == budget  # never re-evaluates a candidate
    assert np.array_equal(result.ref_point, ref_before) and np.array_equal(problem.ref_point, ref_before)
    # The trace is the HV of the evaluated points under that same point, and never decreases.
    assert result.hv_trace[-1] == pytest.approx(hypervolume(result.Y[result.feasible], ref_before))
    assert np.all(np.diff(result.hv_trace) >= -1e-12)


def test_random_search_splits_budget_over_five_streams():
    picks = mobo.random_design(100, 12, seed=0)
    assert len(picks) == 12
    # shares 3,3,2,2,2: each stream is distinct within itself
    chunks = [picks[0:3], picks[3:6], picks[6:8], picks[8:10], picks[10:12]]
    assert all(len(set(c)) == len(c) for c in chunks)
    assert picks == mobo.random_design(100, 12, seed=0) and picks != mobo.random_design(100, 12, seed=1)


def test_budget_smaller_than_initial_design_is_an_error():
    problem = make_problem()
    with pytest.raises(ConfigError, match="initial design"):
        mobo.run(problem, "mobo", 3, n_init=8)


def test_reference_point_required():
    cands = mobo.build_candidates(PART, "stencil", 256, "nodes")
    problem = mobo.Problem(cands, AnalyticObjective(PART), ["runtime_s", "energy_j"])
    with pytest.raises(ConfigError, match="reference point"):
        mobo.run(problem, "random", 5)


def test_exact_method_finds_the_enumerated_front():
    problem = make_problem()
    result = mobo.run(problem, "exact", 1)
    idx, front = problem.exact()
    assert sorted(result.front_indices()) == sorted(idx.tolist())
    assert result.hv_trace[-1] == pytest.approx(hypervolume(front, problem.ref_point))


def test_failed_evaluations_are_infeasible_never_best():
    problem = make_problem(objective=FailingObjective(AnalyticObjective(PART)))
    Y_all, feasible_all = problem.evaluate_all()
    assert np.isnan(Y_all[~feasible_all]).all() and (~feasible_all).any()
    # The reference point and exact front ignore the fake 1e-9 values.
    assert problem.ref_point.min() > 1e-6
    idx, _ = problem.exact()
    assert (problem.candidates.loc[idx, "device"] == "cpu").all()
    for method in ("mobo", "random"):
        result = mobo.run(problem, method, 12, seed=0, n_init=8)
        failed = ~result.feasible
        gpu_picked = problem.candidates.loc[result.indices, "device"].to_numpy() == "gpu"
        assert (failed == gpu_picked).all()
        assert np.isnan(result.Y[failed]).all()
        assert all(s == "oom" for s, f in zip(result.status, failed) if f)
        front = result.front()
        assert len(front) and front.min() > 1e-6
