"""The paper's H2 on real scheduler logs: MOBO vs SOBO-runtime, SOBO-power and random search
over a job's node count, scored by hypervolume and Spread against the exact front.

Per log, surrogates are trained on the chronological training part (the first 80 % of
completed jobs by submit time), from the features known at submission of
``h1_real_logs.submit_features``:

- **run time**: a regressor of log run time (``--family``, the paper's settings);
- **power**, by log:
  - ``marconi100`` (PM100-style subset, no power in it): MODELLED power, the project's linear
    power model (``measure.meters.modelled_power``) with nominal Marconi100 node figures
    (:data:`MARCONI100_POWER`): every node's CPUs and the job's GPUs fully busy. Nothing of it
    is measured;
  - ``eurora`` (CINECA Eurora): a regressor of the dataset's ``pred_power_W``, a power its
    authors PREDICTED with their own model (never measured), trained on the jobs that have it.

A problem is one test job (a job of the last 20 %): its candidates are node counts
1..max nodes seen in training, each asking for the job's own per-node cores, GPUs and memory
and its own time limit; the objectives are the surrogates' run time and power of each
candidate. Every candidate is evaluated once (the exact front; the reference point fixed from
it, as ``benchmarks/mobo.py`` does) and each method looks values up only for the candidates it
asks for (``surrogates/mobo``, the paper's acquisition settings; random search is the paper's
"5 seeds, budget split evenly"). HV ratio = the method's hypervolume / the exact front's.

Eurora is read by ``records.ingest`` (kind ``eurora``: ``pred_power_W`` lands in
``avg_power_w`` with the energy source "predicted by the dataset authors' model"); a power not
labelled so is refused.

Run::

    .venv/bin/python -m hpcds1mpi.analysis.h2_real_logs marconi100 \
        ../shared/data/joblogs/marconi100-2022-01-subset.parquet --evals 10,20,50
    .venv/bin/python -m hpcds1mpi.analysis.h2_real_logs eurora \
        ../shared/data/joblogs/CINECA-Eurora-2014-predicted-power.csv --evals 8,12,16

Writes ``h2_real_logs_<log>[_<tag>].json`` and ``.md`` into ``--out-dir`` (default: the current
folder; files already there are replaced only with ``--force``); ``--out-dir analysis/results
--force`` remakes a checkout's committed ones.
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from .h1_real_logs import (feature_columns, load_jobs, log_runtime, run_info, split_rows,
                           submit_features)
from .h1_results import add_output_options, claim_results, write_results

METHODS = ("mobo", "sobo-runtime", "sobo-power", "random")
POWER_COLUMN = "avg_power_w"
#: Nominal Marconi100 node (2 x IBM POWER9, 32 cores; 4 x NVIDIA V100 SXM2): a node's idle and
#: all-cores-busy power without GPUs, and a V100's idle and full power (its 300 W TDP). These
#: are assumptions of the model, not readings.
MARCONI100_POWER = {"idle_watts_node": 250.0, "max_watts_node": 600.0, "idle_watts_gpu": 40.0,
                    "max_watts_gpu": 300.0, "cores_per_node": 32}
#: How the power objective of each log is made (recorded in every output).
POWER_SOURCES = {"marconi100": "modelled", "eurora": "predicted (by the dataset's authors)"}


# --------------------------------------------------------------------------------------------
# data


def load_log(log: str, path: str, max_jobs: int | None, seed: int
             ) -> tuple[pd.DataFrame, dict]:
    """Completed jobs in submit order (``h1_real_logs.load_jobs``); for Eurora the jobs must
    carry their power labelled as the dataset authors' prediction (records.ingest's eurora
    reader writes it to ``avg_power_w`` with that ``energy_source``)."""
    jobs, counts = load_jobs(path, max_jobs, seed)
    if log == "eurora":
        source = jobs["energy_source"].astype(str)
        power = pd.to_numeric(jobs["avg_power_w"], errors="coerce").astype(float)
        labelled = source.str.startswith("predicted")
        if (power.notna() & ~labelled).any():
            raise ValueError("Eurora power not labelled as the authors' prediction: "
                             f"{sorted(source[power.notna() & ~labelled].unique())}")
        counts["with_predicted_power"] = int(power.notna().sum())
    return jobs, counts


def modelled_power_w(nodes: np.ndarray, gpus: np.ndarray) -> np.ndarray:
    """MODELLED average power (W) of Marconi100 allocations: ``nodes`` nodes with every core
    busy and ``gpus`` GPUs fully busy (:data:`MARCONI100_POWER`, ``meters.modelled_power``)."""
    from hpcds1mpi.measure.meters import PowerModel, modelled_power

    model = PowerModel(**MARCONI100_POWER, source="nominal Marconi100 figures (modelled)")
    cores = MARCONI100_POWER["cores_per_node"]
    return np.array([modelled_power(model, nodes=int(n), window_s=1.0, cpu_s=float(n * cores),
                                    gpus=int(g), gpu_busy_s=float(g))
                     for n, g in zip(nodes, gpus)])


# --------------------------------------------------------------------------------------------
# surrogates and problems


class Surrogates:
    """Run-time (and, for Eurora, predicted-power) regressors on the training jobs."""

    def __init__(self, log: str, train: pd.DataFrame, family: str, seed: int, threads: int,
                 without: tuple[str, ...] = ()):
        from hpcds1mpi.surrogates.estimators import make_regressor

        self.log, self.train = log, train
        cats, nums = feature_columns(train)
        self.cats = [c for c in cats if c not in without]
        self.nums = [c for c in nums if c not in without]
        X, _, self.features = submit_features(train, train.iloc[:1], self.cats, self.nums)
        self.runtime = make_regressor(family, seed=seed, threads=threads).fit(
            X, log_runtime(train))
        self.power = None
        if log == "eurora":
            power = pd.to_numeric(train["avg_power_w"], errors="coerce").to_numpy(float)
            have = np.isfinite(power) & (power > 0)
            self.power = make_regressor(family, seed=seed, threads=threads).fit(
                X[have], np.log(power[have]))
            self.n_power_train = int(have.sum())

    def candidates(self, jobs: pd.DataFrame, max_nodes: int) -> pd.DataFrame:
        """Every job at every node count 1..max_nodes (job-major), its per-node request
        scaled; ``job_row`` says which job a row is."""
        n = np.tile(np.arange(1, max_nodes + 1), len(jobs))
        rows = jobs.iloc[np.repeat(np.arange(len(jobs)), max_nodes)].reset_index(drop=True)
        rows["job_row"] = np.repeat(np.arange(len(jobs)), max_nodes)
        nodes0 = pd.to_numeric(rows["nodes"], errors="coerce").astype(float).clip(lower=1.0)
        for col in ("cores", "req_procs", "gpus", "req_gpus", "mem_req_gb"):
            if col in rows.columns:
                per_node = pd.to_numeric(rows[col], errors="coerce").astype(float) / nodes0
                rows[col] = np.round(per_node.to_numpy() * n)
        rows["nodes"] = n
        if "req_nodes" in rows.columns:
            rows["req_nodes"] = n
        return rows

    def table(self, rows: pd.DataFrame) -> pd.DataFrame:
        """Objective values of candidate rows: run time (s) and power (W)."""
        _, X, _ = submit_features(self.train, rows, self.cats, self.nums)
        runtime = np.exp(self.runtime.predict(X))
        if self.power is not None:
            power = np.exp(self.power.predict(X))
        else:
            power = modelled_power_w(rows["nodes"].to_numpy(), pd.to_numeric(
                rows["gpus"], errors="coerce").fillna(0).to_numpy())
        return pd.DataFrame({"feasible": True, "status": "ok", "runtime_s": runtime,
                             POWER_COLUMN: power})


def make_problem(rows: pd.DataFrame, table: pd.DataFrame, name: str, source: str):
    """A ``surrogates.mobo.Problem`` over one job's candidate rows (node counts), its objective
    a lookup table of the surrogates' values and its reference point fixed from the exact
    front."""
    from hpcds1mpi.surrogates import mobo
    from hpcds1mpi.surrogates.objectives import TableObjective

    cands = pd.DataFrame({"nodes": rows["nodes"].astype(int).to_numpy(), "ranks_per_node": 1,
                          "threads": 1, "device": "cpu", "precision": "fp64",
                          "workload": name, "size": 0})
    table = table.reset_index(drop=True)
    problem = mobo.Problem(cands, TableObjective(cands, table, source),
                           ["runtime_s", POWER_COLUMN])
    problem.fix_reference_point()
    return problem


# --------------------------------------------------------------------------------------------
# the comparison


def compare(problem, methods: list[str], evals: list[int], seeds: list[int], name: str
            ) -> list[dict]:
    """HV ratio and Spread of every method and seed after each count of ``evals``."""
    from hpcds1mpi.surrogates import mobo
    from hpcds1mpi.surrogates.pareto import hypervolume, spread

    _, exact = problem.exact()
    exact_hv = hypervolume(exact, problem.ref_point)
    out = []
    for seed in seeds:
        for method in methods:
            res = mobo.run(problem, method, max(evals), seed=seed)
            rec = {"problem": name, "method": method, "seed": seed, "wall_s": res.wall_s}
            for e in evals:
                k = min(e, len(res.Y))
                rec[f"hv_ratio@{e}"] = res.hv_at(e) / exact_hv if exact_hv > 0 else float("nan")
                Yk, fk = res.Y[:k], res.feasible[:k]
                rec[f"spread@{e}"] = spread(Yk[fk], exact) if fk.any() else float("nan")
            out.append(rec)
    return out


def summarise(records: list[dict], methods: list[str], evals: list[int]) -> list[dict]:
    df = pd.DataFrame(records)
    rows = []
    for method in methods:
        s = df[df["method"] == method]
        row = {"method": method, "runs": int(len(s)), "wall_s_mean": float(s["wall_s"].mean())}
        for e in evals:
            row[f"hv_ratio@{e}_mean"] = float(s[f"hv_ratio@{e}"].mean())
            row[f"hv_ratio@{e}_min"] = float(s[f"hv_ratio@{e}"].min())
            row[f"spread@{e}_mean"] = float(s[f"spread@{e}"].mean())
        rows.append(row)
    return rows


def findings(summary: list[dict], evals: list[int], fronts: dict, records: list[dict]
             ) -> list[str]:
    """The paper's H2 claims checked against the summary (computed, never written by hand)."""
    by = {r["method"]: r for r in summary}
    out = [f"exact fronts over {fronts['jobs_scanned']} test jobs: {fronts['single_point']} "
           f"({100 * fronts['single_point'] / max(fronts['jobs_scanned'], 1):.0f} %) have a "
           f"single point (one node count dominates all others: nothing to trade off); median "
           f"front size {fronts['median_size']:.0f}",
           f"the surrogates extrapolate: {100 * fronts['train_jobs_on_one_node']:.0f} % of the "
           f"training jobs ran on one node and only {fronts['train_node_counts_seen']} distinct "
           "node counts were seen in training, so most candidates' values are the tree "
           "models' extrapolation, not learnt behaviour"]
    if "mobo" not in by:
        return out
    for e in evals:
        m = by["mobo"][f"hv_ratio@{e}_mean"]
        top = max(by[k][f"hv_ratio@{e}_mean"] for k in by)
        best = ", ".join(k for k in by if by[k][f"hv_ratio@{e}_mean"] >= top - 1e-9)
        line = f"after {e} evaluations: MOBO HV ratio {m:.3f}"
        for other in ("sobo-runtime", "sobo-power", "random"):
            if other in by:
                o = by[other][f"hv_ratio@{e}_mean"]
                line += f", {other} {o:.3f} ({100 * (m / o - 1):+.0f} % for MOBO)" if o > 0 \
                    else f", {other} {o:.3f}"
        line += f"; best (ties all named): {best}"
        sp = {k: by[k][f"spread@{e}_mean"] for k in by}
        line += (f"; Spread MOBO {sp['mobo']:.3f} (lowest: "
                 f"{min(sp, key=lambda k: sp[k])})")
        out.append(line)
    last = evals[-1]
    hv = pd.DataFrame(records).pivot_table(index=["problem", "seed"], columns="method",
                                           values=f"hv_ratio@{last}")
    for other in ("sobo-runtime", "sobo-power", "random"):
        if other in hv.columns:
            d = hv["mobo"] - hv[other]
            out.append(f"MOBO vs {other} after {last} evaluations, paired by problem and seed: "
                       f"{int((d > 1e-9).sum())} better, {int((d.abs() <= 1e-9).sum())} tied, "
                       f"{int((d < -1e-9).sum())} worse")
    if "sobo-runtime" in by:
        gain = 100 * (by["mobo"][f"hv_ratio@{last}_mean"]
                      / by["sobo-runtime"][f"hv_ratio@{last}_mean"] - 1)
        verdict = ("does NOT hold" if gain <= 0 else "holds in direction, but the gain is "
                   "under half the paper's" if gain < 12 else "holds")
        out.append(f"paper: MOBO +24 % (PM100) / +37 % (Adastra) HV over SOBO-runtime; here "
                   f"{gain:+.1f} % after {last} evaluations: {verdict}")
    return out


