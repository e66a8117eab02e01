"""Scale test: train the surrogate bundle on a 231,000-row job table; score 10,000 configurations.

Acceptance (issue #4): training finishes in <= 5 min on this 2-core machine with peak memory
<= 8 GB; predicting 10,000 configurations takes <= 50 ms.

The table is SYNTHETIC (``analysis/gen_jobtable.py``: PM100-shaped, invented applications) and
goes through the real ``ingest`` path; it measures time and memory only — no accuracy number
from it is ever reported.

Training runs in a child process pinned to 2 cores so its peak RSS (``ru_maxrss`` of the
child) and wall time are its own. Prediction is measured in another child that loads the
bundle cold (no torch import), then scores the same 10,000-row frame repeatedly.

Run: ``python benchmarks/train_scale.py`` (add ``--rows 20000`` for a quick check).
Writes ``benchmarks/results/train_scale.json`` and ``.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"


def child_train(table: str, out: str, rate: float, seed: int) -> None:
    import pandas as pd

    from hpcds1mpi.surrogates.bundle import train_bundle

    t0 = time.perf_counter()
    frame = pd.read_parquet(table)
    t_read = time.perf_counter() - t0
    bundle = train_bundle(frame, sample_rate=rate, seed=seed, threads=2)
    t_train = time.perf_counter() - t0 - t_read
    bundle.save(out)
    t_total = time.perf_counter() - t0
    print(json.dumps({"read_s": t_read, "train_s": t_train, "total_s": t_total,
                      "sampling": bundle.manifest["sampling"],
                      "train_seconds": bundle.manifest["metrics"]["train_seconds"],
                      "targets": bundle.manifest["targets"],
                      "family": bundle.manifest["family"],
                      "n_members": bundle.manifest["n_members"]}))


def child_predict(bundle_dir: str, table: str, n: int, repeats: int) -> None:
    t0 = time.perf_counter()
    import numpy as np
    import pandas as pd

    from hpcds1mpi.surrogates.bundle import load_bundle

    bundle = load_bundle(bundle_dir)
    t_load = time.perf_counter() - t0
    frame = pd.read_parquet(table)
    # 10,000 configurations: the table's own rows (real input columns), as System 1 would pass.
    from hpcds1mpi.surrogates.features import normalise_frame

    configs = normalise_frame(frame.sample(n, random_state=0, replace=len(frame) < n))
    configs = configs[bundle.input_columns].reset_index(drop=True)
    t0 = time.perf_counter()
    bundle.predict(configs)
    first = time.perf_counter() - t0
    walls, cpus = [], []
    for _ in range(repeats):
        w0, c0 = time.perf_counter(), time.process_time()
        out = bundle.predict(configs)
        walls.append(time.perf_counter() - w0)
        cpus.append(time.process_time() - c0)
    assert len(out) == n and np.isfinite(out["runtime_s"]).all()
    print(json.dumps({"load_s": t_load, "first_predict_ms": 1e3 * first,
                      "predict_ms_median": 1e3 * float(np.median(walls)),
                      "predict_ms_min": 1e3 * float(np.min(walls)),
                      "predict_cpu_ms_median": 1e3 * float(np.median(cpus)),
                      "torch_imported": "torch" in sys.modules, "rows": n}))


def _change(value: float, reference: float) -> str:
    cut = 1.0 - value / reference
    return f"{cut:.1%} less" if cut >= 0 else f"{-cut:.1%} MORE"


def run_child(args: list[str], cores: set[int] | None, env: dict | None = None
              ) -> tuple[dict, float, float, float]:
    """Run this script as a child; return (its JSON, wall s, peak RSS GB, CPU s of the child).

    CPU seconds are reported next to wall time because this machine is shared: on a loaded
    box the wall time measures the other tenants as much as this code.
    """
    usage0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    before = usage0.ru_maxrss

    def pin():
        if cores:
            os.sched_setaffinity(0, cores)

    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True,
                          preexec_fn=pin, env={**os.environ, **(env or {})})
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"child failed: {proc.stderr[-3000:]}")
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (usage.ru_utime + usage.ru_stime) - (usage0.ru_utime + usage0.ru_stime)
    # ru_maxrss of children is the max over all waited children: run training first.
    return (json.loads(proc.stdout.strip().splitlines()[-1]), wall,
            max(usage.ru_maxrss, before) / 1e6, cpu)


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=231_000)
    parser.add_argument("--rate", type=float, default=0.75,
                        help="sampling rate (the paper's recommended 75 %%)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--predict-rows", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--workdir", default=None)
    parser.add_argument("--child", choices=["train", "predict"], default=None)
    parser.add_argument("--table", default=None)
    parser.add_argument("--bundle", default=None)
    args = parser.parse_args(argv)
    if args.child == "train":
        child_train(args.table, args.bundle, args.rate, args.seed)
        return {}
    if args.child == "predict":
        child_predict(args.bundle, args.table, args.predict_rows, args.repeats)
        return {}

    work = Path(args.workdir or tempfile.mkdtemp(prefix="train_scale_"))
    work.mkdir(parents=True, exist_ok=True)
    raw, table, bundle_dir = work / "raw.parquet", work / "jobs.parquet", work / "model"
    t0 = time.perf_counter()
    from hpcds1mpi.records import ingest
    from hpcds1mpi.analysis import gen_jobtable

    gen_jobtable.main(["--rows", str(args.rows), "--seed", str(args.seed), "--out", str(raw)])
    frame, report = ingest.read_job_parquet(raw, "pm100")
    frame.to_parquet(table, index=False)
    t_prep = time.perf_counter() - t0
    cores = set(sorted(os.sched_getaffinity(0))[:2])
    # Training at the rate (its peak memory is the first child's: measured before any other)
    # and, for sampling's training-time cut side by side (timing only), at 100 %: alternating,
    # 3 each (a single pair differed by +-7 % either way here); medians compared.
    import numpy as np

    timing: dict[str, list[dict]] = {"rate": [], "full": []}
    for round_ in range(3):
        for key, rate in (("rate", args.rate), ("full", 1.0)):
            out_dir = bundle_dir if key == "rate" else work / "model_100"
            child, wall, peak_gb, cpu = run_child(
                ["--child", "train", "--table", str(table), "--bundle", str(out_dir),
                 "--rate", str(rate), "--seed", str(args.seed)], cores)
            if round_ == 0 and key == "rate":
                train, train_wall, train_peak_gb, train_cpu = child, wall, peak_gb, cpu
            timing[key].append({"wall_s": wall, "cpu_s": cpu,
                                "sampling_s": child["train_seconds"]["sampling"],
                                "fit_s": child["train_seconds"]["fit"]})
    median = {key: {m: float(np.median([r[m] for r in runs_])) for m in runs_[0]}
              for key, runs_ in timing.items()}
    predict_args = ["--child", "predict", "--table", str(table), "--bundle", str(bundle_dir),
                    "--predict-rows", str(args.predict_rows), "--repeats", str(args.repeats)]
    # Side by side: the compiled paths (numba forest + embedding pass) and, in the same run,
    # libxgboost + the numpy embedding pass (HPCDS1MPI_NO_JIT=1), alternating, best of 3 each.
    runs: dict[str, list[dict]] = {"compiled": [], "libxgboost_numpy": []}
    for _ in range(3):
        runs["compiled"].append(run_child(predict_args, cores)[0])
        runs["libxgboost_numpy"].append(
            run_child(predict_args, cores, {"HPCDS1MPI_NO_JIT": "1"})[0])
    pred, plain = (min(r, key=lambda x: x["predict_ms_median"]) for r in runs.values())
    results = {
        "what": "SYNTHETIC PM100-shaped job table (analysis/gen_jobtable.py) -> ingest -> train; "
                "timing and memory only",
        "rows": int(len(frame)), "ingest_report": str(report), "prep_s": t_prep,
        "cores": sorted(cores), "load_avg_1min_at_end": os.getloadavg()[0],
        "train_wall_s": train_wall, "train_cpu_s": train_cpu,
        "train_peak_rss_gb": train_peak_gb, "train": train,
        "rate_vs_100_timing": timing, "rate_vs_100_median": median,
        "predict": pred, "predict_without_jit": plain,
        "predict_all_runs": runs, "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "acceptance": {
            "train_under_5_min": train_wall <= 300.0,
            "peak_under_8_gb": train_peak_gb <= 8.0,
            "predict_10k_under_50_ms": pred["predict_ms_median"] <= 50.0,
        },
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    stem = "train_scale" if args.rows == 231_000 else f"train_scale_{args.rows}"
    (RESULTS / f"{stem}.json").write_text(json.dumps(results, indent=2))
    md = [
        f"# Training scale test ({results['date']})", "",
        f"{results['what']}. {results['rows']} rows, sampling rate {args.rate}, cores "
        f"{results['cores']}, 1-min load average at the end {results['load_avg_1min_at_end']:.1f} "
        "(the machine is shared; re-run in a quiet period for clean timings).", "",
        "| measure | value | limit |", "|---|---|---|",
        f"| training wall time (child, incl. save) | {train_wall:.1f} s | 300 s |",
        f"| training CPU time (user + system, 2 cores) | {train_cpu:.1f} s | |",
        f"| of which sampling / fit | {train['train_seconds']['sampling']:.1f} s / "
        f"{train['train_seconds']['fit']:.1f} s | |",
        f"| peak RSS of training | {train_peak_gb:.2f} GB | 8 GB |",
        f"| training at {args.rate:.0%} vs 100 %, 3 alternating runs each, median wall / CPU | "
        f"{median['rate']['wall_s']:.1f} s / {median['rate']['cpu_s']:.1f} s vs "
        f"{median['full']['wall_s']:.1f} s / {median['full']['cpu_s']:.1f} s: "
        f"{_change(median['rate']['wall_s'], median['full']['wall_s'])} wall | |",
        f"| of which sampling / fit (medians) | {median['rate']['sampling_s']:.1f} s / "
        f"{median['rate']['fit_s']:.1f} s vs {median['full']['sampling_s']:.1f} s / "
        f"{median['full']['fit_s']:.1f} s | |",
        f"| cold bundle load (no torch: {not pred['torch_imported']}) | {pred['load_s']:.2f} s | |",
        f"| predict {pred['rows']} configurations, median of {args.repeats} | "
        f"{pred['predict_ms_median']:.1f} ms (min {pred['predict_ms_min']:.1f}, CPU "
        f"{pred['predict_cpu_ms_median']:.1f}) | 50 ms |",
        f"| same, libxgboost + numpy embedding (`HPCDS1MPI_NO_JIT=1`), same run | "
        f"{plain['predict_ms_median']:.1f} ms (min {plain['predict_ms_min']:.1f}, CPU "
        f"{plain['predict_cpu_ms_median']:.1f}); compiled is "
        f"{plain['predict_ms_median'] / pred['predict_ms_median']:.2f}x faster | |",
        "",
        "Predict: each path in a fresh child process, 3 alternating launches of 20 timed "
        "predictions after one warm-up (numba's compile cache loaded there); the table shows "
        "the launch with the lowest median, all launches are in the JSON. First predict "
        f"(numba import and cache load): {pred['first_predict_ms']:.0f} ms compiled, "
        f"{plain['first_predict_ms']:.0f} ms without.",
        "",
        f"Bundle: {train['family']} x {train['n_members']} members, targets "
        f"{', '.join(train['targets'])}; kept {train['sampling']['n_kept']} of "
        f"{train['sampling']['n_total']} rows.",
    ]
    (RESULTS / f"{stem}.md").write_text("\n".join(md) + "\n")
    print("\n".join(md))
    return results


if __name__ == "__main__":
    main()
