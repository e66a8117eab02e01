"""The System 1 evaluation's results as a Markdown report.

:func:`markdown` renders what :func:`hpcds1mpi.analysis.eval_system1.evaluate` (plus its
timing, noise ceiling and settings) returns: the side-by-side leave-size-out table, the
worst picks, the guard on never-seen workloads, the confidence calibration and the timing.
"""

from __future__ import annotations


def _goals(results: dict) -> list[str]:
    """Each goal of issue 20 with its figure and met / MISSED."""
    lso = results["protocols"]["leave_size_out"]
    s1, lg = lso["system1"], lso["lgbm_rank"]
    oracle = results.get("neighbour_oracle") or {}

    def mark(ok: bool) -> str:
        return "met" if ok else "MISSED"

    med, geo = s1["median_pct_of_best"], s1["geomean_pct_of_best"]
    within = 100 * (s1.get("within_5pct") or 0.0)
    out = [f"median {med:.1f} % >= 99 % ({mark(med >= 99)})",
           f"geomean {geo:.1f} % >= 97 % ({mark(geo >= 97)})",
           f"within 5 % {within:.0f} % >= 85 % ({mark(within >= 85)})",
           f"{s1['crashing_picks']:.0f} crashing picks ({mark(s1['crashing_picks'] == 0)})",
           ">= LightGBM ranker on median and geomean "
           f"({mark(med >= lg['median_pct_of_best'] and geo >= lg['geomean_pct_of_best'])})"]
    if oracle:
        beats = med >= oracle["median_pct_of_best"] and geo >= oracle["geomean_pct_of_best"]
        out.append(f">= neighbour oracle on median and geomean ({mark(beats)})")
    conf = results.get("confidence")
    if conf:  # judged with the choice of input set held out too, where it was
        a = conf.get("auroc_nested_leave_pair_out",
                     conf.get("auroc_nested_crossfit", conf["auroc_calibrated_crossfit"]))
        out.append(f"confidence AUROC {a:.2f} >= 0.75 ({mark(a >= 0.75)})")
    return out


