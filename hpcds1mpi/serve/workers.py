"""Computing new answers in worker processes (``serve --workers N``; N = 1 by default).

A distinct question is pure Python and numpy under the GIL (measured: two threads answer no
more questions a second than one), so one process computes one question at a time whatever
the cores, and a computing thread in the server process would share the GIL with the event
loop (HTTP, body checks, the cache). So by default the server starts one worker process, and
the event loop and the computing run on two cores at once (``--workers 0`` keeps the
computing in a thread of the server process instead:
:attr:`hpcds1mpi.serve.service.Service.executor`, fed by
:class:`~hpcds1mpi.serve.batching.MicroBatch`). With ``--workers N`` the server starts N
processes, each with its own copy of the service (the same bundle and places, loaded once per
process). The server process keeps everything else: the token check, the limits, the answer
cache and the event loop, so a repeated question never reaches a worker.

Each worker has a pipe of its own. A new question goes down it at once (a sending thread per
worker, so a large script never blocks the event loop) to the worker that holds the fewest; the
worker takes everything that arrived while it computed (at most ``limit``) and answers it as
one micro-batch, as :class:`~hpcds1mpi.serve.batching.MicroBatch` does in a thread: the kinds
cheaper together (recommend) in one :meth:`~hpcds1mpi.serve.service.Service.answer_many`
call, each other question alone, each call's answers sent back as soon as they are computed.
A reading thread per worker settles each question's future and keeps its answer in the cache.
The batching is in the worker, so it starts its next batch the moment one is done: measured
(issue 18), a process pool's hand-off between two batches (the parent's threads taking the
answers, then sending the next batch) left the worker idle ~4 ms for every ~16 ms computed.

The workers are *spawned* (a fresh interpreter), not forked: the parent has loaded numpy,
BLAS and numba, whose thread pools do not survive a fork. Each worker ignores SIGINT and
SIGTERM (a Ctrl-C reaches the whole process group; the parent stops them itself, after its
graceful shutdown, and a worker whose pipe closes stops).
A worker that dies (killed, out of memory) fails the questions it held (500), a new one is
started in its place, and the other workers (or, with one, the new one once loaded) answer
the next questions. Every worker answers from the bundle the server loaded at start: the
server notes the bundle's digest (:func:`hpcds1mpi.serve.service.bundle_digest`) before the
workers start, and a worker started later that finds another or a damaged bundle on disk
refuses to start (one log line with the reason) instead of answering from it. When no worker
is left to compute, a computing request is 503 (:class:`NoWorker`, with that reason) and
``/v1/health`` says ``degraded``.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from concurrent.futures import Future
from pathlib import Path

from hpcds1mpi.errors import RuntimeFailure

log = logging.getLogger("hpcds1mpi.serve")

_service = None  # the worker's own Service (in a worker process only)
#: Seconds a worker has to load the bundle at start before the server gives up.
START_TIMEOUT = 300.0


class NoWorker(RuntimeFailure):
    """No worker process can compute (each failed to start, or refused a changed bundle)."""


def _start(model_dir: str | None, cluster_file: str | None, state: str,
           digest: str | None) -> None:
    """Worker set-up: load the service once, without a cache (the parent keeps it), from the
    bundle whose digest is ``digest`` (the one the server started with) only."""
    import signal

    # A Ctrl-C or a TERM reaches the whole process group: the server stops its workers
    # itself, after its graceful shutdown (a worker whose server is gone stops too).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    from hpcds1mpi.serve.server import settle_heap
    from hpcds1mpi.serve.service import Service

    global _service
    _service = Service(model_dir, cluster_file, Path(state), cache_size=0,
                       expect_digest=digest)
    _service.warm_up()
    settle_heap()


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


def _main(conn, model_dir: str | None, cluster_file: str | None, state: str,
          digest: str | None, limit: int) -> None:
    """A worker process: load, say so (None), then answer what comes until told to stop; a
    worker that cannot load sends why (one line) and stops."""
    from hpcds1mpi.errors import HpcdsError
    from hpcds1mpi.serve.auth import disk_full

    try:
        _start(model_dir, cluster_file, state, digest)
    except Exception as exc:  # noqa: BLE001 - a damaged bundle may fail anywhere: one line
        said = exc if isinstance(exc, HpcdsError) else disk_full(exc, Path(state))
        if said is not None:  # the user's to act on: the server says it, exit 1 at start
            conn.send(("refused", " ".join(str(said).split()), True))
            return
        text = " ".join(str(exc).split())[:300]
        conn.send(("refused", f"{type(exc).__name__}: {text}", False))
        return
    conn.send(None)
    serve_pipe(conn, limit, _answer_many)


def serve_pipe(conn, limit: int, answer_many) -> None:
    """Answer the questions ``conn`` brings (lists of ``(kind, request, id)``) in batches of
    what has arrived, at most ``limit``; send ``[(id, answer or exception), ...]`` back per
    call. Returns once a None (stop) has come and what came before it is answered, or when
    the server is gone."""
    from hpcds1mpi.serve.batching import calls
    from hpcds1mpi.serve.service import BATCHED_KINDS

    waiting: deque = deque()
    stop = False
    try:
        while True:
            while not stop and (not waiting or conn.poll()):
                got = conn.recv()
                if got is None:
                    stop = True  # answer what waits, then stop
                else:
                    waiting.extend(got)
            if not waiting:
                return
            batch = [waiting.popleft() for _ in range(min(limit, len(waiting)))]
            for call in calls(batch, BATCHED_KINDS):
                try:
                    answers = answer_many([(kind, req) for kind, req, _ in call])
                except Exception as exc:  # noqa: BLE001 - the whole call failed: its questions'
                    answers = [RuntimeError(f"{type(exc).__name__}: {exc}")] * len(call)
                conn.send([(ident, got) for (_, _, ident), got in zip(call, answers)])
    except (EOFError, OSError):
        return  # the server went away


class _Worker:
    """One worker process, its pipe, and the questions it holds (id -> (kind, req, future))."""

    def __init__(self, args: tuple, limit: int, store, on_death):
        import multiprocessing
        import queue

        ctx = multiprocessing.get_context("spawn")
        self.conn, child = ctx.Pipe(duplex=True)
        self.proc = ctx.Process(target=_main, args=(child, *args, limit),
                                name="hpcds1mpi-serve-worker")
        self.proc.start()
        child.close()
        self.store, self.on_death = store, on_death
        self.held: dict[int, tuple] = {}
        self.alive, self.closing, self.ready = True, False, False
        #: Why the worker did not start (what it sent), None while it has not refused.
        self.refusal: str | None = None
        #: Whether ``refusal`` is an error the user can act on (a changed bundle, a full
        #: disk), not a bug.
        self.refusal_said = False
        #: Set once the worker has loaded (``ready``) or died before it could.
        self.started = threading.Event()
        self._lock = threading.Lock()
        self._outbox: queue.SimpleQueue = queue.SimpleQueue()
        for target, name in ((self._send, "send"), (self._read, "read")):
            threading.Thread(target=target, name=f"hpcds1mpi-serve-{name}", daemon=True).start()

    def put(self, ident: int, kind: str, req, fut: Future) -> bool:
        """Hold the question and queue it for the pipe; False when this worker is dead."""
        with self._lock:
            if not self.alive:
                return False
            self.held[ident] = (kind, req, fut)
        self._outbox.put((kind, req, ident))
        return True

    def _send(self) -> None:
        """(Thread.) Everything queued down the pipe, as one message per wake-up."""
        import queue

        while True:
            items = [self._outbox.get()]
            try:
                while True:
                    items.append(self._outbox.get_nowait())
            except queue.Empty:
                pass
            stop = None in items
            items = [i for i in items if i is not None]
            try:
                if items:
                    self._send_items(items)
                if stop:
                    self.conn.send(None)
                    return
            except (OSError, ValueError):
                return  # the pipe is gone: the reading thread sees the death

    def _send_items(self, items: list) -> None:
        try:
            self.conn.send(items)
        except (OSError, ValueError):
            raise
        except Exception as exc:  # noqa: BLE001 - one question did not pickle: its own error
            if len(items) == 1:
                self._settle(items[0][2], exc)
                return
            for item in items:
                self._send_items([item])

    def _settle(self, ident: int, got) -> None:
        from hpcds1mpi.serve.batching import settle

        with self._lock:
            entry = self.held.pop(ident, None)
        if entry is None:
            return
        kind, req, fut = entry
        if isinstance(got, bytes):
            self.store(kind, req, got)
        settle(fut, got)

    def _read(self) -> None:
        """(Thread.) Each answer to its future, until the worker is gone."""
        while True:
            try:
                msg = self.conn.recv()
            except (EOFError, OSError):
                break
            if msg is None:
                self.ready = True
                self.started.set()
                continue
            if isinstance(msg, tuple) and msg[:1] == ("refused",):
                self.refusal, self.refusal_said = msg[1], bool(msg[2:3] and msg[2])
                continue
            for ident, got in msg:
                self._settle(ident, got)
        self.proc.join(5)  # reaped, not left a zombie
        self.on_death(self)
        self.started.set()

    def fail_all(self, exc: BaseException) -> None:
        """This worker is gone: every question it held gets ``exc``."""
        from hpcds1mpi.serve.batching import settle

        with self._lock:
            self.alive = False
            held, self.held = self.held, {}
        for _, _, fut in held.values():
            settle(fut, exc)

    def stop(self, timeout: float) -> None:
        self.closing = True
        self._outbox.put(None)
        self.proc.join(timeout)
        if self.proc.is_alive():
            self.proc.terminate()
            self.proc.join(5)
        self.conn.close()


class Workers:
    """N worker processes computing answers (:meth:`submit`, as the event loop needs it).

    Args:
        count: processes (1 or more).
        model_dir, cluster_file, state: what each worker's service loads (as the parent's).
        limit: most questions a worker answers in one batch.
        digest: the bundle's :func:`~hpcds1mpi.serve.service.bundle_digest` as the server
            loaded it (None: read now, before the first worker starts); every worker,
            started now or later, refuses a bundle that differs.
    """

    def __init__(self, count: int, model_dir: str | None, cluster_file: str | None,
                 state: Path, limit: int | None = None, digest: str | None = None):
        from hpcds1mpi.decide.model_bundle import DEFAULT_MODEL
        from hpcds1mpi.serve.batching import DEFAULT_LIMIT
        from hpcds1mpi.serve.service import bundle_digest

        self.count = count
        self.limit = limit or DEFAULT_LIMIT
        #: The bundle every worker answers from.
        self.digest = digest or bundle_digest(Path(model_dir) if model_dir else DEFAULT_MODEL)
        #: Why the last worker that could not start did not (None: none failed).
        self.last_refusal: str | None = None
        self._args = (model_dir, cluster_file, str(state), self.digest)
        self._lock = threading.Lock()
        self._ids = 0
        self._closing = False
        #: Keeps each computed answer (the server's cache): ``store(kind, request, body)``.
        self.store = lambda kind, req, body: None
        self._starting = True  # a worker that fails now is the start's one error line
        self._workers = [self._new() for _ in range(count)]
        for w in self._workers:  # at start, a worker that cannot start is an error at start
            if not w.started.wait(START_TIMEOUT) or not w.ready:
                self.close()
                if w.refusal_said:  # s32 tester T2: a full disk had ended in a traceback
                    raise RuntimeFailure(f"a worker process did not start: {w.refusal}")
                why = f" ({w.refusal or 'it exited while loading'})"
                raise RuntimeError(f"a worker process did not start{why}")
        self._starting = False

    def _new(self) -> _Worker:
        return _Worker(self._args, self.limit, lambda kind, req, body: self.store(kind, req, body),
                       self._died)

    def pids(self) -> list[int]:
        """The worker processes' ids (tests)."""
        return sorted(w.proc.pid for w in self._workers)

    def unable(self) -> str | None:
        """Why no worker can compute (None: one can, or one is starting)."""
        with self._lock:
            if self._closing:
                return "the server is stopping"
            if any(w.alive for w in self._workers):
                return None
            why = self.last_refusal or "they failed to start; see the server's log"
        return f"no worker process can compute: {why}" + (
            "" if "restart serve" in why else "; restart serve")

    def submit(self, kind: str, req) -> Future:
        """The future answer to ``req`` (bytes, or the exception computing it raised), from the
        worker that holds the fewest questions (a loaded one first); :class:`NoWorker` when
        none is left."""
        fut: Future = Future()
        while True:
            why = self.unable()
            if why is not None:
                fut.set_exception(RuntimeFailure(why) if self._closing else NoWorker(why))
                return fut
            with self._lock:
                alive = [w for w in self._workers if w.alive]
                if not alive:
                    continue  # the last one died just now: unable() says so next
                self._ids += 1
                ident = self._ids
                worker = min(alive, key=lambda w: (not w.ready, len(w.held)))
            if worker.put(ident, kind, req, fut):
                return fut

    def _died(self, worker: _Worker) -> None:
        """(A reading thread.) ``worker`` is gone: a new one in its place (unless stopping),
        then its questions fail (500)."""
        with self._lock:
            # One that never loaded is not started again (it would fail again, for ever).
            replace = not self._closing and not worker.closing and worker.ready \
                and worker in self._workers
            if replace:
                log.error("a worker process died; starting a new one")
                self._workers[self._workers.index(worker)] = self._new()
            elif not self._closing and not worker.closing:
                self.last_refusal = worker.refusal or self.last_refusal
                if not self._starting:  # at start, the error the start ends with says it
                    log.error("a worker process failed to start: %s",
                              worker.refusal or "it exited while loading")
        if replace:
            why = RuntimeFailure("a worker process died computing this answer; retry (a new "
                                 "worker is starting)")
        elif self._closing or worker.closing:
            why = RuntimeFailure("the server is stopping")
        else:  # it never loaded: another may still compute, else none can
            cause = worker.refusal or "it exited while loading"
            why = NoWorker(f"a worker process could not start ({cause}); retry, or restart "
                           "serve")
        worker.fail_all(why)

    def close(self) -> None:
        with self._lock:
            self._closing = True
            workers = list(self._workers)
        for w in workers:
            w.stop(10)
