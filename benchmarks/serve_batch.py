"""What one distinct question costs in System 1's scoring, one by one vs many in one predict.

Issue 18: distinct questions to ``serve`` miss p99 <= 50 ms because each costs ~6 ms of
``Bundle.predict`` alone. This measures, in one process on the shipped bundle and this
machine's partitions (what ``serve`` uses), ``system1.score`` per question against
``system1_batch.score_many`` on batches of B questions (the same distinct questions
``benchmarks/serve.py`` asks), interleaved, ``--rounds`` times; wall and CPU (process time)
per question, and checks every batched answer equals its one-by-one answer. The candidate
constraints are the plain ones (no offer restriction): the scoring step only, not a whole
recommendation (guard, calibration and response building are not in it).

Run: ``python benchmarks/serve_batch.py`` (about a minute). Writes
``benchmarks/results/serve_batch.md``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import serve as load_bench  # noqa: E402  (its question list)

from hpcds1mpi.places import cluster_places  # noqa: E402
from hpcds1mpi.decide import system1 as s1  # noqa: E402
from hpcds1mpi.decide import system1_batch as sb  # noqa: E402
from hpcds1mpi.decide.model_bundle import load_model  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--questions", type=int, default=256)
    ap.add_argument("--batches", default="1,8,32,64")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--whole", action="store_true",
                    help="whole answers instead (Service.answer one by one vs answer_many: "
                         "recommend's every step, to_dict, checking, encoding); writes "
                         "results/serve_batch_whole.md")
    ap.add_argument("--model", default=None, help="bundle (default: the shipped one)")
    args = ap.parse_args()
    if args.whole:
        return whole(args)
    bundle = load_model(None)
    parts = [p for _, p in cluster_places(None)]
    sr = {str(k): (float(v[0]), float(v[1])) for k, v in bundle.size_range.items()}
    qs = [sb.Question(q["workload"], q["size"], parts)
          for q in load_bench.questions(sr, args.questions)]
    rows = [len(s1.candidate_columns(q.workload, q.size, parts)) for q in qs]
    s1.score(bundle, qs[0].workload, qs[0].size, parts)  # warm
    res: dict[str, list] = {}
    load = [os.getloadavg()[0]]
    for _ in range(args.rounds):
        for mode in ["one"] + [f"batch {b}" for b in args.batches.split(",")]:
            w, c = time.perf_counter(), time.process_time()
            if mode == "one":
                out = [s1.score(bundle, q.workload, q.size, q.partitions) for q in qs]
            else:
                b = int(mode.split()[1])
                out = [s for i in range(0, len(qs), b) for s in sb.score_many(bundle, qs[i:i + b])]
            w, c = time.perf_counter() - w, time.process_time() - c
            res.setdefault(mode, []).append((w * 1e3 / len(qs), c * 1e3 / len(qs)))
            if mode == "one":
                ref = out
            else:
                for a, r in zip(out, ref):
                    assert all(np.array_equal(np.asarray(a.cols[k]), np.asarray(r.cols[k]))
                               or np.allclose(a.cols[k], r.cols[k], equal_nan=True, rtol=0, atol=0)
                               for k in r.cols), "a batched answer differs"
        load.append(os.getloadavg()[0])
    lines = ["# System 1 scoring, one question vs many per predict (issue 18)", "",
             f"Command: `python benchmarks/serve_batch.py --questions {args.questions} "
             f"--batches {args.batches} --rounds {args.rounds}`; shipped bundle, this machine's "
             f"partitions ({', '.join(p.name for p in parts)}); candidate rows per question: "
             f"median {statistics.median(rows):.0f}, max {max(rows)}. 1-min load average "
             f"{', '.join(f'{x:.2f}' for x in load)} (start, after each round; shared 2-core "
             "machine). Every batched answer was checked equal to its one-by-one answer."]
    _write("serve_batch.md", lines, res)


def _write(name: str, head: list[str], res: dict) -> None:
    """Print and write ``results/NAME``: ``head``, then each mode's wall and CPU per question
    by round and its CPU against one by one."""
    one = statistics.median(x[1] for x in res["one"])
    lines = head + ["", "| mode | wall ms/question (rounds) | CPU ms/question (rounds) | "
                    "CPU vs one by one |", "|---|---|---|---|"]
    for mode, xs in res.items():
        cpu = statistics.median(x[1] for x in xs)
        lines.append(f"| {mode} | {', '.join(f'{x[0]:.2f}' for x in xs)} | "
                     f"{', '.join(f'{x[1]:.2f}' for x in xs)} | {cpu / one:.2f} |")
    text = "\n".join(lines) + "\n"
    (Path(__file__).resolve().parent / "results" / name).write_text(text)
    print(text)


def whole(args) -> None:
    """CPU per question of a whole answer: ``Service.answer`` one by one against
    ``Service.answer_many`` on batches (what the micro-batch calls), uncached, interleaved;
    every batched answer checked to be the same bytes."""
    import tempfile

    from hpcds1mpi.serve.schemas import RecommendRequest
    from hpcds1mpi.serve.service import Service

    with tempfile.TemporaryDirectory() as tmp:
        svc = Service(args.model, None, Path(tmp), cache_size=0)
        svc.warm_up()
        sr = {str(k): (float(v[0]), float(v[1])) for k, v in svc.bundle.size_range.items()}
        qs = [("recommend", RecommendRequest(**q))
              for q in load_bench.questions(sr, args.questions)]
        res: dict[str, list] = {}
        load = [os.getloadavg()[0]]
        ref = None
        for _ in range(args.rounds):
            for mode in ["one"] + [f"batch {b}" for b in args.batches.split(",")]:
                w, c = time.perf_counter(), time.process_time()
                if mode == "one":
                    out = [svc.answer(k, r) for k, r in qs]
                else:
                    b = int(mode.split()[1])
                    out = [a for i in range(0, len(qs), b) for a in svc.answer_many(qs[i:i + b])]
                w, c = time.perf_counter() - w, time.process_time() - c
                res.setdefault(mode, []).append((w * 1e3 / len(qs), c * 1e3 / len(qs)))
                ref = out if ref is None else ref
                assert out == ref, "a batched answer differs"
            load.append(os.getloadavg()[0])
    lines = ["# Whole recommend answers, one by one vs micro-batches (issue 18)", "",
             f"Command: `python benchmarks/serve_batch.py --whole --questions {args.questions} "
             f"--batches {args.batches} --rounds {args.rounds}"
             + (f" --model {args.model}" if args.model else "") + "`; "
             f"bundle {args.model or 'shipped'}, this machine's partition, in process (no HTTP), "
             "uncached: recommend's every step, to_dict, the response check and JSON encoding. "
             f"1-min load average {', '.join(f'{x:.2f}' for x in load)} (start, after each "
             "round; shared 2-core machine). Every batched answer was the same bytes as its "
             "one-by-one answer."]
    _write("serve_batch_whole.md", lines, res)


if __name__ == "__main__":
    main()
