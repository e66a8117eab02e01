"""guard_batch: many jobs' distances from one design call, each equal (bit for bit) to the
one-job distance, each verdict equal to ``judge``'s, an error kept to its own job."""

from __future__ import annotations

import pytest

from hpcds1mpi.cluster import Partition
from hpcds1mpi.decide import guard
from hpcds1mpi.decide import guard_batch as gb
from tests.fake_bundle import FakeBundle, fake_partitions, isolate_user_files


@pytest.fixture(autouse=True)
def isolated_cache(tmp_path, monkeypatch):
    isolate_user_files(monkeypatch, tmp_path)


@pytest.fixture(scope="module")
def shipped():
    from hpcds1mpi.decide.model_bundle import load_model

    return load_model(None)


def _jobs(bundle, parts):
    """Workloads x sizes (inside and far beyond the range) x partitions, an unknown
    workload, a machine the bundle never saw, and a repeated job."""
    unseen = Partition(name="big", cores_per_node=64, memory_gb=512.0, max_nodes=8)
    out = []
    for k, w in enumerate(sorted(str(w) for w in bundle.workloads) * 3):
        lo, hi = (bundle.size_range or {}).get(w, (64, 4096))
        size = [int(lo + (k * 7919) % max(1, int(hi - lo) + 1)), int(hi * 4)][k % 2]
        out.append((w, size, (parts + [unseen])[k % (len(parts) + 1)], [None, 0.5, 0.9][k % 3]))
    out += [("never-measured", 512, parts[0], None), out[0]]
    return out


def _check(bundle, jobs):
    cal = guard.load_calibration(bundle, None)
    ref = guard.reference(bundle)
    got = gb.judge_many(bundle, jobs, cal, ref)
    assert len(got) == len(jobs)
    for (w, size, part, conf), v in zip(jobs, got):
        want = guard.judge(bundle, w, size, part, cal, ref, conf)
        assert isinstance(v, guard.Verdict), v
        assert v.as_dict() == want.as_dict()  # the distance too, to the last bit
    return got


def test_verdicts_equal_judge_on_the_shipped_bundle(shipped):
    parts = [Partition(name="standard", cores_per_node=2, memory_gb=25.3, max_nodes=4)]
    got = _check(shipped, _jobs(shipped, parts))
    assert {v.verdict for v in got} >= {"auto", "escalate"}


def test_verdicts_equal_judge_on_a_bundle_with_an_embedding():
    """Each job's rows embedded as alone (s39 tester G3: an embedding rounds by the rows
    embedded with it, and the distance is taken on it)."""
    from hpcds1mpi.surrogates.bundle import train_bundle
    from tests.surrogates.test_bundle import make_runs

    bundle = train_bundle(make_runs(), seed=1, n_members=2, threads=1)
    assert bundle.model.embedding_ is not None
    parts = [Partition(name="cpu", cores_per_node=8, memory_gb=16.0, max_nodes=2)]
    _check(bundle, _jobs(bundle, parts))


def test_verdicts_equal_judge_on_a_stand_in_bundle():
    bundle = FakeBundle()
    _check(bundle, _jobs(bundle, list(fake_partitions().values())))


def test_distances_equal_job_distance_and_repeats_are_computed_once(shipped, monkeypatch):
    ref = guard.reference(shipped)
    jobs = [("gemm", 100, "standard"), ("fft", 64, None), ("gemm", 100, "standard")]
    calls = []
    real = type(shipped).design
    monkeypatch.setattr(type(shipped), "design",
                        lambda self, df, groups=None: calls.append(len(df))
                        or real(self, df, groups))
    got = gb.job_distances(shipped, ref, jobs, guard.K_NEIGHBOURS)
    assert len(calls) == 1 and calls[0] == 3 * len(guard.query_frame(shipped, ref, "gemm",
                                                                     100, "standard"))
    monkeypatch.undo()
    assert got == [guard.job_distance(shipped, ref, *j) for j in jobs]
    dedup = gb.judge_many(shipped, [(*j[:2], Partition(name="standard", cores_per_node=2,
                                                       memory_gb=25.3), None) for j in jobs],
                          guard.load_calibration(shipped, None, ref), ref)
    assert dedup[0].as_dict() == dedup[2].as_dict() and dedup[0] is not dedup[2]


def test_an_error_stays_with_its_job_and_a_failing_stack_falls_back(shipped, monkeypatch):
    ref = guard.reference(shipped)
    good = [("gemm", 100, "standard"), ("fft", 64, None)]
    bad = ("gemm", 777, "standard")
    real_rows = gb.query_frame

    def rows(bundle, ref, workload, size, partition):
        if size == 777:
            raise ValueError("this job's rows cannot be built")
        return real_rows(bundle, ref, workload, size, partition)

    monkeypatch.setattr(gb, "query_frame", rows)
    got = gb.job_distances(shipped, ref, [good[0], bad, good[1]], guard.K_NEIGHBOURS)
    monkeypatch.undo()
    assert isinstance(got[1], ValueError)
    assert [got[0], got[2]] == [guard.job_distance(shipped, ref, *j) for j in good]
    calls = []
    real = type(shipped).design

    def stacked_fails(self, df, groups=None):
        calls.append(len(df))
        if len(calls) == 1:
            raise RuntimeError("stacked design failed")
        return real(self, df, groups)

    monkeypatch.setattr(type(shipped), "design", stacked_fails)
    again = gb.job_distances(shipped, ref, good, guard.K_NEIGHBOURS)
    monkeypatch.undo()
    assert len(calls) == 3 and again == [guard.job_distance(shipped, ref, *j) for j in good]


def test_a_measured_problem_is_at_distance_0_as_alone():
    """s31 tester Q2: a problem measured on the partition is at distance 0 in one pass too."""
    b = FakeBundle(workloads=("gemm",), sizes=(512,))
    ref = guard.reference(b)
    jobs = [("gemm", 512, "cpu"), ("gemm", 700, "cpu"), ("gemm", 512, None)]
    got = gb.job_distances(b, ref, jobs, 3)
    assert got == [guard.job_distance(b, ref, *job) for job in jobs]
    assert got[0] == 0 and got[1] > 0 and got[2] > 0
