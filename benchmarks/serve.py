"""Load on ``hpcds1mpi serve``: 50 concurrent clients, 2,000 ``/v1/recommend`` requests.

Goals (issue 18): p99 latency <= 50 ms, 0 errors, server memory flat, on the shipped bundle.

The server is the installed entry point in a fresh process with its shipped defaults
(``hpcds1mpi serve --port 0``: the shipped bundle, this machine's partition, the default caps
and answer cache), on loopback only. The clients are asyncio tasks in this process, each with
its own keep-alive connection, taking the next request from a shared list; latency is from
writing a request to having read its whole answer. Phases, in this order, each 2,000 requests
from 50 clients and each bounded in time (``--phase-timeout``; a phase cut short says so):

1. ``distinct``: 2,000 different questions (workload x objective x size, sizes inside each
   workload's measured range), so the answer cache cannot help: every request is computed.
2. ``repeated``: 2,000 requests over 20 questions, as a portal or submit filter asks them,
   each asked once before the phase (unmeasured): the steady state of a busy portal.
3. ``distinct again``: 2,000 more different questions (none seen before), to see whether
   memory grows once the answer cache is full.

The repeated phase is short (about a second), so it runs ``--rounds`` times (3), interleaved
with the other servers like every phase, each round reported.

Side by side: ``--baseline-tree DIR``, the server of an older source tree, started beside this
one and asked the same questions, phase by phase, the order of the servers turning each phase
(one server works at a time); ``--workers N``, this code's server with ``--workers N`` too.
And the same ``Service.recommend`` computed in this process without HTTP, one request at a
time, uncached (``--baseline`` requests, median and p99): what a question costs before any
queueing.

Server CPU is user + system of the server process and its worker processes; client CPU is
this process's (the 50 clients). Server memory is the resident set (psutil, workers included)
after start and warm-up, and after each phase. The 1-minute load average is recorded at the
start and after each phase (a shared 2-core machine); the results name the commit measured and
whether the code paths had uncommitted edits.

Run: ``python benchmarks/serve.py --baseline-tree DIR`` (a few minutes). Writes
``benchmarks/results/serve.json`` and ``serve.md``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"
P99_GOAL_MS = 50.0
OBJECTIVES = ("time", "energy", "edp", "balanced")


def _entry_point() -> list[str]:
    exe = Path(sys.executable).with_name("hpcds1mpi")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "hpcds1mpi"]


def questions(size_range: dict, n: int) -> list[dict]:
    """``n`` different recommend bodies."""
    workloads = sorted(size_range)
    out, seen, i = [], set(), 0
    while len(out) < n:
        w = workloads[i % len(workloads)]
        objective = OBJECTIVES[(i // len(workloads)) % len(OBJECTIVES)]
        lo, hi = (int(max(1, v)) for v in size_range[w])
        step = i // (len(workloads) * len(OBJECTIVES))
        size = lo + (step * 7919) % max(1, hi - lo + 1)  # a prime stride over the range
        key = (w, objective, size)
        if key not in seen:
            seen.add(key)
            out.append({"workload": w, "size": size, "objective": objective})
        i += 1
    return out


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    k = min(len(ordered) - 1, max(0, int(round(q / 100.0 * (len(ordered) - 1)))))
    return ordered[k]


async def _client(host: str, port: int, token: str, bodies: list, cursor: list, out: dict,
                  stop_at: float) -> None:
    reader = writer = None
    try:
        reader, writer = await asyncio.open_connection(host, port)
        while cursor[0] < len(bodies) and time.monotonic() < stop_at:
            body = json.dumps(bodies[cursor[0]]).encode()
            cursor[0] += 1
            head = (f"POST /v1/recommend HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer "
                    f"{token}\r\nContent-Type: application/json\r\nContent-Length: {len(body)}"
                    "\r\n\r\n").encode()
            t0 = time.perf_counter()
            writer.write(head + body)
            await writer.drain()
            status_line = await reader.readline()
            length = 0
            while True:
                line = await reader.readline()
                if line in (b"\r\n", b""):
                    break
                name, _, value = line.decode().partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            await reader.readexactly(length)
            out["latency_ms"].append(1e3 * (time.perf_counter() - t0))
            status = int(status_line.split()[1]) if status_line else 0
            out["statuses"][status] = out["statuses"].get(status, 0) + 1
    except (OSError, asyncio.IncompleteReadError, ValueError, IndexError) as exc:
        out["errors"].append(f"{type(exc).__name__}: {exc}"[:200])
    finally:
        if writer is not None:
            writer.close()


async def _phase(host, port, token, bodies, clients, timeout) -> dict:
    out = {"latency_ms": [], "statuses": {}, "errors": []}
    cursor = [0]
    t0 = time.perf_counter()
    stop_at = time.monotonic() + timeout
    await asyncio.gather(*[_client(host, port, token, bodies, cursor, out, stop_at)
                           for _ in range(clients)])
    wall = time.perf_counter() - t0
    lat = out["latency_ms"]
    done = len(lat)
    bad = sum(v for k, v in out["statuses"].items() if k != 200) + len(out["errors"])
    return {"requests": len(bodies), "answered": done, "cut_short": done < len(bodies),
            "wall_s": wall, "throughput_rps": done / wall if wall else 0.0,
            "p50_ms": percentile(lat, 50), "p90_ms": percentile(lat, 90),
            "p99_ms": percentile(lat, 99), "max_ms": max(lat) if lat else float("nan"),
            "statuses": {str(k): v for k, v in sorted(out["statuses"].items())},
            "errors": bad, "error_samples": out["errors"][:5]}


def baseline(bodies: list[dict], state: Path, model: str | None = None) -> dict:
    """In-process ``Service.recommend`` of each body, uncached, one at a time (without the
    service's memo of a job's scores, which its other objectives would use)."""
    from hpcds1mpi.serve.schemas import RecommendRequest
    from hpcds1mpi.serve.service import Service

    service = Service(model, None, state, cache_size=0)
    service.warm_up()
    service.memo = None
    times = []
    for body in bodies:
        t0 = time.perf_counter()
        try:
            service.recommend(RecommendRequest(**body), use_cache=False)
        except Exception:  # noqa: BLE001 - a refused question still cost its time
            pass
        times.append(1e3 * (time.perf_counter() - t0))
    return {"requests": len(bodies), "median_ms": statistics.median(times),
            "p99_ms": percentile(times, 99)}


def runq_wait_s(pids) -> float:
    """Seconds the threads of ``pids`` spent runnable but waiting for a CPU (the scheduler's
    ``/proc/PID/task/TID/schedstat``, second field): time the machine's other work took, not
    this code's. NaN where the kernel does not say."""
    total = 0.0
    try:
        for pid in pids:
            for task in Path(f"/proc/{pid}/task").iterdir():
                total += int((task / "schedstat").read_text().split()[1]) / 1e9
    except (OSError, ValueError, IndexError):
        return float("nan")
    return total


