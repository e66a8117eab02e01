"""GPU kernels against the GPU's measured limits and against the same node's CPUs, in one run.

    python benchmarks/gpu.py [--out DIR] [--quick]
    python benchmarks/gpu.py --rerender DIR/gpu.json   # the table again from stored records

Needs a CUDA GPU that cupy sees (torch CUDA too for bf16 and mltrain); elsewhere it exits 2
with a one-line message. Measured in this run, nothing hard-coded:

- the GPU's limits: one cupy matmul (fp64, fp32) and one torch bf16 matmul of N x N on data
  already on the device; the same with the host-to-device copies of A and B added (the gemm
  kernel times those: a job's inputs start in host memory); a fused device triad
  ``a = b + s * c`` counted as STREAM does (24 bytes per element); the host-to-device copy rate.
- every GPU kernel through ``runner.execute`` on 1 rank, and gemm on 2 ranks sharing the GPU
  (buffers staged through the host: the mpich wheel's MPI is not CUDA-aware);
- the same kernel, size and precision on the node's CPUs (1 rank x every core as threads), so
  GPU / CPU is a ratio of two runs made side by side.

Writes DIR/gpu.json and DIR/gpu.md (default: benchmarks/results/gpu_<GPU model>).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from kernels import launch  # noqa: E402  (benchmarks/kernels.py: the mpiexec worker)

#: (kernel, precision, size) measured on GPU and CPU; sizes are each kernel's largest default
#: size (gemm larger: one 3072^3 product is a few ms on a datacentre GPU).
CASES = [("gemm", "fp64", 8192), ("gemm", "fp32", 8192), ("gemm", "bf16", 8192),
         ("stencil", "fp64", 256), ("stencil", "fp32", 256),
         ("fft", "fp64", 224), ("fft", "fp32", 224),
         ("cg", "fp64", 88), ("cg", "fp32", 88),
         ("nbody", "fp64", 12288), ("nbody", "fp32", 12288),
         ("mltrain", "fp32", 32768), ("mltrain", "bf16", 32768)]
QUICK_SIZES = {"gemm": 2048, "stencil": 128, "fft": 96, "cg": 48, "nbody": 4096,
               "mltrain": 4096}


def gpu_name() -> str:
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=10, check=True).stdout
        return out.strip().splitlines()[0].strip()
    except (OSError, subprocess.SubprocessError, IndexError):
        return "unknown GPU"


def _best_of(fn, repeats: int, sync) -> float:
    fn()
    sync()
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        sync()
        best = min(best, time.perf_counter() - start)
    return best


def device_limits(n: int, repeats: int = 5) -> dict:
    """The GPU's own rates, measured here (see the module docstring)."""
    import cupy as cp
    import numpy as np

    sync = cp.cuda.Device().synchronize
    rng = np.random.default_rng(0)
    limits: dict = {}
    for precision, dtype in (("fp64", np.float64), ("fp32", np.float32)):
        a_host = rng.standard_normal((n, n)).astype(dtype)
        b_host = rng.standard_normal((n, n)).astype(dtype)
        a, b = cp.asarray(a_host), cp.asarray(b_host)
        out = cp.empty_like(a)
        compute = _best_of(lambda: cp.matmul(a, b, out=out), repeats, sync)
        with_copies = _best_of(lambda: cp.matmul(cp.asarray(a_host), cp.asarray(b_host),
                                                 out=out), repeats, sync)
        limits[f"matmul_{precision}_gflops"] = 2.0 * n**3 / compute / 1e9
        limits[f"matmul_h2d_{precision}_gflops"] = 2.0 * n**3 / with_copies / 1e9
    import torch

    if torch.cuda.is_available():
        a_host = torch.randn(n, n, dtype=torch.bfloat16)
        b_host = torch.randn(n, n, dtype=torch.bfloat16)
        a, b = a_host.cuda(), b_host.cuda()
        out = torch.empty_like(a)
        tsync = torch.cuda.synchronize
        compute = _best_of(lambda: torch.matmul(a, b, out=out), repeats, tsync)
        with_copies = _best_of(lambda: torch.matmul(a_host.cuda(), b_host.cuda(), out=out),
                               repeats, tsync)
        limits["matmul_bf16_gflops"] = 2.0 * n**3 / compute / 1e9
        limits["matmul_h2d_bf16_gflops"] = 2.0 * n**3 / with_copies / 1e9
    elements = 1 << 27  # 1 GiB per fp64 array: far past the L2
    b, c = cp.random.random(elements), cp.random.random(elements)
    a = cp.empty_like(b)
    triad = cp.ElementwiseKernel("float64 b, float64 c, float64 s", "float64 a", "a = b + s * c",
                                 "hpcds1mpi_triad")
    seconds = _best_of(lambda: triad(b, c, 3.0, a), repeats, sync)
    limits["triad_gbs"] = 24.0 * elements / seconds / 1e9
    host = np.ones(elements // 2)
    seconds = _best_of(lambda: cp.asarray(host), repeats, sync)
    limits["h2d_gbs"] = host.nbytes / seconds / 1e9
    cp.get_default_memory_pool().free_all_blocks()
    return limits


#: Kernels whose limit is memory bandwidth: their rate is bytes moved per second.
BANDWIDTH_BOUND = {"stencil"}


#: Bytes per element: the kernels' work models count 8 whatever the precision.
ITEM_BYTES = {"fp64": 8, "fp32": 4, "bf16": 2}


def rate(record: dict) -> tuple[float, str]:
    """(achieved rate, unit) from the kernel's analytic work and its best repeat."""
    work, best = record["work"], record["best_s"]
    if work["flops"] > 0 and record["kernel"] not in BANDWIDTH_BOUND:
        return work["flops"] / best / 1e9, "GFLOP/s"
    scale = ITEM_BYTES[record["precision"]] / 8
    return work["bytes_moved"] * scale / best / 1e9, "GB/s"


def case_row(kernel: str, precision: str, size: int, gpu: dict, cpu: dict,
             limits: dict) -> dict:
    """One line of the table from the GPU and CPU records of a case."""
    row = {"kernel": kernel, "precision": precision, "size": size,
           "gpu_status": gpu.get("status"), "cpu_status": cpu.get("status"),
           "gpu_error": gpu.get("error"), "cpu_error": cpu.get("error")}
    if gpu.get("status") == "ok":
        row["gpu_best_s"] = gpu["best_s"]
        row["gpu_rate"], row["unit"] = rate(gpu)
    if cpu.get("status") == "ok":
        row["cpu_best_s"] = cpu["best_s"]
        row["cpu_rate"], row["unit"] = rate(cpu)
    if "gpu_best_s" in row and "cpu_best_s" in row:
        row["gpu_speedup"] = row["cpu_best_s"] / row["gpu_best_s"]
    if kernel == "gemm" and "gpu_rate" in row:
        row["limit_device"] = limits.get(f"matmul_{precision}_gflops")
        row["limit_with_copies"] = limits.get(f"matmul_h2d_{precision}_gflops")
    if kernel == "stencil" and "gpu_rate" in row:
        row["limit_device"] = limits["triad_gbs"]
    return row


def rerender(path: Path) -> None:
    """Recompute every row of a gpu.json from its stored run records (runs alternate GPU, CPU
    per case, then the 2-rank gemm) and rewrite gpu.json and gpu.md beside it."""
    result = json.loads(path.read_text())
    runs = result["runs"]
    result["rows"] = [case_row(r["kernel"], r["precision"], r["size"], runs[2 * i],
                               runs[2 * i + 1], result["limits"])
                      for i, r in enumerate(result["rows"])]
    result["rerendered"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    write(path.parent, result)
    (path.parent / "gpu.md").write_text(markdown(result))


def safe_launch(name: str, size: int, **kwargs) -> dict:
    try:
        return launch(name, size, **kwargs)
    except subprocess.TimeoutExpired:
        return {"kernel": name, "status": "timeout", "error": f"over {kwargs.get('timeout')} s"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=None, help="results folder")
    parser.add_argument("--quick", action="store_true", help="small sizes (smoke test)")
    parser.add_argument("--cpu-threads", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--rerender", metavar="GPU_JSON",
                        help="recompute the table of a stored gpu.json (no GPU needed)")
    args = parser.parse_args(argv)
    if args.rerender:
        rerender(Path(args.rerender))
        return 0
    try:
        import cupy

        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:  # noqa: BLE001 - any failure means: no usable GPU here
        print(f"error: no CUDA GPU usable through cupy here ({type(exc).__name__}); run this on "
              "a GPU node with cupy installed (pip install 'hpcds1mpi[gpu]')", file=sys.stderr)
        return 2
    if count < 1:
        print("error: cupy sees no CUDA GPU; run this on a GPU node", file=sys.stderr)
        return 2
    model = gpu_name()
    out_dir = Path(args.out) if args.out else \
        HERE / "results" / ("gpu_" + "".join(ch if ch.isalnum() else "_" for ch in model).lower())
    out_dir.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    n_gemm = QUICK_SIZES["gemm"] if args.quick else 8192
    limits = device_limits(n_gemm)
    print(json.dumps(limits), flush=True)
    rows, runs = [], []
    for kernel, precision, size in CASES:
        if args.quick:
            size = QUICK_SIZES[kernel]
        gpu = safe_launch(kernel, size, precision=precision, device="gpu", timeout=240)
        cpu = safe_launch(kernel, size, precision=precision, threads=args.cpu_threads,
                          timeout=240)
        runs += [gpu, cpu]
        row = case_row(kernel, precision, size, gpu, cpu, limits)
        rows.append(row)
        print(json.dumps(row), flush=True)
        write(out_dir, {"gpu": model, "partial": True, "limits": limits, "rows": rows,
                        "runs": runs})
    two = safe_launch("gemm", n_gemm, ranks=2, precision="fp32", device="gpu", timeout=240,
                      env={"HPCDS1MPI_GPU_AWARE": "0"})
    runs.append(two)
    shared = {"status": two.get("status"), "error": two.get("error")}
    if two.get("status") == "ok":
        shared["best_s"] = two["best_s"]
        shared["gflops"] = 2.0 * n_gemm**3 / two["best_s"] / 1e9
    result = {"gpu": model, "gpu_count": count, "cpu_threads": args.cpu_threads,
              "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
              "gemm_n": n_gemm, "limits": limits,
              "rows": rows, "gemm_2_ranks_fp32": shared, "runs": runs,
              "runtime_s": time.perf_counter() - started}
    write(out_dir, result)
    (out_dir / "gpu.md").write_text(markdown(result))
    print(markdown(result))
    return 0


def write(out_dir: Path, result: dict) -> None:
    """gpu.json, rewritten after every case so a run stopped early keeps what it measured."""
    (out_dir / "gpu.json").write_text(json.dumps(result, indent=2))


def markdown(result: dict) -> str:
    lim = result["limits"]
    lines = [f"# GPU kernels on {result['gpu']}", "",
             f"Measured {result['date']} by `python benchmarks/gpu.py` in "
             f"{result['runtime_s']:.0f} s. Each kernel through `runner.execute` on 1 rank "
             f"(best of 3 repeats after a warm-up) on the GPU, and on the same node's CPUs as "
             f"1 rank x {result['cpu_threads']} threads. Rates from the kernel's analytic work "
             "(memory-bound kernels: bytes at the run's precision)."
             + (f" Table recomputed from the stored run records on {result['rerendered']} "
                "(`--rerender`)." if result.get("rerendered") else ""),
             "", "GPU limits measured in the same run: "
             f"matmul N={result['gemm_n']} on device data fp64 {lim['matmul_fp64_gflops']:.0f}, "
             f"fp32 {lim['matmul_fp32_gflops']:.0f}, bf16 {lim.get('matmul_bf16_gflops', 0):.0f}"
             " GFLOP/s; with the host-to-device copies of A and B: "
             f"{lim['matmul_h2d_fp64_gflops']:.0f} / {lim['matmul_h2d_fp32_gflops']:.0f} / "
             f"{lim.get('matmul_h2d_bf16_gflops', 0):.0f} GFLOP/s; fused triad "
             f"{lim['triad_gbs']:.0f} GB/s; host-to-device copy {lim['h2d_gbs']:.1f} GB/s.", "",
             "| kernel | precision | size | GPU s | CPU s | GPU speed-up | GPU rate | "
             "% of GPU limit | % of limit incl. copies |", "|---|---|---|---|---|---|---|---|---|"]
    for r in result["rows"]:
        def cell(key: str, fmt: str) -> str:
            return format(r[key], fmt) if r.get(key) is not None else "-"

        status = "" if r["gpu_status"] == "ok" else f" ({r['gpu_status']}: {r['gpu_error']})"
        pct = (f"{r['gpu_rate'] / r['limit_device']:.0%}" if r.get("limit_device") else "-")
        pct_copies = (f"{r['gpu_rate'] / r['limit_with_copies']:.0%}"
                      if r.get("limit_with_copies") else "-")
        rate_cell = f"{r['gpu_rate']:.4g} {r['unit']}" if "gpu_rate" in r else "-"
        lines.append(f"| {r['kernel']} | {r['precision']} | {r['size']} | "
                     f"{cell('gpu_best_s', '.4g')}{status} | {cell('cpu_best_s', '.4g')} | "
                     f"{cell('gpu_speedup', '.1f')} | {rate_cell} | {pct} | {pct_copies} |")
    two = result["gemm_2_ranks_fp32"]
    if two.get("status") == "ok":
        one = next((r for r in result["rows"] if r["kernel"] == "gemm"
                    and r["precision"] == "fp32" and "gpu_best_s" in r), None)
        versus = f" ({one['gpu_best_s'] / two['best_s']:.2f}x one rank)" if one else ""
        lines += ["", f"gemm fp32 N={result['gemm_n']} on 2 ranks sharing the GPU, buffers "
                      f"staged through the host: {two['best_s']:.4g} s, {two['gflops']:.0f} "
                      f"GFLOP/s{versus}."]
    else:
        lines += ["", f"gemm on 2 ranks sharing the GPU: {two.get('status')} "
                      f"({two.get('error')})"]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
