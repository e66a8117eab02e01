"""The micro-batch: a lone question is answered at once, what queues meanwhile is answered in
one call, each question gets its own answer (or its own error), a failed call fails only its
batch, and ``slots`` calls run at once."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from hpcds1mpi.serve.batching import MicroBatch


class Answerer:
    """``answer_many`` double: answers ``kind:req``, an exception for ``req == "bad"``; the
    first call can be held until released, to let questions queue behind it."""

    def __init__(self, hold_first: bool = False):
        self.calls: list[list] = []
        self.entered = threading.Event()
        self.release = threading.Event()
        if not hold_first:
            self.release.set()

    def __call__(self, items: list) -> list:
        self.calls.append(list(items))
        self.entered.set()
        self.release.wait(30)
        return [ValueError(f"bad {kind}") if req == "bad" else f"{kind}:{req}".encode()
                for kind, req in items]


@pytest.fixture
def pool():
    with ThreadPoolExecutor(4) as executor:
        yield executor


def test_a_lone_question_is_answered_at_once(pool):
    answer = Answerer()
    batch = MicroBatch(answer, pool.submit)
    assert batch.submit("recommend", "q1").result(timeout=5) == b"recommend:q1"
    assert batch.submit("predict", "q2").result(timeout=5) == b"predict:q2"
    assert answer.calls == [[("recommend", "q1")], [("predict", "q2")]]


def test_questions_queued_meanwhile_are_answered_together_each_its_own(pool):
    answer = Answerer(hold_first=True)
    batch = MicroBatch(answer, pool.submit, limit=64)
    first = batch.submit("recommend", "first")
    assert answer.entered.wait(5)
    later = {f"q{i}": batch.submit("recommend", f"q{i}") for i in range(30)}
    answer.release.set()
    assert first.result(timeout=5) == b"recommend:first"
    for req, fut in later.items():
        assert fut.result(timeout=5) == f"recommend:{req}".encode()
    assert [len(c) for c in answer.calls] == [1, 30] and list(batch.sizes) == [1, 30]


def test_an_error_is_its_own_question_and_a_failed_call_only_its_batch(pool):
    answer = Answerer(hold_first=True)
    batch = MicroBatch(answer, pool.submit)
    batch.submit("recommend", "first")
    assert answer.entered.wait(5)
    futs = [batch.submit("recommend", r) for r in ("a", "bad", "c")]
    answer.release.set()
    assert futs[0].result(timeout=5) == b"recommend:a"
    with pytest.raises(ValueError, match="bad recommend"):
        futs[1].result(timeout=5)
    assert futs[2].result(timeout=5) == b"recommend:c"

    def broken(items):
        raise RuntimeError("the worker died")

    batch.answer_many = broken
    with pytest.raises(RuntimeError, match="the worker died"):
        batch.submit("recommend", "x").result(timeout=5)
    batch.answer_many = Answerer()
    assert batch.submit("recommend", "y").result(timeout=5) == b"recommend:y"


def test_a_batch_holds_at_most_limit_questions(pool):
    answer = Answerer(hold_first=True)
    batch = MicroBatch(answer, pool.submit, limit=8)
    batch.submit("recommend", "first")
    assert answer.entered.wait(5)
    futs = [batch.submit("recommend", f"q{i}") for i in range(20)]
    answer.release.set()
    assert [f.result(timeout=5) for f in futs] == [f"recommend:q{i}".encode() for i in range(20)]
    assert list(batch.sizes) == [1, 8, 8, 4]


def test_slots_compute_batches_at_once(pool):
    inside, both, entered = [], threading.Barrier(2, timeout=10), threading.Event()

    def answer_many(items):
        inside.append(len(items))
        entered.set()
        both.wait()  # passes only when two calls are in at the same time
        return [b"ok"] * len(items)

    batch = MicroBatch(answer_many, pool.submit, slots=2)
    futs = [batch.submit("recommend", "a")]
    assert entered.wait(5)  # the first call is in: the second question starts another
    futs.append(batch.submit("recommend", "b"))
    assert [f.result(timeout=15) for f in futs] == [b"ok", b"ok"]
    assert inside == [1, 1]


def test_a_stopped_executor_fails_the_question_instead_of_losing_it():
    executor = ThreadPoolExecutor(1)
    executor.shutdown()
    batch = MicroBatch(Answerer(), executor.submit)
    with pytest.raises(RuntimeError):
        batch.submit("recommend", "q").result(timeout=5)
    with pytest.raises(ValueError):
        MicroBatch(Answerer(), executor.submit, limit=0)


def test_with_two_slots_a_queue_is_shared_not_taken_by_one():
    started = []
    batch = MicroBatch(Answerer(), started.append, slots=2)
    futs = [batch.submit("recommend", f"q{i}") for i in range(10)]
    assert len(started) == 2  # two drains asked for, none running yet
    started.pop()()  # one drain runs to the end: its share, then the rest as they come
    assert list(batch.sizes)[0] == 5
    assert [f.result(timeout=5) for f in futs] == [f"recommend:q{i}".encode() for i in range(10)]


def test_a_dying_computing_thread_fails_its_batch_and_the_queue_still_drains(pool):
    class Dies(BaseException):
        pass

    calls = []

    def answer_many(items):
        calls.append(items)
        if len(calls) == 1:
            raise Dies()  # not an answer's error: the thread itself is going
        return [b"ok"] * len(items)

    batch = MicroBatch(answer_many, pool.submit)
    first = batch.submit("recommend", "q1")
    with pytest.raises(RuntimeError, match="ask again"):
        first.result(timeout=5)
    assert batch.submit("recommend", "q2").result(timeout=5) == b"ok"  # not wedged


def test_a_cancelled_question_does_not_stop_the_others(pool):
    answer = Answerer(hold_first=True)
    batch = MicroBatch(answer, pool.submit)
    first = batch.submit("recommend", "first")
    assert answer.entered.wait(5)
    gone, kept = batch.submit("recommend", "gone"), batch.submit("recommend", "kept")
    assert gone.cancel()  # a client that went away
    answer.release.set()
    assert first.result(timeout=5) == b"recommend:first"
    assert kept.result(timeout=5) == b"recommend:kept"


def test_a_slow_question_of_another_kind_does_not_hold_back_the_batch(pool):
    """``together``: the recommend questions of a batch are one call and settled when it
    returns; an advise queued with them gets its own call (a slow one waits alone)."""
    first_in, first_go, slow_go = threading.Event(), threading.Event(), threading.Event()
    calls = []

    def answer_many(items):
        calls.append([k for k, _ in items])
        if items[0][1] == "first":
            first_in.set()
            first_go.wait(10)
        if items[0][0] == "advise":
            slow_go.wait(10)
        return [f"{k}:{r}".encode() for k, r in items]

    batch = MicroBatch(answer_many, pool.submit, together=("recommend",))
    first = batch.submit("recommend", "first")
    assert first_in.wait(5)
    slow = batch.submit("advise", "script")
    quick = [batch.submit("recommend", f"q{i}") for i in range(3)]
    first_go.set()
    assert [f.result(timeout=5) for f in quick] == [b"recommend:q0", b"recommend:q1",
                                                     b"recommend:q2"]
    assert not slow.done()
    slow_go.set()
    assert slow.result(timeout=5) == b"advise:script"
    assert first.result(timeout=5) == b"recommend:first"
    assert calls == [["recommend"], ["recommend"] * 3, ["advise"]]
