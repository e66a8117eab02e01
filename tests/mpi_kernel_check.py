"""Run every registered kernel at a small size on COMM_WORLD and print one JSON line per result.

Usage (collective; rank 0 prints)::

    mpiexec -n K python tests/mpi_kernel_check.py [--corrupt] [--modes normal,corrupt]
        [--device cpu|gpu] [--kernels stencil,cg] [--precisions fp64,fp32,bf16] [--size N]

For each kernel of ``hpcds1mpi.kernels.names()`` and each precision of fp64 / fp32 / bf16 (the
declared ones and the undeclared ones, which must come back ``unsupported``), it calls
``runner.execute`` once (no warm-up, one repeat) and prints::

    {"kernel": ..., "precision": ..., "mode": "normal"|"corrupt", "ranks": K, "device": ...,
     "declared": bool, "status": ..., "rel_error": float|null, "error": "...", "size": N,
     "uses_torch": bool, "unavailable": str|null, "seconds": float,
     "array_module": "numpy"|"cupy"|"fakecupy"|null}

then a last line ``{"done": true, "results": count}``. ``--corrupt`` (= ``--modes corrupt``)
perturbs every result before the check (``runner.execute(corrupt=True)``), so every declared
precision must come back ``wrong``. The size is the kernel's ``test_size`` attribute if it has
one, else its smallest default size, raised to ``kernel.min_size(K)``; a kernel's optional
``test_extra`` dict (e.g. fewer CG iterations) is passed as ``extra``.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time

PRECISIONS = ("fp64", "fp32", "bf16")


def test_size(kernel, ranks: int, override: int | None) -> int:
    """The small size a kernel is checked at on ``ranks`` ranks."""
    size = override or getattr(kernel, "test_size", None) or kernel.default_sizes[0]
    return max(int(size), int(kernel.min_size(ranks)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corrupt", action="store_true", help="only the corrupted-result mode")
    parser.add_argument("--modes", default=None, help="comma list of normal,corrupt")
    parser.add_argument("--device", default="cpu", choices=("cpu", "gpu"))
    parser.add_argument("--kernels", default=None, help="comma list (default: all registered)")
    parser.add_argument("--precisions", default=",".join(PRECISIONS))
    parser.add_argument("--size", type=int, default=None, help="one size for every kernel")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    from hpcds1mpi import kernels
    from hpcds1mpi.config import Configuration
    from hpcds1mpi.runtime.mpi import world
    from hpcds1mpi.measure.runner import execute

    comm = world()
    ranks, rank = comm.Get_size(), comm.Get_rank()
    module = array_module_name(args.device)
    modes = (args.modes.split(",") if args.modes else ["corrupt" if args.corrupt else "normal"])
    names = args.kernels.split(",") if args.kernels else kernels.names()
    count = 0
    for name in names:
        for precision in args.precisions.split(","):
            for mode in modes:
                kernel = kernels.get(name)
                size = test_size(kernel, ranks, args.size)
                config = Configuration(nodes=1, ranks_per_node=ranks, threads=1,
                                       device=args.device, precision=precision)
                started = time.perf_counter()
                outcome = execute(comm, kernel, size, config, seed=args.seed, warmup=0,
                                  max_repeats=1, corrupt=(mode == "corrupt"),
                                  extra=getattr(kernel, "test_extra", None))
                count += 1
                seconds = time.perf_counter() - started
                if rank == 0:
                    rel = outcome.rel_error
                    record = {
                        "kernel": name, "precision": precision, "mode": mode, "ranks": ranks,
                        "device": args.device, "size": size,
                        "declared": precision in kernel.precisions,
                        "status": outcome.status,
                        "rel_error": None if rel is None or math.isnan(rel) else float(rel),
                        "error": outcome.error,
                        "uses_torch": bool(getattr(kernel, "uses_torch", False)),
                        "unavailable": kernel.unavailable,
                        "seconds": round(seconds, 3), "array_module": module,
                    }
                    print(json.dumps(record), flush=True)
    if rank == 0:
        print(json.dumps({"done": True, "results": count}), flush=True)
    return 0


def array_module_name(device: str) -> str | None:
    """Name of the array module the runner uses for ``device`` (numpy, cupy, fakecupy)."""
    from hpcds1mpi.runtime.arrays import array_module
    from hpcds1mpi.errors import UnsupportedError

    try:
        return array_module(device).__name__
    except UnsupportedError:
        return None


if __name__ == "__main__":
    sys.exit(main())
