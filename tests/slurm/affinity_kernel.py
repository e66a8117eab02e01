"""Test-only kernel (``--kernel-module``): ``affinity_probe`` starts ``threads`` threads that
each spin a few milliseconds and record the CPUs they may run on and the CPU they ran on.

Every rank appends one JSON line per run to the file ``AFFINITY_PROBE_OUT`` names:
``{"ranks", "threads", "rank", "affinity": [[...] per thread], "ran_on": [...]}``. It shows
where a configuration's threads actually ran, which the ``binding`` column only claims.
"""

from __future__ import annotations

import json
import os
import threading
import time

import numpy as np

from hpcds1mpi.kernels import Kernel, WorkModel, register


def _cpu_now() -> int:
    """The CPU this thread runs on (field 39 of /proc/thread-self/stat), -1 where unknown."""
    try:
        with open("/proc/thread-self/stat") as fh:
            return int(fh.read().rsplit(")", 1)[1].split()[36])
    except (OSError, ValueError, IndexError):
        return -1


@register
class AffinityProbe(Kernel):
    name = "affinity_probe"
    description = "test kernel: records the CPUs its threads may use and ran on"
    decomposition = "none"
    communication = "allreduce of one number"
    size_meaning = "milliseconds each thread spins"
    precisions = ("fp64",)
    devices = ("cpu",)
    uses_threads = True
    default_sizes = (20,)

    def setup(self, ctx, size):
        return {"size": size}

    def run(self, ctx, state):
        seen = [None] * ctx.threads
        ran = [set() for _ in range(ctx.threads)]

        def spin(i):
            seen[i] = sorted(os.sched_getaffinity(0))
            end = time.perf_counter() + state["size"] / 1000.0
            while time.perf_counter() < end:
                ran[i].add(_cpu_now())

        workers = [threading.Thread(target=spin, args=(i,)) for i in range(ctx.threads)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        line = json.dumps({"ranks": ctx.comm.Get_size(), "threads": ctx.threads,
                           "rank": ctx.comm.Get_rank(), "affinity": seen,
                           "ran_on": sorted(set().union(*ran))})
        with open(os.environ["AFFINITY_PROBE_OUT"], "a") as fh:
            fh.write(line + "\n")
        from hpcds1mpi.runtime.mpi import get_mpi

        out = np.empty(1)
        ctx.comm.Allreduce(np.array([1.0]), out, op=get_mpi().SUM)
        return out

    def check(self, ctx, state, result):
        want = float(ctx.comm.Get_size())
        return abs(float(np.asarray(result)[0]) - want) / want

    def work(self, size, ranks):
        return WorkModel(flops=float(ranks), bytes_moved=8.0, messages=1.0, comm_bytes=8.0,
                         memory_bytes=8.0)
