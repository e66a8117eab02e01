"""The paper's H1 on real scheduler logs: do TabNet embeddings help the tree regressors?

For one job log (any kind ``records.ingest`` reads: the PM100-style Marconi100 subset, an SWF
log such as CEA Curie), on completed jobs only, it predicts the run time from what is known at
submission and compares, per sampling rate (50 / 75 / 100 %, the paper's difficulty sampling of
``surrogates/sampling.py``) and per seed:

- Random Forest, XGBoost and LightGBM (the paper's settings, ``surrogates/estimators.py``) on
  the features alone ("raw") and on [features, TabNet embedding] ("+emb");
- the TabNet regressor itself ("tabnet (direct)").

Features: the plain job-table columns known when a job is submitted (:data:`CATEGORICAL`,
:data:`NUMERIC`, the submit hour and weekday; the allocated nodes / GPUs where a log records
no request, as the Marconi100 subset); no run time, wait, end time, exit status or anything
written after submission. Category codes come from the training part only (an unseen user in
the test part is -1). The target is log run time; MAPE and the median APE are on seconds.

Splits: ``chronological`` (the first 80 % of jobs by submit time train, the last 20 % test: what
a deployed predictor sees; the main result) and ``random`` (a seeded 80/20 split: reference).

TabNet (embedding and direct) trains on at most ``TabNetEmbedding.max_rows`` (20,000) randomly
chosen kept training rows and at most ``max_steps`` optimiser steps; the tree models train on
every kept row. Both caps are recorded in the results.

Run::

    .venv/bin/python -m hpcds1mpi.analysis.h1_real_logs \
        ../shared/data/joblogs/marconi100-2022-01-subset.parquet --name marconi100 --seeds 3 \
        --out-dir analysis/results --force

Writes ``h1_real_logs_<name>.json`` and ``.md`` into ``--out-dir`` (default: the current folder;
files already there are replaced only with ``--force``: ``h1_results.claim_results``).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd

from .h1_results import add_output_options, claim_results, run_info, write_results
from .h1_scores import average_seeds, mape, r2

#: Job-table columns known at submission, used when a table has them (and they vary).
CATEGORICAL = ("user", "account", "partition", "queue", "workload")
NUMERIC = ("req_nodes", "req_procs", "req_gpus", "time_limit_s", "mem_req_gb")
#: A requested count's allocated twin, used in its place where a log records only what was
#: allocated (the Marconi100 subset: num_nodes_alloc, num_gpus_alloc).
ALLOCATED = {"req_nodes": "nodes", "req_procs": "cores", "req_gpus": "gpus"}
#: Columns written after a job started; a feature built from one is a label leak.
AFTER_SUBMIT = ("runtime_s", "start_time", "end_time", "wait_s", "status", "state_raw",
                "exit_code", "exit_signal", "error", "cpu_s", "peak_rss_mb", "energy_j",
                "avg_power_w", "energy_source")
FAMILIES = ("rf", "xgboost", "lightgbm")
SPLITS = ("chronological", "random")


# --------------------------------------------------------------------------------------------
# data


def load_jobs(path: str, max_jobs: int | None = None, seed: int = 0) -> tuple[pd.DataFrame, dict]:
    """Completed jobs of a log with a positive run time and a submit time, in submit order.

    ``max_jobs`` keeps a random subset of that many (then re-sorted by submit time).

    Returns:
        (jobs, counts): the table and how many jobs were read / kept / dropped why.
    """
    from hpcds1mpi.records.ingest.job_logs import read_job_log

    table, report = read_job_log(path)
    counts = {"read": int(len(table)), "kind": str(report.kind),
              "dropped_by_reader": {str(k): int(v) for k, v in report.dropped.items()}}
    status = table["status"].astype(str)
    runtime = pd.to_numeric(table["runtime_s"], errors="coerce")
    ok = (status == "ok") & (runtime > 0) & table["submit_time"].notna()
    counts["not_completed"] = int((status != "ok").sum())
    counts["no_runtime_or_submit"] = int(((status == "ok") & ~ok).sum())
    jobs = table[ok.to_numpy(bool)].copy()
    if max_jobs and len(jobs) > max_jobs:
        jobs = jobs.sample(max_jobs, random_state=seed)
        counts["subsampled_to"] = int(max_jobs)
    jobs = jobs.sort_values("submit_time", kind="stable").reset_index(drop=True)
    counts["kept"] = int(len(jobs))
    counts["time_limit_check"] = time_limit_check(table)
    return jobs, counts


def time_limit_check(table: pd.DataFrame) -> dict | None:
    """How run time relates to the requested time, per status: in a real Slurm log a job that
    timed out ran for about its limit, and no completed job runs past it. A table where that
    fails was not recorded as it says (the limit may be derived from the run time: a leak)."""
    if "time_limit_s" not in table.columns:
        return None
    limit = pd.to_numeric(table["time_limit_s"], errors="coerce").astype(float)
    runtime = pd.to_numeric(table["runtime_s"], errors="coerce").astype(float)
    ratio = runtime / limit.where(limit > 0)
    status = table["status"].astype(str)
    out = {}
    for name in ("ok", "timeout"):
        r = ratio[(status == name) & ratio.notna()]
        if len(r):
            out[name] = {"jobs": int(len(r)), "median_runtime_over_limit": float(r.median()),
                         "share_over_limit": float((r > 1.0).mean()),
                         "share_below_half": float((r < 0.5).mean())}
    both = (status == "ok") & ratio.notna() & (runtime > 0)
    if both.sum() > 2:
        out["corr_log_runtime_log_limit_ok"] = float(np.corrcoef(
            np.log(runtime[both]), np.log(limit[both]))[0, 1])
    return out


def split_rows(jobs: pd.DataFrame, split: str, seed: int, test_share: float = 0.2
               ) -> tuple[np.ndarray, np.ndarray]:
    """(train rows, test rows); ``jobs`` must be in submit order for ``chronological``."""
    n = len(jobs)
    if split == "chronological":
        cut = int(round(n * (1 - test_share)))
        return np.arange(cut), np.arange(cut, n)
    if split == "random":
        test = np.random.default_rng(seed).random(n) < test_share
        return np.flatnonzero(~test), np.flatnonzero(test)
    raise ValueError(f"unknown split {split!r}; use one of {', '.join(SPLITS)}")


def feature_columns(train: pd.DataFrame) -> tuple[list[str], list[str]]:
    """(categorical, numeric) columns of :data:`CATEGORICAL` / :data:`NUMERIC` that the
    training part has and that vary there (a request's :data:`ALLOCATED` twin where the log
    has only that)."""
    def varies(col: str) -> bool:
        values = train[col].dropna().astype(str)
        return values.nunique() > 1 and (values != "").any()

    cats = [c for c in CATEGORICAL if c in train.columns and varies(c)]
    nums = []
    for c in NUMERIC:
        for col in (c, ALLOCATED.get(c)):
            if col and col in train.columns and varies(col):
                nums.append(col)
                break
    return cats, nums


def submit_features(train: pd.DataFrame, other: pd.DataFrame, cats: list[str],
                    nums: list[str]) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Feature matrices of the training and the other (test) part, and their names.

    Categories are coded by their order in the training part (unseen: -1); a missing number is
    -1; ``log_time_limit`` and the submit hour and weekday are added.
    """
    names = [*cats, *nums]
    leaks = sorted(set(names) & set(AFTER_SUBMIT))
    if leaks:
        raise ValueError(f"feature(s) {', '.join(leaks)} are not known at submission")

    def build(frame: pd.DataFrame) -> np.ndarray:
        cols = []
        for c in cats:
            vocab = pd.Index(train[c].astype(str).unique())
            cols.append(vocab.get_indexer(frame[c].astype(str)).astype(float))
        for c in nums:
            cols.append(pd.to_numeric(frame[c], errors="coerce").astype(float)
                        .fillna(-1.0).to_numpy())
        if "time_limit_s" in nums:
            limit = pd.to_numeric(frame["time_limit_s"], errors="coerce").astype(float)
            cols.append(np.log(limit.where(limit > 0)).fillna(-1.0).to_numpy())
        submit = pd.to_datetime(frame["submit_time"])
        cols += [submit.dt.hour.to_numpy(float), submit.dt.day_of_week.to_numpy(float)]
        return np.column_stack(cols)

    extra = (["log_time_limit"] if "time_limit_s" in nums else []) + ["submit_hour",
                                                                       "submit_weekday"]
    return build(train), build(other), names + extra


