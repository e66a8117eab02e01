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

Writes ``analysis/results/h1_<name>.json`` and ``.md``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import pandas as pd

RESULTS = Path(__file__).resolve().parent / "results"
TARGETS = ("runtime_s", "energy_j")
LATENCY_ROWS = 10_000
#: The model-free reference row (see :func:`interpolation_reference`); never "best".
REFERENCE_MODEL = "reference: log-log interpolation, same config (no model)"


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
# metrics


def mape(truth: np.ndarray, guess: np.ndarray) -> float:
    return float(np.mean(np.abs(guess - truth) / truth))


def r2(truth: np.ndarray, guess: np.ndarray) -> float:
    ss_tot = float(np.sum((truth - truth.mean()) ** 2))
    return 1.0 - float(np.sum((truth - guess) ** 2)) / ss_tot if ss_tot > 0 else float("nan")


def scores(log_truth: np.ndarray, log_guess: np.ndarray, workloads: np.ndarray | None = None,
           noise: np.ndarray | None = None) -> dict:
    """MAPE (linear), R² (log), and the MAPE per workload and per noise tercile.

    Args:
        log_truth, log_guess: (n,) natural-log values.
        workloads: (n,) workload names, for the per-workload breakdown.
        noise: (n,) each row's repeat spread ((max - min) / median), for the breakdown by
            measurement noise (terciles of the test rows).
    """
    out = {"mape": mape(np.exp(log_truth), np.exp(log_guess)),
           "r2_log": r2(log_truth, log_guess), "n_test": int(len(log_truth))}
    rel = np.abs(np.exp(log_guess) - np.exp(log_truth)) / np.exp(log_truth)
    if workloads is not None:
        out["mape_by_workload"] = {str(w): float(rel[workloads == w].mean())
                                   for w in np.unique(workloads)}
    if noise is not None and np.isfinite(noise).sum() >= 3:
        edges = np.nanquantile(noise, [1 / 3, 2 / 3])
        bins = np.digitize(np.nan_to_num(noise, nan=np.inf), edges)
        out["mape_by_noise"] = {
            f"{lab} (noise {lo:.2f}-{hi:.2f})": float(rel[bins == b].mean())
            for b, lab in enumerate(("low", "mid", "high")) if (bins == b).any()
            for lo, hi in [(np.nanmin(noise[bins == b]), np.nanmax(noise[bins == b]))]}
    return out


def interpolation_reference(train: pd.DataFrame, test: pd.DataFrame, target: str
                            ) -> np.ndarray:
    """Model-free reference: log target interpolated in log size between the training sizes of
    the same workload and configuration (linear extrapolation from the last two beyond them).

    It uses no learned parameters, so its error on held-out sizes is mostly the measurement
    noise of the telemetry (the test row's and its two neighbours'): a rough floor for how well
    any model can do on this data. NaN where the configuration has < 2 training sizes.

    Returns:
        (len(test),) predicted log target.
    """
    from hpcds1mpi.surrogates.targets import target_values

    key_cols = ["workload", "nodes", "ranks_per_node", "threads", "device", "precision"]
    y_train = target_values(train, target)
    out = np.full(len(test), np.nan)
    size_train = np.log(pd.to_numeric(train["size"], errors="coerce").to_numpy(float))
    size_test = np.log(pd.to_numeric(test["size"], errors="coerce").to_numpy(float))
    train_keys = train[key_cols].astype(str).agg("|".join, axis=1).to_numpy()
    test_keys = test[key_cols].astype(str).agg("|".join, axis=1).to_numpy()
    for key in np.unique(test_keys):
        have = (train_keys == key) & np.isfinite(y_train) & np.isfinite(size_train)
        if have.sum() < 2:
            continue
        order = np.argsort(size_train[have])
        xs, ys = size_train[have][order], y_train[have][order]
        rows = test_keys == key
        x = size_test[rows]
        slope_hi = (ys[-1] - ys[-2]) / (xs[-1] - xs[-2])
        slope_lo = (ys[1] - ys[0]) / (xs[1] - xs[0])
        out[rows] = np.where(x > xs[-1], ys[-1] + slope_hi * (x - xs[-1]),
                             np.where(x < xs[0], ys[0] + slope_lo * (x - xs[0]),
                                      np.interp(x, xs, ys)))
    return out


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


