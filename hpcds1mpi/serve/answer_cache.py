"""The service's bounded answer cache: encoded answers by checked request, and body bytes.

Answers are deterministic for a given bundle and request, so a :class:`AnswerCache` keeps each
checked, encoded answer keyed by the validated request (:meth:`AnswerCache.key`), a bounded LRU
of :attr:`AnswerCache.cache_size` entries and :data:`CACHE_BYTES` bytes. It is looked up on the
event loop before a request joins the computing queue (:meth:`AnswerCache.cached`, no
computation), so a repeated question never waits behind new ones. The bytes of a body that
passed validation are remembered too, up to :data:`ALIAS_BYTES`
(:meth:`AnswerCache.remember_body`), so the same bytes again skip parsing
(:meth:`AnswerCache.cached_body`). The :class:`~hpcds1mpi.serve.service.Service` is one.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

#: Answers kept for repeated questions.
DEFAULT_CACHE = 1024
#: Most bytes of answers kept (a predict answer for 256 configurations is ~100 KB).
CACHE_BYTES = 64 * 2**20
#: Request bodies up to this size are also remembered verbatim, once checked, so that the same
#: bytes sent again skip JSON parsing and validation (a recommend body is ~100 bytes; a script
#: sent to /v1/advise is usually larger and goes the checked way).
ALIAS_BYTES = 4096


class AnswerCache:
    """A bounded LRU of encoded answers keyed by checked request, and the checked bodies' bytes.

    Args:
        cache_size: answers remembered (0: none), and checked bodies remembered.
    """

    def __init__(self, cache_size: int = DEFAULT_CACHE):
        self.cache_size = cache_size
        self._cache: OrderedDict[tuple, bytes] = OrderedDict()
        self._cache_bytes = 0
        # (kind, body bytes) -> key, for bodies that passed validation (at most cache_size of
        # them, each at most ALIAS_BYTES): only a checked body is ever answered from here.
        self._aliases: OrderedDict[tuple, tuple] = OrderedDict()
        self._lock = threading.Lock()

    @staticmethod
    def key(kind: str, req) -> tuple:
        """What identifies a question: its kind and every field of the checked request."""
        return (kind, req.model_dump_json())

    def cached(self, kind: str, req) -> bytes | None:
        """The encoded answer to ``req`` if it was computed before (cheap: no computation, so
        the event loop may call it and a repeated question never waits behind new ones)."""
        if self.cache_size <= 0:
            return None
        key = self.key(kind, req)
        with self._lock:
            hit = self._cache.get(key)
            if hit is not None:
                self._cache.move_to_end(key)
            return hit

    def cached_body(self, kind: str, body: bytes) -> bytes | None:
        """The encoded answer for exactly these request bytes, if they were checked before
        (:meth:`remember_body`) and their answer is still cached; else None (then the body is
        parsed and checked as usual)."""
        if self.cache_size <= 0 or len(body) > ALIAS_BYTES:
            return None
        with self._lock:
            key = self._aliases.get((kind, body))
            if key is None:
                return None
            hit = self._cache.get(key)
            if hit is not None:
                self._cache.move_to_end(key)
                self._aliases.move_to_end((kind, body))
            return hit

    def remember_body(self, kind: str, body: bytes, req) -> None:
        """Note that ``body`` is the checked request ``req`` (call only after validation)."""
        if self.cache_size <= 0 or len(body) > ALIAS_BYTES:
            return
        with self._lock:
            self._aliases[(kind, body)] = self.key(kind, req)
            self._aliases.move_to_end((kind, body))
            while len(self._aliases) > self.cache_size:
                self._aliases.popitem(last=False)

    def store(self, kind: str, req, body: bytes) -> None:
        """Keep ``body``, the checked and encoded answer to ``req`` (bounded LRU)."""
        if self.cache_size > 0 and len(body) <= CACHE_BYTES:
            with self._lock:
                key = self.key(kind, req)
                old = self._cache.pop(key, None)
                self._cache_bytes += len(body) - (len(old) if old is not None else 0)
                self._cache[key] = body
                while len(self._cache) > self.cache_size or self._cache_bytes > CACHE_BYTES:
                    self._cache_bytes -= len(self._cache.popitem(last=False)[1])
