"""Ping-pong and allreduce of the allreduce kernel on 2 ranks against ``mpi4py.bench`` on the
same 2 ranks (``benchmarks/kernels.py``'s communication rows; moved here unchanged).

``mpi4py.bench pingpong`` as shipped sends ``numpy.empty`` buffers it never writes (zero pages,
see :func:`mpi4py_pingpong`); it is run as shipped and with ``MALLOC_PERTURB_`` so its buffers
hold data, which is the reference the goal (within 1.2x) is judged against.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

from hpcds1mpi.launch.launcher_discovery import mpiexec_path

PINGPONG_MAX = 1 << 22


def mpi4py_pingpong(max_bytes: int, written: bool = False) -> dict[int, tuple[float, float]]:
    """``python -m mpi4py.bench pingpong`` on 2 ranks: {bytes: (one-way seconds, bytes/s)}.

    ``written``: run the same, unmodified tool with glibc's ``MALLOC_PERTURB_`` set, so the
    ``numpy.empty`` buffers it sends are filled at allocation. As shipped it sends buffers that
    were never written: above glibc's mmap threshold every page of them is the kernel's shared
    zero page, so the sender copies one cache-hot 4 KiB page over and over (2-3x faster than
    any buffer holding data, measured at 0.5-1 MiB).
    """
    cmd = [mpiexec_path(), "-n", "2", sys.executable, "-m", "mpi4py.bench", "pingpong",
           "-n", str(max_bytes)]
    env = dict(os.environ, MALLOC_PERTURB_="165") if written else None
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)
    table = {}
    for line in proc.stdout.splitlines():
        match = re.match(r"\s*(\d+)\s+([\d.]+)\s*\|\s*([\d.eE+-]+)", line)
        if match:
            nbytes, mbs, mean_s = int(match[1]), float(match[2]), float(match[3])
            table[nbytes] = (mean_s, mbs * 1e6)
    if not table:
        raise RuntimeError(f"could not parse mpi4py.bench output: {proc.stdout!r} {proc.stderr!r}")
    return table


_ZERO_PAGE_PROBE = """
import sys, time, numpy as np
from mpi4py import MPI
comm, n = MPI.COMM_WORLD, int(sys.argv[1])
out = {}
for label, make in (("never-written", np.empty), ("written", np.ones)):
    send, recv = make(n, "B"), np.empty(n, "B")
    for _ in range(2):  # the second pass is the measurement
        comm.Barrier()
        start = time.perf_counter()
        for _ in range(1000):
            if comm.rank == 0:
                comm.Send(send, 1, 0); comm.Recv(recv, 1, 0)
            else:
                comm.Recv(recv, 0, 0); comm.Send(send, 0, 0)
        out[label] = (time.perf_counter() - start) / 2000
if comm.rank == 0:
    print(out["never-written"], out["written"])
"""


def bench_loop_send_buffers(nbytes: int) -> tuple[float, float]:
    """mpi4py.bench's ping-pong loop with its own ``numpy.empty`` send buffer (never written:
    every page maps the kernel's zero page, so the sender reads one cache-hot page) and with a
    written send buffer, as a real application sends. Returns one-way seconds (empty, written)."""
    cmd = [mpiexec_path(), "-n", "2", sys.executable, "-c", _ZERO_PAGE_PROBE, str(nbytes)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=True)
    empty_s, written_s = (float(v) for v in proc.stdout.split())
    return empty_s, written_s


def pingpong_rows(add, raw: dict, launch) -> None:
    """Measure and ``add`` the ping-pong / allreduce rows; raw records go into ``raw``."""
    reference = mpi4py_pingpong(PINGPONG_MAX)
    rec = launch("allreduce", PINGPONG_MAX, ranks=2,
                 extra={"allreduce_iteration_scale": 10.0}, repeats=1)
    written = mpi4py_pingpong(PINGPONG_MAX, written=True)
    raw["runs"].append(rec)
    raw["mpi4py_bench_pingpong"] = {str(k): v for k, v in reference.items()}
    raw["mpi4py_bench_pingpong_written"] = {str(k): v for k, v in written.items()}
    if rec.get("status") == "ok":
        prof = rec["profile"]
        sizes = [int(s) for s in prof["message_bytes"]]
        for nbytes in (8, 1024, 1 << 16, 1 << 20, PINGPONG_MAX):
            if nbytes not in sizes or nbytes not in reference:
                continue
            k = sizes.index(nbytes)
            mine_s, ref_s = prof["pingpong_latency_s"][k], reference[nbytes][0]
            if nbytes <= 1024:
                add(f"ping-pong {nbytes} B latency (us)", mine_s * 1e6, "us", ref_s * 1e6,
                    "mpi4py.bench pingpong", "within 1.2x", ratio=ref_s / mine_s)
            else:
                add(f"ping-pong {nbytes} B bandwidth", nbytes / mine_s / 1e9, "GB/s",
                    reference[nbytes][1] / 1e9, "mpi4py.bench pingpong (never-written buffers)",
                    "")
                if nbytes in written:
                    add(f"ping-pong {nbytes} B bandwidth", nbytes / mine_s / 1e9, "GB/s",
                        written[nbytes][1] / 1e9,
                        "mpi4py.bench pingpong, MALLOC_PERTURB_ (written buffers)",
                        "within 1.2x")
        # Why the two references differ: the same loop with never-written / written buffers.
        probe = 1 << 20
        if probe in sizes:
            empty_s, written_s = bench_loop_send_buffers(probe)
            mine_s = prof["pingpong_latency_s"][sizes.index(probe)]
            add("bench loop 1 MiB, never-written send buffer", probe / empty_s / 1e9, "GB/s",
                None, "mpi4py.bench's loop and buffers")
            add("ping-pong 1 MiB vs bench loop with a written buffer", probe / mine_s / 1e9,
                "GB/s", probe / written_s / 1e9, "same loop, np.ones send buffer",
                "within 1.2x")
        for nbytes in (8, 1 << 20, PINGPONG_MAX):
            if nbytes in sizes:
                k = sizes.index(nbytes)
                add(f"allreduce 2 ranks {nbytes} B", prof["allreduce_latency_s"][k] * 1e6,
                    "us", None, f"{prof['allreduce_bandwidth_Bps'][k] / 1e9:.3g} GB/s algbw")
    else:
        print(f"allreduce: {rec.get('status')} {rec.get('error')}")
