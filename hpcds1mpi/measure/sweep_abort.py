"""Ending an in-process sweep on every rank: one line on stderr, then ``MPI_Abort``.

A bug, a full disk or an interrupt on one rank would leave the others waiting in a collective
forever: :func:`abort_sweep` says why in one line (a traceback only for a bug) and ends the
whole job with the exit code the supervisor (:mod:`hpcds1mpi.measure.supervise`) reads;
:func:`sweep_storage_error` turns an OS error writing the telemetry into its one-line error;
:func:`sigterm_interrupts` makes SIGTERM (``scancel``, a walltime) end the sweep as Ctrl-C does.
Used by :mod:`hpcds1mpi.measure.driver`.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time

from hpcds1mpi.measure.supervise import RANK_INTERRUPTED_EXIT, SUPERVISED_ENV, SWEEP_ERROR_EXIT


def sweep_storage_error(exc: Exception, out: str) -> Exception:
    """``exc``, or a one-line error when it is an OS error writing the telemetry: a full disk
    or an I/O error (WriteError, exit 1), a file or folder that cannot be written (OutputError,
    exit 2). Never raises: every rank of a sweep waits to be told of it."""
    from hpcds1mpi.records.telemetry.writer import storage_error

    if isinstance(exc, OSError) and exc.errno is not None:
        try:
            error = storage_error(out, exc)
        except Exception:  # noqa: BLE001 - wording it must never raise instead (s32 tester T1)
            return exc
        error.__cause__ = exc
        return error
    return exc


class Terminated(KeyboardInterrupt):
    """SIGTERM received while the sweep runs: an interrupt like Ctrl-C (the run in flight
    stays unfinished, :func:`abort_sweep` says it in one line and exits 1), said as SIGTERM."""


def _raise_terminated(signum, frame):
    raise Terminated()


@contextlib.contextmanager
def sigterm_interrupts():
    """While the block runs, SIGTERM raises :class:`Terminated` in the main thread instead of
    killing the process at once: Python's default had ended a walltime-killed or scancel'ed
    sweep with exit 143 and not a word (the journal kept the runs, but nothing said so)."""
    if threading.current_thread() is not threading.main_thread():
        yield  # signal handlers belong to the main thread
        return
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


#: Seconds a rank that said why it is ending waits before MPI_Abort (see :func:`abort_sweep`).
ABORT_GRACE_S = 0.3
#: Seconds the other ranks of an interrupted sweep wait for rank 0 to say so and abort the job
#: (their own MPI_Abort would kill rank 0 before its line); past it rank 0 is taken to be
#: stuck in a collective and the waiting rank says it instead.
RANK0_SAYS_IT_S = 3.0


def abort_sweep(comm, exc: BaseException, out: str) -> None:
    """End every rank of ``comm`` after ``exc`` on this rank, with one line on stderr.

    The run in flight stays unfinished: ``interrupted`` on the next read (an interrupt, a
    full disk) unless the supervisor saw the launch die by itself. Never returns.
    """
    from hpcds1mpi.errors import HpcdsError

    rank = comm.Get_rank()
    supervised = os.environ.get(SUPERVISED_ENV) == "1"
    quiet = False
    if isinstance(exc, KeyboardInterrupt):
        message = f"interrupted ({'SIGTERM' if isinstance(exc, Terminated) else 'SIGINT'})"
        _ignore_further_interrupts()
        # mpiexec passes Ctrl-C to every rank: rank 0 says it, or the supervisor does.
        quiet = supervised
        if rank != 0 and not supervised:
            # Give rank 0 the time to say it and abort the job (which ends this rank too).
            time.sleep(RANK0_SAYS_IT_S)
    elif isinstance(exc, OSError) and exc.errno is not None:
        from hpcds1mpi.records.telemetry.writer import NOT_WRITABLE

        advice = ("make it writable or choose another --out" if exc.errno in NOT_WRITABLE
                  else "free space or choose another --out")
        message = (f"cannot write ({exc.strerror}{': ' + exc.filename if exc.filename else ''})"
                   f"; {advice}")
    elif isinstance(exc, HpcdsError):  # it says what to do itself
        message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        try:
            sys.stderr.write(f"hpcds1mpi: error: {message}\n")
            sys.stderr.flush()
        except OSError:
            pass
        quiet = True
    else:
        import traceback

        traceback.print_exc()  # a bug: keep its traceback
        message = f"{type(exc).__name__} (a bug: see the traceback above)"
    try:
        if not quiet:
            sys.stderr.write(f"hpcds1mpi: error: rank {rank}: {message}; the sweep ended, "
                             f"every finished run is kept in {out}, rerun with --resume\n")
            sys.stderr.flush()
    except OSError:
        pass
    # Under --launch a distinct code tells the supervisor it was the sweep, not the run.
    code = exc.exit_code if isinstance(exc, HpcdsError) else 1  # an unwritable --out is 2
    if supervised and code != 2:
        code = SWEEP_ERROR_EXIT
        if isinstance(exc, KeyboardInterrupt):  # left to the supervisor to say (s33 tester C8)
            code = RANK_INTERRUPTED_EXIT[
                signal.SIGTERM if isinstance(exc, Terminated) else signal.SIGINT]
    if not quiet or isinstance(exc, HpcdsError):
        # The line went into the launcher's stderr pipe; MPI_Abort makes the launcher kill
        # every rank, and under load it may do so before forwarding what is still in that
        # pipe (a CI run once ended with exit 1 and an empty stderr). A moment first.
        time.sleep(ABORT_GRACE_S)
    try:
        comm.Abort(code)
    finally:
        os._exit(code)


def _ignore_further_interrupts() -> None:
    """A second Ctrl-C or SIGTERM (srun passes one to every task) must not cut the one line
    (or the wait for rank 0) short."""
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            signal.signal(sig, signal.SIG_IGN)
        except ValueError:  # not the main thread
            pass
