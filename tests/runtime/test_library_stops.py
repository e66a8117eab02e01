"""A stop that lands in a library's callback still stops the command in one line (s33 tester
C4): libc's qsort calls a Python comparator through ctypes, as xgboost calls its callbacks."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap

import pytest

PROGRAM = textwrap.dedent("""
    import ctypes, os, signal, sys
    from hpcds1mpi import cli
    from hpcds1mpi.runtime.library_stops import stops_through_libraries
    from hpcds1mpi.writers import catch_sigterm, uncatch_sigterm

    SIGNUM = {signum}
    AFTER = {after!r}

    def command(*args, **kwargs):
        libc = ctypes.CDLL(None)
        CMP = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_int),
                               ctypes.POINTER(ctypes.c_int))

        def compare(a, b):  # the signal lands here, inside the C library's call
            os.kill(os.getpid(), SIGNUM)
            sum(range(10 ** 5))  # Python checks for the signal here
            return a[0] - b[0]

        catch_sigterm("model", "model bundle", "no partial output is left")
        try:
            with stops_through_libraries():
                values = (ctypes.c_int * 2)(2, 1)
                libc.qsort(values, 2, ctypes.sizeof(ctypes.c_int), CMP(compare))
                if AFTER == "fails":  # the library's own error after the stop
                    raise RuntimeError("XGBoostError: the callback failed")
            print("bundle written")
        finally:
            uncatch_sigterm()

    cli.cli.main = command
    cli.main(["kernels"])
""")


@pytest.mark.parametrize("after", ["goes on", "fails"])
@pytest.mark.parametrize("signum, code, words", [
    (signal.SIGTERM, 1, "SIGTERM"), (signal.SIGINT, 130, "Ctrl-C (SIGINT)")])
def test_a_stop_inside_a_ctypes_callback_stops_with_one_line(signum, code, words, after):
    """SIGTERM inside xgboost's callback had printed "Exception ignored on calling ctypes
    callback ... SystemExit" and learn went on to write its bundle and exit 0, or the library
    failed with its own traceback."""
    proc = subprocess.run([sys.executable, "-c", PROGRAM.format(signum=int(signum),
                                                                after=after)],
                          capture_output=True, text=True, timeout=60)
    assert (proc.returncode, proc.stdout) == (code, ""), proc.stderr
    assert proc.stderr.strip() == (f"hpcds1mpi: error: model: stopped by {words} while "
                                   "writing the model bundle; no partial output is left")


def test_without_a_stop_the_block_is_untouched():
    from hpcds1mpi.runtime.library_stops import stops_through_libraries

    before = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)
    with stops_through_libraries():
        value = sum(range(10))
    assert value == 45
    assert (signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)) == before
