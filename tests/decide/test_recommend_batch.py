"""recommend_many: many questions, one predict and one guard pass, each answer equal to
``recommend``'s (its JSON, its table, or its error), an error kept to its own question."""

from __future__ import annotations

import json

import pytest

from hpcds1mpi.cluster import Cluster, Partition
from hpcds1mpi.decide import recommend as rec_mod
from hpcds1mpi.decide import recommend_batch as rb
from hpcds1mpi.decide import system1 as s1
from hpcds1mpi.decide.failure_history import FailureHistory
from hpcds1mpi.decide.recommendation import format_table, to_dict
from tests.fake_bundle import WIDE_SIZES, FakeBundle, fake_places, isolate_user_files


@pytest.fixture(autouse=True)
def isolated_cache(tmp_path, monkeypatch):
    isolate_user_files(monkeypatch, tmp_path)


@pytest.fixture(scope="module")
def shipped():
    from hpcds1mpi.decide.model_bundle import DEFAULT_MODEL, load_model

    return load_model(None), DEFAULT_MODEL


def _lab_places():
    """The shipped bundle's hardware (familiar) and a machine it never saw (unfamiliar)."""
    std = Partition(name="standard", cores_per_node=2, memory_gb=25.3, max_nodes=4)
    big = Partition(name="big", cores_per_node=64, memory_gb=512.0, max_nodes=8)
    lab = Cluster("lab", {"standard": std, "big": big})
    return [(lab, std)], [(lab, std), (lab, big)], [(lab, big)]


def _varied(bundle, place_sets) -> list:
    """Workloads x sizes (inside, at the edge of and far beyond the measured range) x
    objectives x constraints x partition sets, an unknown workload, and questions
    ``recommend`` refuses, spread through the list."""
    workloads = sorted(str(w) for w in bundle.workloads)
    cons = [None, s1.Constraints(max_nodes=1), s1.Constraints(deadline_s=1e-9),
            s1.Constraints(energy_budget_j=1e-12), s1.Constraints(max_nodes=2, deadline_s=1e3)]
    asks = []
    for k, w in enumerate(workloads * 4):
        lo, hi = (bundle.size_range or {}).get(w, (64, 4096))
        size = [int(lo + (k * 7919) % max(1, int(hi - lo) + 1)), int(hi * 1.5),
                int(hi * 5) + 1, max(1, int(lo))][k % 4]
        asks.append(rb.Ask(w, size, place_sets[k % len(place_sets)],
                           s1.OBJECTIVES[k % len(s1.OBJECTIVES)], cons[k % len(cons)]))
    asks.insert(3, rb.Ask(workloads[0], 0, place_sets[0]))  # bad size
    asks.insert(5, rb.Ask("never-measured", 512, place_sets[0], "energy"))  # name escalates
    asks.insert(7, rb.Ask(workloads[0], 512, place_sets[0], "fastest"))  # bad objective
    asks.insert(9, rb.Ask(workloads[0], 512, place_sets[0], device="gpu"))  # no GPU there
    asks.insert(11, rb.Ask(workloads[0], 512, []))  # nothing to choose from
    asks.append(asks[0])  # the same question twice in one batch
    return asks


def _one(bundle, a: rb.Ask, model_dir, history):
    try:
        return rec_mod.recommend(bundle, a.workload, a.size, a.places, objective=a.objective,
                                 constraints=a.constraints, history=history,
                                 model_dir=model_dir, device=a.device)
    except Exception as exc:  # noqa: BLE001
        return exc


def _check_equal(bundle, asks, model_dir=None, history=None, memo=None):
    history = history or FailureHistory(None, [])
    got = rb.recommend_many(bundle, asks, history=history, model_dir=model_dir, memo=memo)
    assert len(got) == len(asks)
    kinds = set()
    for a, g in zip(asks, got):
        want = _one(bundle, a, model_dir, history)
        if isinstance(want, Exception):
            assert type(g) is type(want) and str(g) == str(want), (a, g)
            kinds.add("error")
            continue
        assert not isinstance(g, Exception), (a, g)
        assert json.dumps(to_dict(g), sort_keys=True) == json.dumps(to_dict(want), sort_keys=True)
        assert format_table(g) == format_table(want)
        assert [s.config for s in g.calibration_steps] == [s.config for s in want.calibration_steps]
        kinds.add(g.verdict.verdict)
    return got, kinds


def test_every_answer_equals_recommend_on_the_shipped_bundle(shipped):
    bundle, model_dir = shipped
    got, kinds = _check_equal(bundle, _varied(bundle, _lab_places()), model_dir)
    # The set covers each outcome: picks, confirmations, escalations and refusals.
    assert {"auto", "escalate", "error"} <= kinds, kinds
    assert sum(r.picked is not None for r in got if not isinstance(r, Exception)) >= 5


def test_every_answer_equals_recommend_on_a_stand_in_bundle():
    bundle = FakeBundle(sizes=WIDE_SIZES)
    sets = [fake_places("cpu"), fake_places("cpu", "gpu-small", "gpu-big"),
            fake_places("gpu-small", "gpu-big")]
    _, kinds = _check_equal(bundle, _varied(bundle, sets))
    assert "error" in kinds and len(kinds) >= 2, kinds


