"""The micro-batch: new questions queued for the computing thread, answered together.

A distinct question's cost is mostly fixed per call (System 1's ``Bundle.predict`` walks every
ensemble member, the guard's ``design`` builds every feature block, whatever the rows), so
answering the questions that wait together costs little more than answering one
(:meth:`~hpcds1mpi.serve.service.Service.answer_many`). The computing thread takes everything
queued (at most ``limit``), answers it in one call, and takes again; when the queue is empty
it stops, and the next question starts it. No timer: a lone question is computed at once,
never held back for company, and under load a batch is what arrived while the last one was
computed.

Only the kinds that are cheaper together (``together``: the service's recommend questions)
share a call; a question of another kind (predict, advise) gets a call of its own in the same
drain, settled as soon as it is answered, so a slow script never holds back a batch.

``slots`` computing threads may drain the same queue. Each question gets its own answer or
its own exception, in its own future; an error of the whole call is every question of that
batch's error, never a later batch's. ``serve --workers N`` (the default, one process) batches
the same way inside each worker process (:mod:`hpcds1mpi.serve.workers`, with :func:`calls`),
so that no hand-off between two batches leaves the worker idle; this queue serves
``--workers 0``'s computing thread.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from concurrent.futures import Future, InvalidStateError
from typing import Callable

log = logging.getLogger("hpcds1mpi.serve")

#: Most questions answered in one call (the app's ``max_pending`` bounds what can wait).
DEFAULT_LIMIT = 64


class MicroBatch:
    """Queue questions; ``slots`` threads answer what is queued in batches.

    Args:
        answer_many: ``[(kind, request), ...]`` -> one bytes or exception each, in order.
        start: runs a callable on a computing thread (``executor.submit``).
        limit: most questions in one call.
        slots: most calls at once (threads draining the queue).
        together: the kinds answered in one call; a question of another kind gets a call of
            its own, settled as soon as it is answered, so a slow one (an ``advise`` parsing a
            script) never holds back a batch's answers. None: every kind together.
    """

    def __init__(self, answer_many: Callable[[list], list], start: Callable, *,
                 limit: int = DEFAULT_LIMIT, slots: int = 1,
                 together: tuple[str, ...] | None = None):
        if limit < 1 or slots < 1:
            raise ValueError("limit and slots must be at least 1")
        self.together = together
        self.answer_many = answer_many
        self.start = start
        self.limit = limit
        self.slots = slots
        self._queue: list[tuple[str, object, Future]] = []
        self._running = 0
        self._lock = threading.Lock()
        #: Sizes of the batches answered (tests; the last 1,000).
        self.sizes: deque[int] = deque(maxlen=1000)

    def submit(self, kind: str, req) -> Future:
        """The future answer to ``req`` (bytes, or the exception ``answer`` raises)."""
        fut: Future = Future()
        with self._lock:
            self._queue.append((kind, req, fut))
            wake = self._running < self.slots
            if wake:
                self._running += 1
        if wake:
            try:
                self.start(self._drain)
            except Exception as exc:  # noqa: BLE001 - e.g. the executor shut down
                with self._lock:
                    self._running -= 1
                    if self._running:  # a running drain answers the others: fail only this
                        self._queue = [q for q in self._queue if q[2] is not fut]
                        taken = [(kind, req, fut)]
                    else:  # nobody would ever answer what waits
                        taken, self._queue = self._queue, []
                for _, _, f in taken:
                    settle(f, exc)
        return fut

    def _take(self) -> list:
        """The next batch, or [] (then this drain has stopped: counted under the lock, so a
        question queued after it starts another).

        With several slots a drain takes its share of the queue (1/slots of it), and wakes
        an idle slot for the rest: 50 questions queued at once go to two workers as 25 and
        25, not 50 to one while the other waits.
        """
        with self._lock:
            n = min(self.limit, max(1, -(-len(self._queue) // self.slots)))
            batch, self._queue = self._queue[:n], self._queue[n:]
            if not batch:
                self._running -= 1
                return batch
            wake = self._claim_slot()
        if wake:
            self._start_another()  # on failure this drain takes the rest
        return batch

    def _claim_slot(self) -> bool:
        """(Lock held.) Count one more drain when questions wait and a slot is free."""
        if self._queue and self._running < self.slots:
            self._running += 1
            return True
        return False

    def _start_another(self) -> None:
        """Start the drain :meth:`_claim_slot` counted; uncount it when it cannot start."""
        try:
            self.start(self._drain)
        except Exception:  # noqa: BLE001 - e.g. shutting down
            with self._lock:
                self._running -= 1

    def _drain(self) -> None:
        """Answer batches until the queue is empty (on a computing thread)."""
        batch: list = []
        try:
            while True:
                batch = self._take()
                if not batch:
                    return
                self.sizes.append(len(batch))
                for call in self._calls(batch):
                    self._answer(call)
                batch = []
        except BaseException:
            # Not an answer's error (those are settled above): the thread itself is going.
            # Nothing it held may wait for ever, and what is queued needs another drain.
            for _, _, fut in batch:
                settle(fut, RuntimeError("the computing thread stopped; ask again"))
            with self._lock:
                self._running -= 1
                wake = self._claim_slot()
            if wake:
                self._start_another()
            raise


    def _calls(self, batch: list) -> list[list]:
        """The batch as calls: the kinds answered together in one, each other question alone."""
        return calls(batch, self.together)

    def _answer(self, call: list) -> None:
        """One ``answer_many`` call, each question's future settled with its answer."""
        try:
            answers = self.answer_many([(kind, req) for kind, req, _ in call])
            if len(answers) != len(call):
                raise RuntimeError(f"{len(answers)} answers to {len(call)} questions")
        except Exception as exc:  # noqa: BLE001 - the whole call failed: this call's questions'
            answers = [exc] * len(call)
        for (_, _, fut), got in zip(call, answers):
            settle(fut, got)


def calls(batch: list, together: tuple[str, ...] | None) -> list[list]:
    """``batch`` (tuples, each's kind first) as calls: the kinds in ``together`` in one call
    (every kind with None), each other question in a call of its own."""
    if together is None:
        return [batch]
    joint = [q for q in batch if q[0] in together]
    return ([joint] if joint else []) + [[q] for q in batch if q[0] not in together]


def settle(fut: Future, got) -> None:
    """Give ``fut`` its answer, or its exception; nothing when it was cancelled or settled."""
    try:
        if isinstance(got, BaseException):
            fut.set_exception(got)
        else:
            fut.set_result(got)
    except InvalidStateError:  # cancelled (a client gone) or settled: nothing to tell it
        pass
