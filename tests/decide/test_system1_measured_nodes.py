"""A user's program is not picked on more nodes than it was ever measured on (s28 tester T6:
CP2K measured on one node only was recommended 2 nodes x 1 rank at 3.59 s, faster than every
layout it ran); a kernel, which has a work model, still is."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from hpcds1mpi.decide import system1 as s1
from tests.fake_bundle import FakeBundle, fake_partitions

CPU = fake_partitions()["cpu"]
TWO_NODES = s1.Constraints(max_nodes=2, devices=["cpu"], precisions=["fp64"], threads=[1],
                           max_ranks_per_node=2)
#: The tester's CP2K runs at size 250 on one node (ranks per node, threads 1): seconds.
MEASURED = {1: 4.2565, 2: 8.3575}
#: The model's answer there: one node as measured, 2 nodes x 1 rank 3.59 s (the artefact).
PREDICTED = {(1, 1): 4.24, (1, 2): 8.33, (2, 1): 3.59, (2, 2): 3.79}


class OneNode(FakeBundle):
    """``workload`` measured on one node only at size 250 (``MEASURED``); predicted
    ``PREDICTED`` at every size, ``memory_mb`` the need of every candidate on ``slim_nodes``
    nodes, ten times it on the others."""

    def __init__(self, workload: str = "cp2k", slim_nodes=(1, 2)):
        super().__init__(workloads=(workload,), sizes=(150, 250))
        self.workload, self.slim_nodes = workload, slim_nodes

    def training_frame(self) -> pd.DataFrame:
        return pd.DataFrame([dict(workload=self.workload, size=size, nodes=1, ranks_per_node=r,
                                  threads=1, device="cpu", precision="fp64", partition="cpu",
                                  cores_per_node=16, memory_gb=64.0, gpus_per_node=0,
                                  status="ok", runtime_s=v * size / 250, peak_rss_mb=100.0)
                             for r, v in MEASURED.items() for size in (150, 250)])

    def predict(self, df: pd.DataFrame) -> pd.DataFrame:
        out = super().predict(df)
        runtime = np.array([PREDICTED.get((int(n), int(r)), 100.0)
                            for n, r in zip(df["nodes"], df["ranks_per_node"])])
        for col, k in (("runtime_s", 1.0), ("runtime_lo", 0.9), ("runtime_hi", 1.1)):
            out[col] = runtime * k
        for col, k in (("energy_j", 12.0), ("energy_lo", 11.0), ("energy_hi", 13.0)):
            out[col] = runtime * k
        out["fail_prob"] = out["fail_prob_max"] = 0.0
        slim = np.isin(df["nodes"].to_numpy(), self.slim_nodes)
        out["peak_rss_mb"] = np.where(slim, 100.0, 1e9)
        return out


def _choose(bundle, objective: str = "time") -> s1.Choice:
    return s1.choose(s1.score(bundle, bundle.workload, 250, [CPU], TWO_NODES), objective)


@pytest.mark.parametrize("objective", ["time", "energy", "edp", "balanced"])
def test_a_program_measured_on_one_node_is_picked_on_one_node(objective):
    choice = _choose(OneNode(), objective)
    assert (choice.pick["nodes"], choice.pick["ranks_per_node"]) == (1, 1)
    nodes = choice.scores.cols["nodes"][choice.ranking]
    assert list(nodes) == sorted(nodes)  # the 2-node candidates come after every 1-node one
    assert set(nodes) == {1, 2}  # listed still, as alternatives
    if choice.nodes_note:  # the model put a 2-node candidate ahead: no margin to speak of
        assert choice.margin == 0.0
    assert objective != "time" or choice.nodes_note


def test_the_answer_says_which_node_count_was_never_measured_and_how_to_measure_it():
    choice = _choose(OneNode())  # the pick at 250 is its run there, 4.26 s (s31 tester Q1)
    # energies on the floor: 48 W idle + 7 W a busy core a node (s47 tester N1)
    assert choice.nodes_note == (
        "2 nodes was never measured for cp2k (at most 1 node): 2 nodes x 1 rank x 1 thread is "
        "predicted 3.59 s, 395 J against the pick's 4.26 s, 234 J, an extrapolation no run "
        "of it supports, so it is not picked: measure it (sweep --nodes 1,2)")


def test_a_kernel_with_its_work_model_is_still_picked_on_more_nodes():
    choice = _choose(OneNode("stencil"))
    # Not ranked after every 1-node layout (1 x 2 at 8.36 s) as a program's: second, after
    # the measured 1 x 1, whose interval [3.83, 4.68] s its never-measured [3.23, 3.95] s
    # overlaps (a level never measured is picked only wholly below: s31 verifier V4).
    layouts = [(int(choice.scores.cols["nodes"][i]), int(choice.scores.cols["ranks_per_node"][i]))
               for i in choice.ranking[:2]]
    assert layouts == [(1, 1), (2, 1)]
    assert choice.nodes_note == ""


def test_where_only_more_nodes_can_run_it_they_are_picked():
    # one node cannot hold it (memory): the node counts never measured are all there is
    choice = _choose(OneNode(slim_nodes=(2,)))
    assert (choice.pick["nodes"], choice.pick["ranks_per_node"]) == (2, 1)
    assert choice.nodes_note == ""


def test_recommend_says_why_the_faster_predicted_layout_was_not_picked(tmp_path, monkeypatch):
    """The note reaches recommend's answer (its notes, and so the table and the JSON)."""
    from hpcds1mpi.decide import recommend as rec_mod
    from hpcds1mpi.decide.recommendation import format_table
    from tests.fake_bundle import fake_places, isolate_user_files

    isolate_user_files(monkeypatch, tmp_path)
    rec = rec_mod.recommend(OneNode(), "cp2k", 250, fake_places("cpu"), constraints=TWO_NODES)
    assert rec.picked is not None and rec.picked.choice.config().nodes == 1
    note = rec.picked.choice.nodes_note
    assert note.startswith("2 nodes was never measured for cp2k") and note in rec.notes
    assert note in format_table(rec)