def log_runtime(frame: pd.DataFrame) -> np.ndarray:
    return np.log(pd.to_numeric(frame["runtime_s"], errors="coerce").to_numpy(float))


def runtime_scores(log_truth: np.ndarray, log_guess: np.ndarray) -> dict:
    """MAPE and median APE (seconds), R² (log), Tsafrir's accuracy mean(min / max)."""
    truth, guess = np.exp(log_truth), np.exp(log_guess)
    ape = np.abs(guess - truth) / truth
    return {"mape": mape(truth, guess), "median_ape": float(np.median(ape)),
            "r2_log": r2(log_truth, log_guess),
            "accuracy": float(np.mean(np.minimum(truth, guess) / np.maximum(truth, guess))),
            "n_test": int(len(truth))}


# --------------------------------------------------------------------------------------------
# one split, one rate, one seed


def evaluate(X_train: np.ndarray, y_train: np.ndarray, X_test: np.ndarray, y_test: np.ndarray,
             rate: float, *, seed: int, epochs: int, threads: int,
             families: tuple[str, ...] = FAMILIES, tabnet: bool = True) -> list[dict]:
    """Every model of the comparison on one split at one sampling rate (log run time)."""
    from hpcds1mpi.surrogates.embedding import TabNetEmbedding
    from hpcds1mpi.surrogates.estimators import TabNetDirect, make_regressor
    from hpcds1mpi.surrogates.parallel import fit_threads
    from hpcds1mpi.surrogates.sampling import intelligent_sample

    t0 = time.perf_counter()
    keep, record = intelligent_sample(X_train, {"runtime_s": (y_train, "regression")}, rate,
                                      seed=seed)
    t_sample = time.perf_counter() - t0
    base = {"rate": rate, "seed": seed, "n_train_offered": int(len(X_train)),
            "n_train_kept": int(keep.sum()), "achieved_rate": record.achieved_rate,
            "sampling_s": t_sample}
    rows = []
    emb, t_embed = None, 0.0
    if families:
        t0 = time.perf_counter()
        emb = TabNetEmbedding(max_epochs=epochs, seed=seed, threads=threads).fit(
            X_train[keep], y_train[keep])
        t_embed = time.perf_counter() - t0
        E_train, E_test = emb.transform(X_train), emb.transform(X_test)
    for family in families:
        for use_emb in (False, True):
            Z_train = np.hstack([X_train, E_train]) if use_emb else X_train
            Z_test = np.hstack([X_test, E_test]) if use_emb else X_test
            t0 = time.perf_counter()
            model = make_regressor(family, seed=seed,
                                   threads=fit_threads(int(keep.sum()), threads)).fit(
                Z_train[keep], y_train[keep])
            t_fit = time.perf_counter() - t0
            rows.append({**base, "model": f"{family}+emb" if use_emb else f"{family} (raw)",
                         "family": family, "embedding": use_emb, "target": "runtime_s",
                         **runtime_scores(y_test, model.predict(Z_test)),
                         "fit_s": t_fit, "embed_s": t_embed if use_emb else 0.0,
                         "train_s": t_sample + t_fit + (t_embed if use_emb else 0.0)})
    if tabnet:
        t0 = time.perf_counter()
        model = TabNetDirect(max_epochs=epochs, seed=seed, threads=threads).fit(
            X_train[keep], y_train[keep])
        t_fit = time.perf_counter() - t0
        rows.append({**base, "model": "tabnet (direct)", "family": "tabnet", "embedding": False,
                     "target": "runtime_s", **runtime_scores(y_test, model.predict(X_test)),
                     "fit_s": t_fit, "embed_s": 0.0, "train_s": t_sample + t_fit})
    return rows


