"""Sweep plans: what to measure (a TOML file or flags) expanded into one :class:`RunSpec` per
configuration (docs/telemetry.md, "Sweep plans").

Every rank of an in-process sweep builds the same plan from the same input, so the plan is
pure: no MPI, no I/O besides reading the plan file.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field

from hpcds1mpi.config import DEVICES, PRECISIONS, Configuration, enumerate_configs
from hpcds1mpi.errors import ConfigError
from hpcds1mpi.schemas.sweep_defaults import KERNEL, lifted_cap_note
# The range grammar lives in .ranges; importers of parse_ints / parse_words from here still work.
from hpcds1mpi.measure.ranges import parse_ints, parse_words, refuse_empty_items  # noqa: F401

@dataclass(frozen=True)
class RunSpec:
    """One configuration of one workload at one size: a row of the runs table to be.

    Attributes:
        workload: kernel name (or an external program's label).
        size: the kernel's problem size.
        config: nodes, ranks per node, threads, device, precision.
        seed: input seed.
        extra: sorted ``(key, value)`` pairs of kernel options (an external program's command).
        corrupt: corrupt the result before the check (tests of the ``wrong`` status).
    """

    workload: str
    size: int
    config: Configuration
    seed: int = 0
    extra: tuple = ()
    corrupt: bool = False

    @property
    def run_id(self) -> str:
        """A stable 16-hex-digit key of this run within a sweep (resume and merge use it)."""
        c = self.config
        key = [self.workload, int(self.size), c.nodes, c.ranks_per_node, c.threads, c.device,
               c.precision, int(self.seed), [list(kv) for kv in self.extra]]
        return hashlib.sha1(json.dumps(key).encode()).hexdigest()[:16]


#: ``[sweep]`` settings that say how long to race, not what is measured.
RACE_SETTINGS = ("race_rounds", "race_within")


@dataclass
class SweepPlan:
    """What to measure and how (docs/telemetry.md, "Sweep plans").

    ``source`` is the plan dict it was built from; it is stored in the telemetry file and its
    hash is the ``sweep_id``.
    """

    runs: list[RunSpec]
    min_time: float = KERNEL.min_time
    min_repeats: int = KERNEL.min_repeats
    max_repeats: int = KERNEL.max_repeats
    warmup: int = KERNEL.warmup
    timeout: float = KERNEL.timeout
    check: bool = True
    snapshot_every: float = 30.0
    retry_crashed: bool = False
    max_attempts: int = 2
    #: Race runs (:mod:`hpcds1mpi.measure.race`) by run id, measured only while contenders.
    race_within: float = 0.05
    races: dict = field(default_factory=dict)
    source: dict = field(default_factory=dict)
    #: What ``valid_only`` left out of the plan, by reason with counts ("" when nothing; a
    #: note to print, s37 tester K5).
    left_out: str = ""
    #: That a ``min_time`` given without ``max_repeats`` lifted the default repeat cap ("" when
    #: not; a note to print, s38 tester B6).
    cap_note: str = ""
    #: Whether ``timeout`` was asked for (``--timeout``, a plan file's), not the default: only
    #: then does a resume measure again the runs that timed out below it (s49 review F4).
    timeout_given: bool = False

    @property
    def max_ranks(self) -> int:
        """The most ranks any run needs."""
        return max((r.config.ranks for r in self.runs), default=1)

    @property
    def sweep_id(self) -> str:
        """The hash of the plan that names its sweep in the runs table. Race settings are left
        out: a plan that only adds race rounds continues the sweep of its rounds."""
        source = json.loads(json.dumps(self.source, default=str))
        if isinstance(source.get("sweep"), dict):
            for key in RACE_SETTINGS:
                source["sweep"].pop(key, None)
        text = json.dumps(source, sort_keys=True, default=str)
        return hashlib.sha1(text.encode()).hexdigest()[:12]

    def layouts(self) -> list[tuple[int, int]]:
        """The distinct (nodes, ranks per node) pairs of the runs, sorted."""
        return sorted({(r.config.nodes, r.config.ranks_per_node) for r in self.runs})


def load_plan_file(path: str) -> dict:
    """Read a TOML sweep plan into the dict :func:`build_plan` takes.

    Raises:
        ConfigError: the file is missing, not TOML, has unknown keys, a value of the wrong
            type or out of range (schema: :mod:`hpcds1mpi.schemas.plan`) or no ``[[kernel]]``.
    """
    from hpcds1mpi.schemas.plan import check_plan_file
    from hpcds1mpi.tomlfile import read_toml

    doc = read_toml(path, "plan file", ConfigError)
    check_plan_file(doc, path)
    return {"sweep": dict(doc.get("sweep", {})), "kernel": [dict(k) for k in doc["kernel"]]}


def plan_doc(plan_file: str | None, kernels: list[str], ranges: dict, settings: dict) -> dict:
    """The plan dict of a sweep given as a plan file or as kernel names, with flags on top.

    Args:
        plan_file: a TOML plan (:func:`load_plan_file`), or None to sweep ``kernels``.
        kernels: kernel names, items may be comma-separated (``["stencil,gemm"]``).
        ranges: ``sizes``, ``nodes``, ``ranks_per_node``, ``threads``, ``devices``,
            ``precisions`` given as flags (None: not given); a given one replaces the plan's
            range for every kernel.
        settings: ``[sweep]`` settings given as flags (``min_time``, ``timeout``, ...; None:
            not given); they replace the plan's.

    Returns:
        The dict :func:`build_plan` takes.
    """
    given = {key: value for key, value in ranges.items() if value is not None}
    if plan_file:
        doc = load_plan_file(plan_file)
        for key, value in given.items():
            doc["sweep"][key] = value
            for entry in doc["kernel"]:
                entry.pop(key, None)
    else:
        names = [n.strip() for item in kernels for n in item.split(",") if n.strip()]
        if not names:  # "--kernel '   '" or "--kernel ,": not "sweep nothing, exit 0"
            raise ConfigError("--kernel names no kernel; give e.g. --kernel stencil,gemm")
        for item in kernels:
            refuse_empty_items(item, "--kernel")
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:  # not build_plan's "the plan lists a configuration twice": no plan file
            raise ConfigError(f"--kernel names {', '.join(twice)} twice; give each kernel once")
        doc = {"sweep": given, "kernel": [{"name": n} for n in names]}
    doc["sweep"].update({key: value for key, value in settings.items() if value is not None})
    return doc


def build_plan(doc: dict, partition) -> SweepPlan:
    """Expand a plan dict (``{"sweep": {...}, "kernel": [{...}, ...]}``) into runs.

    Ranges given explicitly are taken as given (a combination a kernel cannot run is still a row,
    with status ``unsupported``); ``valid_only = true`` keeps only configurations that fit the
    partition (cores, GPUs) and that the kernel declares it supports. Defaults: sizes = the
    kernel's ``default_sizes``, precisions = the kernel's declared ones, devices = those of the
    kernel the partition has, nodes = 1, ranks per node and threads = 1..cores per node.

    Args:
        doc: the plan dict (from :func:`load_plan_file` or built from flags).
        partition: the :class:`~hpcds1mpi.cluster.Partition` swept on.

    Returns:
        The :class:`SweepPlan`, runs in plan order (kernel, size, round, configuration).

    Raises:
        ConfigError: a bad range or setting, or a plan that lists a configuration twice.
        UnknownKernelError: a kernel name that is not registered.
    """
    from hpcds1mpi import kernels as registry
    from hpcds1mpi.measure.race import race_checks
    from hpcds1mpi.schemas.plan import kernel_entry, sweep_settings

    sweep = doc.get("sweep", {})
    settings = sweep_settings(sweep)
    valid_only, seed = settings.valid_only, settings.seed
    runs: list[RunSpec] = []
    races: dict = {}
    from hpcds1mpi.measure.left_out import LeftOut

    plan_left_out = LeftOut()  # what valid_only left out of the whole plan, said in a note
    for entry in doc["kernel"]:
        checked = kernel_entry(entry, "sweep plan, [[kernel]]")
        name = checked.name
        kernel = registry.get(name)  # UnknownKernelError lists the known ones
        kernel.check_extra(checked.extra)
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
        extra, corrupt = checked.extra, checked.corrupt
        before = len(runs)
        left_out = LeftOut()

        def supported(c: Configuration, kernel=kernel) -> bool:
            return (c.precision in kernel.precisions and c.device in kernel.devices
                    and (c.threads == 1 or kernel.uses_threads))

        configs = list(enumerate_configs(
            partition if valid_only else None, nodes=nodes, ranks_per_node=rpn, threads=threads,
            devices=devices, precisions=precisions, accept=supported if valid_only else None))
        _check_plan_size(before, name, len(sizes), len(configs),
                         settings.rounds + settings.race_rounds)
        for size in sizes:
            fitting = _fitting_memory(kernel, size, configs, partition, valid_only, left_out)
            # Rounds interleave: every configuration of the problem once, then again, so a
            # drift of the machine's speed lands on all of a round's configurations alike.
            problem = [[RunSpec(name, size, config, seed + round_, tuple(sorted(extra.items())),
                                corrupt) for config in fitting]
                       for round_ in range(settings.rounds + settings.race_rounds)]
            runs.extend(spec for round_specs in problem for spec in round_specs)
            if settings.race_rounds:
                races.update(race_checks(problem, settings.rounds))
        if len(runs) == before:  # why, by reason with counts: memory too (s33 tester A10)
            if valid_only:
                left_out.layouts(partition, nodes, rpn, threads, devices, precisions,
                                 supported)
            raise ConfigError(f"kernel {name!r}: the ranges leave no configuration to run"
                              + (f": left out {left_out.line()}; give sizes and ranges that "
                                 "fit the partition" if left_out.line() else
                                 " (check nodes/ranks/threads against the partition)"))
        if valid_only:  # a plan left partly empty says what it lost too (s37 tester K5)
            plan_left_out.absorb(left_out)  # memory, per size
            plan_left_out.layouts(partition, nodes, rpn, threads, devices, precisions,
                                  supported, weight=len(sizes))
    plan = SweepPlan(
        runs=runs,
        min_time=settings.min_time, min_repeats=settings.min_repeats,
        max_repeats=settings.max_repeats, warmup=settings.warmup, timeout=settings.timeout,
        check=settings.check, snapshot_every=settings.snapshot_every,
        retry_crashed=settings.retry_crashed, max_attempts=settings.max_attempts,
        race_within=settings.race_within, races=races, source=doc,
        left_out=plan_left_out.note(len(runs) // max(1, settings.rounds
                                                       + settings.race_rounds)),
        cap_note=lifted_cap_note(settings.min_time, KERNEL.max_repeats,
                                 "max_repeats (--max-repeats)") if settings.lifted_cap else "",
    )
    seen: set[str] = set()
    for spec in runs:
        if spec.run_id in seen:
            raise ConfigError(f"the plan lists kernel {spec.workload!r} size {spec.size} "
                              f"{spec.config.label()} twice; remove the duplicate [[kernel]] "
                              "entry")
        seen.add(spec.run_id)
    return plan


def _fitting_memory(kernel, size: int, configs: list, partition, valid_only: bool,
                    left_out=None) -> list:
    """``configs`` whose runs of ``kernel`` at ``size`` fit the node's memory
    (:mod:`.plan_memory`): with ``valid_only`` the others are left out (counted in
    ``left_out``, a :class:`~hpcds1mpi.measure.left_out.LeftOut`); without it the first
    is refused, since running it would take the machine's memory until killed.

    Raises:
        ConfigError: a configuration that does not fit, without ``valid_only``.
    """
    from hpcds1mpi.measure.plan_memory import memory_problem

    kept = []
    for config in configs:
        problem = memory_problem(kernel, size, config, partition)
        if problem is None:
            kept.append(config)
        elif not valid_only:
            raise ConfigError(f"{problem}; drop size {size}, or add --valid-only "
                              "(valid_only = true in a plan) to skip what does not fit")
        elif left_out is not None:
            left_out.add("memory", problem.split(":")[0])
    return kept


def _check_plan_size(runs_so_far: int, kernel: str, sizes: int, configs: int,
                     rounds: int) -> None:
    """Refuse a plan of more than ``config.MAX_CONFIGURATIONS`` runs before its runs are made
    (10^6 sizes x 3 configurations cost 39 s and 1 GB only to be listed).

    Raises:
        ConfigError: one line with the count and how to split the plan.
    """
    from hpcds1mpi.config import MAX_CONFIGURATIONS

    total = runs_so_far + sizes * configs * rounds
    if total > MAX_CONFIGURATIONS:
        raise ConfigError(
            f"the sweep plan makes {total:,} runs (kernel {kernel!r}: {sizes:,} size(s) x "
            f"{configs:,} configuration(s) x {rounds} round(s)), over {MAX_CONFIGURATIONS:,}; "
            "split it into plan files of fewer sizes or configurations, sweep each (or give "
            "each to `hpcds1mpi campaign emit`, which spreads one plan over batch jobs) and "
            "join the telemetry with `hpcds1mpi telemetry merge`")


def format_duration(seconds: float) -> str:
    """``seconds`` in the unit a reader takes in at a glance: ``"45 s"``, ``"12.5 min"``,
    ``"3.2 h"``, ``"4.5 days"``; ``"more than a year"`` past one (a rough estimate of a plan
    too big to run, not a duration to print to 30 digits)."""
    from hpcds1mpi.schemas.limits import MAX_SECONDS

    if not seconds >= 0:  # NaN too
        return "unknown"
    if seconds > MAX_SECONDS:
        return "more than a year"
    for unit, size, limit in (("s", 1, 120), ("min", 60, 120 * 60), ("h", 3600, 48 * 3600)):
        if seconds < limit:
            value = seconds / size
            return f"{value:.0f} {unit}" if unit == "s" else f"{value:.1f} {unit}"
    return f"{seconds / 86400:.1f} days"


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


#: ``[sweep]`` settings that change what a run's measurement means (a run id leaves them out,
#: so a resumed sweep keeps the runs recorded under the old ones).
MEASUREMENT_SETTINGS = ("min_time", "min_repeats", "max_repeats", "warmup", "check")


def measurement_changes(recorded_plan: str | None, plan: SweepPlan) -> list[str]:
    """The measurement settings of ``plan`` that differ from those of ``recorded_plan`` (the
    JSON plan a telemetry file was written with), as ``"min_repeats 5 -> 1"``; empty when the
    same or when the recorded plan cannot be read."""
    from hpcds1mpi.errors import HpcdsError
    from hpcds1mpi.schemas.plan import sweep_settings

    try:
        old = json.loads(recorded_plan) if recorded_plan else None
        sweep = old.get("sweep", {}) if isinstance(old, dict) else None
        before = sweep_settings(sweep) if isinstance(sweep, dict) else None
    except (ValueError, HpcdsError):
        return []
    if before is None:
        return []
    return [f"{key} {getattr(before, key)} -> {getattr(plan, key)}"
            for key in MEASUREMENT_SETTINGS if getattr(before, key) != getattr(plan, key)]
