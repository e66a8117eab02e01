"""SYNTHETIC PM100-shaped job table, for the training scale test ONLY.

PM100 (Marconi100, 231,238 jobs) cannot be downloaded here, and the surrogate acceptance test
needs a table of that size to measure training time and memory. This script makes one. Every
row is invented: the table has a ``synthetic`` column that is always True, and nothing in it
may be quoted as a measurement of any real machine.

Column names and types follow PM100's newer generation (``num_cores_*``,
``node_power_consumption`` as a list of watts sampled every 20 s, ``time_limit`` in minutes,
``mem_req`` in MB), plus ``job_name`` (an invented application label; PM100 has none) and
``synthetic``, so ``hpcds1mpi ingest --kind pm100`` reads it like the real thing.

Analytic model (documented so a model has something real to learn, with noise on top):

* 24 invented applications ``a``, each with work ``W_a`` core-seconds (log-uniform 1e3..3e5),
  serial fraction ``s_a`` (0.01..0.2), GPU speed-up per GPU relative to one core ``G_a``
  (0 for CPU-only apps, else 4..40), communication cost ``C_a`` s per doubling of nodes
  (0..120), power per busy core ``Pc_a`` W (4..9) and per busy GPU ``Pg_a`` W (150..300), and
  memory per core ``M_a`` MB (500..7000).
* A job: ``nodes`` from {1,2,4,8,16,32} (mostly small), ``tasks_per_node`` and
  ``cores_per_task`` with ``tasks_per_node * cores_per_task <= 32`` (cores per node, 2x16
  POWER9), ``gpus_per_node`` in 0..4 for GPU apps (0 for CPU apps).
* ``P_eff = cores + G_a * gpus``;
  ``run_time = (W_a * (s_a + (1 - s_a) / P_eff) + C_a * log2(nodes)) * LogNormal(0, 0.15)``.
* Per-node power ``300 + Pc_a * cores_per_node + Pg_a * gpus_per_node`` W; the job's samples
  (one per 20 s, at most ``max_samples``) are ``nodes * that * (1 + 0.05 N(0,1))``.
* ``time_limit`` = the user's guess, ``run_time * U(0.8, 4)`` rounded up to minutes; if the
  guess is short the job is TIMEOUT and its run_time is the limit. ``mem_req`` is
  ``M_a * cores * U(0.9, 2.5)``; below the need the job is OUT_OF_MEMORY after ``U(0.05, 0.5)``
  of its run. Otherwise 3 % FAILED (after ``U(0, 1)`` of the run), 2 % CANCELLED, rest COMPLETED.

Run: ``python -m hpcds1mpi.analysis.gen_jobtable --rows 231000 --seed 0 --out jobs.parquet``
(a few seconds). Deterministic for a given ``--rows``, ``--seed`` and ``--max-samples``.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

DEFAULT_ROWS = 231_000
CORES_PER_NODE = 32
GPUS_PER_NODE = 4
SAMPLE_PERIOD_S = 20.0
N_APPS = 24


def _apps(rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Per-application constants of the analytic model, shape (N_APPS,) each."""
    gpu_app = rng.random(N_APPS) < 0.5
    return {
        "work": 10 ** rng.uniform(3, 5.5, N_APPS),
        "serial": rng.uniform(0.01, 0.2, N_APPS),
        "gpu_speedup": np.where(gpu_app, rng.uniform(4, 40, N_APPS), 0.0),
        "comm": rng.uniform(0, 120, N_APPS),
        "core_w": rng.uniform(4, 9, N_APPS),
        "gpu_w": rng.uniform(150, 300, N_APPS),
        "mem_per_core": rng.uniform(500, 7000, N_APPS),
        "gpu_app": gpu_app,
    }


