"""Ending a launch that cannot finish its run, so the next launch can go on.

A run that hangs inside an MPI call, or that raises on some ranks only (the others then wait
in a collective forever), cannot be recovered in-process. Both guards here record what
happened beside the telemetry file and abort the MPI job; the supervisor
(:mod:`hpcds1mpi.measure.supervise`) relaunches with ``--resume``, which skips the run
(recorded ``timeout``) or records it ``failed`` from the fault note.
"""

from __future__ import annotations

import os
import sys
import threading
import time

from hpcds1mpi.config import Configuration

#: Exit code of a launch the watchdog aborted (that of coreutils ``timeout``).
TIMEOUT_EXIT_CODE = 124


def covered(repeat_began: float | None) -> str:
    """What a kernel configuration's timeout says of one run, as its error words it: the
    limit covered set-up, warm-up and every repeat, so one run is bounded only by the time
    the repeat it cut short had run (decide/timed_out.py reads it back)."""
    if repeat_began is None:
        return "set-up and warm-up covered, no measured repeat begun: no bound on one run"
    return f"the measured repeat it cut short had run {time.monotonic() - repeat_began:.4g} s"


class Watchdog:
    """Rank 0's timer: past a run's deadline it journals ``timeout`` and aborts the MPI job
    (a hang inside an MPI call cannot be interrupted in-process).

    Args:
        writer: the sweep's :class:`~hpcds1mpi.records.telemetry.TelemetryWriter`.
        comm: the sweep's communicator, aborted when a run times out.
    """

    def __init__(self, writer, comm):
        self.writer = writer
        self.comm = comm
        self.lock = threading.Lock()
        self.current: tuple[dict, float, float] | None = None
        #: When the measured repeat now running began (monotonic), None in set-up and
        #: warm-up: the limit covers those and every repeat, so only the repeat it cut short
        #: bounds one run (s41 tester D16).
        self.repeat_began: float | None = None
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def arm(self, row: dict, timeout: float) -> None:
        """Start timing ``row``'s run: past ``timeout`` seconds it is recorded ``timeout``."""
        with self.lock:
            self.current = (row, time.monotonic() + timeout, timeout)
            self.repeat_began = None

    def measuring(self, began: float) -> None:
        """The runner's word that a measured repeat began at ``began`` (``time.monotonic``)."""
        with self.lock:
            self.repeat_began = began

    def disarm(self) -> bool:
        """False if the watchdog already fired for the current run."""
        with self.lock:
            fired = self.current is None
            self.current = None
            return not fired

    def _loop(self) -> None:
        while True:
            time.sleep(0.05)
            with self.lock:
                if self.current is None or time.monotonic() < self.current[1]:
                    continue
                row, _, timeout = self.current
                self.current = None
                row = dict(row, status="timeout", finished_at=time.time(),
                           error=f"no result within the {timeout:g} s timeout "
                                 f"({covered(self.repeat_began)}); the job was aborted and "
                                 "the sweep resumes after it")
                try:
                    self.writer.record(row, {})
                    self.writer.snapshot()
                except Exception as exc:  # noqa: BLE001 - the abort below must happen anyway
                    sys.stderr.write(f"hpcds1mpi: could not record the timeout: {exc}\n")
                config = Configuration(row["nodes"], row["ranks_per_node"], row["threads"],
                                       row["device"], row["precision"])
                sys.stderr.write(f"hpcds1mpi: {row['workload']} size {row['size']} "
                                 f"{config.label()} timed out after {timeout:g} s; aborting "
                                 "this launch (resume with --resume, or use --launch to resume "
                                 "automatically)\n")
                sys.stderr.flush()
                try:
                    self.comm.Abort(TIMEOUT_EXIT_CODE)
                finally:
                    os._exit(TIMEOUT_EXIT_CODE)


class GuardedKernel:
    """A kernel proxy that turns an exception on *some* ranks into a clean ``failed`` run.

    When every rank raises at the same step, the runner's own agreement marks the run failed.
    When only some ranks raise, the others sit in a collective that will never complete. So a
    raising rank first waits (sleeping) up to ``agree_s`` on an ``Ibarrier`` of a duplicate
    communicator that only raising ranks enter: if all ranks arrive, the exception goes on to the
    runner; otherwise the rank leaves a fault note beside the telemetry file and aborts the
    launch, and the next launch (``--launch`` resumes by itself) records the run as ``failed``
    with the note's text.

    Args:
        kernel: the kernel to guard.
        errcomm: a duplicate of the run's communicator, used only by raising ranks.
        out: the telemetry file (the fault note goes beside it).
        run_id: the run's key, named in the note.
        comm: the sweep's communicator, aborted when a rank fails alone.
        agree_s: how long a raising rank waits for the others to raise too (s).
    """

    def __init__(self, kernel, errcomm, out: str, run_id: str, comm, agree_s: float = 5.0):
        self._kernel = kernel
        self._errcomm = errcomm
        self._out = out
        self._run_id = run_id
        self._comm = comm
        self._agree_s = agree_s

    def __getattr__(self, name):
        return getattr(self._kernel, name)

    def _guard(self, method, *args):
        try:
            return method(*args)
        except Exception as exc:  # noqa: BLE001 - re-raised unless only some ranks raised
            request = self._errcomm.Ibarrier()
            deadline = time.monotonic() + self._agree_s
            while not request.Test():
                if time.monotonic() > deadline:
                    from hpcds1mpi.records import telemetry

                    text = f"{type(exc).__name__}: {exc}"
                    telemetry.write_fault_note(self._out, self._run_id,
                                               self._comm.Get_rank(), text)
                    sys.stderr.write(f"hpcds1mpi: rank {self._comm.Get_rank()} failed alone "
                                     f"({text}); aborting this launch, the run is recorded as "
                                     "failed on resume\n")
                    sys.stderr.flush()
                    try:
                        self._comm.Abort(1)
                    finally:
                        os._exit(1)
                time.sleep(0.005)
            raise

    def setup(self, ctx, size):
        return self._guard(self._kernel.setup, ctx, size)

    def run(self, ctx, state):
        return self._guard(self._kernel.run, ctx, state)

    def check(self, ctx, state, result):
        return self._guard(self._kernel.check, ctx, state, result)
