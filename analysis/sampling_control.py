"""Is 75 % sampling's loss on the reference telemetry the sampler's, or the data's size?

Runs ``h1_eval`` for the deployed ensemble on the size-interp split (5 seeds) at 100 %, and at
75 % with the paper's difficulty sampling (default floor), with higher floors, and with a
floor equal to the rate (every keep probability 0.75: uniform random sampling, the control).
If uniform random sampling loses as much as difficulty sampling, no choice of which rows to
drop keeps 75 % within a point of 100 % on this data.

Run: ``python analysis/sampling_control.py`` (~1 min) for the reference telemetry; with
``--telemetry data/sampling_dense/telemetry.h5 --name dense`` for a denser sweep of three
kernels (plans/sampling_dense.toml). Writes ``analysis/results/sampling_control[_NAME].json``
and ``.md``.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"
REFERENCE = Path(__file__).resolve().parents[1] / "data" / "reference" / "telemetry.h5"


def main(argv: list[str] | None = None) -> dict:
    from hpcds1mpi.analysis import h1_eval
    from hpcds1mpi.surrogates.sampling import DEFAULT_FLOOR

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--telemetry", default=str(REFERENCE))
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--out-dir", default=str(RESULTS))
    parser.add_argument("--name", default="", help="results file suffix (sampling_control_NAME)")
    args = parser.parse_args(argv)
    variants = [("100 % (no sampling)", "1.0", None),
                (f"75 %, difficulty sampling (floor {DEFAULT_FLOOR}, the default)", "0.75", None),
                ("75 %, difficulty sampling, floor 0.25", "0.75", 0.25),
                ("75 %, difficulty sampling, floor 0.5", "0.75", 0.5),
                ("75 %, uniform random (floor = rate)", "0.75", 0.75)]
    rows = []
    with tempfile.TemporaryDirectory() as work:
        for label, rate, floor in variants:
            argv_eval = ["--telemetry", args.telemetry, "--name", "control", "--rates", rate,
                         "--families", "", "--no-tabnet-direct", "--splits", "size-interp",
                         "--seeds", str(args.seeds), "--out-dir", work]
            if floor is not None:
                argv_eval += ["--floor", str(floor)]
            result = h1_eval.main(argv_eval)
            per_seed = [r for r in result["rows_per_seed"]
                        if r["target"] == "runtime_s" and r["family"] == "deployed"]
            mapes = [100 * r["mape"] for r in per_seed]
            n_train = per_seed[0]["n_train_offered"]
            rows.append({"variant": label, "rate": float(rate), "floor": floor,
                         "kept": [r["n_train_kept"] for r in per_seed],
                         "runtime_mape_per_seed": mapes,
                         "runtime_mape_mean": sum(mapes) / len(mapes)})
    full = rows[0]["runtime_mape_mean"]
    out = {"telemetry": args.telemetry, "split": "size-interp", "seeds": args.seeds,
           "model": "deployed ensemble (xgboost on knob features x5 members, median)",
           "date": time.strftime("%Y-%m-%d %H:%M"), "rows": rows}
    md = ["# Sampling control: 75 % vs 100 %", "",
          f"Data: {args.telemetry}. Deployed ensemble, size-interp split (every other interior "
          f"size of each kernel held out; {n_train} training rows), {args.seeds} seeds, "
          f"{out['date']}. Runtime MAPE on the held-out sizes.", "",
          "| variant | runtime MAPE % (mean) | vs 100 % | per seed |", "|---|---|---|---|"]
    for r in rows:
        md.append(f"| {r['variant']} | {r['runtime_mape_mean']:.1f} | "
                  f"{r['runtime_mape_mean'] - full:+.1f} | "
                  f"{', '.join(f'{m:.1f}' for m in r['runtime_mape_per_seed'])} |")
    paper = rows[1]["runtime_mape_mean"] - full
    floors = [r["runtime_mape_mean"] - full for r in rows[2:-1]]
    uniform = rows[-1]["runtime_mape_mean"] - full

    def within(loss: float) -> str:
        return "within a point" if loss <= 1.0 else "more than a point"

    verdict = (f"The paper's difficulty sampling at 75 % (default floor): {paper:+.1f} points, "
               f"{within(paper)} of 100 %; with higher floors "
               f"{', '.join(f'{x:+.1f}' for x in floors)}; uniform random sampling at 75 %: "
               f"{uniform:+.1f}, {within(uniform)}.")
    if uniform < min([paper, *floors]) - 0.5:
        verdict += (" Dropping rows at random costs less here than dropping the rows the "
                    "light model finds easy.")
    md += ["", verdict]
    out["verdict"] = verdict
    out_dir = Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    stem = "sampling_control" + (f"_{args.name}" if args.name else "")
    (out_dir / f"{stem}.json").write_text(json.dumps(out, indent=2))
    (out_dir / f"{stem}.md").write_text("\n".join(md) + "\n")
    print("\n".join(md))
    return out


if __name__ == "__main__":
    main()
