"""Evaluate System 1 and the guard on measured telemetry (leave-size-out, leave-workload-out).

    python -m hpcds1mpi.analysis.eval_system1 --model DIR --telemetry FILE [--out FILE]

For every fold a bundle is retrained without the held-out problems (``train_bundle``, small
settings so the whole evaluation stays within minutes), then for each held-out problem
(workload, size, partition) System 1 picks among the configurations that were *measured* for
that problem (so every pick has a measured outcome), and is compared with:

* ``rules`` — rules of thumb: GPU when the partition has one, else every core a rank, one
  thread, fp64 (the most common default);
* ``lgbm_rank`` — a LightGBM ranker (lambdarank) on raw features, trained on the same folds;
* ``random`` — the mean over random picks (expected value, exact).

Reported per method, side by side: the pick's speed as % of the best measured runtime
(median and geometric mean over problems; a crashing pick counts 0 % and is counted), and the
runs needed to get within 5 % of best when measuring configurations in the method's ranked
order. Leave-one-workload-out: the guard's learned check alone (no name lookup) on the
never-seen workload, with thresholds calibrated on the training workloads only, and the
confidently wrong automatic picks left after the full guard. System 1's confidence is
calibrated on the leave-size-out picks (cross-fitted logistic model) and its calibration error
(ECE) and AUROC at separating good picks (within 5 %) from bad are reported.

Results go to ``benchmarks/results/system1_eval.json`` (and ``--write-calibration`` stores the
confidence map next to the bundle as ``system1_calibration.json``).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np

CONFIG_COLS = ["nodes", "ranks_per_node", "threads", "device", "precision"]
PROBLEM_COLS = ["workload", "size", "partition"]


def _problems(frame):
    return [tuple(k) for k, _ in frame.groupby(PROBLEM_COLS, sort=True)]


def _measured(frame, problem):
    w, s, p = problem
    sub = frame[(frame["workload"] == w) & (frame["size"] == s) & (frame["partition"] == p)]
    return sub.reset_index(drop=True)


def _best_runtime(sub) -> float:
    ok = sub[sub["status"] == "ok"]["runtime_s"]
    return float(ok.min()) if len(ok) else float("nan")


def _speed(sub, idx: int) -> tuple[float, bool]:
    """(best / picked runtime, crashed) for measured row ``idx``."""
    best = _best_runtime(sub)
    row = sub.iloc[idx]
    if row["status"] != "ok" or not np.isfinite(row["runtime_s"]):
        return 0.0, True
    return float(best / row["runtime_s"]), False


def _runs_to_within(sub, order, tol: float = 0.05) -> int:
    best = _best_runtime(sub)
    for k, idx in enumerate(order, 1):
        row = sub.iloc[idx]
        if row["status"] == "ok" and row["runtime_s"] <= best * (1 + tol):
            return k
    return len(order)


def system1_order(bundle, sub, partition_hw: dict):
    """System 1's ranking of the measured configurations of one problem (best first), and its
    spread / margin at the pick."""
    from hpcds1mpi.decide import system1 as s1
    from hpcds1mpi.cluster import Partition

    import pandas as pd

    hw = partition_hw
    part = Partition(name=str(sub["partition"].iloc[0]),
                     cores_per_node=int(hw.get("cores_per_node") or sub["cores_per_node"].iloc[0]),
                     memory_gb=float(hw.get("memory_gb") or sub["memory_gb"].iloc[0]),
                     max_nodes=int(max(sub["nodes"].max(), hw.get("max_nodes", 1) or 1)),
                     gpus_per_node=int(hw.get("gpus_per_node") or 0),
                     gpu_memory_gb=float(hw.get("gpu_memory_gb") or
                                         (1.0 if hw.get("gpus_per_node") else 0.0)))
    frame = sub[["workload", "size", *CONFIG_COLS, "partition", "cores_per_node", "memory_gb",
                 "gpus_per_node"]].copy()
    frame["size"] = frame["size"].astype(np.int64)
    scores = s1.score(bundle, str(sub["workload"].iloc[0]), int(sub["size"].iloc[0]), [part],
                      frame=pd.DataFrame(frame).reset_index(drop=True))
    choice = s1.choose(scores, "time")
    feasible = list(choice.ranking)
    rest = [i for i in np.argsort(scores.cols["runtime_s"], kind="stable") if i not in feasible]
    return feasible + rest, choice


def _label(row) -> str:
    return (f"{int(row['nodes'])}x{int(row['ranks_per_node'])}x{int(row['threads'])} "
            f"{row['device']} {row['precision']}")


def within_noise(sub, idx: int) -> bool:
    """Whether measured row ``idx`` is within the measured noise of the best row.

    Its fastest repeat is no slower than the best configuration's median: the two cannot be
    told apart by the repeats that were measured (one-sided, as ``system2.run_noise``).
    """
    ok = sub[sub["status"] == "ok"]
    best = ok.loc[ok["runtime_s"].idxmin()]
    row = sub.iloc[idx]
    if row["status"] != "ok":
        return False
    fastest = row.get("runtime_min_s")
    fastest = float(fastest) if fastest is not None and np.isfinite(fastest) and fastest > 0 \
        else float(row["runtime_s"])
    return bool(fastest <= float(best["runtime_s"]))


def _pick_record(sub, idx: int, choice) -> dict:
    ok = sub[sub["status"] == "ok"]
    best_idx = int(ok["runtime_s"].idxmin())
    sp, crashed = _speed(sub, idx)
    return {"workload": str(sub["workload"].iloc[0]), "size": float(sub["size"].iloc[0]),
            "pick": _label(sub.iloc[idx]), "best": _label(sub.iloc[best_idx]),
            "pct_of_best": 100 * sp, "crashed": bool(crashed),
            "within_noise_of_best": within_noise(sub, idx),
            "best_noise": float(sub.iloc[best_idx].get("noise") or float("nan")),
            "confidence": float(choice.confidence), "spread": float(choice.spread),
            "margin": float(choice.margin)}


def _noise_summary(records: list[dict]) -> dict:
    if not records:
        return {}
    good = [r["pct_of_best"] >= 100 / 1.05 for r in records]
    noisy = [r["within_noise_of_best"] for r in records]
    return {"picks_within_5pct": float(np.mean(good)),
            "picks_within_noise_of_best": float(np.mean(noisy)),
            "picks_within_5pct_or_noise": float(np.mean([a or b for a, b in zip(good, noisy)]))}


def rules_order(sub):
    gpu = sub["device"] == "gpu"
    cores = sub["ranks_per_node"] * sub["threads"]
    key = np.lexsort((
        (sub["precision"] != "fp64").to_numpy(),
        sub["threads"].to_numpy(),
        -cores.to_numpy(),
        -sub["nodes"].to_numpy(),
        ~gpu.to_numpy() if gpu.any() else np.zeros(len(sub), bool),
    ))
    return list(key)


def random_expectation(sub) -> tuple[float, float, float]:
    """Expected speed, crash probability and runs-to-5 % of a uniformly random order."""
    best = _best_runtime(sub)
    ok = (sub["status"] == "ok").to_numpy()
    rt = sub["runtime_s"].to_numpy(float)
    speeds = np.where(ok, best / np.where(ok, rt, 1.0), 0.0)
    good = ok & (rt <= best * 1.05)
    n, g = len(sub), int(good.sum())
    runs = (n + 1) / (g + 1) if g else float(n)  # expected position of the first good one
    return float(speeds.mean()), float((~ok).mean()), float(runs)


def _lgbm_rank_orders(train, tests):
    """LightGBM lambdarank on raw features (the seed's ranking baseline)."""
    import lightgbm as lgb

    from hpcds1mpi.surrogates.features import build_features, fit_spec

    ok = train[train["status"] == "ok"].copy()
    ok = ok.sort_values(PROBLEM_COLS).reset_index(drop=True)
    spec = fit_spec(train)
    X = build_features(ok, spec).to_numpy()
    labels, groups = [], []
    for _, g in ok.groupby(PROBLEM_COLS, sort=True):
        best = g["runtime_s"].min()
        ratio = best / g["runtime_s"]
        labels.append(np.clip(np.floor(ratio * 10), 0, 10).astype(int).to_numpy())
        groups.append(len(g))
    model = lgb.LGBMRanker(n_estimators=100, max_depth=6, learning_rate=0.1, verbose=-1,
                           min_child_samples=5, n_jobs=2)
    model.fit(X, np.concatenate(labels), group=groups)
    return [list(np.argsort(-model.predict(build_features(sub, spec).to_numpy()),
                            kind="stable")) for sub in tests]


def _summary(speeds, crashes, runs) -> dict:
    s = np.asarray(speeds, float)
    return {"median_pct_of_best": float(100 * np.median(s)) if len(s) else None,
            "geomean_pct_of_best": float(100 * math.exp(np.mean(np.log(np.maximum(s, 1e-3)))))
            if len(s) else None,
            "crashing_picks": float(np.sum(crashes)), "problems": int(len(s)),
            "median_runs_to_5pct": float(np.median(runs)) if len(runs) else None}


def auroc(scores, labels) -> float:
    scores, labels = np.asarray(scores, float), np.asarray(labels, bool)
    pos, neg = scores[labels], scores[~labels]
    if len(pos) == 0 or len(neg) == 0:
        return float("nan")
    greater = (pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()
    return float(greater / (len(pos) * len(neg)))


def ece(probs, labels, bins: int = 10) -> float:
    probs, labels = np.asarray(probs, float), np.asarray(labels, float)
    edges = np.linspace(0, 1, bins + 1)
    total = 0.0
    for lo, hi in zip(edges[:-1], edges[1:]):
        sel = (probs >= lo) & (probs < hi if hi < 1 else probs <= hi)
        if sel.any():
            total += sel.mean() * abs(probs[sel].mean() - labels[sel].mean())
    return float(total)


def _fit_logistic(X, y):
    from sklearn.linear_model import LogisticRegression

    if len(set(y)) < 2:
        return None
    return LogisticRegression(C=1.0).fit(X, y)


def evaluate(frame, trainer, *, folds_by_size: int = 4, max_workloads: int | None = None,
             seed: int = 0, log=print) -> dict:
    """Run both protocols on a runs table with ``trainer(train_frame) -> bundle``."""
    from hpcds1mpi.config import FAILURE_STATUSES, OK
    from hpcds1mpi.decide import guard
    from hpcds1mpi.decide.confidence import ConfidenceModel

    frame = frame.copy()
    frame = frame[frame["status"].isin([OK, *FAILURE_STATUSES])]
    frame = frame.reset_index(drop=True)
    rng = np.random.default_rng(seed)
    results: dict = {"protocols": {}}
    # ---------------- leave-size-out ----------------
    sizes_by_workload = {w: sorted(g["size"].unique()) for w, g in frame.groupby("workload")}
    fold_of = {}
    for w, sizes in sizes_by_workload.items():
        # Interior sizes only are held out (the end sizes would be extrapolation, judged by the
        # guard, not by System 1's accuracy); spread over the folds.
        inner = sizes[1:-1] if len(sizes) > 2 else []
        for k, s in enumerate(inner):
            fold_of[(w, s)] = k % folds_by_size
    methods = {m: {"speeds": [], "crashes": [], "runs": []}
               for m in ("system1", "rules", "lgbm_rank", "random")}
    conf_rows = []
    per_problem: list[dict] = []
    for fold in range(folds_by_size):
        held = [(w, s) for (w, s), f in fold_of.items() if f == fold]
        if not held:
            continue
        mask = np.array([(w, s) in set(held) for w, s in zip(frame["workload"], frame["size"])])
        train, test = frame[~mask], frame[mask]
        t0 = time.perf_counter()
        bundle = trainer(train)
        log(f"leave-size-out fold {fold}: trained on {len(train)} runs in "
            f"{time.perf_counter() - t0:.1f} s; {len(held)} held-out sizes")
        subs = [_measured(test, p) for p in _problems(test)]
        subs = [s for s in subs if (s["status"] == "ok").any()]
        lgbm = _lgbm_rank_orders(train, subs)
        hw = dict(getattr(bundle, "partitions", {}) or {})
        for sub, lg in zip(subs, lgbm):
            order, choice = system1_order(bundle, sub, hw.get(str(sub["partition"].iloc[0]), {}))
            for name, o in (("system1", order), ("rules", rules_order(sub)), ("lgbm_rank", lg)):
                sp, cr = _speed(sub, o[0])
                methods[name]["speeds"].append(sp)
                methods[name]["crashes"].append(cr)
                methods[name]["runs"].append(_runs_to_within(sub, o))
            rs, rc, rr = random_expectation(sub)
            methods["random"]["speeds"].append(rs)
            methods["random"]["crashes"].append(rc)
            methods["random"]["runs"].append(rr)
            sp, _ = _speed(sub, order[0])
            conf_rows.append((choice.spread, choice.margin, sp >= 1 / 1.05,
                              choice.confidence))
            per_problem.append(_pick_record(sub, order[0], choice))
    results["protocols"]["leave_size_out"] = {m: _summary(**v) for m, v in methods.items()}
    results["protocols"]["leave_size_out"]["system1"].update(_noise_summary(per_problem))
    results["leave_size_out_picks"] = per_problem
    # Confidence calibration: cross-fitted logistic model on (spread, margin).
    if conf_rows:
        spread, margin, good, raw = (np.array(x) for x in zip(*conf_rows))
        X = ConfidenceModel.features(spread, margin)
        probs = np.full(len(good), np.nan)
        idx = rng.permutation(len(good))
        for part in np.array_split(idx, 5):
            train_idx = np.setdiff1d(idx, part)
            model = _fit_logistic(X[train_idx], good[train_idx])
            probs[part] = model.predict_proba(X[part])[:, 1] if model is not None else \
                good[train_idx].mean() if len(train_idx) else 0.5
        full = _fit_logistic(X, good)
        coef = (float(full.intercept_[0]), *map(float, full.coef_[0])) if full is not None \
            else None
        results["confidence"] = {
            "good_pick_rate": float(good.mean()), "picks": int(len(good)),
            "ece_calibrated_crossfit": ece(probs, good), "auroc_calibrated_crossfit":
                auroc(probs, good), "ece_uncalibrated": ece(raw, good),
            "auroc_uncalibrated": auroc(raw, good), "coef": coef}
    # ---------------- leave-one-workload-out: the guard ----------------
    workloads = sorted(frame["workload"].unique())
    if max_workloads:
        workloads = list(rng.permutation(workloads))[:max_workloads]
    lowo = []
    for w in workloads:
        train = frame[frame["workload"] != w]
        if train["workload"].nunique() < 2:
            continue
        bundle = trainer(train)
        ref = guard.reference(bundle)
        cal = guard.calibrate(bundle, ref)
        hw = dict(getattr(bundle, "partitions", {}) or {})
        test = frame[frame["workload"] == w]
        caught = auto_wrong = 0
        picks = []
        for p in _problems(test):
            sub = _measured(test, p)
            if not (sub["status"] == "ok").any():
                continue
            d = guard.job_distance(bundle, ref, w, float(p[1]), p[2] if p[2] in hw else None,
                                   k=cal.k)
            learned_escalates = (not math.isfinite(d)) or d > cal.escalate_threshold
            caught += learned_escalates
            order, choice = system1_order(bundle, sub, hw.get(str(p[2]), {}))
            sp, _ = _speed(sub, order[0])
            wrong = sp < 1 / 1.05
            from hpcds1mpi.cluster import Partition

            part_hw = hw.get(str(p[2]), {})
            verdict = guard.judge(bundle, w, int(p[1]), Partition(
                str(p[2]), cores_per_node=int(part_hw.get("cores_per_node", 1)),
                memory_gb=float(part_hw.get("memory_gb", 1.0)),
                gpus_per_node=int(part_hw.get("gpus_per_node", 0) or 0),
                gpu_memory_gb=float(part_hw.get("gpu_memory_gb", 1.0) or 1.0)),
                cal, ref, choice.confidence)
            auto_wrong += bool(wrong and verdict.verdict == "auto")
            picks.append({"size": float(p[1]), "distance": d, "speed": sp,
                          "learned_escalates": bool(learned_escalates),
                          "confidence": float(choice.confidence),
                          # Wrong and confident enough to go out automatically were the
                          # workload's name not looked up: what the learned check must catch.
                          "confidently_wrong_without_name": bool(
                              wrong and choice.confidence >= guard.CONFIDENCE_AUTO),
                          "verdict": verdict.verdict})
        n = len(picks)
        wrong_n = sum(pk["speed"] < 1 / 1.05 for pk in picks)
        lowo.append({"workload": w, "problems": n, "learned_catch_rate": caught / n if n else None,
                     "wrong_picks": int(wrong_n), "confidently_wrong_auto": int(auto_wrong),
                     "escalate_threshold": cal.escalate_threshold, "picks": picks})
        log(f"leave-workload-out {w}: learned check escalates {caught}/{n}; "
            f"confidently wrong auto picks {auto_wrong}")
    total = sum(x["problems"] for x in lowo)
    targets = [pk for x in lowo for pk in x["picks"] if pk["confidently_wrong_without_name"]]
    results["protocols"]["leave_one_workload_out"] = {
        "confidently_wrong_without_name": len(targets),
        "learned_catch_rate_of_confidently_wrong": (
            float(np.mean([pk["learned_escalates"] for pk in targets])) if targets else None),
        "escalated_fraction": (sum(pk["verdict"] == "escalate" for x in lowo for pk in x["picks"])
                               / total) if total else None,
        "learned_catch_rate": (sum((x["learned_catch_rate"] or 0) * x["problems"] for x in lowo)
                               / total) if total else None,
        "confidently_wrong_auto": int(sum(x["confidently_wrong_auto"] for x in lowo)),
        "problems": int(total), "per_workload": lowo}
    return results


def time_scoring(bundle, repeats: int = 7) -> dict:
    """System 1 on ~10,000 candidates: total (with the bundle's predict) and System 1 alone."""
    from hpcds1mpi.decide import system1 as s1
    from hpcds1mpi.cluster import Partition

    part = Partition("timing", cores_per_node=128, memory_gb=512, max_nodes=16)
    workload = sorted(bundle.workloads)[0]
    frame = s1.candidate_frame(workload, 1024, [part])
    answer = bundle.predict(frame)

    class Precomputed:
        def predict(self, df):
            return answer

        def training_frame(self):
            return bundle.training_frame()

    limits = s1.learn_memory_limits(bundle, [part])
    total, own = [], []
    for _ in range(repeats):
        t0 = time.perf_counter()
        s1.choose(s1.score(bundle, workload, 1024, [part], limits=limits), "time")
        total.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        s1.choose(s1.score(Precomputed(), workload, 1024, [part], limits=limits), "time")
        own.append(time.perf_counter() - t0)
    return {"candidates": int(len(frame)), "total_ms_median": 1e3 * float(np.median(total)),
            "system1_only_ms_median": 1e3 * float(np.median(own)),
            "predict_ms_median": 1e3 * float(np.median(total) - np.median(own))}


def markdown(results: dict, args) -> str:
    """The results as a Markdown report (side-by-side table, guard, confidence, timing)."""
    lso = results["protocols"]["leave_size_out"]
    s1 = lso["system1"]
    lines = ["# System 1 evaluation on measured telemetry", "",
             f"Telemetry `{results['telemetry']}`; fold models trained like the shipped bundle "
             f"`{results['model']}` ({results.get('fold_settings', '')}). Wall "
             f"{results['wall_s']:.0f} s, load average {results.get('loadavg', '?')}.", "",
             "## Leave-size-out (interior sizes held out, 4 folds)", "",
             "| method | median % of best | geomean % of best | crashing picks | "
             "median runs to 5 % |", "| --- | --- | --- | --- | --- |"]
    for m, r in lso.items():
        lines.append(f"| {m} | {r['median_pct_of_best']:.1f} | {r['geomean_pct_of_best']:.1f} | "
                     f"{r['crashing_picks']:.0f} | {r['median_runs_to_5pct']:.1f} |")
    lines += ["", f"Goals: median >= 99 % ({'met' if s1['median_pct_of_best'] >= 99 else 'MISSED'}),"
              f" geomean >= 98 % ({'met' if s1['geomean_pct_of_best'] >= 98 else 'MISSED'}), "
              f"0 crashing picks ({'met' if s1['crashing_picks'] == 0 else 'MISSED'}).", "",
              f"System 1 picks within 5 % of the measured best: "
              f"{100 * s1.get('picks_within_5pct', float('nan')):.0f} %; within the measured noise "
              f"of the best (the pick's fastest repeat no slower than the best's median): "
              f"{100 * s1.get('picks_within_noise_of_best', float('nan')):.0f} %.", ""]
    if "neighbour_oracle" in results:
        o = results["neighbour_oracle"]
        lines += [f"Noise ceiling (measured, no model): picking, for each held-out size, the "
                  f"configuration that was fastest at the two neighbouring measured sizes gives "
                  f"median {o['median_pct_of_best']:.1f} %, geomean {o['geomean_pct_of_best']:.1f} %"
                  f", within 5 % {100 * o['picks_within_5pct']:.0f} %.", ""]
    lines += ["Worst System 1 picks:", "", "| workload | size | pick | measured best | % of best |"
              " within noise |", "| --- | --- | --- | --- | --- | --- |"]
    for r in sorted(results.get("leave_size_out_picks", []), key=lambda r: r["pct_of_best"])[:10]:
        lines.append(f"| {r['workload']} | {r['size']:g} | {r['pick']} | {r['best']} | "
                     f"{r['pct_of_best']:.0f} | {'yes' if r['within_noise_of_best'] else 'no'} |")
    g = results["protocols"]["leave_one_workload_out"]
    rate = g.get("learned_catch_rate_of_confidently_wrong")
    lines += ["", "## Guard, leave-one-workload-out (never-seen workloads)", "",
              f"- escalated by the full guard: {100 * (g['escalated_fraction'] or 0):.0f} % of "
              f"{g['problems']} problems; confidently wrong automatic picks: "
              f"{g['confidently_wrong_auto']}",
              f"- wrong picks (> 5 % off) with confidence >= the auto level, i.e. that would go "
              f"out automatically without the name lookup: {g['confidently_wrong_without_name']}",
              f"- learned check alone (distance, thresholds calibrated without the workload) "
              f"catches {'-' if rate is None else f'{100 * rate:.0f} %'} of them "
              f"(goal >= 90 %: {'met' if rate is not None and rate >= 0.9 else 'MISSED'}); "
              f"it escalates {100 * (g['learned_catch_rate'] or 0):.0f} % of all never-seen "
              f"problems", "", "| workload | problems | wrong picks | learned escalates | "
              "confidently wrong auto |", "| --- | --- | --- | --- | --- |"]
    for x in g["per_workload"]:
        lines.append(f"| {x['workload']} | {x['problems']} | {x['wrong_picks']} | "
                     f"{100 * (x['learned_catch_rate'] or 0):.0f} % | {x['confidently_wrong_auto']} |")
    if "confidence" in results:
        c = results["confidence"]
        lines += ["", "## Confidence", "",
                  f"Good picks (within 5 %): {100 * c['good_pick_rate']:.0f} % of {c['picks']}. "
                  f"Calibrated (cross-fitted logistic on spread, margin): ECE "
                  f"{c['ece_calibrated_crossfit']:.3f}, AUROC {c['auroc_calibrated_crossfit']:.2f};"
                  f" uncalibrated: ECE {c['ece_uncalibrated']:.3f}, AUROC "
                  f"{c['auroc_uncalibrated']:.2f}."]
    t = results["timing"]
    lines += ["", f"Scoring {t['candidates']} candidates: {t['total_ms_median']:.1f} ms with the "
              f"bundle's predict, {t['system1_only_ms_median']:.1f} ms System 1 alone (median of "
              f"7, under the load above).", ""]
    return "\n".join(lines)


def neighbour_oracle(frame) -> dict:
    """Measured noise ceiling: for each interior size, the configuration fastest (sum of log
    ratios to the best) at the two neighbouring measured sizes, judged at the held-out size."""
    speeds = []
    ok = frame[frame["status"] == "ok"].copy()
    ok["cfg"] = [_label(r) for _, r in ok.iterrows()]
    for (_w, _p), g in ok.groupby(["workload", "partition"]):
        sizes = sorted(g["size"].unique())
        for i in range(1, len(sizes) - 1):
            here = g[g["size"] == sizes[i]].groupby("cfg")["runtime_s"].min()
            score = 0.0
            for n in (sizes[i - 1], sizes[i + 1]):
                nb = g[g["size"] == n].groupby("cfg")["runtime_s"].min()
                score = score + np.log(nb / nb.min())
            score = score.reindex(here.index).dropna()
            if len(score):
                speeds.append(float(here.min() / here[score.idxmin()]))
    s = np.asarray(speeds)
    return {"median_pct_of_best": float(100 * np.median(s)),
            "geomean_pct_of_best": float(100 * math.exp(np.mean(np.log(s)))),
            "picks_within_5pct": float(np.mean(s >= 1 / 1.05)), "problems": int(len(s))}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True, help="bundle directory (timing, calibration)")
    parser.add_argument("--telemetry", required=True, help="runs telemetry (.h5)")
    parser.add_argument("--out", default="benchmarks/results/system1_eval.json")
    parser.add_argument("--folds", type=int, default=4)
    parser.add_argument("--members", type=int, default=None,
                        help="ensemble members per fold model (default: as the --model bundle)")
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--embedding", choices=["yes", "no"], default=None,
                        help="train the TabNet embedding (default: as the --model bundle)")
    parser.add_argument("--no-embedding", action="store_const", const="no", dest="embedding",
                        help="same as --embedding no")
    parser.add_argument("--member-features", choices=["all", "knobs"], default=None,
                        help="features the members see (default: as the --model bundle)")
    parser.add_argument("--member-trees", type=int, default=None,
                        help="trees per member (default: as the --model bundle)")
    parser.add_argument("--max-workloads", type=int, default=None)
    parser.add_argument("--write-calibration", action="store_true",
                        help="store the fitted confidence map in the model directory")
    args = parser.parse_args(argv)

    from hpcds1mpi.records import telemetry
    from hpcds1mpi.decide.model_bundle import load_model
    from hpcds1mpi.surrogates.bundle import train_bundle

    frame = telemetry.read_runs(args.telemetry)
    bundle = load_model(args.model)

    from hpcds1mpi.surrogates.models import KNOB_FEATURES

    # Fold models use the shipped bundle's settings (family, members, embedding, member
    # features, trees) unless told otherwise, so the evaluation judges what users get.
    manifest = dict(getattr(bundle, "manifest", {}) or {})
    family = manifest.get("family", "xgboost")
    member_features = args.member_features or (
        "knobs" if manifest.get("member_features") else "all")
    member_trees = args.member_trees or manifest.get("member_trees")
    members = args.members or int(manifest.get("n_members", 3))
    embedding = args.embedding == "yes" if args.embedding else bool(
        manifest.get("use_embedding", True))

    def trainer(train):
        return train_bundle(train, n_members=members, use_embedding=embedding,
                            embedding_params={"max_epochs": args.epochs}, seed=0, family=family,
                            member_trees=member_trees,
                            member_features=list(KNOB_FEATURES) if member_features == "knobs"
                            else None)

    t0 = time.perf_counter()
    results = evaluate(frame, trainer, folds_by_size=args.folds,
                       max_workloads=args.max_workloads)
    results["timing"] = time_scoring(bundle)
    results["neighbour_oracle"] = neighbour_oracle(frame)
    results["loadavg"] = " ".join(f"{x:.2f}" for x in __import__("os").getloadavg())
    results["fold_settings"] = (f"{family} x {members} members, member features "
                                f"{member_features}, trees {member_trees or 'default'}, "
                                f"embedding {'yes' if embedding else 'no'}")
    results["wall_s"] = time.perf_counter() - t0
    results["telemetry"] = str(args.telemetry)
    results["model"] = str(args.model)
    results["energy_source"] = getattr(bundle, "energy_source", "unknown")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2, default=float))
    Path(out.with_suffix(".md")).write_text(markdown(results, args))
    lso = results["protocols"]["leave_size_out"]
    print(f"{'method':<10} {'median %':>9} {'geomean %':>10} {'crashes':>8} {'runs to 5%':>10}")
    for m, r in lso.items():
        print(f"{m:<10} {r['median_pct_of_best'] or float('nan'):>9.1f} "
              f"{r['geomean_pct_of_best'] or float('nan'):>10.1f} {r['crashing_picks']:>8.0f} "
              f"{r['median_runs_to_5pct'] or float('nan'):>10.1f}")
    lowo = results["protocols"]["leave_one_workload_out"]
    print(f"guard, never-seen workloads: learned check alone escalates "
          f"{100 * (lowo['learned_catch_rate'] or 0):.0f} %; confidently wrong automatic picks "
          f"{lowo['confidently_wrong_auto']}")
    if "confidence" in results:
        c = results["confidence"]
        print(f"confidence: ECE {c['ece_calibrated_crossfit']:.3f}, AUROC "
              f"{c['auroc_calibrated_crossfit']:.2f} (good picks {100 * c['good_pick_rate']:.0f} %)")
        if args.write_calibration and c["coef"]:
            from hpcds1mpi.decide.confidence import CALIBRATION_FILE, ConfidenceModel

            ConfidenceModel(tuple(c["coef"]), True).save(
                Path(args.model) / CALIBRATION_FILE, ece=c["ece_calibrated_crossfit"],
                auroc=c["auroc_calibrated_crossfit"], telemetry=str(args.telemetry))
    t = results["timing"]
    print(f"scoring {t['candidates']} candidates: {t['total_ms_median']:.1f} ms with predict, "
          f"{t['system1_only_ms_median']:.1f} ms System 1 alone")
    print(f"results written to {out}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