def generate(rows: int = DEFAULT_ROWS, seed: int = 0, max_samples: int = 16):
    """Build the synthetic job table.

    Args:
        rows: number of jobs.
        seed: random seed; the same arguments give the same table.
        max_samples: cap on power samples per job (one per 20 s), to bound memory.

    Returns:
        pyarrow.Table with ``rows`` rows, PM100 column names, ``synthetic`` all True.
    """
    import pyarrow as pa

    rng = np.random.default_rng(seed)
    apps = _apps(rng)
    app = rng.integers(0, N_APPS, rows)

    nodes = rng.choice([1, 2, 4, 8, 16, 32], rows, p=[0.45, 0.2, 0.15, 0.1, 0.06, 0.04])
    cores_per_task = rng.choice([1, 2, 4, 8], rows, p=[0.4, 0.2, 0.2, 0.2])
    max_tasks = CORES_PER_NODE // cores_per_task
    tasks_per_node = np.maximum(1, (rng.random(rows) * max_tasks).astype(np.int64) + 1)
    tasks_per_node = np.minimum(tasks_per_node, max_tasks)
    cores_node = tasks_per_node * cores_per_task
    gpus_node = np.where(apps["gpu_app"][app], rng.integers(1, GPUS_PER_NODE + 1, rows), 0)
    cores, gpus, tasks = nodes * cores_node, nodes * gpus_node, nodes * tasks_per_node

    p_eff = cores + apps["gpu_speedup"][app] * gpus
    ideal = apps["work"][app] * (apps["serial"][app] + (1 - apps["serial"][app]) / p_eff)
    ideal = ideal + apps["comm"][app] * np.log2(nodes)
    run_time = ideal * rng.lognormal(0.0, 0.15, rows) + 1.0

    limit_min = np.ceil(run_time * rng.uniform(0.8, 4.0, rows) / 60.0)
    mem_need = apps["mem_per_core"][app] * cores
    mem_req = np.round(mem_need * rng.uniform(0.9, 2.5, rows))

    state = np.full(rows, "COMPLETED", dtype=object)
    u = rng.random(rows)
    failed, cancelled = u < 0.03, (u >= 0.03) & (u < 0.05)
    oom = mem_req < mem_need
    timeout = run_time > limit_min * 60
    frac = np.ones(rows)
    frac[failed] = rng.random(failed.sum())
    frac[oom] = rng.uniform(0.05, 0.5, oom.sum())
    state[cancelled] = "CANCELLED"
    state[failed] = "FAILED"
    state[timeout] = "TIMEOUT"
    state[oom] = "OUT_OF_MEMORY"
    run_time = np.where(timeout & ~oom, limit_min * 60, run_time * frac)
    run_time = np.round(np.maximum(run_time, 1.0))

    node_w = 300.0 + apps["core_w"][app] * cores_node + apps["gpu_w"][app] * gpus_node
    n_samples = np.clip((run_time // SAMPLE_PERIOD_S).astype(np.int64), 1, max_samples)
    offsets = np.concatenate([[0], np.cumsum(n_samples)])
    base = np.repeat(nodes * node_w, n_samples)
    samples = base * (1.0 + 0.05 * rng.standard_normal(offsets[-1]))
    power = pa.ListArray.from_arrays(pa.array(offsets, pa.int64()), pa.array(samples))
    cpu_share = np.repeat(apps["core_w"][app] * cores / (nodes * node_w), n_samples)
    cpu_power = pa.ListArray.from_arrays(pa.array(offsets, pa.int64()),
                                         pa.array(samples * cpu_share))

    submit = np.datetime64("2020-05-01T00:00:00") + np.cumsum(
        rng.exponential(60.0, rows)).astype("timedelta64[s]")
    start = submit + rng.exponential(600.0, rows).astype("timedelta64[s]")
    end = start + run_time.astype("timedelta64[s]")
    return pa.table({
        "job_id": np.arange(1, rows + 1, dtype=np.int64),
        "job_name": np.char.add("synthetic_app", app.astype(str).astype("U2")).astype(object),
        "user_id": rng.integers(1, 900, rows),
        "partition": np.where(gpus > 0, "m100_usr_prod", "m100_usr_cpu").astype(object),
        "qos": np.full(rows, "normal", dtype=object),
        "num_nodes_req": nodes, "num_nodes_alloc": nodes,
        "num_cores_req": cores, "num_cores_alloc": cores,
        "num_gpus_req": gpus, "num_gpus_alloc": gpus,
        "mem_req": mem_req, "mem_alloc": mem_req,
        "num_tasks": tasks, "cores_per_task": cores_per_task,
        "threads_per_core": np.ones(rows, dtype=np.int64),
        "submit_time": submit, "start_time": start, "end_time": end,
        "run_time": run_time, "time_limit": limit_min,
        "job_state": state,
        "node_power_consumption": power,
        "cpu_power_consumption": cpu_power,
        "synthetic": np.ones(rows, dtype=bool),
    })


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=DEFAULT_ROWS)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-samples", type=int, default=16)
    parser.add_argument("--out", type=Path, required=True, help="output .parquet")
    args = parser.parse_args(argv)
    import pyarrow.parquet as pq

    t0 = time.perf_counter()
    table = generate(args.rows, args.seed, args.max_samples)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, args.out)
    print(f"wrote {table.num_rows} SYNTHETIC PM100-shaped jobs to {args.out} "
          f"in {time.perf_counter() - t0:.1f} s (seed {args.seed})")


if __name__ == "__main__":
    main()