def average_seeds(rows: list[dict]) -> list[dict]:
    """One row per (model, target): numeric fields averaged over seeds, MAPE spread kept.

    Adds ``mape_std`` (std over seeds) and ``n_seeds``; per-workload / per-noise MAPEs are
    averaged key by key.
    """
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        groups.setdefault((r["model"], r["target"]), []).append(r)
    out = []
    for group in groups.values():
        merged = dict(group[0])
        for key, value in group[0].items():
            if key in ("seed", "n_test", "n_train_offered") or isinstance(value, bool):
                continue
            if isinstance(value, (int, float)):
                merged[key] = float(np.mean([g[key] for g in group]))
            elif isinstance(value, dict):
                merged[key] = {k: float(np.mean([g[key][k] for g in group if k in g[key]]))
                               for k in value}
        merged["mape_std"] = float(np.std([g["mape"] for g in group]))
        merged["n_seeds"] = len(group)
        merged.pop("seed", None)
        out.append(merged)
    return out


# --------------------------------------------------------------------------------------------
# report


def markdown(results: dict) -> str:
    rows = pd.DataFrame(results["rows"])
    out = [f"# H1 evaluation: {results['name']}", "",
           f"Data: {results['source']} ({results['kind']}, {results['n_rows']} rows, "
           f"{results['n_workloads']} workloads); energy source: {results['energy_source']}. "
           + (f"Seeds {results['seeds'][0]}-{results['seeds'][-1]} (every number is the mean "
              "over seeds; ± is the std of runtime MAPE over seeds)"
              if len(results.get("seeds", [])) > 1 else f"Seed {results['seed']}")
           + f", TabNet {results['epochs']} epochs, {results['threads']} "
           f"threads. Measured {results['date']} on {results['host']} (1-min load "
           f"{results['load_avg_1min']:.1f}). Targets regressed "
           + ("relative to the analytic roofline time estimate (features.log_baseline)."
              if results.get("baseline") else "as raw log values (no analytic baseline).")
           , ""]
    if results["energy_source"] == "modelled":
        out += ["Energy here is MODELLED (no hardware meter): the energy columns measure how "
                "well the models learn the power model, not a measured energy.", ""]
    out += ["MAPE on the linear scale, R² on log values; train s = sampling + TabNet embedding "
            "(for +emb) + fit; predict ms = features + embedding + model for 10,000 held-out "
            "configurations, one thread for the embedding.", ""]
    for split in results["splits"]:
        out += [f"## {split['name']} ({split['n_train']} train / {split['n_test']} test rows)", ""]
        sub = rows[rows["split"] == split["name"]]
        header = "| model | rate | kept | runtime MAPE % | runtime R² | energy MAPE % | energy R² | train s | predict 10k ms |"
        out += [header, "|" + "---|" * 9]
        for (model, rate), grp in sub.groupby(["model", "rate"], sort=False):
            rt = grp[grp["target"] == "runtime_s"]
            en = grp[grp["target"] == "energy_j"]

            def cell(g, col, scale=1.0, fmt="{:.1f}"):
                return fmt.format(scale * g[col].iloc[0]) if len(g) else "-"

            train_s = grp["train_s"].sum() - grp["sampling_s"].iloc[0] * (len(grp) - 1) \
                - grp["embed_s"].iloc[0] * (len(grp) - 1)
            out.append(
                f"| {model} | {rate:.2f} | {int(grp['n_train_kept'].iloc[0])} | "
                f"{cell(rt, 'mape', 100)}"
                + (f" ± {100 * rt['mape_std'].iloc[0]:.1f}"
                   if len(rt) and "mape_std" in rt.columns and rt["n_seeds"].iloc[0] > 1
                   else "")
                + f" | {cell(rt, 'r2_log', 1, '{:.3f}')} | "
                f"{cell(en, 'mape', 100)} | {cell(en, 'r2_log', 1, '{:.3f}')} | "
                f"{train_s:.1f} | {cell(rt, 'predict_10k_ms')} |")
        out.append("")
        best = sub[(sub["target"] == "runtime_s") & (sub["rate"] == 1.0)
                   & (sub["family"] != "reference")]
        if len(best) and "mape_by_workload" in best.columns:
            best = best.loc[best["mape"].idxmin()]
            ref = sub[(sub["target"] == "runtime_s") & (sub["rate"] == 1.0)
                      & (sub["family"] == "reference")]
            out += [f"Where the runtime error is (100 %, best model {best['model']}"
                    + (", and the model-free reference" if len(ref) else "") + "):", "",
                    "| group | best model MAPE % |" + (" reference MAPE % |" if len(ref) else ""),
                    "|---|---|" + ("---|" if len(ref) else "")]
            for col in ("mape_by_workload", "mape_by_noise"):
                got = best.get(col)
                if not isinstance(got, dict):
                    continue
                ref_got = ref[col].iloc[0] if len(ref) and isinstance(ref[col].iloc[0], dict) \
                    else {}
                for group, value in got.items():
                    cell = f" {100 * ref_got[group]:.1f} |" if group in ref_got else (
                        " - |" if len(ref) else "")
                    out.append(f"| {group} | {100 * value:.1f} |{cell}")
            out.append("")
    if {0.75, 1.0} <= set(rows["rate"]):
        out += ["## Sampling at 75 % vs 100 % (runtime)", "",
                "Acceptance: MAPE within 1 point of 100 % and a shorter training time. Train s "
                "= sampling + embedding + fit of the runtime model, measured in the same run.",
                "", "| split | model | MAPE 75 % | MAPE 100 % | points | within 1 | train s 75 % "
                "| train s 100 % |", "|" + "---|" * 8]
        rt = rows[(rows["target"] == "runtime_s") & (rows["family"] != "reference")]
        for split in results["splits"]:
            sub = rt[rt["split"] == split["name"]]
            for model in sub["model"].unique():
                a = sub[(sub["model"] == model) & (sub["rate"] == 0.75)]
                b = sub[(sub["model"] == model) & (sub["rate"] == 1.0)]
                if not (len(a) and len(b)):
                    continue
                d = 100 * (a["mape"].iloc[0] - b["mape"].iloc[0])
                out.append(f"| {split['name']} | {model} | {100 * a['mape'].iloc[0]:.1f} | "
                           f"{100 * b['mape'].iloc[0]:.1f} | {d:+.1f} | "
                           f"{'yes' if d <= 1.0 else 'no'} | {a['train_s'].iloc[0]:.3f} | "
                           f"{b['train_s'].iloc[0]:.3f} |")
        out.append("")
    out += ["## Summary", ""]
    for line in results["summary"]:
        out.append(f"- {line}")
    for line in results.get("notes", []):
        out += ["", line]
    return "\n".join(out) + "\n"


