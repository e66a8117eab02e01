"""Does 75 % sampling keep held-out MAPE within a point of 100 %? Is a miss the sampler's or the data's?

On the size-interp split of a telemetry file (every other interior size of each workload held
out), the deployed ensemble is trained on all training rows (100 %) and at 75 % with the paper's
difficulty sampling (default floor), with higher floors, and with a floor equal to the rate
(every keep probability 0.75: uniform random sampling, the control). Each seed draws its own
sampling and bootstrap; the losses against 100 % are paired by seed and reported as mean ±
standard error (5 seeds were too few: one dense-sweep control moved from -0.5 to +1.0 points
between 5 and 20 seeds). If uniform random sampling loses as much as difficulty sampling, no
choice of rows keeps 75 % within a point on that data; ``--fractions`` repeats everything on
random subsets of the training rows, a learning curve of how the loss shrinks as data grows.

Run: ``python analysis/sampling_control.py`` for the reference telemetry (~1 min); add
``--telemetry data/sampling_dense/telemetry.h5 --name dense`` (three kernels at ~20 sizes) or
``--telemetry data/reference_fine/telemetry.h5 --name fine`` (the reference plan at 17 sizes),
and ``--fractions 0.5,0.75,1.0`` for the curve. Writes ``sampling_control[_NAME].json`` and
``.md`` into ``--out-dir`` (default: the current folder; files already there are replaced only
with ``--force``; ``--out-dir analysis/results --force`` remakes a checkout's committed ones).
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
REFERENCE = REPO / "data" / "reference" / "telemetry.h5"
#: A fraction's training subset for seed s is drawn with this seed offset (independent of the
#: sampler's and the bootstrap's draws, which use s itself).
SUBSET_SEED = 1000


def variants() -> list[tuple[str, float, float | None]]:
    """(label, rate, floor) of each variant; floor None is the sampler's default."""
    from hpcds1mpi.surrogates.sampling import DEFAULT_FLOOR

    return [("100 % (no sampling)", 1.0, None),
            (f"75 %, difficulty sampling (floor {DEFAULT_FLOOR}, the default)", 0.75, None),
            ("75 %, difficulty sampling, floor 0.25", 0.75, 0.25),
            ("75 %, difficulty sampling, floor 0.5", 0.75, 0.5),
            ("75 %, uniform random (floor = rate)", 0.75, 0.75)]


def mean_se(values: list[float]) -> tuple[float, float]:
    """Mean and standard error of the mean (NaN error for one value)."""
    n = len(values)
    mean = sum(values) / n
    if n < 2:
        return mean, float("nan")
    var = sum((v - mean) ** 2 for v in values) / (n - 1)
    return mean, math.sqrt(var / n)


def evaluate_fraction(frame, train_rows, test_rows, fraction: float, seeds: int,
                      threads: int) -> dict:
    """Every variant on ``fraction`` of the training rows, for seeds 0..seeds-1."""
    import numpy as np

    from hpcds1mpi.analysis import h1_eval

    deployed = h1_eval.deployed_settings()
    rows = [{"variant": label, "rate": rate, "floor": floor, "kept": [],
             "runtime_mape_per_seed": []} for label, rate, floor in variants()]
    n_train = len(train_rows)
    for seed in range(seeds):
        rows_here = train_rows
        if fraction < 1.0:
            rng = np.random.default_rng(SUBSET_SEED + seed)
            n_train = int(round(fraction * len(train_rows)))
            rows_here = np.sort(rng.choice(train_rows, n_train, replace=False))
        for row in rows:
            result = h1_eval.evaluate(frame, rows_here, test_rows, row["rate"], seed=seed,
                                      epochs=0, threads=threads, families=[],
                                      tabnet_direct=False, deployed=deployed,
                                      floor=row["floor"])
            mine = next(r for r in result
                        if r["target"] == "runtime_s" and r["family"] == "deployed")
            row["kept"].append(mine["n_train_kept"])
            row["runtime_mape_per_seed"].append(100 * mine["mape"])
    full = rows[0]["runtime_mape_per_seed"]
    for row in rows:
        row["runtime_mape_mean"] = mean_se(row["runtime_mape_per_seed"])[0]
        loss = [m - f for m, f in zip(row["runtime_mape_per_seed"], full)]
        row["loss_mean"], row["loss_se"] = mean_se(loss)
    return {"fraction": fraction, "n_train": n_train, "rows": rows}


