"""A problem's fixed reference point and exact front, and a result's hypervolume trace."""

import numpy as np
import pytest

from hpcds1mpi.errors import ConfigError
from hpcds1mpi.surrogates import mobo
from hpcds1mpi.surrogates.analytic_objective import AnalyticObjective
from hpcds1mpi.surrogates.pareto import hypervolume
from tests.surrogates.mobo import PART, make_problem


def test_one_objective_and_an_unknown_basis_are_refused():
    cands = mobo.build_candidates(PART, "stencil", 256, "nodes")
    with pytest.raises(ConfigError, match="two objectives"):
        mobo.Problem(cands, AnalyticObjective(PART), ["runtime_s"])
    problem = mobo.Problem(cands, AnalyticObjective(PART), ["runtime_s", "energy_j"])
    with pytest.raises(ConfigError, match="basis"):
        problem.fix_reference_point(basis="median")


def test_reference_point_is_the_exact_fronts_nadir_plus_a_margin():
    problem = make_problem(space="full", workload="gemm", size=512)
    _, front = problem.exact()
    span = front.max(axis=0) - front.min(axis=0)
    assert np.allclose(problem.ref_point, front.max(axis=0) + 0.1 * span)
    wide = problem.fix_reference_point(basis="all")
    Y, ok = problem.evaluate_all()
    assert np.all(wide >= Y[ok].max(axis=0))


def test_hv_trace_is_the_hypervolume_of_each_prefix():
    Y = np.array([[3.0, 3.0], [np.nan, np.nan], [1.0, 4.0], [2.0, 2.0]])
    feasible = np.array([True, False, True, True])
    ref = np.array([5.0, 5.0])
    trace = mobo.hv_trace(Y, feasible, ref)
    expected = [hypervolume(Y[:k][feasible[:k]], ref) for k in range(1, 5)]
    assert np.allclose(trace, expected) and trace[1] == trace[0]


def test_candidate_table_answers_by_row_number_as_the_keyed_table_does():
    from hpcds1mpi.surrogates.objectives import TableObjective
    from tests.surrogates.mobo import make_problem

    problem = make_problem(space="full")
    keyed = TableObjective(problem.candidates, problem.table, "modelled")
    by_row = mobo.CandidateTable(problem, "modelled")
    picks = [7, 3, 0, len(problem.candidates) - 1, 3]
    problem.objective = keyed
    expected = problem.evaluate(picks)
    problem.objective = by_row
    got = problem.evaluate(picks)
    assert np.array_equal(got[0], expected[0], equal_nan=True)
    assert got[1].tolist() == expected[1].tolist() and got[2] == expected[2]
    assert by_row.calls == len(picks) and by_row.source == "modelled"
    # configurations from another frame still go through the keys
    other = problem.candidates.iloc[[5, 2]].copy()
    assert by_row(other)["runtime_s"].tolist() == keyed(other)["runtime_s"].tolist()
    assert by_row.calls == len(picks) + 2


def test_a_subset_keeps_its_candidates_evaluated_rows_and_evaluates_nothing_again():
    problem = make_problem(space="full")
    keep = (problem.candidates["nodes"] > 1).to_numpy()
    calls = []

    def counting(configs):
        calls.append(len(configs))
        return problem.objective(configs)

    problem.objective, inner = counting, problem.objective
    part = problem.subset(keep)
    assert calls == [] and len(part.candidates) == keep.sum() == len(part.table)
    assert part.candidates.index.tolist() == list(range(keep.sum()))
    assert part.table["runtime_s"].tolist() == problem.table[keep]["runtime_s"].tolist()
    assert part.X.shape == (keep.sum(), problem.X.shape[1])
    part.objective = inner
    part.fix_reference_point()
    assert set(part.candidates.loc[part.exact()[0], "nodes"]) <= set(range(2, 9))
    with pytest.raises(ConfigError, match="no candidate left"):
        problem.subset(np.zeros(len(keep), dtype=bool))
