"""Test-only kernels that misbehave on purpose (loaded with ``--kernel-module``).

- ``fault_sleep``: every rank sleeps ``size`` milliseconds then does a tiny Allreduce; a known
  run time (the sweep-overhead benchmark uses it too). Declares fp64 and fp32 only.
- ``fault_slow64``: like ``fault_sleep``, but sleeps three times as long in fp64 (a problem
  whose fp32 configurations are close and whose fp64 ones are far behind).
- ``fault_hang``: sizes >= 1000 hang: rank 0 waits in a Barrier (inside MPI) while the other
  ranks sleep; on one rank it sleeps. Smaller sizes behave like ``fault_sleep``.
- ``fault_raise``: the last rank raises in ``run`` when there are 2+ ranks (1 rank: fine).
- ``fault_raise_all``: every rank raises in ``run`` (the runner's own agreement handles it).
- ``fault_wrong``: returns a result that fails the check (status ``wrong``).
- ``fault_exit``: sizes >= 1000: the last rank calls ``os._exit(0)`` (leaves the job early).
- ``fault_segv``: sizes >= 1000: the last rank dies of SIGSEGV.
"""

from __future__ import annotations

import time

import numpy as np

from hpcds1mpi.kernels import Kernel, WorkModel, register


class _Base(Kernel):
    description = "test kernel"
    decomposition = "none"
    communication = "allreduce of one number"
    size_meaning = "milliseconds to sleep"
    precisions = ("fp64", "fp32")
    devices = ("cpu",)
    uses_threads = True
    default_sizes = (1, 2, 4)

    def setup(self, ctx, size):
        return {"size": size, "value": np.array([1.0])}

    def _sum(self, ctx):
        from hpcds1mpi.runtime.mpi import get_mpi

        out = np.empty(1)
        ctx.comm.Allreduce(np.array([1.0]), out, op=get_mpi().SUM)
        return out

    def run(self, ctx, state):
        time.sleep(state["size"] / 1000.0)
        return self._sum(ctx)

    def check(self, ctx, state, result):
        want = float(ctx.comm.Get_size())
        return abs(float(np.asarray(result)[0]) - want) / want

    def work(self, size, ranks):
        return WorkModel(flops=float(ranks), bytes_moved=8.0, messages=1.0, comm_bytes=8.0,
                         memory_bytes=8.0)


@register
class SleepKernel(_Base):
    name = "fault_sleep"


@register
class Slow64Kernel(_Base):
    name = "fault_slow64"

    def run(self, ctx, state):
        factor = 3.0 if ctx.precision == "fp64" else 1.0
        time.sleep(factor * state["size"] / 1000.0)
        return self._sum(ctx)


@register
class HangKernel(_Base):
    name = "fault_hang"

    def run(self, ctx, state):
        if state["size"] >= 1000:
            if ctx.comm.Get_rank() == 0 and ctx.comm.Get_size() > 1:
                ctx.comm.Barrier()  # the others never come: a hang inside MPI
            else:
                time.sleep(3600)
        return super().run(ctx, state)


@register
class RaiseKernel(_Base):
    name = "fault_raise"

    def run(self, ctx, state):
        size = ctx.comm.Get_size()
        if size > 1 and ctx.comm.Get_rank() == size - 1:
            raise RuntimeError("injected failure on the last rank")
        return super().run(ctx, state)


@register
class RaiseAllKernel(_Base):
    name = "fault_raise_all"

    def run(self, ctx, state):
        raise RuntimeError(f"injected failure on every rank (rank {ctx.comm.Get_rank()})")


@register
class WrongKernel(_Base):
    name = "fault_wrong"

    def run(self, ctx, state):
        return super().run(ctx, state) + 0.5


@register
class ExitKernel(_Base):
    """Sizes >= 1000: the last rank ends its process with ``os._exit(0)`` in ``run`` (a rank
    that leaves the job early and "successfully"); on one rank, rank 0 does."""

    name = "fault_exit"

    def run(self, ctx, state):
        if state["size"] >= 1000 and ctx.comm.Get_rank() == ctx.comm.Get_size() - 1:
            import os

            os._exit(0)
        return super().run(ctx, state)


@register
class SegfaultKernel(_Base):
    """Sizes >= 1000: the last rank dies of SIGSEGV in ``run`` (a kernel that crashes)."""

    name = "fault_segv"

    def run(self, ctx, state):
        if state["size"] >= 1000 and ctx.comm.Get_rank() == ctx.comm.Get_size() - 1:
            import os
            import signal

            os.kill(os.getpid(), signal.SIGSEGV)
        return super().run(ctx, state)
