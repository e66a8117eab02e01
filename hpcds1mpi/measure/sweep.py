"""The sweep: plans (TOML or flags), the in-process MPI driver, and the supervisor loop.

In-process mode runs under ``mpiexec -n P hpcds1mpi sweep ...`` (or srun). Every rank parses the
same plan; the node layout comes from ``SLURM_NODEID`` when set, else
``Split_type(COMM_TYPE_SHARED)``; each (nodes, ranks-per-node) choice gets a sub-communicator of
the first ranks of the first nodes, and ranks outside it sleep in a polled ``Ibarrier`` (so they
do not steal cores by busy-waiting). World rank 0 is in every sub-communicator and is the only
writer of the telemetry file (:mod:`hpcds1mpi.records.telemetry`).

A run that exceeds ``timeout`` cannot be interrupted inside an MPI call, so rank 0's watchdog
journals it as ``timeout`` and aborts the job; the supervisor (``--launch N``, run outside
mpiexec) relaunches ``mpiexec -n N hpcds1mpi sweep --resume ...`` until the plan is done.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import socket
import sys
import threading
import time
from dataclasses import dataclass, field

from hpcds1mpi.config import DEVICES, PRECISIONS, Configuration, check_fits, enumerate_configs
from hpcds1mpi.errors import ConfigError, LaunchError, TelemetryError

TIMEOUT_EXIT_CODE = 124
_SWEEP_KEYS = {"min_time", "min_repeats", "max_repeats", "warmup", "timeout", "seed",
               "valid_only", "check", "snapshot_every", "nodes", "ranks_per_node", "threads",
               "devices", "precisions", "sizes", "retry_crashed", "max_attempts"}
_KERNEL_KEYS = {"name", "sizes", "nodes", "ranks_per_node", "threads", "devices", "precisions",
                "extra", "corrupt"}


# --------------------------------------------------------------------------------------------
# Plans


@dataclass(frozen=True)
class RunSpec:
    """One configuration of one workload at one size: a row of the runs table to be."""

    workload: str
    size: int
    config: Configuration
    seed: int = 0
    extra: tuple = ()
    corrupt: bool = False

    @property
    def run_id(self) -> str:
        c = self.config
        key = [self.workload, int(self.size), c.nodes, c.ranks_per_node, c.threads, c.device,
               c.precision, int(self.seed), [list(kv) for kv in self.extra]]
        return hashlib.sha1(json.dumps(key).encode()).hexdigest()[:16]


@dataclass
class SweepPlan:
    """What to measure and how (docs/telemetry.md, "Sweep plans")."""

    runs: list[RunSpec]
    min_time: float = 0.2
    min_repeats: int = 1
    max_repeats: int = 5
    warmup: int = 1
    timeout: float = 600.0
    check: bool = True
    snapshot_every: float = 30.0
    retry_crashed: bool = False
    max_attempts: int = 2
    source: dict = field(default_factory=dict)

    @property
    def max_ranks(self) -> int:
        return max((r.config.ranks for r in self.runs), default=1)

    def layouts(self) -> list[tuple[int, int]]:
        return sorted({(r.config.nodes, r.config.ranks_per_node) for r in self.runs})


def parse_ints(value, what: str) -> list[int]:
    """A range of positive integers: ``4``, ``[1, 2, 4]``, ``"1,2,4"`` or ``"1..8"`` (powers
    of two from 1 to 8, both ends included; ``"3..12"`` gives 3, 6, 12)."""
    if isinstance(value, bool):
        raise ConfigError(f"{what}: expected integers, got {value!r}")
    if isinstance(value, int):
        items = [value]
    elif isinstance(value, str):
        text = value.strip()
        if ".." in text:
            lo_text, hi_text = text.split("..", 1)
            try:
                lo, hi = int(lo_text), int(hi_text)
            except ValueError:
                raise ConfigError(f"{what}: range {value!r} must be LOW..HIGH integers") from None
            if lo < 1 or hi < lo:
                raise ConfigError(f"{what}: range {value!r} is empty or contradictory "
                                  "(need 1 <= LOW <= HIGH)")
            items, v = [], lo
            while v <= hi:
                items.append(v)
                v *= 2
        else:
            try:
                items = [int(t) for t in text.split(",") if t.strip()]
            except ValueError:
                raise ConfigError(f"{what}: {value!r} is not a comma-separated list of integers") from None
    elif isinstance(value, (list, tuple)):
        items = []
        for v in value:
            if isinstance(v, bool) or not isinstance(v, int):
                raise ConfigError(f"{what}: expected integers, got {v!r}")
            items.append(v)
    else:
        raise ConfigError(f"{what}: expected integers, got {value!r}")
    if not items:
        raise ConfigError(f"{what}: empty range; give at least one value")
    bad = [v for v in items if v < 1]
    if bad:
        raise ConfigError(f"{what}: values must be >= 1, got {bad[0]}")
    return sorted(set(items))


def parse_words(value, what: str, allowed: tuple[str, ...], keywords: tuple[str, ...]) -> list[str]:
    if isinstance(value, str):
        items = [t.strip() for t in value.split(",") if t.strip()]
    elif isinstance(value, (list, tuple)):
        items = [str(v) for v in value]
    else:
        raise ConfigError(f"{what}: expected names, got {value!r}")
    if not items:
        raise ConfigError(f"{what}: empty; give at least one of {', '.join(allowed)}")
    if len(items) == 1 and items[0] in keywords:
        return items
    for item in items:
        if item not in allowed:
            raise ConfigError(f"{what}: unknown {item!r}; use {', '.join(allowed + keywords)}")
    return list(dict.fromkeys(items))


def _positive(value, what: str, kind=float, allow_zero: bool = False):
    try:
        number = kind(value)
    except (TypeError, ValueError):
        raise ConfigError(f"{what} must be a number, got {value!r}") from None
    if number < 0 or (number == 0 and not allow_zero) or (kind is float and not math.isfinite(number)):
        raise ConfigError(f"{what} must be {'>= 0' if allow_zero else '> 0'}, got {value!r}")
    return number


def load_plan_file(path: str) -> dict:
    """Read a TOML sweep plan into the dict :func:`build_plan` takes."""
    import tomllib

    try:
        with open(path, "rb") as fh:
            doc = tomllib.load(fh)
    except FileNotFoundError:
        raise ConfigError(f"{path}: plan file not found") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML ({exc})") from None
    extra = set(doc) - {"sweep", "kernel"}
    if extra:
        raise ConfigError(f"{path}: unknown top-level key(s) {', '.join(sorted(extra))} "
                          "(known: [sweep], [[kernel]])")
    sweep = doc.get("sweep", {})
    unknown = set(sweep) - _SWEEP_KEYS
    if unknown:
        raise ConfigError(f"{path}: unknown key(s) in [sweep]: {', '.join(sorted(unknown))}")
    kernels = doc.get("kernel", [])
    if not isinstance(kernels, list) or not kernels:
        raise ConfigError(f"{path}: no [[kernel]] entries; add one per kernel to sweep")
    for entry in kernels:
        unknown = set(entry) - _KERNEL_KEYS
        if unknown:
            raise ConfigError(f"{path}: unknown key(s) in [[kernel]]: {', '.join(sorted(unknown))}")
        if "name" not in entry:
            raise ConfigError(f"{path}: a [[kernel]] entry has no name")
    return {"sweep": dict(sweep), "kernel": [dict(k) for k in kernels]}


def build_plan(doc: dict, partition) -> SweepPlan:
    """Expand a plan dict (``{"sweep": {...}, "kernel": [{...}, ...]}``) into runs.

    Ranges given explicitly are taken as given (a combination a kernel cannot run is still a row,
    with status ``unsupported``); ``valid_only = true`` keeps only configurations that fit the
    partition (cores, GPUs) and that the kernel declares it supports. Defaults: sizes = the
    kernel's ``default_sizes``, precisions = the kernel's declared ones, devices = those of the
    kernel the partition has, nodes = 1, ranks per node and threads = 1..cores per node.
    """
    from hpcds1mpi import kernels as registry

    sweep = doc.get("sweep", {})
    valid_only = bool(sweep.get("valid_only", False))
    seed = int(_positive(sweep.get("seed", 0), "seed", int, allow_zero=True))
    runs: list[RunSpec] = []
    for entry in doc["kernel"]:
        name = entry["name"]
        kernel = registry.get(name)  # UnknownKernelError lists the known ones
        merged = {**{k: v for k, v in sweep.items()}, **entry}
        sizes_value = merged.get("sizes", "default")
        if sizes_value == "default":
            sizes = list(kernel.default_sizes)
            if not sizes:
                raise ConfigError(f"kernel {name!r} has no default sizes; give sizes")
        else:
            sizes = parse_ints(sizes_value, f"{name}: sizes")
        cores = partition.cores_per_node
        nodes = parse_ints(merged.get("nodes", 1), f"{name}: nodes")
        rpn = parse_ints(merged["ranks_per_node"], f"{name}: ranks_per_node") \
            if "ranks_per_node" in merged else list(range(1, cores + 1))
        threads = parse_ints(merged["threads"], f"{name}: threads") if "threads" in merged else \
            list(range(1, cores + 1))
        devices = parse_words(merged.get("devices", "available"), f"{name}: devices", DEVICES,
                              ("available",))
        if devices == ["available"]:
            devices = [d for d in kernel.devices if d == "cpu" or partition.gpus_per_node > 0]
        precisions = parse_words(merged.get("precisions", "declared"), f"{name}: precisions",
                                 PRECISIONS, ("declared",))
        if precisions == ["declared"]:
            precisions = list(kernel.precisions)
        extra = merged.get("extra", {})
        if not isinstance(extra, dict):
            raise ConfigError(f"{name}: extra must be a table")
        corrupt = bool(merged.get("corrupt", False))
        before = len(runs)

        def supported(c: Configuration, kernel=kernel) -> bool:
            return (c.precision in kernel.precisions and c.device in kernel.devices
                    and (c.threads == 1 or kernel.uses_threads))

        configs = list(enumerate_configs(
            partition if valid_only else None, nodes=nodes, ranks_per_node=rpn, threads=threads,
            devices=devices, precisions=precisions, accept=supported if valid_only else None))
        for size in sizes:
            for config in configs:
                runs.append(RunSpec(name, size, config, seed, tuple(sorted(extra.items())),
                                    corrupt))
        if len(runs) == before:
            raise ConfigError(f"kernel {name!r}: the ranges leave no configuration to run "
                              "(check nodes/ranks/threads against the partition)")
    plan = SweepPlan(
        runs=runs,
        min_time=_positive(sweep.get("min_time", 0.2), "min_time", float, allow_zero=True),
        min_repeats=_positive(sweep.get("min_repeats", 1), "min_repeats", int),
        max_repeats=_positive(sweep.get("max_repeats", 5), "max_repeats", int),
        warmup=_positive(sweep.get("warmup", 1), "warmup", int, allow_zero=True),
        timeout=_positive(sweep.get("timeout", 600.0), "timeout", float),
        check=bool(sweep.get("check", True)),
        snapshot_every=_positive(sweep.get("snapshot_every", 30.0), "snapshot_every", float,
                                 allow_zero=True),
        retry_crashed=bool(sweep.get("retry_crashed", False)),
        max_attempts=_positive(sweep.get("max_attempts", 2), "max_attempts", int),
        source=doc,
    )
    if plan.min_repeats > plan.max_repeats:
        raise ConfigError(f"min_repeats {plan.min_repeats} > max_repeats {plan.max_repeats}: "
                          "contradictory; lower min_repeats or raise max_repeats")
    ids = [r.run_id for r in runs]
    if len(set(ids)) != len(ids):
        raise ConfigError("the plan lists a configuration twice; remove the duplicate kernel entry")
    return plan


def estimate_seconds(plan: SweepPlan) -> float:
    """A rough, pessimistic estimate of a sweep's duration (s), for ``--list`` (the reference
    plan: 150 min estimated, 6 min measured on a 2-core VM; gemm alone runs at 80+ GFLOP/s).

    Per configuration: ``warmup`` + at least ``max(min_time, min_repeats x t)`` where ``t`` is
    the kernel's ``WorkModel`` at an assumed 1 GFLOP/s and 5 GB/s per rank, plus 0.1 s of set-up.
    It is not a measurement; real times depend on the machine.
    """
    from hpcds1mpi import kernels as registry

    total = 0.0
    for spec in plan.runs:
        t = 0.0
        try:
            work = registry.get(spec.workload).work(spec.size, spec.config.ranks)
            t = max(work.flops / 1e9, work.bytes_moved / 5e9)
        except Exception:  # noqa: BLE001 - an estimate only
            pass
        total += plan.warmup * t + max(plan.min_time, plan.min_repeats * t) + 0.1
    return total


# --------------------------------------------------------------------------------------------
# Node layout


@dataclass
class Layout:
    """Where this rank sits: node index (0 = rank 0's node), rank on the node, node sizes."""

    node_index: int
    local_rank: int
    node_sizes: list[int]
    hostname: str

    @property
    def nodes(self) -> int:
        return len(self.node_sizes)

    def ranks_available(self, nodes: int) -> int:
        """Ranks per node that every one of the first ``nodes`` nodes has."""
        return min(self.node_sizes[:nodes]) if nodes <= self.nodes else 0


def discover_layout(world) -> Layout:
    """This rank's place among the launched ranks (:func:`hpcds1mpi.runtime.mpi.node_layout`)."""
    from hpcds1mpi.runtime.mpi import node_layout

    where = node_layout(world)
    return Layout(where["node_index"], where["local_rank"], where["node_sizes"], socket.gethostname())


def check_layout(plan: SweepPlan, layout: Layout, world_size: int) -> None:
    """Raise ConfigError, saying how many to launch, when the plan needs more ranks."""
    for nodes, rpn in plan.layouts():
        if nodes > layout.nodes or rpn > layout.ranks_available(nodes):
            need = max(r.config.ranks for r in plan.runs)
            need_nodes = max(n for n, _ in plan.layouts())
            need_rpn = max(r for _, r in plan.layouts())
            if need_nodes > 1:
                raise ConfigError(
                    f"the plan needs {need_nodes} nodes x {need_rpn} ranks per node but "
                    f"{world_size} ranks on {layout.nodes} node(s) were launched; launch "
                    f"{need_nodes * need_rpn} ranks over {need_nodes} nodes")
            raise ConfigError(f"the plan needs {need} ranks on one node but {world_size} were "
                              f"launched; launch with mpiexec -n {need}")


# --------------------------------------------------------------------------------------------
# Waiting without spinning, progress


def sleepy_barrier(comm) -> None:
    """A barrier whose waiters sleep (MPI's own barrier busy-polls and would steal cores)."""
    request = comm.Ibarrier()
    pause = 0.0002
    while not request.Test():
        time.sleep(pause)
        pause = min(pause * 1.5, 0.002)  # <= 500 wake-ups/s: negligible CPU, ~1 ms latency


class Progress:
    """``configs done / total, time left`` on stderr; redrawn in place on a terminal, else a
    line every 10 % (cheap: at most a few writes per second)."""

    def __init__(self, total: int, stream=None, enabled: bool = True):
        self.total = max(total, 1)
        self.stream = stream or sys.stderr
        self.enabled = enabled and total > 0
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.start = time.monotonic()
        self._last_draw = 0.0
        self._last_decile = -1

    def update(self, done: int, note: str = "") -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        elapsed = now - self.start
        left = elapsed / done * (self.total - done) if done else float("nan")
        left_text = "?" if math.isnan(left) else time.strftime("%H:%M:%S", time.gmtime(left))
        width = 30
        filled = int(width * done / self.total)
        line = (f"[{'#' * filled}{'.' * (width - filled)}] {done}/{self.total} configs, "
                f"{left_text} left {note}")
        if self.tty:
            if now - self._last_draw >= 0.2 or done == self.total:
                self.stream.write("\r" + line[:120].ljust(120))
                if done == self.total:
                    self.stream.write("\n")
                self.stream.flush()
                self._last_draw = now
        else:
            decile = int(10 * done / self.total)
            if decile != self._last_decile:
                self.stream.write(line + "\n")
                self.stream.flush()
                self._last_decile = decile


# --------------------------------------------------------------------------------------------
# Rows


def base_row(spec: RunSpec, machine_id: str, partition, sweep_id: str) -> dict:
    c = spec.config
    return {
        "run_id": spec.run_id, "machine_id": machine_id, "workload": spec.workload,
        "size": spec.size, "nodes": c.nodes, "ranks_per_node": c.ranks_per_node,
        "ranks": c.ranks, "threads": c.threads, "device": c.device, "precision": c.precision,
        "seed": spec.seed, "sweep_id": sweep_id, "partition": partition.name,
        "cores_per_node": partition.cores_per_node, "memory_gb": partition.memory_gb,
        "gpus_per_node": partition.gpus_per_node, "kind": "kernel", "status": "crashed",
    }


def spread(walls: list[float]) -> dict:
    """Median / min / max / repeats / noise of per-repeat wall times (s)."""
    import numpy as np

    if not walls:
        return {"repeats": 0}
    arr = np.asarray(walls, dtype=float)
    median = float(np.median(arr))
    return {
        "runtime_s": median, "runtime_min_s": float(arr.min()), "runtime_max_s": float(arr.max()),
        "repeats": int(arr.size), "measured_s": float(arr.sum()),
        "noise": float((arr.max() - arr.min()) / median) if median > 0 else float("nan"),
    }


def work_columns(kernel, size: int, ranks: int) -> dict:
    try:
        work = kernel.work(size, ranks)
    except Exception:  # noqa: BLE001 - a kernel without a work model leaves NaN
        return {}
    return {"work_flops": work.flops, "work_bytes": work.bytes_moved,
            "comm_messages": work.messages, "comm_bytes": work.comm_bytes,
            "mem_bytes_per_rank": work.memory_bytes}


def energy_columns(row: dict, infos: list[dict], model, nodes: int) -> dict:
    """Energy per run, average power and source (see docs/telemetry.md, "Energy")."""
    from hpcds1mpi.measure import meters as measure

    runtime = row.get("runtime_s")
    if runtime is None or not row.get("repeats"):
        return {}
    leaders = [i for i in infos if i["local_rank"] == 0]
    rapl = [i.get("rapl_j") for i in leaders]
    nvml = [i.get("nvml_j") for i in infos if i.get("gpu")]
    window = max(i["elapsed_s"] for i in infos)
    if rapl and all(v is not None for v in rapl):
        watts = sum(rapl) / window
        source = "rapl"
        if nvml and all(v is not None and not math.isnan(v) for v in nvml):
            watts += sum(nvml) / window
            source = "rapl+nvml"
    elif nvml and all(v is not None and not math.isnan(v) for v in nvml):
        cpu_watts = measure.modelled_power(model, nodes=nodes, window_s=row["measured_s"],
                                           cpu_s=row["cpu_s"])
        watts = sum(nvml) / window + cpu_watts
        source = "nvml+modelled"
    else:
        gpus = sum(1 for i in infos if i.get("gpu"))
        busy = row.get("gpu_busy_s")
        # Without a GPU sensor a GPU run is taken as busy for its whole run time (upper bound).
        gpu_busy_window = (busy * row["repeats"] if busy is not None and not math.isnan(busy)
                           else row["measured_s"] * gpus)
        watts = measure.modelled_power(model, nodes=nodes, window_s=row["measured_s"],
                                       cpu_s=row["cpu_s"], gpus=gpus, gpu_busy_s=gpu_busy_window)
        source = "modelled"
    return {"avg_power_w": watts, "energy_j": watts * runtime, "energy_source": source,
            "power_model": model.describe() if "modelled" in source else ""}


def finish_row(row: dict, outcome, infos: list[dict], model, kernel, spec: RunSpec,
               elapsed: float) -> tuple[dict, dict]:
    """The runs-table row and its detail tables from the runner's Outcome and per-rank infos."""
    import numpy as np

    row = dict(row)
    driver_errors = [i["driver_error"] for i in infos if i.get("driver_error")]
    row["status"] = outcome.status if outcome is not None else "failed"
    row["error"] = outcome.error if outcome is not None else ""
    if driver_errors and row["status"] == "ok":
        row["status"], row["error"] = "failed", driver_errors[0]
    row["finished_at"] = time.time()
    row["elapsed_s"] = elapsed
    row["hostnames"] = ",".join(sorted({i["hostname"] for i in infos}))
    row["binding"] = ";".join(f"r{i['rank']}:{i['binding']}" for i in infos)
    row["peak_rss_mb"] = max(i["rss_mb"] for i in infos)
    row["peak_rss_source"] = infos[0]["rss_source"]
    row["cpu_s"] = sum(i["cpu_s"] for i in infos)
    if outcome is not None:
        row["rel_error"] = outcome.rel_error
        row["blas_threads"] = outcome.blas_threads
        row["torch_threads"] = outcome.torch_threads
        row.update(spread(outcome.wall))
    fractions = [sum(i["rank_mpi"]) / sum(i["rank_wall"]) for i in infos
                 if i["rank_wall"] and sum(i["rank_wall"]) > 0]
    row["mpi_fraction"] = float(np.mean(fractions)) if fractions else float("nan")
    gpu_infos = [i for i in infos if i.get("gpu")]
    if gpu_infos:
        busy = [i.get("gpu_busy_s") for i in gpu_infos]
        runs_done = max(row.get("repeats", 0) + spec_warmup(infos), 1)
        if all(b is not None and not math.isnan(b) for b in busy):
            row["gpu_busy_s"] = sum(busy) / runs_done
        mems = [i.get("gpu_mem_mb") for i in gpu_infos]
        mems = [m for m in mems if m is not None and not math.isnan(m)]
        row["gpu_peak_mem_mb"] = max(mems) if mems else float("nan")
        row["gpu_source"] = gpu_infos[0].get("gpu_source", "none")
    row.update(work_columns(kernel, spec.size, spec.config.ranks))
    if row["status"] not in ("unsupported",):
        row.update(energy_columns(row, infos, model, spec.config.nodes))
    detail = {
        "repeats": [{"machine_id": row["machine_id"], "run_id": row["run_id"], "repeat": k,
                     "wall_s": w} for k, w in enumerate(outcome.wall if outcome else [])],
        "ranks": [{"machine_id": row["machine_id"], "run_id": row["run_id"], "rank": i["rank"],
                   "hostname": i["hostname"], "local_rank": i["local_rank"],
                   "binding": i["binding"], "cpu_s": i["cpu_s"], "peak_rss_mb": i["rss_mb"],
                   "wall_s_median": float(np.median(i["rank_wall"])) if i["rank_wall"] else None,
                   "mpi_s_median": float(np.median(i["rank_mpi"])) if i["rank_mpi"] else None,
                   "mpi_fraction": (sum(i["rank_mpi"]) / sum(i["rank_wall"])
                                    if i["rank_wall"] and sum(i["rank_wall"]) > 0 else None)}
                  for i in infos],
        "rank_repeats": [{"machine_id": row["machine_id"], "run_id": row["run_id"],
                          "rank": i["rank"], "repeat": k, "wall_s": w, "mpi_s": m}
                         for i in infos for k, (w, m) in enumerate(zip(i["rank_wall"],
                                                                        i["rank_mpi"]))],
    }
    return row, detail


def spec_warmup(infos: list[dict]) -> int:
    return int(infos[0].get("warmup", 0)) if infos else 0


# --------------------------------------------------------------------------------------------
# Watchdog


class Watchdog:
    """Rank 0's timer: past a run's deadline it journals ``timeout`` and aborts the MPI job
    (a hang inside an MPI call cannot be interrupted in-process)."""

    def __init__(self, writer, world):
        self.writer = writer
        self.world = world
        self.lock = threading.Lock()
        self.current: tuple[dict, float, float] | None = None
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def arm(self, row: dict, timeout: float) -> None:
        with self.lock:
            self.current = (row, time.monotonic() + timeout, timeout)

    def disarm(self) -> bool:
        """False if the watchdog already fired for the current run."""
        with self.lock:
            fired = self.current is None
            self.current = None
            return not fired

    def _loop(self) -> None:
        while True:
            time.sleep(0.05)
            with self.lock:
                if self.current is None or time.monotonic() < self.current[1]:
                    continue
                row, _, timeout = self.current
                self.current = None
                row = dict(row, status="timeout", finished_at=time.time(),
                           error=f"no result within the {timeout:g} s timeout; the job was "
                                 "aborted and the sweep resumes after it")
                try:
                    self.writer.record(row, {})
                    self.writer.snapshot()
                except Exception as exc:  # noqa: BLE001
                    sys.stderr.write(f"hpcds1mpi: could not record the timeout: {exc}\n")
                sys.stderr.write(f"hpcds1mpi: {row['workload']} size {row['size']} "
                                 f"{Configuration(row['nodes'], row['ranks_per_node'], row['threads'], row['device'], row['precision']).label()}"
                                 f" timed out after {timeout:g} s; aborting this launch "
                                 "(resume with --resume, or use --launch to resume automatically)\n")
                sys.stderr.flush()
                try:
                    self.world.Abort(TIMEOUT_EXIT_CODE)
                finally:
                    os._exit(TIMEOUT_EXIT_CODE)


# --------------------------------------------------------------------------------------------
# Exceptions on some ranks only


class GuardedKernel:
    """A kernel proxy that turns an exception on *some* ranks into a clean ``failed`` run.

    When every rank raises at the same step, the runner's own agreement marks the run failed.
    When only some ranks raise, the others sit in a collective that will never complete. So a
    raising rank first waits (sleeping) up to ``agree_s`` on an ``Ibarrier`` of a duplicate
    communicator that only raising ranks enter: if all ranks arrive, the exception goes on to the
    runner; otherwise the rank leaves a fault note beside the telemetry file and aborts the
    launch, and the next launch (``--launch`` resumes by itself) records the run as ``failed``
    with the note's text.
    """

    def __init__(self, kernel, errcomm, out: str, run_id: str, world, agree_s: float = 5.0):
        self._kernel = kernel
        self._errcomm = errcomm
        self._out = out
        self._run_id = run_id
        self._world = world
        self._agree_s = agree_s

    def __getattr__(self, name):
        return getattr(self._kernel, name)

    def _guard(self, method, *args):
        try:
            return method(*args)
        except Exception as exc:  # noqa: BLE001 - re-raised unless only some ranks raised
            request = self._errcomm.Ibarrier()
            deadline = time.monotonic() + self._agree_s
            while not request.Test():
                if time.monotonic() > deadline:
                    from hpcds1mpi.records import telemetry

                    text = f"{type(exc).__name__}: {exc}"
                    telemetry.write_fault_note(self._out, self._run_id,
                                               self._world.Get_rank(), text)
                    sys.stderr.write(f"hpcds1mpi: rank {self._world.Get_rank()} failed alone "
                                     f"({text}); aborting this launch, the run is recorded as "
                                     "failed on resume\n")
                    sys.stderr.flush()
                    try:
                        self._world.Abort(1)
                    finally:
                        os._exit(1)
                time.sleep(0.005)
            raise

    def setup(self, ctx, size):
        return self._guard(self._kernel.setup, ctx, size)

    def run(self, ctx, state):
        return self._guard(self._kernel.run, ctx, state)

    def check(self, ctx, state, result):
        return self._guard(self._kernel.check, ctx, state, result)


# --------------------------------------------------------------------------------------------
# The in-process driver


def _rank_measure(sub, spec: RunSpec, plan: SweepPlan, layout: Layout, cpus: list[int],
                  kernel, world_rank: int):
    """Run one configuration on this rank (a member of ``sub``); return (outcome, info)."""
    from hpcds1mpi.measure import meters as measure
    from hpcds1mpi.runtime import binding
    from hpcds1mpi.measure import runner

    config = spec.config
    info = {"rank": world_rank, "hostname": layout.hostname, "local_rank": layout.local_rank,
            "binding": "", "cpu_s": 0.0, "rss_mb": float("nan"), "rss_source": "",
            "rank_wall": [], "rank_mpi": [], "elapsed_s": 0.0, "warmup": plan.warmup,
            "gpu": config.device == "gpu"}
    outcome = None
    start = time.perf_counter()
    rapl = measure.RaplMeter() if layout.local_rank == 0 else None
    nvml = None
    try:
        info["binding"] = binding.bind(layout.local_rank, config.ranks_per_node, config.threads,
                                       cpus)
        reset = measure.reset_peak_rss()
        if rapl is not None and rapl.available:
            rapl.start()
        if config.device == "gpu":
            nvml = measure.NvmlMeter(layout.local_rank)
            if nvml.available:
                nvml.start()
        outcome = runner.execute(
            sub, kernel, spec.size, config, seed=spec.seed, warmup=plan.warmup,
            min_time=plan.min_time, min_repeats=plan.min_repeats, max_repeats=plan.max_repeats,
            check=plan.check, local_rank=layout.local_rank, extra=dict(spec.extra),
            corrupt=spec.corrupt)
        info["rss_mb"], info["rss_source"] = measure.peak_rss_mb(reset)
        if rapl is not None and rapl.available:
            info["rapl_j"] = rapl.stop()
        if nvml is not None and nvml.available:
            nvml.stop()
            info.update(nvml_j=nvml.energy_j, gpu_busy_s=nvml.busy_s,
                        gpu_mem_mb=nvml.peak_mem_mb, gpu_source="nvml")
        elif config.device == "gpu":
            info.update(gpu_mem_mb=measure.torch_gpu_peak_mb(), gpu_source="none")
        info["cpu_s"] = outcome.rank_cpu
        info["rank_wall"] = list(outcome.rank_wall)
        info["rank_mpi"] = list(outcome.rank_mpi)
    except Exception as exc:  # noqa: BLE001 - the driver's own failure is this run's status
        info["driver_error"] = f"{type(exc).__name__}: {exc}"
    finally:
        binding.unbind(cpus)
    info["elapsed_s"] = time.perf_counter() - start
    return outcome, info


def run_inprocess(plan: SweepPlan, out: str, partition, *, resume: bool = False,
                  progress: bool = True) -> dict:
    """Run ``plan`` on ``MPI.COMM_WORLD``; collective. Returns a summary (on rank 0).

    Raises (on every rank, after agreeing): ConfigError when the launch is too small,
    TelemetryError/LockError when ``out`` cannot be written.
    """
    from hpcds1mpi.measure import meters as measure
    from hpcds1mpi.runtime import binding
    from hpcds1mpi.records import telemetry
    from hpcds1mpi.runtime.mpi import get_mpi, gpu_aware, library_version

    MPI = get_mpi()
    world = MPI.COMM_WORLD
    rank = world.Get_rank()
    layout = discover_layout(world)
    check_layout(plan, layout, world.Get_size())
    cpus = binding.initial_cpus()

    hostnames = world.allgather(layout.hostname)
    writer = None
    failure = None
    if rank == 0:
        try:
            writer = telemetry.TelemetryWriter(
                out, resume=resume, snapshot_every_s=plan.snapshot_every,
                attrs={"plan": json.dumps(plan.source, default=str),
                       "last_launch_ranks": world.Get_size()})
            writer.open()
            fp = measure.fingerprint(partition, hostnames=hostnames,
                                     mpi_library=library_version(),
                                     gpu_aware=gpu_aware() if partition.gpus_per_node else False)
            writer.machine(fp)
            machine_id = fp["machine_id"]
            sweep_id = hashlib.sha1(json.dumps(plan.source, sort_keys=True, default=str)
                                    .encode()).hexdigest()[:12]
            todo = []
            for index, spec in enumerate(plan.runs):
                key = (machine_id, spec.run_id)
                old = writer.store.runs.get(key)
                if old is None:
                    todo.append(index)
                elif (old["status"] == "crashed" and plan.retry_crashed
                      and writer.store.attempts.get(key, 1) < plan.max_attempts):
                    todo.append(index)
            failure = None
        except Exception as exc:  # noqa: BLE001 - told to every rank, then re-raised on 0
            failure = exc
            if writer is not None and writer.store is not None:
                writer.close()
    failed = world.bcast(failure is not None, root=0)
    if failed:
        if rank == 0:
            raise failure
        raise SystemExit(2)  # rank 0 prints the one-line error (or the traceback of a bug)
    machine_id, sweep_id, todo = world.bcast(
        (machine_id, sweep_id, todo) if rank == 0 else None, root=0)

    try:
        return _sweep_loop(plan, out, partition, world, layout, cpus, writer, machine_id,
                           sweep_id, todo, progress)
    except BaseException:
        # A bug or an interrupt on one rank would leave the others waiting forever: end the job.
        import traceback

        traceback.print_exc()
        sys.stderr.flush()
        world.Abort(1)
        raise


def _sweep_loop(plan, out, partition, world, layout, cpus, writer, machine_id, sweep_id, todo,
                progress) -> dict:
    from hpcds1mpi import kernels as registry
    from hpcds1mpi.measure import meters as measure
    from hpcds1mpi.runtime.mpi import get_mpi

    MPI = get_mpi()
    rank = world.Get_rank()
    subcomms = {}
    for nodes, rpn in plan.layouts():
        member = layout.node_index < nodes and layout.local_rank < rpn
        sub = world.Split(0 if member else MPI.UNDEFINED, world.Get_rank())
        subcomms[(nodes, rpn)] = (sub, sub.Dup()) if member else None

    model = measure.power_model(partition)
    watchdog = Watchdog(writer, world) if rank == 0 else None
    bar = Progress(len(todo), enabled=progress and rank == 0)
    counts: dict[str, int] = {}
    sweep_start = time.perf_counter()
    measured_total = 0.0
    for done, index in enumerate(todo):
        spec = plan.runs[index]
        sub = subcomms[(spec.config.nodes, spec.config.ranks_per_node)]
        kernel = registry.get(spec.workload)
        row = None
        if rank == 0:
            row = base_row(spec, machine_id, partition, sweep_id)
            row["attempt"] = writer.start(row)
            row["started_at"] = time.time()
            watchdog.arm(row, plan.timeout)
        if sub is not None:
            sub, errcomm = sub
            guarded = GuardedKernel(kernel, errcomm, out, spec.run_id, world,
                                    agree_s=min(2.0, plan.timeout / 4))
            start = time.perf_counter()
            outcome, info = _rank_measure(sub, spec, plan, layout, cpus, guarded, rank)
            elapsed = time.perf_counter() - start
            infos = sub.gather(info, root=0)
            if rank == 0:
                if watchdog.disarm():
                    row, detail = finish_row(row, outcome, infos, model, kernel, spec, elapsed)
                    writer.record(row, detail)
                    counts[row["status"]] = counts.get(row["status"], 0) + 1
                    measured_total += row.get("measured_s") or 0.0
                else:  # the watchdog already recorded a timeout and is aborting
                    time.sleep(3600)
        sleepy_barrier(world)
        if rank == 0:
            bar.update(done + 1, f"({spec.workload} {spec.size} {spec.config.label()})")
    total = time.perf_counter() - sweep_start
    summary = {}
    if rank == 0:
        writer.close()
        summary = {"configs": len(todo), "statuses": counts, "sweep_s": total,
                   "measured_s": measured_total, "journal_s": writer.journal_seconds,
                   "snapshot_s": writer.snapshot_seconds, "snapshots": writer.snapshots,
                   "journal_writes": writer.journal_writes, "skipped": len(plan.runs) - len(todo)}
    for pair in subcomms.values():
        if pair is not None:
            for comm in pair:
                comm.Free()
    return summary


# --------------------------------------------------------------------------------------------
# Supervisor


def supervise(ranks: int, argv: list[str], out: str, *, max_launches: int = 1000,
              launcher: str | None = None) -> int:
    """Launch ``hpcds1mpi sweep ARGV`` on ``ranks`` ranks until it finishes.

    After a launch dies (a timeout abort, a crash, a kill) it relaunches with ``--resume``; the
    configuration that was running is by then recorded as ``timeout`` or ``crashed`` and skipped.
    Stops with LaunchError if a launch records nothing new (no progress).
    """
    import subprocess
    from pathlib import Path

    from hpcds1mpi.launch import launchers
    from hpcds1mpi.records import telemetry

    exe = str(Path(sys.executable).parent / "hpcds1mpi")
    if not Path(exe).exists():
        exe = "hpcds1mpi"
    tokens = launchers.total_tokens(ranks, launcher=launcher)
    args = list(argv)
    previous = -1
    for launch in range(max_launches):
        rc = subprocess.run(tokens + [exe, "sweep", *args]).returncode
        if rc == 0:
            return 0
        if rc == 2 and launch == 0:
            return rc  # a user error, already printed by the sweep
        try:
            rows = len(telemetry.load(out).runs)
        except TelemetryError:
            rows = -1
        if rows <= previous:
            raise LaunchError(f"sweep launch {launch + 1} exited {rc} without recording a run; "
                              "stopping (see the messages above)")
        previous = rows
        if "--resume" not in args:
            args.append("--resume")
        sys.stderr.write(f"hpcds1mpi: launch {launch + 1} exited {rc}; {rows} runs recorded, "
                         "resuming\n")
    raise LaunchError(f"sweep not finished after {max_launches} launches")
