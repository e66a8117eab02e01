"""The H1 evaluation's report: the Markdown tables, the summary lines and the notes that put
the numbers in context (every figure computed from the result rows)."""

from __future__ import annotations

import pandas as pd


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
                   "calibration sweep (hpcds1mpi/decide/guard.py).")
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

