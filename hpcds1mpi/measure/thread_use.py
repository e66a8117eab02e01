"""Whether a program used the threads a configuration gave it, read from its measured CPU time.

A program that takes its thread count from an option of its own (MPQC's ``-threadgrp``), or
has no threaded code (Debian's Meep), runs one computation at every ``--threads`` level: the
sweep measured MPQC at 1 rank x 2 threads with one core busy (CPU 21.6 s over 28.3 s) and
recommend then picked 2 threads on load noise, nothing said (s41 tester A3). The static check
(:func:`~hpcds1mpi.measure.program_mpi.threading_note`: no OpenMP runtime linked) cannot see
a program that links one and never uses it; its CPU time can.
"""

from __future__ import annotations

import math

#: Cores busy per rank within which a run of 2 or more threads is read as one thread's work:
#: start-up and serial parts keep a threaded program's figure below its threads, not near one
#: at 2 threads and more; under half a core it mostly waited (I/O, a GPU, sleep), which says
#: nothing of its threads.
ONE_CORE_BUSY = (0.5, 1.25)
#: The key a sweep keeps among what it said, so that the note is said once.
IDLE_THREADS = ("note", "idle threads")


def idle_threads_note(m: dict, config, what: str) -> str:
    """A note for the sweep to say once where an ok run of ``config`` (threads above 1) kept
    about one core busy per rank (``m``: the run's measurement, its ``cpu_s`` summed over
    its launches, ``walls`` each launch's seconds); "" otherwise, or where its CPU time was
    not measured (ranks under slurmstepd)."""
    walls = [w for w in m.get("walls") or [] if w > 0]
    if config.threads < 2 or config.device != "cpu" or not walls or math.isnan(
            m.get("cpu_s", math.nan)):
        return ""
    busy = m["cpu_s"] / sum(walls) / max(config.ranks, 1)
    if not ONE_CORE_BUSY[0] <= busy <= ONE_CORE_BUSY[1]:
        return ""
    return (f"note: {what} kept {busy:.2f} cores busy per rank at {config.threads} threads "
            "(its CPU time over its wall time): the program seems not to use OMP_NUM_THREADS "
            "(a thread count of its own, such as MPQC's -threadgrp, or no threaded code), so "
            "its thread levels measure one computation and their differences are noise; sweep "
            "--threads 1, or give the program its thread count with {threads}")
