"""SIGTERM and Ctrl-C stop training whatever library is running.

A signal's exception raised while a library calls back into Python (xgboost's callbacks go
through ctypes) is printed as "Exception ignored on calling ctypes callback" and dropped: the
library went on and the command wrote its bundle and exited 0, or the library failed on its own
and its error came out as a traceback (s33 tester C4). While :func:`stops_through_libraries`
holds, a stop is remembered: an exception the library swallowed is delivered again a moment
later, in Python code, and ends the block quietly; a library error after a stop, or a block that
ends normally after one, raises the stop instead (SystemExit with the writer's one line for
SIGTERM, the interrupt for Ctrl-C).
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading

#: Seconds before a swallowed stop is delivered again (Python code runs in between).
REDELIVER_S = 0.05


@contextlib.contextmanager
def stops_through_libraries():
    """Hold a SIGTERM / SIGINT that lands inside a library's callback to the block; the
    handlers in place (writers' SIGTERM line, the CLI's Ctrl-C) say it. Main thread only."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}
    if not any(callable(h) for h in before.values()):
        yield
        return
    requested: list[BaseException] = []  # the stop, once one came
    signals: list[int] = []  # and its signal

    def stopping(signum, frame):
        previous = before[signum]
        if not callable(previous):
            return
        try:
            previous(signum, frame)
        except BaseException as stop:  # noqa: BLE001 - the stop itself: kept, then raised
            if not requested:
                requested.append(stop)
                signals.append(signum)
            signal.signal(signum, stopping)  # a handler that ignores further ones: ours stays
            raise requested[0].with_traceback(None) from None

    hook = sys.unraisablehook

    def unraisable(info):
        if requested and info.exc_value is requested[0]:  # swallowed by a callback
            _redeliver(signals[0])
            return
        hook(info)

    for sig, handler in before.items():
        if callable(handler):
            signal.signal(sig, stopping)
    sys.unraisablehook = unraisable
    try:
        yield
    except BaseException as exc:
        if requested and exc is not requested[0]:  # the library's own error after the stop
            raise requested[0].with_traceback(None) from None
        raise
    finally:
        sys.unraisablehook = hook
        for sig, handler in before.items():
            if signal.getsignal(sig) is stopping:
                signal.signal(sig, signal.SIG_IGN if requested else handler)
    if requested:  # the library swallowed it and finished before it came again
        raise requested[0].with_traceback(None) from None


def _redeliver(signum: int) -> None:
    """Signal ``signum`` again in the main thread a moment from now (the stop raised inside the
    hook would be dropped again)."""
    import _thread

    later = threading.Timer(REDELIVER_S, _thread.interrupt_main, args=(signum,))
    later.daemon = True
    try:
        later.start()
    except RuntimeError:  # the interpreter is shutting down
        pass