def summarise(rows: list[dict]) -> list[str]:
    df = pd.DataFrame(rows)
    lines = []
    rt = df[df["target"] == "runtime_s"]
    for split in rt["split"].unique():
        s = rt[(rt["split"] == split)]
        ref = s[(s["family"] == "reference") & (s["rate"] == 1.0)]
        s = s[s["family"] != "reference"]
        full = s[s["rate"] == 1.0]
        if len(ref):
            lines.append(f"{split}: model-free reference (log-log interpolation between "
                         f"neighbouring measured sizes of the same configuration): "
                         f"{100 * ref['mape'].iloc[0]:.1f} % runtime MAPE")
        if len(full):
            best = full.loc[full["mape"].idxmin()]
            lines.append(f"{split}: best runtime MAPE at 100 % is {100 * best['mape']:.1f} % "
                         f"({best['model']}); TabNet direct "
                         + (f"{100 * full[full['family'] == 'tabnet']['mape'].min():.1f} %"
                            if (full["family"] == "tabnet").any() else "not run"))
            for model in full["model"]:
                m75 = s[(s["rate"] == 0.75) & (s["model"] == model)]
                m100 = full[full["model"] == model]
                if model == best["model"] and len(m75):
                    d = 100 * (m75["mape"].iloc[0] - m100["mape"].iloc[0])
                    lines.append(
                        f"{split}: {model} at 75 % vs 100 %: MAPE {100 * m75['mape'].iloc[0]:.1f}"
                        f" vs {100 * m100['mape'].iloc[0]:.1f} % ({d:+.1f} points); train "
                        f"{m75['train_s'].iloc[0]:.3f} s vs {m100['train_s'].iloc[0]:.3f} s")
        for fam in ("rf", "xgboost", "lightgbm"):
            e = s[(s["family"] == fam) & s["embedding"] & (s["rate"] == 1.0)]
            r = s[(s["family"] == fam) & ~s["embedding"] & (s["rate"] == 1.0)]
            if len(e) and len(r):
                verdict = "helps" if e["mape"].iloc[0] < r["mape"].iloc[0] else "does not help"
                lines.append(f"{split}: {fam}: embedding {verdict} "
                             f"({100 * e['mape'].iloc[0]:.1f} % with vs "
                             f"{100 * r['mape'].iloc[0]:.1f} % without)")
    return lines