# --------------------------------------------------------------------------------------------
# findings and report


def findings(rows: list[dict]) -> list[str]:
    """What the rows say about the paper's H1 claims (computed, never written by hand)."""
    df = pd.DataFrame(rows)
    out = []
    for split in df["split"].unique() if len(df) else []:
        s = df[df["split"] == split]
        full = s[s["rate"] == 1.0].set_index("model")
        if full.empty:
            continue
        for fam in FAMILIES:
            if f"{fam} (raw)" not in full.index:
                continue
            raw, emb = full.loc[f"{fam} (raw)"], full.loc[f"{fam}+emb"]
            noise = max(emb["mape_std"], raw["mape_std"])
            verdict = ("helps" if emb["mape"] < raw["mape"] else "HURTS")
            if emb.get("n_seeds", 1) < 2:
                verdict += " (one seed: no spread to judge the difference by)"
            elif abs(emb["mape"] - raw["mape"]) <= noise:
                verdict = "no clear effect (difference within the seeds' spread)"
            out.append(f"{split}: {fam}: embedding vs none at 100 %: {verdict} (MAPE "
                       f"{100 * emb['mape']:.1f} % with vs {100 * raw['mape']:.1f} % without; "
                       f"median APE {100 * emb['median_ape']:.1f} vs "
                       f"{100 * raw['median_ape']:.1f} %; seed std {100 * noise:.1f} points)")
        if "tabnet (direct)" in full.index:
            trees = full[full["family"] != "tabnet"]
            tab = full.loc["tabnet (direct)"]
            beaten = int((trees["mape"] < tab["mape"]).sum())
            out.append(f"{split}: {beaten} of {len(trees)} tree models beat TabNet direct "
                       f"({100 * tab['mape']:.1f} % MAPE) at 100 %")
        best = full["mape"].idxmin()
        out.append(f"{split}: best at 100 %: {best}, MAPE {100 * full.loc[best, 'mape']:.1f} %, "
                   f"median APE {100 * full.loc[best, 'median_ape']:.1f} %, accuracy "
                   f"{full.loc[best, 'accuracy']:.3f}")
        for rate in sorted(set(s["rate"]) - {1.0}):
            part = s[s["rate"] == rate].set_index("model")
            common = part.index.intersection(full.index)
            diff = 100 * (part.loc[common, "mape"] - full.loc[common, "mape"])
            faster = (part.loc[common, "train_s"] < full.loc[common, "train_s"]).sum()
            within = int((diff <= 1.0).sum())
            out.append(f"{split}: sampling at {100 * rate:.0f} %: {within} of {len(common)} "
                       "models at most 1 MAPE point worse than at 100 % (change "
                       f"{diff.min():+.1f} to "
                       f"{diff.max():+.1f} points); {int(faster)} of {len(common)} train "
                       "faster")
    return out


