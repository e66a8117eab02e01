"""system1_batch: many questions, one predict, each answer equal to its one-question answer."""

from __future__ import annotations

import numpy as np
import pytest

from hpcds1mpi.decide import system1 as s1
from hpcds1mpi.decide import system1_batch as sb
from hpcds1mpi.errors import ConfigError
from tests.fake_bundle import FakeBundle, fake_partitions


@pytest.fixture(scope="module")
def shipped():
    from hpcds1mpi.decide.model_bundle import load_model

    return load_model(None)


def _varied(bundle, parts):
    """Different workloads, sizes, partitions, constraints (some leave nothing feasible)."""
    workloads = sorted(str(w) for w in bundle.workloads)
    out = []
    for k, w in enumerate(workloads * 3):
        lo, hi = (bundle.size_range or {}).get(w, (64, 4096))
        size = int(max(1, lo + (k * 7919) % max(1, int(hi - lo) + 1)))
        cons = [None, s1.Constraints(max_nodes=1), s1.Constraints(deadline_s=1e-3),
                s1.Constraints(energy_budget_j=1.0, devices=["cpu"]),
                s1.Constraints(threads=[1], max_ranks_per_node=2)][k % 5]
        out.append(sb.Question(w, size, parts[: 1 + k % len(parts)], cons,
                               uses_threads=k % 4 != 3))
    return out


def _same(a: s1.Scores, b: s1.Scores):
    assert a.cols.keys() == b.cols.keys() and a.workload == b.workload and a.size == b.size
    for k in a.cols:
        x, y = np.asarray(a.cols[k]), np.asarray(b.cols[k])
        assert x.dtype == y.dtype and x.shape == y.shape, k
        assert np.array_equal(x, y, equal_nan=x.dtype.kind == "f"), k


def _check_equal(bundle, questions):
    batch = sb.score_many(bundle, questions)
    assert len(batch) == len(questions)
    for q, got in zip(questions, batch):
        try:
            want = s1.score(bundle, q.workload, q.size, q.partitions, q.constraints, q.limits,
                            q.uses_threads)
        except ConfigError as exc:
            assert isinstance(got, ConfigError) and str(got) == str(exc)
            continue
        assert isinstance(got, s1.Scores), got
        _same(got, want)
        for objective in s1.OBJECTIVES:  # the picks follow
            c1, c2 = s1.choose(got, objective), s1.choose(want, objective)
            assert c1.index == c2.index and c1.confidence == c2.confidence
            assert np.array_equal(c1.ranking, c2.ranking)
    return batch


def test_batch_answers_equal_one_by_one_on_the_shipped_bundle(shipped):
    batch = _check_equal(shipped, _varied(shipped, list(fake_partitions().values())))
    assert sum(isinstance(b, s1.Scores) for b in batch) >= 10


@pytest.fixture(scope="module")
def embedded():
    """A bundle with a TabNet embedding, trained from a small sweep of two kernels (as
    ``train`` makes of a user's sweep)."""
    from hpcds1mpi.surrogates.bundle import train_bundle
    from tests.surrogates.test_bundle import make_runs

    return train_bundle(make_runs(), seed=1, n_members=2, threads=1)  # ~2 s


def test_batch_answers_equal_one_by_one_on_a_bundle_with_an_embedding(embedded):
    """s39 tester G3: the embedding of a row rounds by the rows embedded with it, so a question
    scored in a batch got other intervals than asked alone (0.0601 against 0.0571)."""
    assert embedded.model.embedding_ is not None
    parts = list(fake_partitions().values())
    questions = [sb.Question(w, z, parts[:k]) for w in ("stencil", "gemm")
                 for z, k in ((32, 1), (64, 2), (96, 3), (80, len(parts)))]
    batch = _check_equal(embedded, questions + _varied(embedded, parts))
    assert sum(isinstance(b, s1.Scores) for b in batch) >= 8


def test_batch_answers_equal_one_by_one_on_a_stand_in_bundle():
    bundle = FakeBundle()
    _check_equal(bundle, _varied(bundle, list(fake_partitions().values())))


def test_an_error_in_one_question_stays_in_its_place(shipped):
    parts = list(fake_partitions().values())
    qs = _varied(shipped, parts)[:4]
    qs.insert(1, sb.Question(qs[0].workload, 0, parts))  # bad size
    qs.insert(3, sb.Question(qs[0].workload, 64, []))  # no partition
    cpu_only = [p for p in parts if p.gpus_per_node < 1]
    qs.append(sb.Question(qs[0].workload, 64, cpu_only, s1.Constraints(devices=["gpu"])))
    batch = _check_equal(shipped, qs)
    assert [isinstance(b, ConfigError) for b in batch] == \
        [False, True, False, True, False, False, bool(cpu_only)]


def test_a_failing_stacked_predict_falls_back_to_each_question_alone(shipped):
    class Picky:
        """Refuses tables of more than one problem size (as a broken model might)."""

        def __getattr__(self, name):
            return getattr(shipped, name)

        def predict(self, frame):
            if len(set(np.asarray(frame["size"]).tolist())) > 1:
                raise ValueError("one size per call")
            return shipped.predict(frame)

    qs = _varied(shipped, list(fake_partitions().values()))[:5]
    for q, got in zip(qs, sb.score_many(Picky(), qs)):
        _same(got, s1.score(shipped, q.workload, q.size, q.partitions, q.constraints,
                            uses_threads=q.uses_threads))


@pytest.mark.parametrize("columns", [False, True], ids=["frame", "columns"])
def test_batch_answers_equal_one_by_one_for_site_names_of_trained_partitions(columns):
    """Site names for trained hardware (two for one of them) beside trained and unknown
    ones: each answer is the one-question answer, predicted under the trained names."""
    from dataclasses import replace

    from hpcds1mpi.cluster import Partition
    from tests.decide.test_system1 import NameSensitiveBundle

    parts = fake_partitions()
    sites = [replace(parts["gpu-big"], name="bigcard"), parts["cpu"],
             replace(parts["gpu-big"], name="bigcard2", memory_gb=56.0),
             Partition(name="odd", cores_per_node=12, memory_gb=48.0, max_nodes=2)]
    bundle = NameSensitiveBundle(columns)
    batch = _check_equal(bundle, _varied(bundle, sites))
    trained = s1.score(bundle, "gemm", 1024, [parts["gpu-big"]])
    (got,) = sb.score_many(bundle, [sb.Question("gemm", 1024, sites[2:3])])
    assert np.array_equal(got.cols["runtime_s"], trained.cols["runtime_s"])
    assert sum(isinstance(b, s1.Scores) for b in batch) >= 5
