"""Computing new answers in worker processes (``serve --workers N``; N = 1 by default).

A distinct question is pure Python and numpy under the GIL (measured: two threads answer no
more questions a second than one), so one process computes one question at a time whatever
the cores, and a computing thread in the server process would share the GIL with the event
loop (HTTP, body checks, the cache). So by default the server starts one worker process, and
the event loop and the computing run on two cores at once (``--workers 0`` keeps the
computing in a thread of the server process instead:
:attr:`hpcds1mpi.serve.service.Service.executor`). With ``--workers N`` the server starts N
processes, each with its own copy of the
service (the same bundle and places, loaded once per process), and sends each micro-batch of
new questions (:mod:`hpcds1mpi.serve.batching`: a sending thread per worker, each taking its
share of the queue) to one of them. The server process keeps everything else: the token check, the limits, the answer
cache and the event loop, so a repeated question never reaches a worker.

The workers are *spawned* (a fresh interpreter), not forked: the parent has loaded numpy,
BLAS and numba, whose thread pools do not survive a fork. Each worker ignores SIGINT (a Ctrl-C
reaches the whole process group; the parent stops them itself, after its graceful shutdown).
A worker that dies (killed, out of memory) breaks the pool: the request it held gets a 500,
the pool is started again, and the next request is computed as usual.
"""

from __future__ import annotations

import logging
from pathlib import Path

log = logging.getLogger("hpcds1mpi.serve")

_service = None  # the worker's own Service (in a worker process only)


def _start(model_dir: str | None, cluster_file: str | None, state: str) -> None:
    """Worker initialiser: load the service once, without a cache (the parent keeps it)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    from hpcds1mpi.serve.server import settle_heap
    from hpcds1mpi.serve.service import Service

    global _service
    _service = Service(model_dir, cluster_file, Path(state), cache_size=0)
    _service.warm_up()
    settle_heap()


def _answer(kind: str, req) -> bytes:
    """The checked, encoded answer to ``req``, computed in this worker."""
    return _service.answer(kind, req)


def _answer_many(items: list) -> list:
    """:meth:`Service.answer_many` in this worker; an exception that cannot travel back
    (pickled) becomes one that can, with its type and text, so the batch's other answers
    still arrive."""
    import pickle

    out = []
    for got in _service.answer_many(items):
        if isinstance(got, BaseException):
            try:
                pickle.loads(pickle.dumps(got))  # it must also be rebuilt in the server
            except Exception:  # noqa: BLE001
                log.error("internal error in a worker: %r", got)
                got = RuntimeError(f"{type(got).__name__}: {got}")
        out.append(got)
    return out


def _ready(_: int) -> bool:
    return _service is not None


class Workers:
    """N worker processes computing answers; ``submit`` as the event loop needs it.

    Args:
        count: processes (1 or more).
        model_dir, cluster_file, state: what each worker's service loads (as the parent's).
    """

    def __init__(self, count: int, model_dir: str | None, cluster_file: str | None,
                 state: Path):
        import threading
        from concurrent.futures import ThreadPoolExecutor

        self.count = count
        self._args = (model_dir, cluster_file, str(state))
        self._lock = threading.Lock()
        self.executor = self._new(wait=True)
        #: One thread per worker process, each sending a micro-batch and waiting for it
        #: (:class:`~hpcds1mpi.serve.batching.MicroBatch` with ``count`` slots).
        self.threads = ThreadPoolExecutor(count, thread_name_prefix="hpcds1mpi-serve-send")

    def _new(self, wait: bool):
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        executor = ProcessPoolExecutor(self.count, mp_context=multiprocessing.get_context("spawn"),
                                       initializer=_start, initargs=self._args)
        # Start every worker now (one task each, submitted at once: the pool starts processes
        # only when none is idle), so the first requests do not pay for loading; at start,
        # wait for them, so that a worker that cannot start is an error at start.
        futures = [executor.submit(_ready, i) for i in range(self.count)]
        for f in futures if wait else ():
            f.result()
        return executor

    def pids(self) -> list[int]:
        """The worker processes' ids (tests)."""
        return sorted(getattr(self.executor, "_processes", {}) or {})

    def answer_many(self, items: list, store) -> list:
        """One batch's answers computed by a worker process (on a sending thread), each
        kept with ``store(kind, request, body)`` here, where the cache is.

        Raises:
            RuntimeFailure: the worker died computing it (every answer of this batch).
        """
        from concurrent.futures.process import BrokenProcessPool

        from hpcds1mpi.errors import RuntimeFailure

        executor = self.executor
        try:
            answers = executor.submit(_answer_many, items).result()
        except BrokenProcessPool:
            self.broken(executor)
            raise RuntimeFailure("a worker process died computing this answer; retry "
                                 "(new workers are starting)") from None
        for (kind, req), body in zip(items, answers):
            if isinstance(body, bytes):
                store(kind, req, body)
        return answers

    def broken(self, executor) -> None:
        """A worker died under ``executor``: a fresh pool (once, however many requests saw
        the same break), whose workers start with the next request, not on the event loop."""
        with self._lock:  # the sending threads may see the same break at once
            if executor is not self.executor:
                return  # already replaced
            log.error("a worker process died; starting %d new ones", self.count)
            executor.shutdown(wait=False, cancel_futures=True)
            self.executor = self._new(wait=False)

    def close(self) -> None:
        self.threads.shutdown(wait=False, cancel_futures=True)
        self.executor.shutdown(wait=True, cancel_futures=True)