def start_server(state: Path, tree: str | None = None, model: str | None = None,
                 extra: tuple = ()) -> tuple[subprocess.Popen, str, int, str]:
    """A fresh ``hpcds1mpi serve`` with the shipped defaults (and ``extra`` options); ``tree``:
    the CLI of that source tree instead (the baseline; ``recommend_speed.baseline_command``)."""
    env = {k: v for k, v in os.environ.items() if k not in ("HPCDS1MPI_SERVE_TOKEN",
                                                             "SLURM_JOB_ID")}
    if tree is not None:
        # The tree's code for its worker processes too: a spawned worker starts a fresh
        # interpreter, which the command's shim does not reach (before session 14, the
        # baseline's worker computed with this checkout's code).
        env["PYTHONPATH"] = os.pathsep.join([str(Path(tree).resolve())]
                                            + ([env["PYTHONPATH"]] if env.get("PYTHONPATH")
                                               else []))
    out = state.parent / f"server-{state.name}.out"
    args = ["serve", "--host", "127.0.0.1", "--port", "0", "--state-dir", str(state)] + (
        ["--model", str(Path(model).resolve())] if model else []) + list(extra)
    if tree is None:
        command = [*_entry_point(), *args]
    else:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from recommend_speed import baseline_command

        command = baseline_command(tree, args)
    with open(out, "wb") as fh:
        proc = subprocess.Popen(command, stdout=fh, stderr=subprocess.DEVNULL, env=env,
                                cwd="/" if tree else None)
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        text = out.read_text()
        if "listening on " in text:
            url = text.split("listening on ")[1].split()[0]
            port = int(url.rstrip("/").rsplit(":", 1)[1])
            return proc, "127.0.0.1", port, (state / "token").read_text().strip()
        if proc.poll() is not None:
            raise SystemExit(f"hpcds1mpi serve exited {proc.returncode}")
        time.sleep(0.1)
    proc.kill()
    raise SystemExit("hpcds1mpi serve did not start in 180 s")


