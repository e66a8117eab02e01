"""A program's node counts above the most it was measured on are named among what recommend
left out (s28 tester Y: heat.c measured on 1-2 nodes of a 4-node partition was offered 1-2
nodes, and the left-out list named only fp32 and bf16)."""

from __future__ import annotations

import pytest

from hpcds1mpi.cluster import Partition
from hpcds1mpi.decide import offer as offer_mod
from hpcds1mpi.surrogates.bundle import train_bundle
from hpcds1mpi.surrogates.levels import MeasuredLevels
from hpcds1mpi.surrogates.measured_offer import measured_offer
from tests.decide.test_offer import make_runs

HEAT = MeasuredLevels("heatm", True, precisions=("fp64",), devices=("cpu",), threads=(1, 2),
                      ranks_per_node=(1, 2), nodes=(1, 2))
FOUR_NODES = Partition("cpu", cores_per_node=8, memory_gb=16.0, max_nodes=4)


def _node_lines(offer) -> list[str]:
    return [line for line in offer.left_out if line.startswith("nodes ")]


@pytest.mark.parametrize("offered, expected", [
    (4, "nodes 3-4: never measured for this program (at most 2)"),
    (3, "nodes 3: never measured for this program (at most 2)"),
])
def test_node_counts_above_the_measured_most_are_said(offered, expected):
    lines = _node_lines(measured_offer(HEAT, ["cpu"], 2, nodes_offered=offered))
    assert len(lines) == 1 and lines[0].startswith(expected)
    assert "picked only where no measured node count can run it" in lines[0]


@pytest.mark.parametrize("offered", [None, 1, 2])
def test_nothing_is_said_within_the_measured_nodes_or_where_nodes_are_not_judged(offered):
    """None: tune and mobo measure any node count, so none is left out there."""
    assert _node_lines(measured_offer(HEAT, ["cpu"], 2, nodes_offered=offered)) == []


def test_recommend_s_offer_names_the_nodes_its_max_nodes_allows(tmp_path):
    bundle = train_bundle(make_runs(), seed=1, n_members=2, use_embedding=False, threads=1)
    bundle.save(tmp_path / "model")  # measured levels are read as recommend reads them
    most = offer_mod.most_nodes_offered([FOUR_NODES], None)
    offer = offer_mod.offer_for(bundle, "myapp", [FOUR_NODES], nodes_offered=most)
    assert _node_lines(offer)[0].startswith("nodes 3-4: never measured for this program")
    capped = offer_mod.most_nodes_offered([FOUR_NODES], 3)
    lines = _node_lines(offer_mod.offer_for(bundle, "myapp", [FOUR_NODES],
                                            nodes_offered=capped))
    assert lines[0].startswith("nodes 3: never measured")
    assert _node_lines(offer_mod.offer_for(bundle, "myapp", [FOUR_NODES])) == []  # tune's
    assert _node_lines(offer_mod.offer_for(bundle, "stencil", [FOUR_NODES],
                                           nodes_offered=most)) == []  # a kernel: declared


def test_recommend_lists_the_nodes_left_out(tmp_path, monkeypatch):
    """The line reaches recommend's answer (s28 tester Y5: nodes 3-4 dropped without a word)."""
    from hpcds1mpi.decide import recommend as rec_mod
    from tests.fake_bundle import isolate_user_files

    isolate_user_files(monkeypatch, tmp_path)
    bundle = train_bundle(make_runs(), seed=1, n_members=2, use_embedding=False, threads=1)
    bundle.save(tmp_path / "model")
    rec = rec_mod.recommend(bundle, "myapp", 64, [(None, FOUR_NODES)])
    assert any(line.startswith("nodes 3-4: never measured for this program")
               for line in rec.left_out), rec.left_out
