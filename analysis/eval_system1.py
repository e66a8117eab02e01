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

from hpcds1mpi.analysis.pick_quality import (
    CONFIG_COLS,
    GOOD_SPEED,
    PROBLEM_COLS,
    config_label,
    noise_summary,
    runs_to_within,
    speed,
    summary,
    within_noise,
)
from hpcds1mpi.analysis.system1_baselines import (
    lgbm_rank_orders,
    neighbour_oracle,
    random_expectation,
    rules_order,
)
from hpcds1mpi.analysis.eval_system1_report import markdown
from hpcds1mpi.analysis.system1_confidence import calibrate
from hpcds1mpi.analysis.system1_speed import scoring_times
from hpcds1mpi.config import OK
from hpcds1mpi.records import rounds


def _problems(frame):
    return [tuple(k) for k, _ in frame.groupby(PROBLEM_COLS, sort=True)]


def _measured(frame, problem):
    w, s, p = problem
    sub = frame[(frame["workload"] == w) & (frame["size"] == s) & (frame["partition"] == p)]
    return sub.reset_index(drop=True)


def system1_order(bundle, sub, partition_hw: dict):
    """System 1's ranking of the measured configurations of one problem (best first), and its
    spread / margin at the pick."""
    import pandas as pd

    from hpcds1mpi.cluster import Partition
    from hpcds1mpi.decide import system1 as s1

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


def _pick_record(sub, idx: int, choice) -> dict:
    ok = sub[sub["status"] == OK]
    best_idx = int(ok["runtime_s"].idxmin())
    sp, crashed = speed(sub, idx)
    return {"workload": str(sub["workload"].iloc[0]), "size": float(sub["size"].iloc[0]),
            "pick": config_label(sub.iloc[idx]), "best": config_label(sub.iloc[best_idx]),
            "pct_of_best": 100 * sp, "crashed": bool(crashed),
            "within_noise_of_best": within_noise(sub, idx),
            "best_noise": float(sub.iloc[best_idx].get("noise") or float("nan")),
            "configurations": int(len(sub)),
            "confidence": float(choice.confidence), "spread": float(choice.spread),
            "margin": float(choice.margin)}


