"""Each kernel's achieved rate against this machine's measured limit, side by side, in one run.

    .venv/bin/python benchmarks/kernels.py [--quick]

Measured in this run (nothing is hard-coded). Every kernel row is interleaved with its limit:
kernel, limit, kernel, limit, ... for ``kernel_limits.ROUNDS`` rounds (5), each side's rate is
its best round, and the table prints the round-by-round ratio range and each side's spread
(slowest / fastest round - 1), so one lucky or unlucky sample of either side cannot make the
ratio. The limits (``benchmarks/kernel_limits.py``):

- gemm GFLOP/s through ``runner.execute`` (1 rank x 1 and x 2 threads, 2 ranks x 1 thread in
  fp64; fp32 and bf16 on 1 x 1) against one numpy matmul (torch for bf16) of the same N,
  precision and total thread count (goal >= 90 %), and gemm's 2-thread speed-up.
- stencil and cg effective bandwidth (their analytic ``bytes_moved`` / runtime) against a
  STREAM-like numpy triad (goal >= 60 %); the stencil's numpy fallback (``HPCDS1MPI_NO_JIT=1``)
  beside it.
- fft against ``scipy.fft.fftn`` of the same array in one process (goal >= 80 %); nbody fp64
  and fp32 against a matmul of the same precision, the FMA stand-in (goal >= 30 %); mltrain
  against the same model's idiomatic torch training in one process, no MPI (goal >= 90 %).
- io write/read bandwidth against raw ``numpy.tofile`` + ``fsync`` / ``numpy.fromfile`` of the
  same bytes; the allreduce kernel's ping-pong against ``mpi4py.bench`` (``kernel_pingpong.py``).

1-rank runs measure their limit in the same process between ``runner.execute`` calls; 2-rank
runs alternate one ``mpiexec`` launch with one limit sample in the parent, which never
initialises MPI. Writes benchmarks/results/kernels.json and kernels.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from hpcds1mpi.launch.launcher_discovery import mpiexec_path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import kernel_limits as limits  # noqa: E402 - the sibling module, found from this folder
from kernel_pingpong import pingpong_rows  # noqa: E402

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
GEMM_N = 2048
RESULT_TAG = "RESULT "


# ----------------------------------------------------------------------------- worker side


def _execute(args, comm, kernel, config, extra, check: bool):
    from hpcds1mpi.measure import runner

    return runner.execute(comm, kernel, args.size, config, warmup=1, min_repeats=args.repeats,
                          max_repeats=args.repeats, extra=extra, check=check)


def worker(args: argparse.Namespace) -> None:
    """Runs under mpiexec: one kernel through runner.execute; rank 0 prints one JSON line.

    With ``--rounds R`` (1-rank runs) the kernel and its limit alternate R times in this
    process: ``runner.execute`` (its own warm-up, ``--repeats`` timed runs; checked in the
    first round), then one limit sample.
    """
    from hpcds1mpi.config import Configuration
    from hpcds1mpi.kernels import get
    from hpcds1mpi.runtime.mpi import world

    comm = world()
    kernel = get(args.name)
    config = Configuration(ranks_per_node=comm.Get_size(), threads=args.threads,
                           precision=args.precision, device=args.device)
    extra = json.loads(args.extra) if args.extra else {}
    interleaved = args.rounds > 0 and comm.Get_size() == 1
    sampler = None
    if interleaved:
        if args.name == "io":
            sampler = limits.raw_file_seconds(int(kernel.work(args.size, 1).bytes_moved) // 2,
                                              tempfile.gettempdir())
            limit_meta = None
        else:
            sampler, limit_work, unit, what, goal = limits.limit_for(
                args.name, args.size, args.precision, args.threads, args.quick)
            limit_meta = {"work": limit_work, "unit": unit, "what": what, "goal": goal}
            cache = limits.cache_triad_for(args.name, args.size)
            if cache is not None:
                cache_sampler, cache_work, cache_what = cache
                limit_meta["cache"] = {"work": cache_work, "what": cache_what}
    cache_s: list[float] = []
    kernel_s, limit_s, profiles = [], [], []
    outcome = None
    for round_ in range(max(1, args.rounds if interleaved else 1)):
        outcome = _execute(args, comm, kernel, config, extra, check=round_ == 0)
        if round_ == 0:
            rel_error = outcome.rel_error  # the checked round's error against the reference
        if outcome.status != "ok":
            break
        kernel_s.append(min(outcome.wall))
        profile = getattr(kernel, "last_profile", None)
        if profile:
            profiles.append({k: (v.tolist() if hasattr(v, "tolist") else v)
                             for k, v in profile.items()})
        if sampler is not None:
            limit_s.append(sampler())
            if limit_meta and "cache" in limit_meta:
                cache_s.append(cache_sampler())
    if comm.Get_rank() == 0:
        work = kernel.work(args.size, comm.Get_size())
        record = {
            "kernel": args.name, "size": args.size, "ranks": comm.Get_size(),
            "threads": args.threads, "precision": args.precision, "device": args.device,
            "status": outcome.status, "error": outcome.error, "rel_error": rel_error,
            "kernel_s": kernel_s, "best_s": min(kernel_s) if kernel_s else float("nan"),
            "blas_threads": outcome.blas_threads, "torch_threads": outcome.torch_threads,
            "work": work.as_dict(), "profile": profiles[-1] if profiles else None,
            "profiles": profiles,
        }
        if interleaved:
            record["limit_s"] = limit_s
            record["cache_limit_s"] = cache_s
            record["limit"] = limit_meta
        print(RESULT_TAG + json.dumps(record), flush=True)


def launch(name: str, size: int, *, ranks: int = 1, threads: int = 1, precision: str = "fp64",
           repeats: int = 2, rounds: int = 0, quick: bool = False, extra: dict | None = None,
           timeout: float = 300, env: dict | None = None, device: str = "cpu") -> dict:
    """Run one kernel configuration under mpiexec and return rank 0's record (``rounds``:
    interleave with its limit that many times in the worker; ``env``: extra environment
    variables for the ranks)."""
    cmd = [mpiexec_path(), "-n", str(ranks), sys.executable, __file__, "--worker", "--name", name,
           "--size", str(size), "--threads", str(threads), "--precision", precision,
           "--repeats", str(repeats), "--device", device, "--rounds", str(rounds)]
    if quick:
        cmd.append("--quick")
    if extra:
        cmd += ["--extra", json.dumps(extra)]
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads),
               **(env or {}))
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    for line in proc.stdout.splitlines():
        if line.startswith(RESULT_TAG):
            return json.loads(line[len(RESULT_TAG):])
    return {"kernel": name, "status": "crashed",
            "error": (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]}


def launch_alternating(name: str, size: int, ranks: int, threads: int, precision: str,
                       sampler, rounds: int) -> tuple[dict, list[float], list[float]]:
    """Multi-rank runs: one mpiexec launch, then one limit sample here, ``rounds`` times.
    Returns (the first launch's record, kernel seconds per round, limit seconds per round)."""
    first, kernel_s, limit_s = None, [], []
    for _ in range(rounds):
        rec = launch(name, size, ranks=ranks, threads=threads, precision=precision)
        first = first or rec
        if rec.get("status") != "ok":
            return rec, [], []
        kernel_s.append(rec["best_s"])
        limit_s.append(sampler())
    return first, kernel_s, limit_s


# ----------------------------------------------------------------------------- the report


def registered() -> list[str]:
    from hpcds1mpi.kernels import names

    return names()


def main(quick: bool, only: set[str] | None = None) -> dict:
    rows: list[dict] = []  # one line of the side-by-side table each
    raw: dict = {"machine": {"python": platform.python_version(), "cpus": os.cpu_count(),
                             "node": platform.node(), "load_start": os.getloadavg()},
                 "rounds": limits.ROUNDS, "quick": quick, "runs": []}
    rounds = limits.ROUNDS

    def wanted(name: str) -> bool:
        return not only or name in only

    def add(what: str, achieved: float, unit: str, limit: float | None, limit_what: str,
            goal: str = "", ratio: float | None = None, summary: dict | None = None) -> None:
        if ratio is None and limit:
            ratio = achieved / limit
        row = {"what": what, "achieved": achieved, "unit": unit, "limit": limit,
               "limit_what": limit_what, "ratio": ratio, "goal": goal}
        if summary:
            row.update({k: summary[k] for k in ("ratio_low", "ratio_high", "spread_kernel",
                                                "spread_limit", "rounds")})
        rows.append(row)
        lim = f"{limit:10.3g}" if limit is not None else f"{'-':>10}"
        rat = f"{ratio:7.1%}" if ratio is not None else f"{'-':>7}"
        extra = (f" [{summary['ratio_low']:.0%}-{summary['ratio_high']:.0%}; spread "
                 f"{summary['spread_kernel']:.0%}/{summary['spread_limit']:.0%}]"
                 if summary else "")
        print(f"{what:44s} {achieved:10.3g} {unit:8s} {lim}  {rat}{extra}  {limit_what}  {goal}",
              flush=True)

    def kernel_row(rec: dict, what: str, kernel_work: float, unit: str, kernel_s=None,
                   limit_s=None, limit_work=None, limit_what=None, goal=None) -> dict | None:
        """Add one interleaved kernel-vs-limit row from a worker record (or explicit samples)."""
        raw["runs"].append(rec)
        if rec.get("status") != "ok":
            print(f"{what}: {rec.get('status')} {rec.get('error')}", flush=True)
            return None
        meta = rec.get("limit") or {}
        summary = limits.summarize(kernel_s or rec["kernel_s"], limit_s or rec["limit_s"],
                                   kernel_work, limit_work or meta["work"])
        scale = 1e9
        add(what, summary["achieved"] / scale, unit, summary["limit"] / scale,
            limit_what or meta["what"], f"goal {goal or meta['goal']}", summary=summary)
        return summary

    print(f"{'measurement':44s} {'achieved':>10s} {'unit':8s} {'limit':>10s}  {'ratio':>7s} "
          "[per-round ratio range; spread kernel/limit]  limit measured as / goal", flush=True)
    n = 1024 if quick else GEMM_N

    # --- gemm in every declared precision, and on 2 threads / 2 ranks
    gemm = {}
    for ranks, threads, precision in ((1, 1, "fp64"), (1, 2, "fp64"), (2, 1, "fp64"),
                                      (1, 1, "fp32"), (1, 1, "bf16")) if wanted("gemm") else ():
        what = f"gemm N={n} {precision} {ranks}rank x {threads}thr"
        if ranks == 1:
            rec = launch("gemm", n, threads=threads, precision=precision, rounds=rounds,
                         quick=quick)
            gemm[(ranks, threads, precision)] = kernel_row(rec, what, 2.0 * n ** 3, "GFLOP/s")
        else:
            sampler = limits.matmul_seconds(n, ranks * threads, precision)
            rec, kernel_s, limit_s = launch_alternating("gemm", n, ranks, threads, precision,
                                                        sampler, rounds)
            gemm[(ranks, threads, precision)] = kernel_row(
                rec, what, 2.0 * n ** 3, "GFLOP/s", kernel_s, limit_s, 2.0 * n ** 3,
                f"one numpy {precision} matmul, {ranks * threads} thr", ">= 90%")
    one, two = gemm.get((1, 1, "fp64")), gemm.get((1, 2, "fp64"))
    if one and two:
        speedup = two["achieved"] / one["achieved"]
        add("gemm fp64 speed-up 2 threads / 1 thread", speedup, "x", 2.0, "ideal 2x",
            "2 thr faster than 1", ratio=speedup / 2.0)

    # --- memory-bound kernels against the triad
    from hpcds1mpi.kernels import get

    for name in [k for k in ("stencil", "cg") if wanted(k)]:
        sizes = get(name).default_sizes
        size = sizes[len(sizes) // 2] if quick else sizes[-2]
        rec = launch(name, size, rounds=rounds, quick=quick)
        moved = rec.get("work", {}).get("bytes_moved", 0.0)
        kernel_row(rec, f"{name} size={size} fp64 1x1 effective", moved, "GB/s")
        if rec.get("status") == "ok" and rec.get("cache_limit_s"):
            cache = rec["limit"]["cache"]
            kernel_row(rec, f"{name} size={size} fp64 1x1 vs same-size triad", moved, "GB/s",
                       limit_s=rec["cache_limit_s"], limit_work=cache["work"],
                       limit_what=cache["what"], goal="(information)")
            raw["runs"].pop()  # the same record, kept once
        if name == "stencil":
            # The numpy fallback (no numba) side by side: 6 ufunc passes per point.
            rec = launch(name, size, rounds=rounds, quick=quick, env={"HPCDS1MPI_NO_JIT": "1"})
            kernel_row(rec, f"stencil size={size} 1x1, numpy fallback (no numba)",
                       rec.get("work", {}).get("bytes_moved", 0.0), "GB/s", goal="(none)")

    # --- fft, nbody (fp64 and fp32), mltrain against their own limits
    for name, precision in (("fft", "fp64"), ("nbody", "fp64"), ("nbody", "fp32"),
                            ("mltrain", "fp32")):
        if not wanted(name):
            continue
        kernel = get(name)
        if kernel.unavailable:
            print(f"{name}: unavailable: {kernel.unavailable}")
            continue
        sizes = kernel.default_sizes
        size = sizes[2] if quick else sizes[len(sizes) // 2]
        rec = launch(name, size, precision=precision, rounds=rounds, quick=quick)
        flops = rec.get("work", {}).get("flops", 0.0)
        kernel_row(rec, f"{name} size={size} {precision} 1x1", flops, "GFLOP/s")

    # --- communication: ping-pong and allreduce against mpi4py.bench
    if wanted("allreduce"):
        pingpong_rows(add, raw, launch)

    # --- io vs raw file I/O of the same bytes, interleaved in the io worker
    io_size = (1 << 22) if quick else (1 << 24)
    rec = launch("io", io_size, rounds=rounds, repeats=1) if wanted("io") else {}
    raw["runs"].append(rec)
    if not rec:
        pass
    elif rec.get("status") == "ok" and rec["profiles"]:
        nbytes = rec["profiles"][0]["bytes"]
        for side, column in (("write+fsync", 0), ("read", 1)):
            key = "write_Bps" if column == 0 else "read_Bps"
            kernel_s = [nbytes / p[key] for p in rec["profiles"]]
            limit_s = [pair[column] for pair in rec["limit_s"]]
            summary = limits.summarize(kernel_s, limit_s, nbytes, nbytes)
            what = "numpy tofile+fsync" if column == 0 else "numpy fromfile (page cache)"
            add(f"io {nbytes / 1e6:.0f} MB HDF5 {side}", summary["achieved"] / 1e9, "GB/s",
                summary["limit"] / 1e9, what, "(no goal)", summary=summary)
    else:
        print(f"io: {rec.get('status')} {rec.get('error')}")

    raw["table"] = rows
    raw["machine"]["load_end"] = os.getloadavg()
    return raw


def goal_met(goal: str, ratio: float | None) -> str:
    """"yes" / "**no**" for a ``goal >= N%`` row (best against best), "" for other goals."""
    import re

    match = re.search(r">=\s*([\d.]+)%", goal or "")
    if not match or ratio is None:
        return ""
    return "yes" if ratio >= float(match[1]) / 100 else "**no**"


def write_results(raw: dict) -> None:
    RESULTS.mkdir(parents=True, exist_ok=True)
    raw["when"] = time.strftime("%Y-%m-%d %H:%M:%S %Z")
    (RESULTS / "kernels.json").write_text(json.dumps(raw, indent=1, default=str) + "\n")
    load = raw["machine"]
    lines = [
        "# Kernel rates vs this machine's measured limits",
        "",
        f"Measured {raw['when']} on `{load['node']}` ({load['cpus']} CPUs) by "
        f"`.venv/bin/python benchmarks/kernels.py{' --quick' if raw['quick'] else ''}` in "
        f"{raw.get('runtime_s', 0):.0f} s; every number measured in that one run. Load average "
        f"(1 min) {load['load_start'][0]:.1f} at the start, {load['load_end'][0]:.1f} at the end.",
        "",
        "| measurement | achieved | unit | limit | ratio | ratio per round | spread kernel / "
        "limit | limit measured as | goal | met |",
        "| --- | ---: | --- | ---: | ---: | ---: | ---: | --- | --- | --- |",
    ]
    for row in raw["table"]:
        limit = f"{row['limit']:.3g}" if row["limit"] is not None else "-"
        ratio = f"{row['ratio']:.1%}" if row["ratio"] is not None else "-"
        per_round = (f"{row['ratio_low']:.0%}-{row['ratio_high']:.0%}" if "ratio_low" in row
                     else "-")
        spread = (f"{row['spread_kernel']:.0%} / {row['spread_limit']:.0%}"
                  if "spread_kernel" in row else "-")
        lines.append(f"| {row['what']} | {row['achieved']:.3g} | {row['unit']} | {limit} | "
                     f"{ratio} | {per_round} | {spread} | {row['limit_what']} | {row['goal']} | "
                     f"{goal_met(row['goal'], row['ratio'])} |")
    lines += ["", f"Kernel rows: kernel and limit interleaved for {raw['rounds']} rounds; each "
              "side's rate is its fastest round (a kernel round is the best of 2 timed runs "
              "after a warm-up), the ratio is best against best, 'ratio per round' the range of "
              "each round's kernel against the limit measured next to it, 'spread' the slowest "
              "round over the fastest minus 1. Memory-bound rates are analytic `bytes_moved` "
              "(the work model) / runtime. nbody's flops are the usual 20 per pair. "
              "Ping-pong latency ratio is reference / ours (1.0 = same; >= 0.83 is within "
              "1.2x). mpi4py.bench as shipped sends `numpy.empty` buffers it never writes: "
              "above glibc's mmap threshold their pages are all the kernel's zero page, so its "
              "sender copies one cache-hot 4 KiB page (the 'never-written' rows); the same "
              "unmodified tool under `MALLOC_PERTURB_=165` sends buffers filled at allocation, "
              "as an application's are, and is the reference the goal is judged against. I/O "
              "reads are served from the page cache. The machine is shared: absolute rates "
              "move with its load; the interleaved ratios are what to quote."]
    (RESULTS / "kernels.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes (iterating)")
    parser.add_argument("--only", nargs="+", metavar="KERNEL",
                        help="measure only these kernels (iterating; the results files are "
                        "then not written)")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--name")
    parser.add_argument("--size", type=int)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--precision", default="fp64")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=0)
    parser.add_argument("--extra", default="")
    parser.add_argument("--device", default="cpu", choices=("cpu", "gpu"))
    arguments = parser.parse_args()
    if arguments.worker:
        worker(arguments)
    else:
        started = time.perf_counter()
        results = main(arguments.quick, set(arguments.only or ()))
        results["runtime_s"] = time.perf_counter() - started
        if arguments.only:
            print(f"--only: results not written ({results['runtime_s']:.0f} s)")
            sys.exit(0)
        write_results(results)
        print(f"wrote {RESULTS / 'kernels.json'} and kernels.md in {results['runtime_s']:.0f} s")
