"""How long System 1 takes on a whole candidate grid, with and without the model's predict.

System 1's own work (grid, frame, feasibility, choice) is timed by scoring against a stand-in
whose ``predict`` returns an answer computed once beforehand (:class:`PrecomputedAnswer`);
the same call against the real bundle gives the total. Used by the System 1 evaluation, the
recommend speed benchmark and System 1's speed test.
"""

from __future__ import annotations

import time

from hpcds1mpi.decide import system1 as s1
from hpcds1mpi.decide.memory_limits import learn_memory_limits


class PrecomputedAnswer:
    """A bundle stand-in that answers every ``predict`` with one precomputed frame."""

    def __init__(self, bundle, answer):
        self._bundle = bundle
        self._answer = answer

    def predict(self, frame):
        return self._answer

    def training_frame(self):
        return self._bundle.training_frame()


def scoring_times(bundle, workload: str, size: int, partition, *, repeats: int = 7,
                  objective: str = "time") -> dict:
    """Seconds per call of System 1 on every candidate of ``partition``.

    Each timing is taken ``repeats`` times after one untimed warm-up call (the first call
    fills the work-model caches); the memory limits are learned once beforehand.

    Args:
        bundle: the model bundle.
        workload, size: the problem.
        partition: the one partition whose whole grid is scored.
        repeats: timed calls of each kind.
        objective: the objective ``choose`` picks by.

    Returns:
        ``candidates`` (the grid's size) and three lists of ``repeats`` seconds:
        ``score_choose`` (score + choose with the bundle's predict), ``predict`` (the bundle's
        predict alone) and ``system1_only`` (score + choose on the precomputed answer).
    """
    frame = s1.candidate_frame(workload, size, [partition])
    limits = learn_memory_limits(bundle, [partition])
    stand_in = PrecomputedAnswer(bundle, bundle.predict(frame))

    def timed(fn) -> list[float]:
        fn()
        out = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            fn()
            out.append(time.perf_counter() - t0)
        return out

    def choose_with(model):
        return s1.choose(s1.score(model, workload, size, [partition], limits=limits), objective)

    return {"candidates": int(len(frame)),
            "score_choose": timed(lambda: choose_with(bundle)),
            "predict": timed(lambda: bundle.predict(frame)),
            "system1_only": timed(lambda: choose_with(stand_in))}


def compare(before, after, *, workload: str = "stencil", size: int = 300, rounds: int = 15,
            repeats: int = 3) -> dict:
    """Two bundles' System 1 timings on the same ~10,000-candidate grid, interleaved:
    ``rounds`` rounds, each timing ``before`` then ``after`` ``repeats`` times; per round the
    ratio of their medians (after / before), so both see the same machine load."""
    import statistics

    from hpcds1mpi.cluster import Partition

    part = Partition("big", cores_per_node=128, memory_gb=512, max_nodes=16, gpus_per_node=1,
                     gpu_memory_gb=80)
    out = {"before": {"score_choose": [], "predict": [], "cpu_score_choose": []},
           "after": {"score_choose": [], "predict": [], "cpu_score_choose": []},
           "ratios": [], "cpu_ratios": []}
    limits = {name: learn_memory_limits(b, [part]) for name, b in (("before", before),
                                                                   ("after", after))}
    for _ in range(rounds):
        med, cpu = {}, {}
        for name, bundle in (("before", before), ("after", after)):
            t = scoring_times(bundle, workload, size, part, repeats=repeats)
            out[name]["score_choose"] += t["score_choose"]
            out[name]["predict"] += t["predict"]
            out["candidates"] = t["candidates"]
            med[name] = statistics.median(t["score_choose"])
            # CPU seconds of the process as well: on a loaded shared machine the wall time
            # mostly measures the wait for a core.
            times = []
            for _ in range(repeats):
                c0 = time.process_time()
                s1.choose(s1.score(bundle, workload, size, [part], limits=limits[name]))
                times.append(time.process_time() - c0)
            out[name]["cpu_score_choose"] += times
            cpu[name] = statistics.median(times)
        out["ratios"].append(med["after"] / med["before"])
        out["cpu_ratios"].append(cpu["after"] / cpu["before"])
    return out


def main(argv=None) -> int:
    """``python -m hpcds1mpi.analysis.system1_speed --before DIR --after DIR [--out PATH]``:
    System 1 on ~10,000 configurations with two bundles, side by side (results .json/.md)."""
    import argparse
    import json
    import os
    import statistics
    from pathlib import Path

    from hpcds1mpi.surrogates.bundle import load_bundle

    parser = argparse.ArgumentParser(description=main.__doc__.splitlines()[0])
    parser.add_argument("--before", required=True)
    parser.add_argument("--after", required=True)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--out", default="benchmarks/results/system1_speed_ranking")
    parser.add_argument("--force", action="store_true",
                        help="replace results files already there")
    args = parser.parse_args(argv)
    from hpcds1mpi.analysis.h1_results import claim_files

    claim_files([Path(args.out).with_suffix(".json"), Path(args.out).with_suffix(".md")],
                args.force, "--out")
    load0 = os.getloadavg()[0]
    res = compare(load_bundle(args.before), load_bundle(args.after), rounds=args.rounds)
    res.update(before_bundle=args.before, after_bundle=args.after, load_before=load0,
               load_after=os.getloadavg()[0], niceness=os.nice(0), rounds=args.rounds)
    ms = {k: {m: 1e3 * statistics.median(res[k][m])
              for m in ("score_choose", "predict", "cpu_score_choose")}
          for k in ("before", "after")}
    best = {k: 1e3 * min(res[k]["score_choose"]) for k in ("before", "after")}
    ratio = statistics.median(res["ratios"])
    cpu_ratio = statistics.median(res["cpu_ratios"])
    res["summary"] = {"median_ms": ms, "best_ms": best, "median_ratio": ratio,
                      "median_cpu_ratio": cpu_ratio}
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps(res, indent=1))
    lines = [f"# System 1 on {res['candidates']} configurations: two bundles side by side", "",
             f"`python -m hpcds1mpi.analysis.system1_speed --before {args.before} --after "
             f"{args.after}`: stencil size 300 on a 128-core, 16-node, 1-GPU partition's whole "
             f"grid; {args.rounds} interleaved rounds of 3 timed calls each; 1-min load "
             f"{load0:.2f} before, {res['load_after']:.2f} after; niceness {res['niceness']}.", "",
             "| bundle | score + choose, wall median | best | CPU median | predict alone, wall "
             "median |", "| --- | --- | --- | --- | --- |"]
    for k in ("before", "after"):
        lines.append(f"| {k} (`{getattr(args, k)}`) | {ms[k]['score_choose']:.1f} ms | "
                     f"{best[k]:.1f} ms | {ms[k]['cpu_score_choose']:.1f} ms | "
                     f"{ms[k]['predict']:.1f} ms |")
    lines += ["", f"Median of the per-round ratios after / before: wall {ratio:.2f} "
              f"({min(res['ratios']):.2f}-{max(res['ratios']):.2f}), CPU {cpu_ratio:.2f} "
              f"({min(res['cpu_ratios']):.2f}-{max(res['cpu_ratios']):.2f}).", ""]
    out.with_suffix(".md").write_text("\n".join(lines))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
