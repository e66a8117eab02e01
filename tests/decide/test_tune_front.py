"""System 2's runtime-energy front: MOBO on (here, tabled) real runs."""

from __future__ import annotations

from hpcds1mpi.cluster import Partition
from hpcds1mpi.config import Configuration
from hpcds1mpi.decide import tune_space
from hpcds1mpi.decide.tune_front import tune_front


def _evaluator(calls: list, stored: set = frozenset()):
    def evaluate(config: Configuration) -> dict:
        calls.append(config.label())
        t = 1.0 / (config.ranks_per_node * config.threads) + (0.3 if config.precision == "fp64"
                                                              else 0.0)
        row = {"status": "ok", "runtime_s": t, "energy_j": 10 * t * config.ranks_per_node,
               "energy_source": "modelled", "run_id": config.label()}
        if config.label() in stored:
            row["stored"] = "already in f.h5 (measured earlier), not run again"
        return row
    return evaluate


def _space():
    part = Partition("p", cores_per_node=2, memory_gb=4, max_nodes=1)
    return tune_space.workload_space(part, "stencil", max_nodes=1)


def test_the_front_spends_its_whole_budget_and_says_why_it_stopped():
    """Was: MOBO got budget - 1 picks, one of them the (cached) start again: 4 runs of a
    budget of 5 and "MOBO ended (candidates exhausted)" with 6 configurations allowed."""
    space = _space()
    assert len(space.configs) == 6
    for budget in (5, 6):
        calls, lines = [], []
        result = tune_front(space, tune_space.default_config(space, 2), _evaluator(calls),
                            budget=budget, log=lines.append)
        assert len(calls) == len(set(calls)) == budget == result.runs, (budget, lines)
        assert result.stop_reason == f"budget of {budget} runs spent"
        assert "modelled" in lines[0] and result.energy_source == "modelled"


def test_stored_runs_on_the_front_are_not_spent_from_the_budget():
    space = _space()
    start = tune_space.default_config(space, 2)
    calls = []
    result = tune_front(space, start, _evaluator(calls, stored={start.label()}), budget=2)
    assert result.runs == 2 and result.reused == 1 and len(calls) == 3