LABELS = {"this": "", "baseline": ", baseline", "workers": ", --workers {n}"}


def _label(res: dict, name: str, key: str) -> str:
    return name + LABELS[key].format(n=res.get("workers"))


def markdown(res: dict) -> str:
    """The results file: every phase of every server, the bounds, the goals."""
    ph0 = res["phases"]["this"]
    lines = [f"# Serve load ({res['date']}, commit {res['commit']})", "",
             f"`hpcds1mpi serve` (fresh process, bundle {res.get('model') or 'shipped'}, this "
             f"machine's partition, default limits and answer cache of {res['cache']}), "
             f"loopback, {res['clients']} concurrent keep-alive clients: raw HTTP/1.1 over "
             "asyncio streams, all in the benchmark process, which shares the "
             f"{res['cpus']} cores with the server and with the other work on this machine. "
             f"1-min load average {res['load_before']:.1f} at the start, "
             f"{res['load_after']:.1f} at the end. {res['dirty']}", "",
             "| phase | answered | errors | p50 | p90 | p99 | max | throughput | server CPU "
             "per request (of it the HTTP process) | server waiting for a CPU per request | client CPU per request | "
             "load after | server RSS after |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for name in ph0:
        for key in res["phases"]:
            ph = res["phases"][key][name]
            cut = " (cut short)" if ph["cut_short"] else ""
            lines.append(
                f"| {_label(res, name, key)} | {ph['answered']}/{ph['requests']}{cut} | "
                f"{ph['errors']} | {ph['p50_ms']:.1f} ms | {ph['p90_ms']:.1f} ms | "
                f"{ph['p99_ms']:.1f} ms | {ph['max_ms']:.0f} ms | {ph['throughput_rps']:.0f} "
                f"req/s | {ph['server_cpu_ms_per_request']:.2f} ms "
                f"({ph.get('server_process_cpu_ms_per_request', float('nan')):.2f}) | "
                f"{ph['server_runq_wait_ms_per_request']:.2f} ms | "
                f"{ph['client_cpu_ms_per_request']:.2f} ms | {ph['load_after']:.1f} | "
                f"{ph['rss_after_mb']:.0f} MB |")
    b, goal = res["baseline"], res["goal"]
    lines += ["", "Server waiting for a CPU: the time its threads were ready to run but the "
              "CPUs were busy with other work (the scheduler's run-queue wait, "
              "`/proc/PID/task/*/schedstat`), per request answered."]
    if res.get("baseline_tree"):
        lines += ["", f"Rows marked baseline: the server of `{res['baseline_tree']}` (the code "
                  "at the start of this session). Every phase asks each server the same "
                  "questions, the servers in turn, the order turning from phase to phase."]
    if res.get("workers") is not None:
        n = res["workers"]
        where = (f"in {n} worker process{'es' if n > 1 else ''} (CPU and RSS include them)"
                 if n else "in a thread of the server process (the computing before "
                 "`--workers` defaulted to one process)")
        lines += ["", f"Rows marked --workers {n}: this code's server computing new "
                  f"questions {where}."]
    lines += ["", f"Server RSS after start and warm-up: {res['rss_start_mb']:.0f} MB.",
              f"In process (this code's Service.recommend, no HTTP, uncached, one at a time, "
              f"{b['requests']} distinct questions): median {b['median_ms']:.1f} ms, p99 "
              f"{b['p99_ms']:.1f} ms wall per question.", ""]
    if "distinct" not in ph0:
        return "\n".join(lines + [f"Goal p99 <= {P99_GOAL_MS:.0f} ms: repeated "
                                   f"{goal['repeated']}. 0 errors: {goal['errors']}.", ""])
    d = ph0["distinct"]
    total = d["server_cpu_ms_per_request"]
    own = d.get("server_process_cpu_ms_per_request", total)
    s = max(own, total - own)  # the busier stage: the HTTP process or its worker(s)
    lines += [f"Bound for distinct questions (Little's law, closed loop): {res['clients']} "
              f"clients each waiting for its answer, {total:.2f} ms of server CPU a question, "
              f"{own:.2f} ms of it in the HTTP process and {total - own:.2f} ms in its "
              f"worker processes, which run at once on different cores; the busier stage takes "
              f"S = {s:.2f} ms a question, one at a time: mean latency >= {res['clients']} x S "
              f"= {res['clients'] * s:.0f} ms. A p99 of {P99_GOAL_MS:.0f} ms needs S well "
              f"under {P99_GOAL_MS / res['clients']:.1f} ms, or at most "
              f"{P99_GOAL_MS / s:.0f} clients at this S.", "",
              f"Goal p99 <= {P99_GOAL_MS:.0f} ms: repeated {goal['repeated']}, distinct "
              f"{goal['distinct']}. 0 errors: {goal['errors']}. Memory flat (RSS growth "
              f"from the end of the first distinct phase to the end of the second, cache full): "
              f"{goal['memory_growth_mb']:+.1f} MB.", ""]
    return "\n".join(lines)


def _commit() -> tuple[str, str]:
    """The commit measured, and a sentence on uncommitted edits to code it runs."""
    repo = Path(__file__).resolve().parents[1]
    run = lambda *a: subprocess.run(["git", *a], cwd=repo, capture_output=True,  # noqa: E731
                                    text=True).stdout
    dirty = [line[3:] for line in run("status", "--porcelain", "--", "hpcds1mpi", "surrogates",
                                      "kernels").splitlines() if line[:2].strip() not in ("??", "")]
    note = (f"Measured with uncommitted edits (others' work in progress) in {len(dirty)} "
            f"files: {', '.join(dirty[:6])}{' ...' if len(dirty) > 6 else ''}." if dirty else
            "No uncommitted edits in the code measured.")
    return run("rev-parse", "--short", "HEAD").strip(), note


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=2000)
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--rounds", type=int, default=3, help="rounds of the repeated phase")
    ap.add_argument("--baseline", type=int, default=100)
    ap.add_argument("--phase-timeout", type=float, default=300.0)
    ap.add_argument("--out", default=str(RESULTS / "serve"))
    ap.add_argument("--model", default=None, help="bundle both servers load (default: each "
                    "its shipped one)")
    ap.add_argument("--baseline-tree", default=None, metavar="DIR",
                    help="a source tree of older code (git archive COMMIT | tar -x -C DIR): its "
                         "server answers every phase too, interleaved phase by phase")
    ap.add_argument("--only-repeated", action="store_true",
                    help="only the rounds of the repeated phase (a second look at its tail)")
    ap.add_argument("--workers", type=int, default=None, metavar="N",
                    help="also a server of this code with --workers N (0: computing in a "
                         "thread of the server process; the default is 1 process)")
    args = ap.parse_args()
    if not (1 <= args.requests <= 20000 and 1 <= args.clients <= 200 and 1 <= args.rounds <= 10
            and args.workers in (None, *range(0, 17))):
        raise SystemExit("--requests must be in 1..20000, --clients in 1..200, --rounds in "
                         "1..10 and --workers in 0..16")
    import psutil

    from hpcds1mpi.decide.model_bundle import load_model
    from hpcds1mpi.serve.service import DEFAULT_CACHE

    commit, dirty = _commit()
    size_range = {str(k): (float(v[0]), float(v[1]))
                  for k, v in load_model(args.model).size_range.items()}
    every = questions(size_range, 2 * args.requests + 20)  # all different
    first, second = every[:args.requests], every[args.requests:2 * args.requests]
    few = every[2 * args.requests:]
    repeated = [few[i % len(few)] for i in range(args.requests)]
    phases = [(f"repeated{'' if args.rounds == 1 else f' {r + 1}'}", repeated)
              for r in range(args.rounds)]
    if not args.only_repeated:
        phases = [("distinct", first), *phases, ("distinct again", second)]
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        servers: dict = {}
        try:  # a server that cannot start stops the ones started before it
            servers["this"] = start_server(Path(tmp) / "state", model=args.model)
            if args.baseline_tree:
                servers["baseline"] = start_server(Path(tmp) / "baseline", args.baseline_tree,
                                                   args.model)
            if args.workers is not None:
                servers["workers"] = start_server(Path(tmp) / "workers", model=args.model,
                                                  extra=("--workers", str(args.workers)))
        except BaseException:
            for proc, *_ in servers.values():
                proc.terminate()
                proc.wait(30)
            raise
        procs = {key: psutil.Process(s[0].pid) for key, s in servers.items()}
        family = lambda key: [procs[key], *procs[key].children(recursive=True)]  # noqa: E731
        cpu = lambda key: sum(sum(p.cpu_times()[:2]) for p in family(key))  # noqa: E731
        own_cpu = lambda key: sum(procs[key].cpu_times()[:2])  # noqa: E731
        rss = lambda key: sum(p.memory_info().rss for p in family(key)) / 2**20  # noqa: E731
        waited = lambda key: runq_wait_s(p.pid for p in family(key))  # noqa: E731
        try:
            rss_start = rss("this")
            results = {key: {} for key in servers}
            for k, (name, bodies) in enumerate(phases):
                keys = list(servers)
                for key in keys[k % len(keys):] + keys[:k % len(keys)]:
                    _, host, port, token = servers[key]
                    if name in ("repeated", "repeated 1"):  # asked once before, 1 client
                        asyncio.run(_phase(host, port, token, few, 1, args.phase_timeout))
                    cpu0, me0, wait0 = cpu(key), sum(os.times()[:2]), waited(key)
                    own0 = own_cpu(key)
                    ph = asyncio.run(_phase(host, port, token, bodies, args.clients,
                                            args.phase_timeout))
                    n = max(1, ph["answered"])
                    ph["server_cpu_ms_per_request"] = 1e3 * (cpu(key) - cpu0) / n
                    # the process serving HTTP alone (the rest: its worker processes)
                    ph["server_process_cpu_ms_per_request"] = 1e3 * (own_cpu(key) - own0) / n
                    ph["client_cpu_ms_per_request"] = 1e3 * (sum(os.times()[:2]) - me0) / n
                    ph["server_runq_wait_ms_per_request"] = 1e3 * (waited(key) - wait0) / n
                    ph["rss_after_mb"], ph["load_after"] = rss(key), os.getloadavg()[0]
                    results[key][name] = ph
                    print(f"{key} {name}: {ph['answered']}/{ph['requests']} p50 "
                          f"{ph['p50_ms']:.1f} ms p99 {ph['p99_ms']:.1f} ms "
                          f"{ph['throughput_rps']:.0f} req/s server cpu/req "
                          f"{ph['server_cpu_ms_per_request']:.2f} ms (HTTP process "
                          f"{ph['server_process_cpu_ms_per_request']:.2f}) waited "
                          f"{ph['server_runq_wait_ms_per_request']:.2f} ms errors {ph['errors']} "
                          f"rss {ph['rss_after_mb']:.0f} MB load {ph['load_after']:.1f}",
                          flush=True)
        finally:
            for proc, *_ in servers.values():
                proc.terminate()
                proc.wait(30)
        base = baseline(first[:args.baseline], Path(tmp) / "baseline-state", args.model)
    load_after = os.getloadavg()[0]
    mine = results["this"]
    errors = sum(p["errors"] for p in mine.values())
    rep = [p["p99_ms"] for name, p in mine.items() if name.startswith("repeated")]
    met = sum(v <= P99_GOAL_MS for v in rep)
    res = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
           "commit": commit, "dirty": dirty,
           "clients": args.clients, "cache": DEFAULT_CACHE, "cpus": os.cpu_count(),
           "load_before": load_before, "load_after": load_after, "rss_start_mb": rss_start,
           "phases": results, "baseline": base, "baseline_tree": args.baseline_tree,
           "model": args.model, "workers": args.workers,
           "goal": {"repeated": ("met" if met == len(rep) else "missed") + f" (met in {met} "
                    f"of {len(rep)} rounds; p99 {', '.join(f'{v:.1f}' for v in rep)} ms)",
                    "errors": "met" if errors == 0 else f"missed ({errors})"}}
    if "distinct" in mine:
        res["goal"].update(
            distinct="met" if mine["distinct"]["p99_ms"] <= P99_GOAL_MS
            else f"missed (p99 {mine['distinct']['p99_ms']:.0f} ms)",
            memory_growth_mb=mine["distinct again"]["rss_after_mb"]
            - mine["distinct"]["rss_after_mb"])
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out + ".json").write_text(json.dumps(res, indent=2))
    Path(args.out + ".md").write_text(markdown(res))
    print(markdown(res))


if __name__ == "__main__":
    main()