def evaluate(frame, trainer, *, folds_by_size: int = 4, max_workloads: int | None = None,
             seed: int = 0, log=print, guard_trainer=None, hold_out_edges: bool = False) -> dict:
    """Run both protocols on a runs table with ``trainer(train_frame) -> bundle``
    (``guard_trainer``, default ``trainer``, for the leave-one-workload-out part;
    ``max_workloads=0`` skips that part; ``hold_out_edges`` holds out each workload's
    smallest and largest sizes too, where System 1 extrapolates)."""
    from hpcds1mpi.config import FAILURE_STATUSES, OK
    from hpcds1mpi.decide import guard
    from hpcds1mpi.decide.confidence import measured_best_share
    from hpcds1mpi.surrogates.ranking_cv import size_folds

    frame = frame.copy()
    frame = frame[frame["status"].isin([OK, *FAILURE_STATUSES])]
    frame = frame.reset_index(drop=True)
    rng = np.random.default_rng(seed)
    results: dict = {"protocols": {}}
    # ---------------- leave-size-out ----------------
    # Interior sizes only are held out by default (the end sizes are extrapolation, judged by
    # the guard and by System 1's beyond-range rule); spread over the folds.
    fold_of = size_folds(frame, folds_by_size, edges=hold_out_edges)
    methods = {m: {"speeds": [], "crashes": [], "runs": []}
               for m in ("system1", "rules", "lgbm_rank", "random")}
    conf_rows = []
    per_problem: list[dict] = []
    for fold in range(folds_by_size):
        held = [(w, s) for (w, s), f in fold_of.items() if f == fold]
        if not held:
            continue
        held_set = set(held)
        mask = np.array([(w, s) in held_set for w, s in zip(frame["workload"], frame["size"])])
        train, test = frame[~mask], frame[mask]
        t0 = time.perf_counter()
        bundle = trainer(train)
        log(f"leave-size-out fold {fold}: trained on {len(train)} runs in "
            f"{time.perf_counter() - t0:.1f} s; {len(held)} held-out sizes")
        subs = [_measured(test, p) for p in _problems(test)]
        subs = [s for s in subs if (s["status"] == "ok").any()]
        lgbm = lgbm_rank_orders(train, subs)
        hw = dict(getattr(bundle, "partitions", {}) or {})
        for sub, lg in zip(subs, lgbm):
            order, choice = system1_order(bundle, sub, hw.get(str(sub["partition"].iloc[0]), {}))
            for name, o in (("system1", order), ("rules", rules_order(sub)), ("lgbm_rank", lg)):
                sp, cr = speed(sub, o[0])
                methods[name]["speeds"].append(sp)
                methods[name]["crashes"].append(cr)
                methods[name]["runs"].append(runs_to_within(sub, o))
            rs, rc, rr = random_expectation(sub)
            methods["random"]["speeds"].append(rs)
            methods["random"]["crashes"].append(rc)
            methods["random"]["runs"].append(rr)
            sp, _ = speed(sub, order[0])
            # Measured fastest around the held-out size (the fold's training rows only).
            share = float(measured_best_share(bundle, sub.iloc[[order[0]]])[0])
            conf_rows.append((choice.spread, choice.margin, sp >= GOOD_SPEED,
                              choice.confidence, choice.noise, share))
            per_problem.append({**_pick_record(sub, order[0], choice),
                                "measured_best_share": share})
    results["protocols"]["leave_size_out"] = {m: summary(**v) for m, v in methods.items()}
    results["protocols"]["leave_size_out"]["system1"].update(noise_summary(per_problem))
    results["leave_size_out_picks"] = per_problem
    results["folds"] = int(folds_by_size)
    results["held_out"] = "every size" if hold_out_edges else "interior sizes"
    counts = [r["configurations"] for r in per_problem]
    if counts:
        results["configurations_per_problem"] = {
            "median": float(np.median(counts)), "min": int(min(counts)), "max": int(max(counts))}
    # Confidence calibration: cross-fitted logistic models (analysis/system1_confidence.py).
    if conf_rows:
        spread, margin, good, raw, noise, share = zip(*conf_rows)
        results["confidence"] = calibrate(spread, margin, good, raw, noise, share, seed=seed)
    # ---------------- leave-one-workload-out: the guard ----------------
    guard_trainer = guard_trainer or trainer
    workloads = sorted(frame["workload"].unique())
    if max_workloads is not None:
        workloads = list(rng.permutation(workloads))[:max_workloads]
    lowo = []
    for w in workloads:
        train = frame[frame["workload"] != w]
        if train["workload"].nunique() < 2:
            continue
        bundle = guard_trainer(train)
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
            sp, _ = speed(sub, order[0])
            wrong = sp < GOOD_SPEED
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
        wrong_n = sum(pk["speed"] < GOOD_SPEED for pk in picks)
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
    from hpcds1mpi.cluster import Partition

    part = Partition("timing", cores_per_node=128, memory_gb=512, max_nodes=16)
    times = scoring_times(bundle, sorted(bundle.workloads)[0], 1024, part, repeats=repeats)
    total, own = np.median(times["score_choose"]), np.median(times["system1_only"])
    return {"candidates": times["candidates"], "total_ms_median": 1e3 * float(total),
            "system1_only_ms_median": 1e3 * float(own),
            "predict_ms_median": 1e3 * float(total - own)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True, help="bundle directory (timing, calibration)")
    parser.add_argument("--telemetry", required=True, nargs="+", action="extend",
                        help="runs telemetry (.h5); several files are evaluated as one table")
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
    parser.add_argument("--max-workloads", type=int, default=None,
                        help="never-seen workloads for the guard part (0: skip it)")
    parser.add_argument("--recipe", default=None,
                        help="System 1 ranking recipe of the fold models: cv (chosen inside each "
                        "fold by leave-size-out CV on its training sizes), or one of "
                        "surrogates.ranking_cv.RECIPES (default: cv when the --model bundle's "
                        "recipe was chosen so, else its own)")
    rounds.add_arguments(parser)
    parser.add_argument("--hold-out-edges", action="store_true",
                        help="hold out each workload's smallest and largest sizes too (System 1 "
                        "then extrapolates there; default: interior sizes only)")
    parser.add_argument("--write-calibration", action="store_true",
                        help="store the fitted confidence map and the guard calibration in "
                        "the model directory")
    parser.add_argument("--force", action="store_true",
                        help="replace results files already there")
    args = parser.parse_args(argv)

    from hpcds1mpi.decide.model_bundle import load_model
    from hpcds1mpi.surrogates.bundle import train_bundle

    # One measured outcome per configuration: a sweep in rounds gives each configuration's median.
    frame = rounds.read_or_exit(parser.prog, rounds.measured_outcomes, args.telemetry,
                                args.first_rounds, args.pool_sweeps)
    from hpcds1mpi.analysis.h1_results import claim_files

    # after the options' checks, before the folds' minutes of training
    claim_files([Path(args.out), Path(args.out).with_suffix(".md")], args.force, "--out")
    bundle = load_model(args.model)

    from hpcds1mpi.surrogates.models import KNOB_FEATURES

    # Fold models use the shipped bundle's settings (family, members, embedding, member
    # features, trees) unless told otherwise, so the evaluation judges what users get.
    manifest = dict(getattr(bundle, "manifest", {}) or {})
    family = manifest.get("family", "xgboost")
    member_features = args.member_features or (
        "knobs" if manifest.get("member_features") else "all")
    members = args.members or int(manifest.get("n_members", 3))
    embedding = args.embedding == "yes" if args.embedding else bool(
        manifest.get("use_embedding", True))

    from hpcds1mpi.surrogates import ranking_cv

    ranking = (manifest.get("metrics") or {}).get("ranking") or {}
    recipe = args.recipe or ("cv" if ranking.get("chosen_by") else ranking.get("recipe") or
                             "absolute")
    # A recipe names its members' budget (trees, learning rate) or, chosen per fold, has it
    # chosen there; the bundle's own trees only when they were a setting, not its recipe's.
    try:
        own_recipe_trees = ranking_cv.recipe_settings(ranking["recipe"]).get("member_trees") \
            if ranking.get("recipe") else None
    except ValueError:  # a recipe this version no longer reads: its trees are the manifest's
        own_recipe_trees = None
    member_trees = args.member_trees or (None if recipe == "cv" or own_recipe_trees
                                         else manifest.get("member_trees"))
    if recipe != "cv":
        try:
            ranking_cv.split_recipe(recipe)
        except ValueError as exc:
            parser.error(f"--recipe must be cv or a recipe: {exc}")
        if args.member_trees and ranking_cv.recipe_settings(recipe).get("member_trees"):
            parser.error(f"--recipe {recipe} names its trees; drop --member-trees")
    base_features = list(KNOB_FEATURES) if member_features == "knobs" else None
    chosen: list[str] = []
    kw = dict(n_members=members, use_embedding=embedding,
              embedding_params={"max_epochs": args.epochs}, seed=0, family=family,
              member_trees=member_trees)

    def fixed(name):
        def train(frame_):
            settings = ranking_cv.recipe_settings(name, base_features)
            if base_features is None:  # every feature already (core_fraction among them)
                settings["member_features"] = None
            return train_bundle(frame_, **{**kw, **settings})
        return train

    def trainer(train):
        name = recipe
        if recipe == "cv":  # chosen on this fold's training sizes only
            name, _ = ranking_cv.choose_recipe(train, member_features=base_features,
                                               **{k: v for k, v in kw.items()
                                                  if k != "embedding_params"})
            chosen.append(name)
            print(f"  recipe chosen on the fold's training sizes: {name}")
        return fixed(name)(train)

    guard_recipe = recipe if recipe != "cv" else (ranking.get("recipe") or "absolute")
    t0 = time.perf_counter()
    results = evaluate(frame, trainer, folds_by_size=args.folds,
                       max_workloads=args.max_workloads, guard_trainer=fixed(guard_recipe),
                       hold_out_edges=args.hold_out_edges)
    results["recipe"] = {"setting": recipe, "chosen_per_fold": chosen,
                         "guard_part": guard_recipe}
    results["timing"] = time_scoring(bundle)
    results["neighbour_oracle"] = neighbour_oracle(frame)
    results["loadavg"] = " ".join(f"{x:.2f}" for x in __import__("os").getloadavg())
    results["fold_settings"] = (f"{family} x {members} members, member features "
                                f"{member_features}, trees {member_trees or 'default'}, "
                                f"embedding {'yes' if embedding else 'no'}, ranking recipe "
                                f"{recipe}" + (f" (chosen per fold: {', '.join(chosen)})"
                                               if chosen else ""))
    results["wall_s"] = time.perf_counter() - t0
    results["telemetry"] = ", ".join(args.telemetry) + rounds.describe(args)
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

            ConfidenceModel(tuple(c["coef"]), True, inputs=tuple(c["inputs"])).save(
                Path(args.model) / CALIBRATION_FILE, ece=c["ece_calibrated_crossfit"],
                auroc=c["auroc_calibrated_crossfit"], telemetry=", ".join(args.telemetry),
                features=c["features"])
    if args.write_calibration:
        from hpcds1mpi.decide import guard

        cal = guard.write_calibration(bundle, args.model)
        print(f"guard calibration written: auto below {cal.auto_threshold:.2f}, escalate above "
              f"{cal.escalate_threshold:.2f}; never-seen workloads caught "
              f"{100 * cal.catch_rate:.0f} %, false escalations "
              f"{100 * cal.false_escalations:.0f} %")
    t = results["timing"]
    print(f"scoring {t['candidates']} candidates: {t['total_ms_median']:.1f} ms with predict, "
          f"{t['system1_only_ms_median']:.1f} ms System 1 alone")
    print(f"results written to {out}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
