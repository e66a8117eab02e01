"""Hypothesis H1 of the paper on our data: do TabNet embeddings help the tree regressors?

For each held-out split, each sampling rate (50 / 75 / 100 %) and each model — Random Forest,
XGBoost, LightGBM on [features, TabNet embedding] and on the raw features, and the TabNet
regressor itself — it trains on the training part and reports, on the held-out part, MAPE and
R² of runtime and energy, the training time (sampling + embedding + fit, measured) and the
latency of predicting 10,000 configurations (features + embedding + model, measured).

Splits:

- telemetry (sweeps of our kernels): ``size-interp`` holds out every other interior size of
  each workload (sizes never seen, inside the range); ``size-largest`` holds out each
  workload's largest size (extrapolation); ``workload:<name>`` holds out one whole workload.
- job tables (no problem size): ``random-jobs`` holds out 20 % of jobs; ``workload:<name>``
  holds out one application.

MAPE is computed on the linear scale; R² on log values (runtimes span decades; a linear R² only
measures the largest runs). Energy on this machine is MODELLED (no RAPL): energy rows then test
how well the power model is learned, and are labelled so.

Run::

    python -m hpcds1mpi.analysis.h1_eval --telemetry ref.h5 --name reference
    python -m hpcds1mpi.analysis.h1_eval --jobs jobs.parquet --name jobs

Writes ``h1_<name>.json`` and ``.md`` into ``--out-dir`` (default: the current folder; files
already there are replaced only with ``--force``) (the scores: ``h1_scores.py``; the report's
tables and summary: ``h1_report.py``).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd

from .h1_report import markdown, notes, summarise
from .h1_results import add_output_options, claim_results, write_results
from .h1_scores import REFERENCE_MODEL, average_seeds, interpolation_reference, scores

TARGETS = ("runtime_s", "energy_j")
LATENCY_ROWS = 10_000


# --------------------------------------------------------------------------------------------
# data and splits


def load_frame(telemetry: list[str], jobs: list[str], machine: str | None = None):
    """The checked training rows, with the configuration columns filled as training fills them
    (``features.normalise_frame``), and their kind (``telemetry`` or ``jobs``)."""
    from hpcds1mpi.records.training import TrainingData
    from hpcds1mpi.surrogates.features import normalise_frame

    data = TrainingData.read(telemetry, jobs, machine=machine)
    return normalise_frame(data.frame), data.kind


def deployed_settings(family: str = "xgboost", members: int = 5, trees: int | None = None,
                      embedding: bool = False, features: str = "knobs", epochs: int = 60) -> dict:
    """Keyword arguments of :class:`~hpcds1mpi.surrogates.models.SurrogateModel` for the
    "deployed" row (the defaults are the shipped bundle's: 5 XGBoost members on knob features)."""
    from hpcds1mpi.surrogates.models import KNOB_FEATURES

    return {"family": family, "n_members": members, "member_estimators": trees,
            "use_embedding": embedding,
            "member_features": list(KNOB_FEATURES) if features == "knobs" else None,
            "embedding_params": {"max_epochs": epochs}}


def make_splits(frame: pd.DataFrame, kind: str, heldout_workloads: list[str], seed: int
                ) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """(name, train rows, test rows) for each split."""
    n = len(frame)
    workload = frame["workload"].astype(str).to_numpy()
    splits = []
    if kind == "telemetry":
        size = pd.to_numeric(frame["size"], errors="coerce").to_numpy()
        interp = np.zeros(n, bool)
        largest = np.zeros(n, bool)
        for w in np.unique(workload):
            sizes = np.unique(size[workload == w])
            if len(sizes) >= 3:
                held = sizes[1:-1][::2]
                interp |= (workload == w) & np.isin(size, held)
            if len(sizes) >= 2:
                largest |= (workload == w) & (size == sizes[-1])
        if interp.any():
            splits.append(("size-interp", np.flatnonzero(~interp), np.flatnonzero(interp)))
        if largest.any():
            splits.append(("size-largest", np.flatnonzero(~largest), np.flatnonzero(largest)))
    else:
        rng = np.random.default_rng(seed)
        test = rng.random(n) < 0.2
        splits.append(("random-jobs", np.flatnonzero(~test), np.flatnonzero(test)))
    for w in heldout_workloads:
        test = workload == w
        if test.any() and (~test).any():
            splits.append((f"workload:{w}", np.flatnonzero(~test), np.flatnonzero(test)))
    return splits


# --------------------------------------------------------------------------------------------
# one split at one rate


def evaluate(frame: pd.DataFrame, train_rows: np.ndarray, test_rows: np.ndarray, rate: float,
             *, seed: int, epochs: int, threads: int, families: list[str],
             tabnet_direct: bool = True, use_baseline: bool = True,
             deployed: dict | None = None, floor: float | None = None) -> list[dict]:
    """Train every model on ``train_rows`` (sampled at ``rate``); score on ``test_rows``.

    ``deployed`` (keyword arguments of :class:`~hpcds1mpi.surrogates.models.SurrogateModel`)
    adds a row for the bootstrap ensemble as a bundle deploys it (ensemble median).
    """
    from hpcds1mpi.surrogates.embedding import TabNetEmbedding
    from hpcds1mpi.surrogates.features import build_features, fit_spec, log_baseline
    from hpcds1mpi.surrogates.estimators import TabNetDirect, make_regressor
    from hpcds1mpi.surrogates.parallel import fit_threads
    from hpcds1mpi.surrogates.targets import failure_labels, target_values
    from hpcds1mpi.surrogates.sampling import DEFAULT_FLOOR, intelligent_sample

    train = frame.iloc[train_rows].reset_index(drop=True)
    test = frame.iloc[test_rows].reset_index(drop=True)
    spec = fit_spec(train)
    X_train = build_features(train, spec).to_numpy()
    X_test = build_features(test, spec).to_numpy()
    # Regress log(target) - log(analytic time estimate); add the estimate back to predict.
    b_train = log_baseline(X_train, spec) if use_baseline else np.zeros(len(X_train))
    b_test = log_baseline(X_test, spec) if use_baseline else np.zeros(len(X_test))
    y_train = {t: target_values(train, t) - b_train for t in TARGETS}
    y_test = {t: target_values(test, t) - b_test for t in TARGETS}
    targets = [t for t in TARGETS
               if np.isfinite(y_train[t]).sum() >= 4 and np.isfinite(y_test[t]).sum() >= 1]
    workloads = test["workload"].astype(str).to_numpy()
    noise = (pd.to_numeric(test["noise"], errors="coerce").to_numpy(float)
             if "noise" in test.columns else np.full(len(test), np.nan))

    # Intelligent sampling (timed; at 100 % nothing is computed).
    t0 = time.perf_counter()
    sample_targets = {t: (y_train[t], "regression") for t in targets}
    sample_targets["failed"] = (failure_labels(train["status"]), "classification")
    keep, record = intelligent_sample(X_train, sample_targets, rate, seed=seed,
                                      floor=DEFAULT_FLOOR if floor is None else floor)
    t_sample = time.perf_counter() - t0

    # TabNet embedding on the kept rows (timed once; shared by the three families' "+emb" rows,
    # so not trained when no family is evaluated).
    embedding, t_embed = None, 0.0
    if families:
        Y = np.column_stack([y_train[t] for t in targets])
        emb_rows = keep & np.isfinite(Y).all(axis=1)
        t0 = time.perf_counter()
        embedding = TabNetEmbedding(max_epochs=epochs, seed=seed, threads=threads).fit(
            X_train[emb_rows], Y[emb_rows])
        t_embed = time.perf_counter() - t0
        E_train = embedding.transform(X_train)
        E_test = embedding.transform(X_test)

    # A 10,000-row frame of held-out configurations for the latency measurement.
    reps = int(np.ceil(LATENCY_ROWS / max(len(test), 1)))
    latency_frame = pd.concat([test] * reps, ignore_index=True).iloc[:LATENCY_ROWS]

    def features_latency(with_embedding: bool) -> float:
        from threadpoolctl import threadpool_limits

        best = float("inf")
        for _ in range(3):
            t = time.perf_counter()
            with threadpool_limits(1, user_api="blas"):
                X = build_features(latency_frame, spec).to_numpy()
                if with_embedding:
                    X = np.hstack([X, embedding.transform(X)])
            best = min(best, time.perf_counter() - t)
        return best

    lat_raw = features_latency(False)
    X_lat_raw = build_features(latency_frame, spec).to_numpy()
    if embedding is not None:
        lat_emb = features_latency(True)
        X_lat_emb = np.hstack([X_lat_raw, embedding.transform(X_lat_raw)])

    base = {"rate": rate, "achieved_rate": record.achieved_rate, "n_train_offered": len(train),
            "n_train_kept": int(keep.sum()), "sampling_s": t_sample}
    rows = []
    for family in families:
        for use_emb in (True, False):
            name = f"{family}+emb" if use_emb else f"{family} (raw)"
            Z_train = np.hstack([X_train, E_train]) if use_emb else X_train
            Z_test = np.hstack([X_test, E_test]) if use_emb else X_test
            Z_lat = X_lat_emb if use_emb else X_lat_raw
            for target in targets:
                fit_rows = keep & np.isfinite(y_train[target])
                test_ok = np.isfinite(y_test[target])
                t0 = time.perf_counter()
                model = make_regressor(family, seed=seed,
                                       threads=fit_threads(int(fit_rows.sum()), threads)).fit(
                    Z_train[fit_rows], y_train[target][fit_rows])
                t_fit = time.perf_counter() - t0
                if hasattr(model, "set_params") and "n_jobs" in model.get_params():
                    model.set_params(n_jobs=1)
                guess = model.predict(Z_test[test_ok]) + b_test[test_ok]
                t0 = time.perf_counter()
                model.predict(Z_lat)
                t_pred = time.perf_counter() - t0
                rows.append({**base, "model": name, "family": family, "embedding": use_emb,
                             "target": target,
                             **scores(y_test[target][test_ok] + b_test[test_ok], guess,
                                     workloads[test_ok], noise[test_ok]),
                             "fit_s": t_fit, "embed_s": t_embed if use_emb else 0.0,
                             "train_s": t_sample + (t_embed if use_emb else 0.0) + t_fit,
                             "predict_10k_ms": 1e3 * (t_pred + (lat_emb if use_emb else lat_raw))})
    if tabnet_direct:
        for target in targets:
            fit_rows = keep & np.isfinite(y_train[target])
            test_ok = np.isfinite(y_test[target])
            t0 = time.perf_counter()
            model = TabNetDirect(max_epochs=epochs, seed=seed, threads=threads).fit(
                X_train[fit_rows], y_train[target][fit_rows])
            t_fit = time.perf_counter() - t0
            guess = model.predict(X_test[test_ok]) + b_test[test_ok]
            t0 = time.perf_counter()
            model.predict(X_lat_raw)
            t_pred = time.perf_counter() - t0
            rows.append({**base, "model": "tabnet (direct)", "family": "tabnet",
                         "embedding": False, "target": target,
                         **scores(y_test[target][test_ok] + b_test[test_ok], guess,
                                     workloads[test_ok], noise[test_ok]),
                         "fit_s": t_fit,
                         "embed_s": 0.0, "train_s": t_sample + t_fit,
                         "predict_10k_ms": 1e3 * (t_pred + lat_raw)})
    if deployed is not None:
        from hpcds1mpi.surrogates.models import SurrogateModel

        t0 = time.perf_counter()
        model = SurrogateModel(seed=seed, threads=threads, use_baseline=use_baseline,
                               **deployed).fit(train[keep].reset_index(drop=True))
        t_fit = time.perf_counter() - t0
        members = model.predict_members(test)
        t0 = time.perf_counter()
        model.predict_members(latency_frame)
        t_pred = time.perf_counter() - t0
        label = (f"deployed: {model.family}{'+emb' if model.use_embedding else ' (raw)'}"
                 f"{' on knob features' if model.member_features else ''} "
                 f"x{model.n_members} bootstrap members, median")
        for target in targets:
            test_ok = np.isfinite(y_test[target])
            guess = np.median(members[target], axis=0)[test_ok]
            rows.append({**base, "model": label, "family": "deployed",
                         "embedding": bool(model.use_embedding), "target": target,
                         **scores(y_test[target][test_ok] + b_test[test_ok], guess,
                                  workloads[test_ok], noise[test_ok]),
                         "fit_s": t_fit, "embed_s": 0.0, "train_s": t_sample + t_fit,
                         "predict_10k_ms": 1e3 * t_pred})
    if rate == 1.0 and "size" in test.columns \
            and pd.to_numeric(test["size"], errors="coerce").notna().any():
        # Model-free reference (no training, no sampling): how noisy the held-out rows are.
        for target in targets:
            test_ok = np.isfinite(y_test[target])
            guess = interpolation_reference(train, test, target)[test_ok]
            truth = (y_test[target] + b_test)[test_ok]
            have = np.isfinite(guess)
            if have.sum() < 1:
                continue
            rows.append({**base, "sampling_s": 0.0, "model": REFERENCE_MODEL,
                         "family": "reference",
                         "embedding": False, "target": target,
                         **scores(truth[have], guess[have], workloads[test_ok][have],
                                  noise[test_ok][have]),
                         "fit_s": 0.0, "embed_s": 0.0, "train_s": 0.0,
                         "predict_10k_ms": float("nan")})
    return rows


# --------------------------------------------------------------------------------------------
# the run


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description="Reproduce the paper's H1 on our data.")
    parser.add_argument("--telemetry", action="append", default=[], help="telemetry .h5")
    parser.add_argument("--jobs", action="append", default=[], help="job table .parquet")
    parser.add_argument("--name", default=None, help="results file stem (h1_<name>)")
    parser.add_argument("--rates", default="0.5,0.75,1.0")
    parser.add_argument("--families", default="rf,xgboost,lightgbm")
    parser.add_argument("--heldout-workload", action="append", default=None,
                        help="workload to hold out (repeatable; default: the most frequent)")
    parser.add_argument("--splits", default=None,
                        help="comma-separated split names to run (default: all)")
    parser.add_argument("--no-tabnet-direct", action="store_true")
    parser.add_argument("--no-baseline", action="store_true",
                        help="regress raw log targets (ablation of the analytic baseline)")
    parser.add_argument("--epochs", type=int, default=60)
    parser.add_argument("--floor", type=float, default=None,
                        help="sampling's smallest keep probability (default: the sampler's); "
                             "a floor equal to the rate is uniform random sampling (a control)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--seeds", type=int, default=3,
                        help="repeat each split and rate with seeds seed..seed+N-1 (sampling, "
                             "TabNet, forests) and report the mean: one seed of a 250-row "
                             "sample is too noisy to compare rates")
    parser.add_argument("--deployed-family", default="xgboost",
                        help="family of the deployed-ensemble row ('' to skip)")
    parser.add_argument("--deployed-members", type=int, default=5)
    parser.add_argument("--deployed-trees", type=int, default=None)
    parser.add_argument("--deployed-embedding", action="store_true")
    parser.add_argument("--deployed-features", choices=["knobs", "all"], default="knobs",
                        help="member features of the deployed row (models.KNOB_FEATURES or all)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--max-rows", type=int, default=None,
                        help="random subset of rows (for quick runs on big job tables)")
    parser.add_argument("--machine", default=None)
    add_output_options(parser)
    args = parser.parse_args(argv)
    if not args.telemetry and not args.jobs:
        parser.error("give --telemetry FILE.h5 or --jobs FILE.parquet")
    name = args.name or Path((args.telemetry or args.jobs)[0]).stem
    stem = claim_results(Path(args.out_dir) / f"h1_{name}", args.force)
    frame, kind = load_frame(args.telemetry, args.jobs, args.machine)
    if args.max_rows and len(frame) > args.max_rows:
        frame = frame.sample(args.max_rows, random_state=args.seed).reset_index(drop=True)
    heldout = args.heldout_workload or [frame["workload"].astype(str).value_counts().index[0]]
    splits = make_splits(frame, kind, heldout, args.seed)
    if args.splits:
        wanted = set(args.splits.split(","))
        splits = [s for s in splits if s[0] in wanted or s[0].split(":")[0] in wanted]
    rates = [float(r) for r in args.rates.split(",")]
    families = [f for f in args.families.split(",") if f]
    deployed = None if not args.deployed_family else deployed_settings(
        args.deployed_family, args.deployed_members, args.deployed_trees,
        args.deployed_embedding, args.deployed_features, args.epochs)
    rows, split_info, per_seed_rows = [], [], []
    for name, train_rows, test_rows in splits:
        split_info.append({"name": name, "n_train": int(len(train_rows)),
                           "n_test": int(len(test_rows))})
        for rate in rates:
            t0 = time.perf_counter()
            got = []
            for seed in range(args.seed, args.seed + args.seeds):
                one = evaluate(frame, train_rows, test_rows, rate, seed=seed,
                               epochs=args.epochs, threads=args.threads, families=families,
                               tabnet_direct=not args.no_tabnet_direct,
                               use_baseline=not args.no_baseline, deployed=deployed,
                               floor=args.floor)
                for r in one:
                    r["split"], r["seed"] = name, seed
                per_seed_rows += one
                got += one
            got = average_seeds(got)
            rows += got
            best = min((r for r in got if r["target"] == "runtime_s"
                        and r["family"] != "reference"), key=lambda r: r["mape"])
            print(f"{name} rate {rate:.2f}: best runtime MAPE {100 * best['mape']:.1f} % "
                  f"({best['model']}), {time.perf_counter() - t0:.0f} s", flush=True)
    import platform

    energy = frame.loc[frame["status"] == "ok", "energy_source"].astype(str).unique().tolist() \
        if "energy_source" in frame.columns else []
    results = {
        "name": name, "kind": kind, "source": ", ".join(args.telemetry + args.jobs),
        "n_rows": int(len(frame)), "n_workloads": int(frame["workload"].nunique()),
        "energy_source": ",".join(sorted(energy)) or "none", "seed": args.seed,
        "seeds": list(range(args.seed, args.seed + args.seeds)), "deployed": deployed,
        "epochs": args.epochs, "threads": args.threads, "rates": rates,
        "baseline": not args.no_baseline, "sampling_floor": args.floor,
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "host": platform.node(),
        "load_avg_1min": float(__import__("os").getloadavg()[0]),
        "splits": split_info, "rows": rows, "rows_per_seed": per_seed_rows,
        "summary": summarise(rows),
        "notes": notes(frame, rows),
    }
    return write_results(results, stem, markdown, "summary")


if __name__ == "__main__":
    main()