def test_a_batch_predicts_once_and_embeds_once(monkeypatch):
    bundle = FakeBundle(sizes=WIDE_SIZES)
    calls = {"predict": 0, "embed": 0}
    for name in calls:
        real = getattr(FakeBundle, name)

        def counted(self, df, _real=real, _name=name):
            calls[_name] += 1
            return _real(self, df)

        monkeypatch.setattr(FakeBundle, name, counted)
    asks = [rb.Ask(w, s, fake_places("cpu"), o) for w in ("stencil", "gemm")
            for s in (300, 700) for o in ("time", "energy")]
    rb.recommend_many(bundle, asks, history=FailureHistory(None, []))
    rb.recommend_many(bundle, asks[:1], history=FailureHistory(None, []))  # warm what is kept
    calls.update(predict=0, embed=0)
    got = rb.recommend_many(bundle, asks, history=FailureHistory(None, []))
    assert all(r.picked is not None for r in got)
    assert calls == {"predict": 1, "embed": 1}


def test_an_error_in_one_question_does_not_fail_the_others(shipped):
    bundle, model_dir = shipped
    asks = _varied(bundle, _lab_places())[:8]
    got, _ = _check_equal(bundle, asks, model_dir)
    errors = [i for i, g in enumerate(got) if isinstance(g, Exception)]
    assert errors == [3, 7] and all(not isinstance(g, Exception) for g in got[:3])


def _objectives_of(asks) -> list:
    """Each question once per objective, the objectives of one job side by side."""
    return [rb.Ask(a.workload, a.size, a.places, o, a.constraints, a.device)
            for a in asks for o in s1.OBJECTIVES]


def test_kept_scores_and_distances_give_each_question_its_own_answer(shipped):
    """A memo shared by batches (a service's): each job's scores and distance computed once
    for its four objectives, and used again by later batches, never change an answer."""
    from hpcds1mpi.decide.batch_memo import RecommendMemo

    bundle, model_dir = shipped
    memo = RecommendMemo()
    asks = _objectives_of(_varied(bundle, _lab_places())[:12])
    std = _lab_places()[0]
    asks += [rb.Ask("stencil", 160, std, "time", c) for c in  # one job, other constraints
             (None, s1.Constraints(max_nodes=1), s1.Constraints(deadline_s=1e-9))]
    _check_equal(bundle, asks, model_dir, memo=memo)
    assert len(memo.scores) > 0 and len(memo.distances) > 0
    got, kinds = _check_equal(bundle, asks[::-1], model_dir, memo=memo)  # from the memo
    assert {"auto", "escalate", "error"} <= kinds, kinds


def test_kept_scores_are_read_only_and_forgotten_for_another_bundle():
    from hpcds1mpi.decide.batch_memo import RecommendMemo

    bundle, memo = FakeBundle(sizes=WIDE_SIZES), RecommendMemo()
    asks = [rb.Ask("stencil", 300, fake_places("cpu"), o) for o in ("time", "energy")]
    got = rb.recommend_many(bundle, asks, history=FailureHistory(None, []), memo=memo)
    assert len(memo.scores) == 1
    shared = got[0].picked.choice.scores
    assert shared is got[1].picked.choice.scores  # one subset for both objectives
    with pytest.raises(ValueError):
        shared.cols["runtime_s"][0] = 0.0
    again = rb.recommend_many(FakeBundle(sizes=WIDE_SIZES), asks[:1],
                              history=FailureHistory(None, []), memo=memo)
    assert again[0].picked.choice.scores is not shared  # the other bundle's own
    assert len(memo.scores) == 1 and len(memo.distances) == 1


def test_no_question_is_no_answer():
    assert rb.recommend_many(FakeBundle(), []) == []


def test_every_answer_equals_recommend_for_site_names_of_trained_partitions():
    from dataclasses import replace

    from tests.decide.test_system1 import NameSensitiveBundle
    from tests.fake_bundle import fake_partitions

    parts = fake_partitions()
    sites = {"standard": replace(parts["cpu"], name="standard"),
             "bigcard": replace(parts["gpu-big"], name="bigcard"),
             "bigcard2": replace(parts["gpu-big"], name="bigcard2", memory_gb=56.0),
             "gpu-small": parts["gpu-small"]}
    lab = Cluster("lab", sites)
    sets = [[(lab, sites["standard"])], [(lab, p) for p in sites.values()],
            [(lab, sites["bigcard"]), (lab, sites["gpu-small"])]]
    for columns in (False, True):
        bundle = NameSensitiveBundle(columns, sizes=WIDE_SIZES)
        got, _ = _check_equal(bundle, _varied(bundle, sets))
        assert any(r.notes for r in got if not isinstance(r, Exception))


def test_the_left_out_line_of_faster_oversubscribed_layouts_is_in_every_batch_answer(
        shipped, monkeypatch):
    """s39 tester B8 (FB2's note): the line naming measured layouts with more ranks x threads
    than cores that ran faster than the pick is added where an answer is concluded, which the
    batch (the API's, the service's) shares with recommend: each answer carries it alike."""
    from hpcds1mpi.decide import oversubscribed

    said = []

    def line(bundle, workload, size, partition, pick_runtime_s, threads_offered=None):
        said.append(workload)
        return f"measured faster than the pick at size {size:g}: {workload} (stand-in)"

    monkeypatch.setattr(oversubscribed, "oversubscribed_line", line)
    bundle, model_dir = shipped
    got, _ = _check_equal(bundle, _varied(bundle, _lab_places()), model_dir)
    picked = [r for r in got if not isinstance(r, Exception) and r.picked is not None]
    assert picked and said
    for rec in picked:
        assert rec.left_out[-1] == (f"measured faster than the pick at size {rec.size:g}: "
                                    f"{rec.workload} (stand-in)")