def markdown(results: dict, args) -> str:
    """The results as a Markdown report (side-by-side table, guard, confidence, timing)."""
    lso = results["protocols"]["leave_size_out"]
    s1 = lso["system1"]
    cpp = results.get("configurations_per_problem") or {}
    lines = ["# System 1 evaluation on measured telemetry", "",
             f"Telemetry `{results['telemetry']}`; fold models trained like the shipped bundle "
             f"`{results['model']}` ({results.get('fold_settings', '')}). Wall "
             f"{results['wall_s']:.0f} s, load average {results.get('loadavg', '?')}.", "",
             f"## Leave-size-out ({results.get('held_out', 'interior sizes')} held out, "
             f"{results.get('folds', 4)} folds)", "",
             f"{s1['problems']} held-out problems with {cpp.get('median', float('nan')):g} "
             f"measured configurations each (median; {cpp.get('min', '?')}-{cpp.get('max', '?')})"
             f"; a random pick among them reaches "
             f"{lso['random']['median_pct_of_best']:.1f} % of the best (median).", "",
             "| method | median % of best | geomean % of best | within 5 % | crashing picks | "
             "median runs to 5 % |", "| --- | --- | --- | --- | --- | --- |"]
    for m, r in lso.items():
        within = r.get("within_5pct")
        lines.append(f"| {m} | {r['median_pct_of_best']:.1f} | {r['geomean_pct_of_best']:.1f} | "
                     f"{'-' if m == 'random' or within is None else f'{100 * within:.0f} %'} | "
                     f"{r['crashing_picks']:.0f} | {r['median_runs_to_5pct']:.1f} |")
    lines += ["", "Goals (issue 20): " + "; ".join(_goals(results)) + ".", "",
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
    if not g["problems"]:
        lines += ["", "## Guard, leave-one-workload-out (never-seen workloads)", "",
                  "Not run (`--max-workloads 0`)."]
    else:
        lines += _guard_lines(g, rate)
    if "confidence" in results:
        c = results["confidence"]
        lines += ["", "## Confidence", "",
                  f"Good picks (within 5 %): {100 * c['good_pick_rate']:.0f} % of {c['picks']}. "
                  f"Calibrated (cross-fitted logistic on "
                  f"{c.get('features', 'log spread, margin / spread')}): ECE "
                  f"{c['ece_calibrated_crossfit']:.3f}, AUROC {c['auroc_calibrated_crossfit']:.2f};"
                  f" uncalibrated: ECE {c['ece_uncalibrated']:.3f}, AUROC "
                  f"{c['auroc_uncalibrated']:.2f}."]
        if "auroc_nested_crossfit" in c:
            lines += ["", f"With the choice of input set made inside each outer fold too "
                      f"(nested, no optimism from choosing among the sets on these picks): AUROC "
                      f"{c['auroc_nested_crossfit']:.2f}."]
        if "auroc_nested_leave_pair_out" in c:
            lines += ["", f"Leave-pair-out (each good-bad pair held out, the model fitted on "
                      f"the other picks; nearly unbiased on few bad picks, where pooling 5 "
                      f"folds' probabilities is not): the kept set "
                      f"{c['auroc_leave_pair_out']:.2f}; with the set chosen inside each "
                      f"pair's training picks (what the goal is judged on) "
                      f"{c['auroc_nested_leave_pair_out']:.2f}."]
        if c.get("feature_sets"):
            lpo = all("auroc_leave_pair_out" in v for v in c["feature_sets"].values())
            lines += ["", f"Every input set tried (cross-fitted on 5 folds, mean of "
                      f"{c.get('crossfit_draws', 1)} fold draws"
                      + ("; leave-pair-out; the highest leave-pair-out AUROC is kept):" if lpo
                         else "; the highest AUROC is kept):"), "",
                      "| inputs | AUROC | ECE |" + (" leave-pair-out AUROC |" if lpo else ""),
                      "| --- | --- | --- |" + (" --- |" if lpo else "")]
            lines += [f"| {k} | {v['auroc_crossfit']:.3f} | {v['ece_crossfit']:.3f} |"
                      + (f" {v['auroc_leave_pair_out']:.3f} |" if lpo else "")
                      for k, v in c["feature_sets"].items()]
        picks = results.get("leave_size_out_picks") or []
        shares = [(pk.get("measured_best_share"), pk["pct_of_best"] >= 100 / 1.05) for pk in picks]
        if any(x is not None and x == x for x, _ in shares):
            lines += ["", "Picks by the share of the two measured sizes around them at which "
                      "the picked configuration measured fastest:", "",
                      "| share | picks | within 5 % |", "| --- | --- | --- |"]
            for level in sorted({x for x, _ in shares if x is not None and x == x}):
                got = [g for x, g in shares if x == level]
                lines.append(f"| {level:g} | {len(got)} | {100 * sum(got) / len(got):.0f} % |")
            # Picks with no measured size on one side have no share; the calibration reads them
            # as 0 (decide/confidence.design). Left out here, they had hidden 3 of 4 bad picks
            # of the held-out edges (s45 tester D3).
            unknown = [g for x, g in shares if x is None or x != x]
            if unknown:
                lines.append(f"| unknown (read as 0) | {len(unknown)} | "
                             f"{100 * sum(unknown) / len(unknown):.0f} % |")
    t = results["timing"]
    lines += ["", f"Scoring {t['candidates']} candidates: {t['total_ms_median']:.1f} ms with the "
              f"bundle's predict, {t['system1_only_ms_median']:.1f} ms System 1 alone (median of "
              f"7, under the load above).", ""]
    return "\n".join(lines)


def _guard_lines(g: dict, rate) -> list[str]:
    """The leave-one-workload-out section's lines (the guard on never-seen workloads)."""
    lines = ["", "## Guard, leave-one-workload-out (never-seen workloads)", "",
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
    return lines