def markdown(results: dict) -> str:
    rows = pd.DataFrame(results["rows"])
    c = results["counts"]
    out = [f"# H1 on a real log: {results['name']}", "",
           *(["**PARTIAL**: the run was stopped before it finished; only the rows below were "
              "measured.", ""] if not results.get("complete", True) else []),
           f"Command: `{results['command']}`", "",
           f"Log: {results['source']} ({c['kind']}): {c['read']} jobs read, "
           f"{c['kept']} completed jobs with a run time used"
           + (f" (a random subset of {c['subsampled_to']})" if "subsampled_to" in c else "")
           + f". Features known at submission (plain job-table columns): "
           f"{', '.join(results['features'])}. Target: log run time (no power in this log). "
           f"Seeds {results['seeds']} (mean over seeds; ± = std of MAPE). TabNet: "
           f"{results['epochs']} epochs at most, trained on at most "
           f"{results['tabnet_max_rows']} kept rows and {results['tabnet_max_steps']} steps; "
           f"trees on every kept row. {results['threads']} threads, measured "
           f"{results['date']} on {results['host']} (1-min load {results['load_avg_1min']:.1f}).",
           "", "MAPE and median APE on seconds; accuracy = mean of min/max(predicted, actual); "
           "R² on log values; train s = sampling + embedding (for +emb) + fit.", ""]
    if results.get("without"):
        out += [f"Left out of the features on purpose: {', '.join(results['without'])}.", ""]
    check = c.get("time_limit_check") or {}
    if check:
        parts = [f"{k}: median run time / limit {v['median_runtime_over_limit']:.2f}, "
                 f"{100 * v['share_over_limit']:.0f} % past the limit"
                 for k, v in check.items() if isinstance(v, dict)]
        out += ["Requested time vs run time in the whole log (a real Slurm log has timed-out "
                "jobs at about 1.0 and no completed job past its limit): " + "; ".join(parts)
                + (f"; correlation of log run time and log limit (completed) "
                   f"{check['corr_log_runtime_log_limit_ok']:.2f}"
                   if "corr_log_runtime_log_limit_ok" in check else "") + ".", ""]
    for split in results["splits"]:
        sub = rows[rows["split"] == split["name"]]
        out += [f"## {split['name']} split ({split['n_train']} train / {split['n_test']} test "
                "jobs)" + (" — the main result" if split["name"] == "chronological"
                           else " — reference only"), "",
                "| model | rate | kept | MAPE % | median APE % | accuracy | R² log | train s |",
                "|" + "---|" * 8]
        for _, r in sub.iterrows():
            out.append(f"| {r['model']} | {r['rate']:.2f} | {int(r['n_train_kept'])} | "
                       f"{100 * r['mape']:.1f} ± {100 * r['mape_std']:.1f} | "
                       f"{100 * r['median_ape']:.1f} | {r['accuracy']:.3f} | "
                       f"{r['r2_log']:.3f} | {r['train_s']:.1f} |")
        out.append("")
    out += ["## Findings", ""] + [f"- {line}" for line in results["findings"]]
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------------------------
# the run


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description="The paper's H1 on a real job log.")
    parser.add_argument("log", help="job log (any kind records.ingest reads)")
    parser.add_argument("--name", required=True, help="results file stem (h1_real_logs_<name>)")
    parser.add_argument("--rates", default="0.5,0.75,1.0")
    parser.add_argument("--splits", default=",".join(SPLITS))
    parser.add_argument("--families", default=",".join(FAMILIES))
    parser.add_argument("--no-tabnet", action="store_true", help="skip TabNet direct")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--epochs", type=int, default=60)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--max-jobs", type=int, default=None,
                        help="random subset of the completed jobs (kept in submit order)")
    parser.add_argument("--without", action="append", default=[],
                        help="a job-table column not to use as a feature (repeatable)")
    add_output_options(parser)
    args = parser.parse_args(argv)
    stem = claim_results(Path(args.out_dir) / f"h1_real_logs_{args.name}", args.force)
    from hpcds1mpi.surrogates.embedding import TabNetEmbedding

    t_start = time.perf_counter()
    jobs, counts = load_jobs(args.log, args.max_jobs, args.seed)
    rates = [float(r) for r in args.rates.split(",")]
    families = tuple(f for f in args.families.split(",") if f)
    seeds = list(range(args.seed, args.seed + args.seeds))
    rows, per_seed, split_info, features = [], [], [], []
    emb = TabNetEmbedding()

    def save(complete: bool) -> dict:
        results = {
            "name": args.name, "source": args.log, "counts": counts, "features": features,
            "without": args.without, "complete": complete,
            **run_info("h1_real_logs", argv),
            "target": "log runtime_s", "seeds": seeds, "rates": rates, "epochs": args.epochs,
            "tabnet_max_rows": emb.max_rows, "tabnet_max_steps": emb.max_steps,
            "threads": args.threads, "splits": split_info, "rows": rows,
            "rows_per_seed": per_seed, "findings": findings(rows),
            "seconds": time.perf_counter() - t_start,
        }
        return write_results(results, stem, markdown, quiet=not complete)

    for split in args.splits.split(","):
        train_rows, test_rows = split_rows(jobs, split, args.seed)
        train, test = jobs.iloc[train_rows], jobs.iloc[test_rows]
        cats, nums = feature_columns(train)
        cats = [c for c in cats if c not in args.without]
        nums = [c for c in nums if c not in args.without]
        X_train, X_test, features = submit_features(train, test, cats, nums)
        y_train, y_test = log_runtime(train), log_runtime(test)
        split_info.append({"name": split, "n_train": int(len(train)), "n_test": int(len(test)),
                           "unseen_users_in_test": float(
                               (~test["user"].astype(str).isin(train["user"].astype(str)))
                               .mean()) if "user" in cats else None})
        for rate in rates:
            t0 = time.perf_counter()
            got = []
            for seed in seeds:
                one = evaluate(X_train, y_train, X_test, y_test, rate, seed=seed,
                               epochs=args.epochs, threads=args.threads, families=families,
                               tabnet=not args.no_tabnet)
                for r in one:
                    r["split"] = split
                got += one
            per_seed += got
            rows += average_seeds(got)
            print(f"{split} rate {rate:.2f}: {time.perf_counter() - t0:.0f} s", flush=True)
            save(False)  # a run stopped later keeps what it finished (marked partial)
    return save(True)


if __name__ == "__main__":
    main()
