"""MOBO vs SOBO-runtime, SOBO-energy and random search against the exact Pareto front.

For each problem (workload, size) on a multi-node partition, the candidate set is enumerated,
the objective is evaluated on every candidate once (exact front, fixed reference point), and
each method then looks values up only for the candidates it asks for. Per method and seed it
records the hypervolume ratio to the exact front after each of ``--evals`` evaluations, Deb's
Spread of the final front against the exact front, the wall time and the mean iteration time.
It then times the straightforward BO loop (fresh GPs fitted to convergence every iteration)
against the optimised one (warm-started hyperparameters, a short refit every k iterations,
reused box decomposition and candidate tensors, acquisition scored only where improvement is
possible) side by side on one problem and seed, with the optimised loop without that pruning
as a third row (are its picks identical?); ``--wall-budget 300`` times one full run.

Objective: ``--model DIR`` (a trained surrogate bundle, the paper's setting); without it, the
*modelled* roofline objective of ``surrogates/analytic_objective.py`` (the kernels' own work
models at nominal machine rates: a test fixture, labelled ``modelled`` in the results; nothing
it returns is measured).

    .venv/bin/python benchmarks/mobo.py                       # modelled objective, 20/50 evals
    .venv/bin/python benchmarks/mobo.py --evals 20,50,300 --seeds 1 --out benchmarks/results/mobo_300
    .venv/bin/python benchmarks/mobo.py --model model/ --problems stencil:256,gemm:512
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
DEFAULT_CLUSTER = HERE / "clusters" / "gpu64.toml"
DEFAULT_PROBLEMS = "stencil:2048,gemm:65536,fft:2048,cg:1024,nbody:1000000"
METHODS = ("mobo", "sobo-runtime", "sobo-energy", "random")


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default=None, help="surrogate bundle directory (else modelled objective)")
    ap.add_argument("--cluster", default=None, help=f"cluster TOML (default {DEFAULT_CLUSTER.name} "
                    "without --model, the bundle's partition with it)")
    ap.add_argument("--partition", default=None)
    ap.add_argument("--model-partition", default=None,
                    help="extrapolation: the trained partition whose category code the bundle is given "
                    "while the hardware columns come from --cluster/--partition")
    ap.add_argument("--energy-from", choices=("bundle", "power-model"), default="bundle",
                    help="energy objective: the bundle's prediction, or modelled = predicted runtime x "
                    "the partition's modelled allocation power")
    ap.add_argument("--seed-start", type=int, default=0, help="first seed (seeds run seed-start..+seeds-1)")
    ap.add_argument("--problems", default=None, help=f"workload:size,... (default {DEFAULT_PROBLEMS}; "
                    "with --model: each bundle workload at its largest trained size, up to 5)")
    ap.add_argument("--space", choices=("full", "nodes"), default="full")
    ap.add_argument("--node-counts", choices=("pow2", "all"), default="pow2",
                    help="node counts of the full space: powers of two (and the maximum) or every "
                    "count 1..max nodes")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--evals", default="20,50", help="evaluation counts to report (largest = budget)")
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--timing-budget", type=int, default=40,
                    help="budget of the straightforward-vs-optimised timing run (0 skips it)")
    ap.add_argument("--timing-seed", type=int, default=0, help="seed of the timing run")
    ap.add_argument("--wall-budget", type=int, default=0,
                    help="also time one optimised MOBO run of this many evaluations on the first problem "
                    "(0 skips it; the goal is 300 evaluations in <= 60 s)")
    ap.add_argument("--cli-runs", type=int, default=0,
                    help="time the `hpcds1mpi mobo` command users run (fresh process, shipped "
                         "defaults, budget --wall-budget or 300) this many times, each beside an "
                         "in-process run of the same problem and a `python -c pass` (interleaved)")
    ap.add_argument("--cli-seeds", default="0", help="with --cli-runs: seeds of the rounds, in "
                    "turn (each round's HV ratio is recorded for both commands)")
    ap.add_argument("--baseline", default=None, metavar="DIR", help="with --cli-runs: an older "
                    "source tree (git archive C | tar -x -C DIR) whose `hpcds1mpi mobo` runs each "
                    "round too, same arguments; front and hypervolume compared")
    ap.add_argument("--threads", type=int, default=1, help="torch threads (1 is steadier on a shared machine)")
    ap.add_argument("--out", default=str(HERE / "results" / "mobo"), help="output path without extension")
    args = ap.parse_args(argv)
    if args.space == "nodes":
        args.node_counts = "all"  # the nodes space has every count
    return args


def build_problems(args):
    """[(name, Problem, source)], with the reference point fixed and the table filled."""
    from hpcds1mpi.places import resolve_partition
    from hpcds1mpi.surrogates import mobo
    from hpcds1mpi.surrogates.analytic_objective import AnalyticObjective
    from hpcds1mpi.surrogates.objectives import BundleObjective, partition_for_bundle

    if args.model:
        from hpcds1mpi.surrogates.bundle import load_bundle

        bundle = load_bundle(args.model)
        part = resolve_partition(args.cluster, args.partition) if args.cluster else \
            partition_for_bundle(bundle, args.partition)
        objective = BundleObjective(bundle, part, model_partition=args.model_partition,
                                    energy_from=args.energy_from)
        source = "surrogate"
        if args.problems:
            problems = _parse_problems(args.problems)
        else:
            ranges = getattr(bundle, "size_range", {}) or {}
            problems = [(w, int(ranges[w][1]) if w in ranges else 256) for w in sorted(bundle.workloads)][:5]
    else:
        part = resolve_partition(args.cluster or str(DEFAULT_CLUSTER), args.partition)
        objective = AnalyticObjective(part)
        source = "modelled"
        problems = _parse_problems(args.problems or DEFAULT_PROBLEMS)
    out = []
    for workload, size in problems:
        objective.check_workload(workload)
        cands = mobo.build_candidates(part, workload, size, args.space,
                                      nodes=mobo.node_counts(part, args.node_counts))
        problem = mobo.Problem(cands, objective, ["runtime_s", "energy_j"])
        problem.fix_reference_point()
        out.append((f"{workload}:{size}", problem, source))
    return part, out


def _parse_problems(text):
    items = []
    for item in text.split(","):
        workload, _, size = item.partition(":")
        items.append((workload.strip(), int(float(size))))
    return items


def main(argv=None) -> int:
    args = parse_args(argv)
    warnings.simplefilter("ignore")
    import torch

    from hpcds1mpi.surrogates.pareto import hypervolume, spread
    from hpcds1mpi.surrogates import mobo

    torch.set_num_threads(args.threads)
    evals = sorted({int(e) for e in args.evals.split(",")})
    budget = evals[-1]
    methods = [m.strip() for m in args.methods.split(",")]
    t_start = time.perf_counter()
    part, problems = build_problems(args)
    print(f"partition {part.name}: {part.max_nodes} nodes x {part.cores_per_node} cores x "
          f"{part.gpus_per_node} GPUs; space {args.space}; budget {budget}; seeds {args.seeds}", flush=True)
    # Warm the lazy imports (scipy/botorch/gpytorch) so the first timed iteration is not an import.
    _, warm, _ = problems[0]
    warm.objective = mobo.CandidateTable(warm, "warm-up")
    mobo.run(warm, "mobo", mobo.default_n_init(warm) + 1, seed=999)

    records, problem_info = [], {}
    for name, problem, source in problems:
        exact_idx, exact = problem.exact()
        exact_hv = hypervolume(exact, problem.ref_point)
        problem.objective = mobo.CandidateTable(problem, source)
        problem_info[name] = {"candidates": len(problem.candidates),
                              "feasible": int(problem.table["feasible"].sum()),
                              "exact_front_size": int(len(exact_idx)), "exact_hv": exact_hv,
                              "ref_point": problem.ref_point.tolist(), "ref_basis": problem.ref_basis,
                              "n_init": mobo.default_n_init(problem), "objective_source": source}
        print(f"\n{name}: {len(problem.candidates)} candidates ({problem_info[name]['feasible']} feasible), "
              f"exact front {len(exact_idx)} points, reference point {np.round(problem.ref_point, 4).tolist()}",
              flush=True)
        for seed in range(args.seed_start, args.seed_start + args.seeds):
            for method in methods:
                res = mobo.run(problem, method, budget, seed=seed)
                rec = {"problem": name, "method": method, "seed": seed, "wall_s": res.wall_s,
                       "mean_iteration_s": float(np.mean(res.iteration_s)) if res.iteration_s else 0.0,
                       "failed_evaluations": int((~res.feasible).sum())}
                for e in evals:
                    k = min(e, len(res.hv_trace))
                    rec[f"hv_ratio@{e}"] = res.hv_at(e) / exact_hv
                    Yk, fk = res.Y[:k], res.feasible[:k]
                    rec[f"spread@{e}"] = spread(Yk[fk], exact) if fk.any() else float("nan")
                records.append(rec)
                print(f"  seed {seed} {method:>12}: " + ", ".join(
                    f"HV@{e} {rec[f'hv_ratio@{e}']:.4f}" for e in evals)
                    + f", Spread@{budget} {rec[f'spread@{budget}']:.3f}, {res.wall_s:.1f} s", flush=True)
        _write(args, part, evals, methods, records, problem_info, None, time.perf_counter() - t_start)

    timing = None
    if args.timing_budget:
        name, problem, _ = problems[0]
        exact_hv = problem_info[name]["exact_hv"]
        timing = {"problem": name, "budget": args.timing_budget, "seed": args.timing_seed}
        import dataclasses

        unpruned = dataclasses.replace(mobo.OPTIMISED, name="optimised-unpruned", prune=False)
        picks = {}
        for policy in (mobo.STRAIGHTFORWARD, unpruned, mobo.OPTIMISED):
            load_before = os.getloadavg()[0]
            res = mobo.run(problem, "mobo", args.timing_budget, seed=args.timing_seed, policy=policy)
            picks[policy.name] = res.indices
            timing[policy.name] = {
                "load_avg_1min_before": load_before, "load_avg_1min_after": os.getloadavg()[0],
                "mean_candidates_pruned": float(np.mean(res.pruned)) if res.pruned else 0.0,
                "mean_iteration_s": float(np.mean(res.iteration_s)),
                "median_iteration_s": float(np.median(res.iteration_s)),
                "mean_fit_s": float(np.mean(res.fit_s)), "mean_acq_s": float(np.mean(res.acq_s)),
                "iterations": len(res.iteration_s), "wall_s": res.wall_s,
                "hv_ratio": res.hv_at(args.timing_budget) / exact_hv,
                "policy": {k: getattr(policy, k) for k in ("warm_start", "refit_every", "refit_steps", "reuse",
                                                           "prune")},
            }
            print(f"timing {policy.name:>15}: {timing[policy.name]['mean_iteration_s']:.3f} s/iteration "
                  f"(fit {timing[policy.name]['mean_fit_s']:.3f}, acquisition {timing[policy.name]['mean_acq_s']:.3f}), "
                  f"HV ratio {timing[policy.name]['hv_ratio']:.4f} at {args.timing_budget} evaluations", flush=True)
        timing["speedup_per_iteration"] = (timing["straightforward"]["mean_iteration_s"]
                                           / timing["optimised"]["mean_iteration_s"])
        timing["pruning_same_picks"] = picks["optimised"] == picks["optimised-unpruned"]
        print(f"optimised loop is {timing['speedup_per_iteration']:.1f}x faster per iteration", flush=True)
    if args.wall_budget:
        name, problem, _ = problems[0]
        load_before = os.getloadavg()[0]
        res = mobo.run(problem, "mobo", args.wall_budget, seed=0)
        timing = dict(timing or {})
        timing["wall_run"] = {"problem": name, "budget": args.wall_budget, "wall_s": res.wall_s,
                              "hv_ratio": res.hv_at(args.wall_budget) / problem_info[name]["exact_hv"],
                              "mean_fit_s": float(np.mean(res.fit_s)), "mean_acq_s": float(np.mean(res.acq_s)),
                              "load_avg_1min_before": load_before, "load_avg_1min_after": os.getloadavg()[0]}
        print(f"one optimised {args.wall_budget}-evaluation MOBO run on {name}: {res.wall_s:.1f} s "
              f"(load {load_before:.1f} -> {os.getloadavg()[0]:.1f})", flush=True)
    if args.cli_runs:
        sys.path.insert(0, str(HERE))
        from mobo_cli import cli_timing

        timing = dict(timing or {})
        timing["cli"] = cli_timing(args, problems[0])
    total = time.perf_counter() - t_start
    _write(args, part, evals, methods, records, problem_info, timing, total)
    print(f"\ntotal runtime {total:.1f} s; wrote {args.out}.json and {args.out}.md")
    return 0


def _aggregate(records, evals, methods):
    rows = []
    for method in methods:
        rs = [r for r in records if r["method"] == method]
        if not rs:
            continue
        row = {"method": method, "runs": len(rs)}
        for e in evals:
            vals = np.array([r[f"hv_ratio@{e}"] for r in rs])
            row[f"hv_ratio@{e}_mean"] = float(vals.mean())
            row[f"hv_ratio@{e}_min"] = float(vals.min())
            row[f"spread@{e}_mean"] = float(np.nanmean([r[f"spread@{e}"] for r in rs]))
        row["wall_s_mean"] = float(np.mean([r["wall_s"] for r in rs]))
        row["iteration_s_mean"] = float(np.mean([r["mean_iteration_s"] for r in rs]))
        rows.append(row)
    return rows


def _goals(agg, evals):
    by = {r["method"]: r for r in agg}
    out = {}
    if "mobo" in by:
        e50 = 50 if 50 in evals else evals[-1]
        out["mobo_hv_ratio_at_50_mean"] = by["mobo"][f"hv_ratio@{e50}_mean"]
        out["mobo_hv_ratio_at_50_min"] = by["mobo"][f"hv_ratio@{e50}_min"]
        last = evals[-1]
        if "sobo-runtime" in by:
            out[f"mobo_hv_gain_over_sobo_runtime_at_{last}_pct"] = 100 * (
                by["mobo"][f"hv_ratio@{last}_mean"] / by["sobo-runtime"][f"hv_ratio@{last}_mean"] - 1)
        if "random" in by:
            out[f"mobo_spread_at_{last}"] = by["mobo"][f"spread@{last}_mean"]
            out[f"random_spread_at_{last}"] = by["random"][f"spread@{last}_mean"]
    return out


def _write(args, part, evals, methods, records, problem_info, timing, total):
    from hpcds1mpi.surrogates import mobo

    agg = _aggregate(records, evals, methods)
    doc = {
        "benchmark": "mobo", "objective_source": next(iter(problem_info.values()))["objective_source"],
        "model": args.model, "model_partition": args.model_partition,
        "energy_from": args.energy_from, "partition": part.as_dict(), "space": args.space,
        "node_counts": args.node_counts, "evals": evals,
        "seeds": args.seeds, "methods": methods, "problems": problem_info,
        "random_search": "5 seeded streams, budget/5 each (remainder to the first), union pooled",
        "settings": mobo.profile_dict(), "summary": agg, "goals": _goals(agg, evals),
        "timing": timing, "runs": records, "total_runtime_s": total,
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                    "load_avg": os.getloadavg(), "torch_threads": args.threads},
        "complete": timing is not None or not (args.timing_budget or args.wall_budget),
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(f"{args.out}.json").write_text(json.dumps(doc, indent=2))
    grid = "every count 1..max" if args.node_counts == "all" else "powers of two and the maximum"
    lines = [f"# MOBO benchmark ({doc['objective_source']} objective)", "",
             f"Partition `{part.name}`: {part.max_nodes} nodes x {part.cores_per_node} cores x "
             f"{part.gpus_per_node} GPUs; space `{args.space}` (node counts: {grid}); "
             f"{args.seeds} seeds; evaluation counts "
             f"{evals}; load average at write {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs.", "",
             "| problem | candidates | feasible | exact front | reference point (runtime s, energy J) |",
             "| --- | --- | --- | --- | --- |"]
    for name, info in problem_info.items():
        lines.append(f"| {name} | {info['candidates']} | {info['feasible']} | {info['exact_front_size']} | "
                     f"{', '.join(f'{v:.4g}' for v in info['ref_point'])} |")
    head = ["method", "runs"] + [f"HV ratio @{e} (mean / min)" for e in evals] + \
        [f"Spread @{evals[-1]}", "wall s / run", "s / iteration"]
    lines += ["", "| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for r in agg:
        cells = [r["method"], str(r["runs"])] + [
            f"{r[f'hv_ratio@{e}_mean']:.4f} / {r[f'hv_ratio@{e}_min']:.4f}" for e in evals] + [
            f"{r[f'spread@{evals[-1]}_mean']:.3f}", f"{r['wall_s_mean']:.1f}", f"{r['iteration_s_mean']:.3f}"]
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "Goals (measured): " + json.dumps({k: round(v, 4) for k, v in doc["goals"].items()})]
    if timing and "straightforward" in timing:
        lines += ["", f"Straightforward vs optimised MOBO loop on {timing['problem']}, seed {timing['seed']}, "
                  f"budget {timing['budget']}:", "",
                  "| loop | s / iteration (mean) | median | fit s | acquisition s | HV ratio | candidates pruned / iteration | load avg (1 min) |",
                  "| --- | --- | --- | --- | --- | --- | --- | --- |"]
        for key in ("straightforward", "optimised-unpruned", "optimised"):
            t = timing[key]
            lines.append(f"| {key} | {t['mean_iteration_s']:.3f} | {t['median_iteration_s']:.3f} | "
                         f"{t['mean_fit_s']:.3f} | {t['mean_acq_s']:.3f} | {t['hv_ratio']:.4f} | "
                         f"{t['mean_candidates_pruned']:.0f} | {t['load_avg_1min_before']:.1f} -> "
                         f"{t['load_avg_1min_after']:.1f} |")
        lines.append(f"\nSpeed-up per iteration (straightforward / optimised): "
                     f"{timing['speedup_per_iteration']:.1f}x. Pruning left the picks "
                     f"{'identical' if timing['pruning_same_picks'] else 'NOT identical'} to the unpruned optimised loop.")
    if timing and "wall_run" in timing:
        w = timing["wall_run"]
        lines.append(f"\nOne optimised {w['budget']}-evaluation MOBO run on {w['problem']}: {w['wall_s']:.1f} s "
                     f"(fit {w['mean_fit_s']:.3f} s + acquisition {w['mean_acq_s']:.3f} s per iteration on "
                     f"average), HV ratio {w['hv_ratio']:.4f}; 1-min load average {w['load_avg_1min_before']:.1f} "
                     f"before, {w['load_avg_1min_after']:.1f} after, on {os.cpu_count()} CPUs.")
    if timing and "cli" in timing:
        from mobo_cli import cli_lines

        lines += cli_lines(timing["cli"])
    lines.append(f"\nTotal runtime {total:.0f} s.")
    Path(f"{args.out}.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.exit(main())