def markdown(doc: dict) -> str:
    c = doc["counts"]
    out = [f"# H2 on a real log: {doc['log']}", "", f"Command: `{doc['command']}`", "",
           f"Log: {doc['source']} ({c['kind']}): {c['read']} jobs read, {c['kept']} completed "
           f"with a run time; chronological split: {doc['n_train']} train / {doc['n_test']} "
           f"test jobs. Surrogates: {doc['family']} on {', '.join(doc['features'])}. "
           f"Power: **{doc['power_source'].upper()}** — {doc['power_note']}"
           + (f". Left out of the features on purpose: {', '.join(doc['without'])}"
              if doc.get("without") else ""), "",
           f"{doc['n_problems']} problems (test jobs, see below), node counts 1..{doc['max_nodes']}"
           f" ({doc['max_nodes']} candidates each), seeds {doc['seeds']}, evaluations "
           f"{doc['evals']} (the paper's 300 iterations exceed the candidate set: the budget is "
           "capped at the candidates). Acquisition settings: "
           f"{json.dumps(doc['settings']['profile'])}; "
           f"reference point fixed from each exact front (nadir + 10 % of its range). Measured "
           f"{doc['date']} on {doc['host']} (1-min load {doc['load_avg_1min']:.1f}), "
           f"{doc['seconds']:.0f} s in all.", "",
           "| method | runs | " + " | ".join(f"HV ratio @{e} (min)" for e in doc["evals"])
           + " | " + " | ".join(f"Spread @{e}" for e in doc["evals"]) + " | s/run |",
           "|" + "---|" * (3 + 2 * len(doc["evals"]))]
    for r in doc["summary"]:
        out.append(f"| {r['method']} | {r['runs']} | " + " | ".join(
            f"{r[f'hv_ratio@{e}_mean']:.3f} ({r[f'hv_ratio@{e}_min']:.3f})" for e in doc["evals"])
            + " | " + " | ".join(f"{r[f'spread@{e}_mean']:.3f}" for e in doc["evals"])
            + f" | {r['wall_s_mean']:.1f} |")
    out += ["", "Problems:", "", "| problem | job | its nodes | exact front size | front node "
            "counts |", "|---|---|---|---|---|"]
    for name, p in doc["problems"].items():
        out.append(f"| {name} | {p['job_id']} | {p['job_nodes']} | {p['front_size']} | "
                   f"{p['front_nodes']} |")
    out += ["", "## Findings", ""] + [f"- {line}" for line in doc["findings"]]
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description="The paper's H2 on a real job log.")
    parser.add_argument("log", choices=sorted(POWER_SOURCES), help="which log (sets the power)")
    parser.add_argument("path", help="the log file")
    parser.add_argument("--family", default="xgboost")
    parser.add_argument("--problems", type=int, default=5,
                        help="test jobs to optimise (evenly spaced among those whose exact "
                             "front has at least --min-front points)")
    parser.add_argument("--min-front", type=int, default=3)
    parser.add_argument("--evals", default="10,20,50")
    parser.add_argument("--methods", default=",".join(METHODS))
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--without", action="append", default=[],
                        help="a job-table column not to use as a feature (repeatable)")
    parser.add_argument("--max-jobs", type=int, default=None)
    parser.add_argument("--tag", default="", help="results file suffix (h2_real_logs_<log>_<tag>)")
    add_output_options(parser)
    args = parser.parse_args(argv)
    stem = claim_results(Path(args.out_dir) / f"h2_real_logs_{args.log}"
                         f"{'_' + args.tag if args.tag else ''}", args.force)
    warnings.simplefilter("ignore")
    import torch

    torch.set_num_threads(args.threads)
    from hpcds1mpi.surrogates import mobo

    t_start = time.perf_counter()
    jobs, counts = load_log(args.log, args.path, args.max_jobs, args.seed)
    train_rows, test_rows = split_rows(jobs, "chronological", args.seed)
    train, test = jobs.iloc[train_rows], jobs.iloc[test_rows].reset_index(drop=True)
    sur = Surrogates(args.log, train, args.family, args.seed, args.threads, tuple(args.without))
    max_nodes = int(pd.to_numeric(train["nodes"]).max())
    from hpcds1mpi.surrogates.pareto import exact_front

    rows = sur.candidates(test, max_nodes)
    table = sur.table(rows)
    Y = table[["runtime_s", POWER_COLUMN]].to_numpy(float).reshape(len(test), max_nodes, 2)
    sizes = np.array([len(exact_front(y)[0]) for y in Y])
    per_node = pd.to_numeric(train["nodes"]).value_counts()
    fronts = {"train_jobs_on_one_node": float(per_node.get(1, 0) / len(train)),
              "train_node_counts_seen": int(len(per_node)),
              "jobs_scanned": int(len(sizes)), "single_point": int((sizes == 1).sum()),
              "median_size": float(np.median(sizes)),
              "at_least_min_front": int((sizes >= args.min_front).sum())}
    eligible = np.flatnonzero(sizes >= args.min_front)
    picks = eligible[np.linspace(0, len(eligible) - 1, min(args.problems, len(eligible)))
                     .round().astype(int)] if len(eligible) else []
    evals = sorted({min(int(e), max_nodes) for e in args.evals.split(",")})
    methods = [m for m in args.methods.split(",") if m]
    seeds = list(range(args.seed, args.seed + args.seeds))
    records, problems = [], {}
    for i in dict.fromkeys(int(p) for p in picks):
        job = test.iloc[i]
        name = f"job{job.get('job_id', i)}"
        mine = (rows["job_row"] == i).to_numpy()
        problem = make_problem(rows[mine], table[mine], name, POWER_SOURCES[args.log])
        idx, _ = problem.exact()
        problems[name] = {"job_id": str(job.get("job_id", i)), "job_nodes": int(job["nodes"]),
                          "front_size": int(len(idx)),
                          "front_nodes": sorted(problem.candidates["nodes"].iloc[idx].tolist()),
                          "ref_point": problem.ref_point.tolist()}
        t0 = time.perf_counter()
        records += compare(problem, methods, evals, seeds, name)
        print(f"{name}: front {len(idx)} points, {time.perf_counter() - t0:.0f} s", flush=True)
    summary = summarise(records, methods, evals) if records else []
    doc = {
        "log": args.log, "source": args.path, "counts": counts,
        **run_info("h2_real_logs", argv),
        "power_source": POWER_SOURCES[args.log],
        "power_note": ("modelled with measure.meters.modelled_power and nominal Marconi100 "
                       f"figures {MARCONI100_POWER} (all cores and the job's GPUs busy); not "
                       "measured" if args.log == "marconi100" else
                       "a regressor of the dataset's pred_power_W (records.ingest's eurora reader: "
                       "avg_power_w), which its authors predicted with their own model; "
                       f"trained on {sur.n_power_train} jobs that have it;"
                       " never measured"),
        "family": args.family, "features": sur.features, "without": args.without,
        "tag": args.tag,
        "n_train": int(len(train)), "n_test": int(len(test)), "max_nodes": max_nodes,
        "fronts": fronts, "n_problems": len(problems), "problems": problems,
        "seeds": seeds, "evals": evals, "methods": methods, "settings": mobo.profile_dict(),
        "random_search": "5 seeded streams, budget/5 each, union pooled (surrogates.mobo)",
        "records": records, "summary": summary,
        "findings": findings(summary, evals, fronts, records) if summary else [],
        "seconds": time.perf_counter() - t_start,
    }
    return write_results(doc, stem, markdown)


if __name__ == "__main__":
    main()
