"""``decide/tune_nodes``: the tune's search keeps to the node counts its program was measured
on, as recommend does (s39 tester B5)."""

from __future__ import annotations

import numpy as np

from hpcds1mpi.cluster import Partition
from hpcds1mpi.config import Configuration
from hpcds1mpi.decide import tune_space
from hpcds1mpi.decide.tune_nodes import NodeRule


def _space():
    part = Partition("p", cores_per_node=2, memory_gb=16, max_nodes=2)
    return tune_space.build_space(part, max_nodes=2)


def test_measured_node_counts_first_then_the_others_said_once():
    space = _space()
    beyond = np.array([c.nodes == 2 for c in space.configs])
    lines = []
    rule = NodeRule(space, beyond, Configuration(1, 1, 2), lines.append)
    ok = np.ones(len(space.configs), bool)
    assert (rule.candidates(ok) == ~beyond).all() and not lines
    assert "not run: 2 node(s)" in rule.untried_said(ok, set()) and "--nodes 2" in \
        rule.untried_said(ok, set())
    assert (rule.candidates(ok & beyond) == beyond).all()  # the measured ones are all run
    assert (rule.candidates(ok & beyond) == beyond).all()
    assert len(lines) == 1 and "more than 1 node(s)" in lines[0] and "recommend" in lines[0]
    assert rule.untried_said(ok, set()) == ""


def test_a_start_beyond_the_measured_node_counts_or_none_known_lifts_the_rule():
    space = _space()
    beyond = np.array([c.nodes == 2 for c in space.configs])
    ok = np.ones(len(space.configs), bool)
    assert NodeRule(space, beyond, Configuration(2, 1, 1), print).candidates(ok).all()
    assert NodeRule(space, None, Configuration(1, 1, 1), print).candidates(ok).all()


def test_a_neighbour_walk_takes_measured_node_counts_first():
    space = _space()
    beyond = np.array([c.nodes == 2 for c in space.configs])
    lines = []
    rule = NodeRule(space, beyond, Configuration(1, 1, 1), lines.append)
    options = [Configuration(2, 1, 1), Configuration(1, 2, 1)]
    assert rule.order(options)[0] == Configuration(1, 2, 1) and not lines
    assert rule.order([Configuration(2, 1, 1)]) == [Configuration(2, 1, 1)] and lines
