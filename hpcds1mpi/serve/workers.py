"""Computing new answers in worker processes (``serve --workers N``, N >= 2).

A distinct question is pure Python and numpy under the GIL (measured: two threads answer no
more questions a second than one), so one process computes one question at a time whatever
the cores. With ``--workers N`` the server starts N processes, each with its own copy of the
service (the same bundle and places, loaded once per process), and sends each new question to
a free one. The server process keeps everything else: the token check, the limits, the answer
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


def _ready(_: int) -> bool:
    return _service is not None


class Workers:
    """N worker processes computing answers; ``submit`` as the event loop needs it.

    Args:
        count: processes (2 or more).
        model_dir, cluster_file, state: what each worker's service loads (as the parent's).
    """

    def __init__(self, count: int, model_dir: str | None, cluster_file: str | None,
                 state: Path):
        self.count = count
        self._args = (model_dir, cluster_file, str(state))
        self.executor = self._new(wait=True)

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

    def broken(self, executor) -> None:
        """A worker died under ``executor``: a fresh pool (once, however many requests saw
        the same break), whose workers start with the next request, not on the event loop."""
        if executor is not self.executor:
            return  # already replaced
        log.error("a worker process died; starting %d new ones", self.count)
        executor.shutdown(wait=False, cancel_futures=True)
        self.executor = self._new(wait=False)

    def close(self) -> None:
        self.executor.shutdown(wait=True, cancel_futures=True)