def notes(frame: pd.DataFrame, rows: list[dict]) -> list[str]:
    """Paragraphs that put the numbers in context (every figure computed here)."""
    out = []
    if "noise" in frame.columns:
        noise = pd.to_numeric(frame.loc[frame["status"] == "ok", "noise"], errors="coerce")
        out.append(
            f"Measurement noise of this data: the median repeat spread ((max - min) / median "
            f"of a run's repeats) is {noise.median():.2f}, and "
            f"{100 * (noise > 0.5).mean():.0f} % of runs have a spread above 0.5. The "
            "model-free reference row interpolates each held-out size between its measured "
            "neighbours of the same configuration; its error is mostly that noise (of the "
            "held-out run and of its neighbours), so a held-out MAPE near it is near what this "
            "telemetry allows.")
    df = pd.DataFrame(rows)
    if len(df) and df["split"].str.startswith("workload:").any():
        out.append("workload:<name> holds out a whole workload: no model predicts an unseen "
                   "kernel's runtime (errors in the thousands of percent; the embedding and "
                   "the work-model features help a little, the knob-feature ensemble least). "
                   "System 1 does not guess there: the guard escalates an unknown workload to a "
                   "calibration sweep (hpcds1mpi/guard.py).")
    if len(df):
        rt = df[(df["target"] == "runtime_s") & (df["rate"] == 1.0)]
        for split in rt["split"].unique():
            s = rt[rt["split"] == split]
            ref = s[s["family"] == "reference"]
            models = s[s["family"] != "reference"]
            if len(models) and split.startswith("size"):
                best = models.loc[models["mape"].idxmin()]
                out.append(f"Acceptance (held-out-size runtime MAPE of the best model <= 15 %), "
                           f"{split}: {100 * best['mape']:.1f} % ({best['model']}): "
                           + ("met." if best["mape"] <= 0.15 else "NOT met."))
            if len(ref) and len(models):
                best = models.loc[models["mape"].idxmin()]
                out.append(f"{split}: best model {100 * best['mape']:.1f} % ({best['model']}) vs "
                           f"model-free reference {100 * ref['mape'].iloc[0]:.1f} %.")
    return out


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
    parser.add_argument("--out-dir", default=str(RESULTS))
    args = parser.parse_args(argv)
    if not args.telemetry and not args.jobs:
        parser.error("give --telemetry FILE.h5 or --jobs FILE.parquet")
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
    name = args.name or Path((args.telemetry or args.jobs)[0]).stem
    results = {
        "name": name, "kind": kind, "source": ", ".join(args.telemetry + args.jobs),
        "n_rows": int(len(frame)), "n_workloads": int(frame["workload"].nunique()),
        "energy_source": ",".join(sorted(energy)) or "none", "seed": args.seed,
        "seeds": list(range(args.seed, args.seed + args.seeds)), "deployed": deployed,
        "epochs": args.epochs, "threads": args.threads, "rates": rates,
        "baseline": not args.no_baseline, "sampling_floor": args.floor,
        "date": time.strftime("%Y-%m-%d %H:%M"), "host": platform.node(),
        "load_avg_1min": float(__import__("os").getloadavg()[0]),
        "splits": split_info, "rows": rows, "rows_per_seed": per_seed_rows,
        "summary": summarise(rows),
        "notes": notes(frame, rows),
    }
    out_dir = Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / f"h1_{name}.json").write_text(json.dumps(results, indent=2))
    (out_dir / f"h1_{name}.md").write_text(markdown(results))
    for line in results["summary"]:
        print(line)
    print(f"wrote {out_dir / f'h1_{name}.json'} and .md")
    return results


if __name__ == "__main__":
    main()