def verdict_for(rows: list[dict]) -> str:
    paper, uniform = rows[1], rows[-1]
    floors = rows[2:-1]

    def within(row: dict) -> str:
        return "within a point" if row["loss_mean"] <= 1.0 else "more than a point"

    def loss(row: dict) -> str:
        return f"{row['loss_mean']:+.2f} points (± {row['loss_se']:.2f})"

    text = (f"The paper's difficulty sampling at 75 % (default floor): {loss(paper)}, "
            f"{within(paper)} of 100 %; with higher floors "
            f"{', '.join(format(r['loss_mean'], '+.2f') for r in floors)}; uniform random "
            f"sampling at 75 %: {loss(uniform)}, {within(uniform)}.")
    # Uniform minus paper, paired by seed: more than two standard errors apart or not.
    gap, gap_se = mean_se([u - p for u, p in zip(uniform["runtime_mape_per_seed"],
                                                 paper["runtime_mape_per_seed"])])
    if gap < -2 * gap_se:
        text += (f" Dropping rows at random costs less here ({gap:+.2f} ± {gap_se:.2f} points "
                 "against the paper's sampling) than dropping the rows the light model finds "
                 "easy.")
    elif gap > 2 * gap_se:
        text += (f" The paper's sampling costs less here than dropping rows at random "
                 f"({-gap:+.2f} ± {gap_se:.2f} points).")
    return text


def main(argv: list[str] | None = None) -> dict:
    from hpcds1mpi.analysis import h1_eval
    from hpcds1mpi.analysis.h1_results import add_output_options, claim_results, write_results

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--telemetry", default=str(REFERENCE))
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--fractions", default="1.0",
                        help="fractions of the training rows (a learning curve), e.g. 0.5,1.0")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--name", default="", help="results file suffix (sampling_control_NAME)")
    add_output_options(parser)
    args = parser.parse_args(argv)
    try:
        fractions = sorted({float(f) for f in args.fractions.split(",")} | {1.0})
    except ValueError:
        fractions = [float("nan")]
    if not 0.0 < fractions[0] <= fractions[-1] <= 1.0:
        parser.error(f"--fractions must lie in (0, 1], got {args.fractions}")
    stem = claim_results(Path(args.out_dir) / ("sampling_control"
                                               + (f"_{args.name}" if args.name else "")),
                         args.force)
    frame, kind = h1_eval.load_frame([args.telemetry], [])
    shown = Path(args.telemetry).resolve()
    if shown.is_relative_to(REPO):
        shown = shown.relative_to(REPO)
    splits = {name: (train, test) for name, train, test in h1_eval.make_splits(frame, kind, [], 0)}
    if "size-interp" not in splits:
        raise SystemExit(f"error: {args.telemetry} has no workload with 3 or more sizes; the "
                         "size-interp split needs them")
    train_rows, test_rows = splits["size-interp"]
    started = time.perf_counter()
    curve = [evaluate_fraction(frame, train_rows, test_rows, f, args.seeds, args.threads)
             for f in fractions]
    rows = curve[-1]["rows"]  # all training rows
    verdict = verdict_for(rows)
    out = {"telemetry": str(shown), "split": "size-interp", "seeds": args.seeds,
           "n_rows": int(len(frame)), "n_test": int(len(test_rows)),
           "model": "deployed ensemble (xgboost on knob features x5 members, median)",
           "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
           "runtime_s": time.perf_counter() - started,
           "rows": rows, "curve": curve, "verdict": verdict}
    md = ["# Sampling control: 75 % vs 100 %", "",
          f"Data: {shown} ({len(frame)} runs). Deployed ensemble, size-interp split "
          f"(every other interior size of each workload held out: {len(train_rows)} training, "
          f"{len(test_rows)} held-out rows), {args.seeds} seeds, {out['date']}, "
          f"{out['runtime_s']:.0f} s. Runtime MAPE on the held-out sizes; the loss against "
          "100 % is paired by seed, mean ± standard error.", ""]
    for part in reversed(curve):
        if len(curve) > 1:
            md += [f"## {part['n_train']} training rows ({part['fraction']:.0%} of the "
                   "split's)", ""]
        md += ["| variant | kept rows (mean) | runtime MAPE % (mean) | vs 100 % (± s.e.) |",
               "|---|---|---|---|"]
        for r in part["rows"]:
            md.append(f"| {r['variant']} | {sum(r['kept']) / len(r['kept']):.0f} | "
                      f"{r['runtime_mape_mean']:.2f} | {r['loss_mean']:+.2f} "
                      f"(± {r['loss_se']:.2f}) |")
        md.append("")
    md.append(verdict)
    write_results(out, stem, lambda doc: "\n".join(md) + "\n", quiet=True)
    print("\n".join(md))
    return out


if __name__ == "__main__":
    main()
