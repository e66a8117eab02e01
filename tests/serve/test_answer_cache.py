"""The service's answer cache: bounded in answers and bytes, and a body's bytes answered from
it only once they were checked and their answer is kept."""

from __future__ import annotations

import json

from hpcds1mpi.serve import answer_cache
from hpcds1mpi.serve.schemas import RecommendRequest
from hpcds1mpi.serve.service import Service


def test_remembered_bodies_are_bounded_and_need_a_cached_answer(tmp_path):
    small = Service(None, None, tmp_path, cache_size=2)
    bodies = [json.dumps({"workload": "stencil", "size": s}).encode() for s in (100, 110, 120)]
    for body in bodies:
        req = RecommendRequest(**json.loads(body))
        assert small.cached_body("recommend", body) is None  # never seen
        small.remember_body("recommend", body, req)
        assert small.cached_body("recommend", body) is None  # seen, not yet answered
        assert small.cached_body("recommend", body + b" ") is None  # other bytes
        fresh = small.answer("recommend", req)
        assert small.cached_body("recommend", body) == fresh
        assert small.cached_body("predict", body) is None
    assert len(small._aliases) == 2 and small.cached_body("recommend", bodies[0]) is None
    big = bodies[2] + b" " * answer_cache.ALIAS_BYTES  # the same question, too long to keep
    small.remember_body("recommend", big, RecommendRequest(**json.loads(big)))
    assert len(big) > answer_cache.ALIAS_BYTES and ("recommend", big) not in small._aliases
    assert small.cached_body("recommend", big) is None  # though its question's answer is kept


def test_cache_is_bounded(tmp_path):
    small = Service(None, None, tmp_path, cache_size=2)
    for size in (100, 110, 120):
        small.recommend(RecommendRequest(workload="stencil", size=size))
    assert len(small._cache) == 2
    assert small._cache_bytes == sum(len(b) for b in small._cache.values())


def test_cache_is_bounded_in_bytes(tmp_path, monkeypatch):
    small = Service(None, None, tmp_path)
    one = len(small.answer("recommend", RecommendRequest(workload="stencil", size=100)))
    monkeypatch.setattr(answer_cache, "CACHE_BYTES", int(2.5 * one))
    for size in (110, 120, 130, 140):
        small.recommend(RecommendRequest(workload="stencil", size=size))
    assert small._cache_bytes <= 2.5 * one and 1 <= len(small._cache) <= 3
    assert small._cache_bytes == sum(len(b) for b in small._cache.values())
