"""The configuration space: (nodes, ranks per node, threads per rank, device, precision)."""

from __future__ import annotations

import itertools
import numbers
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Callable, Iterable, Iterator, Sequence

from hpcds1mpi.errors import ConfigError, UnsupportedError

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

    from hpcds1mpi.cluster import Partition

DEVICES = ("cpu", "gpu")
PRECISIONS = ("fp64", "fp32", "bf16")

#: The fewest ok runs a model is trained on (records.training; a machine's calibration says it).
MIN_OK_RUNS = 4

# The one status vocabulary of a run (a sweep's measurement) or a job (an ingested log line).
OK = "ok"
#: Every status a run or job can end with. ``interrupted``: the run was cut short because the
#: sweep itself was stopped (killed, Ctrl-C, walltime), not by anything the configuration did;
#: ``--resume`` runs it again and no model learns from it.
STATUSES = ("ok", "failed", "timeout", "oom", "unsupported", "wrong", "crashed", "cancelled",
            "interrupted")
#: Ended badly because of the configuration or the program: what the failure model learns.
FAILURE_STATUSES = frozenset({"failed", "timeout", "oom", "crashed", "wrong"})
#: Cut short at a limit (the sweep's own ``--timeout``, a job's time limit): the run ran longer
#: than that, a lower bound on its runtime, not a failure of the configuration (s40 tester B12).
TIMEOUT = "timeout"
#: The failures the failure classifier and the measured failure evidence count: every failure
#: status but a :data:`TIMEOUT` (``decide.timed_out`` bounds the runtime with those instead).
FAILED_TO_RUN = FAILURE_STATUSES - {TIMEOUT}
#: Says nothing about how the configuration runs: never tried (``unsupported``: the kernel
#: declares it cannot), stopped by a person or the scheduler (``cancelled``), or cut short
#: with the sweep (``interrupted``).
UNINFORMATIVE_STATUSES = frozenset({"unsupported", "cancelled", "interrupted"})


@dataclass(frozen=True, order=True)
class Configuration:
    """One way to run a job.

    Attributes:
        nodes: number of nodes.
        ranks_per_node: MPI ranks on each node.
        threads: threads per rank (BLAS / torch / FFT workers).
        device: ``"cpu"`` or ``"gpu"``.
        precision: ``"fp64"``, ``"fp32"`` or ``"bf16"``.
    """

    nodes: int = 1
    ranks_per_node: int = 1
    threads: int = 1
    device: str = "cpu"
    precision: str = "fp64"

    def __post_init__(self) -> None:
        for name in ("nodes", "ranks_per_node", "threads"):
            value = getattr(self, name)
            # Any integer type (numpy's too: configurations built from an array or a pandas
            # column), stored as a Python int so the object hashes, compares and serialises as
            # one built from ints. A float is refused even when whole (2.0), as the API refuses
            # size=128.0: an integer column turns float when it holds a NaN, so rounding would
            # hide that.
            if type(value) is not int and (  # the common case first: spaces hold 10^6
                    not isinstance(value, numbers.Integral) or isinstance(value, bool)):
                raise ConfigError(f"{name} must be an int or a numpy integer, not "
                                  f"{type(value).__name__} ({value!r})"
                                  + ("; pass int(value)" if _whole_float(value) else ""))
            if value < 1:
                raise ConfigError(f"{name} must be at least 1, got {int(value)}")
            if type(value) is not int:
                object.__setattr__(self, name, int(value))
        if self.device not in DEVICES:
            raise ConfigError(f"device must be one of {', '.join(DEVICES)}, got {self.device!r}")
        if self.precision not in PRECISIONS:
            raise ConfigError(
                f"precision must be one of {', '.join(PRECISIONS)}, got {self.precision!r}"
            )

    @property
    def ranks(self) -> int:
        """Total MPI ranks."""
        return self.nodes * self.ranks_per_node

    def as_dict(self) -> dict:
        return asdict(self)

    def label(self) -> str:
        return (
            f"N{self.nodes}xR{self.ranks_per_node}xT{self.threads}"
            f"-{self.device}-{self.precision}"
        )


def _whole_float(value) -> bool:
    """Whether ``value`` is a float that holds a whole number (2.0, not 2.5 or NaN)."""
    return (isinstance(value, numbers.Real) and not isinstance(value, bool)
            and float(value).is_integer())


def check_fits(config: Configuration, partition: "Partition") -> None:
    """Raise :class:`ConfigError` when ``config`` cannot run on ``partition``."""
    if config.nodes > partition.max_nodes:
        raise ConfigError(
            f"{config.nodes} nodes asked but partition {partition.name!r} has at most "
            f"{partition.max_nodes}; lower --nodes"
        )
    cores = config.ranks_per_node * config.threads
    usable = partition.usable_cores_per_node
    if cores > usable:
        has = (f"partition {partition.name!r} has {usable}" if usable == partition.cores_per_node
               else f"this allocation holds {usable} of partition {partition.name!r}'s "
                    f"{partition.cores_per_node}")
        raise ConfigError(
            f"{config.ranks_per_node} rank{'s' if config.ranks_per_node > 1 else ''} x "
            f"{config.threads} thread{'s' if config.threads > 1 else ''} = {cores} cores per node, "
            f"but {has}; lower ranks per node or threads"
        )
    if config.device == "gpu":
        if partition.gpus_per_node < 1:
            raise ConfigError(
                f"GPU asked but partition {partition.name!r} has no GPUs; use --device cpu "
                "or a GPU partition"
            )
        if config.ranks_per_node > partition.gpus_per_node:
            raise ConfigError(
                f"{config.ranks_per_node} GPU ranks per node but partition {partition.name!r} "
                f"has {partition.gpus_per_node} GPUs per node; use one rank per GPU"
            )


def check_supported(config: Configuration, precisions: Sequence[str], devices: Sequence[str],
                    kernel: str) -> None:
    """Raise :class:`UnsupportedError` when a kernel declares it cannot run ``config``."""
    if config.precision not in precisions:
        raise UnsupportedError(
            f"kernel {kernel!r} does not support {config.precision}; "
            f"it supports {', '.join(precisions)}"
        )
    if config.device not in devices:
        raise UnsupportedError(f"kernel {kernel!r} cannot run on {config.device}")


def enumerate_configs(
    partition: "Partition | None",
    *,
    nodes: Iterable[int] | None = None,
    ranks_per_node: Iterable[int] | None = None,
    threads: Iterable[int] | None = None,
    devices: Iterable[str] | None = None,
    precisions: Iterable[str] | None = None,
    uses_threads: bool = True,
    accept: "Callable[[Configuration], bool] | None" = None,
) -> Iterator[Configuration]:
    """Yield every valid configuration of ``partition`` within the given ranges.

    The one enumerator of the configuration space: sweeps, ``cluster``, MOBO's candidate sets
    and System 2's space all come from here (:func:`configuration_grid` is its vectorised
    twin). Nesting order: nodes, ranks per node, threads, device, precision; integer ranges
    sorted, devices and precisions in the order given.

    Ranges left as None span the partition: nodes 1..max_nodes (powers of two and the max),
    ranks per node 1..cores, threads 1..cores, where cores are those a job may use (inside an
    allocation its share: ``Partition.usable_cores_per_node``). Invalid combinations are
    skipped. A kernel that cannot use threads (``uses_threads=False``) is only offered one
    thread per rank.
    ``partition=None`` checks nothing against hardware and then needs the integer ranges
    given; ``accept(config)`` may reject more (e.g. what a kernel cannot run).
    """
    if partition is None and None in (nodes, ranks_per_node, threads):
        raise ConfigError("without a partition, nodes, ranks per node and threads must be given")
    node_range = sorted(set(nodes)) if nodes is not None else powers_up_to(partition.max_nodes)
    rank_range = (
        sorted(set(ranks_per_node))
        if ranks_per_node is not None
        else list(range(1, partition.usable_cores_per_node + 1))
    )
    thread_range = (
        sorted(set(threads)) if threads is not None
        else list(range(1, partition.usable_cores_per_node + 1))
    )
    if not uses_threads:
        thread_range = [1]
    device_range = list(devices) if devices is not None else (
        ["cpu", "gpu"] if partition is not None and partition.gpus_per_node else ["cpu"]
    )
    precision_range = list(precisions) if precisions is not None else list(PRECISIONS)
    pairs = len(rank_range) * len(thread_range)
    if partition is not None:
        import numpy as np

        cores = partition.usable_cores_per_node
        pairs = int(np.searchsorted(np.asarray(thread_range), cores // np.asarray(rank_range),
                                    side="right").sum())  # the (ranks, threads) that fit
    check_space_size(pairs * len(node_range) * len(device_range) * len(precision_range),
                     partition)
    for n, r in itertools.product(node_range, rank_range):
        for t in thread_range:
            if partition is not None and r * t > partition.usable_cores_per_node:
                break  # sorted: no larger thread count fits either
            for d, p in itertools.product(device_range, precision_range):
                try:
                    config = Configuration(n, r, t, d, p)
                    if partition is not None:
                        check_fits(config, partition)
                except ConfigError:
                    continue
                if accept is None or accept(config):
                    yield config


#: Most configurations one space may hold: past it every user of the space (a sweep's plan,
#: System 1's grid, MOBO's candidates, ``cluster``) runs out of time or memory.
MAX_CONFIGURATIONS = 1_000_000


def check_space_size(count: int, partition: "Partition | None") -> None:
    """Refuse a space of more than :data:`MAX_CONFIGURATIONS` configurations in one line."""
    if count > MAX_CONFIGURATIONS:
        where = "the ranges" if partition is None else (
            f"partition {partition.name!r} ({partition.usable_cores_per_node} cores per node, "
            f"up to {partition.max_nodes} nodes)")
        raise ConfigError(f"{where} span {count:,} configurations, over "
                          f"{MAX_CONFIGURATIONS:,}; give fewer ranks per node and threads")


def powers_up_to(limit: int) -> list[int]:
    """1, 2, 4, ... below ``limit``, then ``limit`` itself (the node counts offered)."""
    values, v = [], 1
    while v < limit:
        values.append(v)
        v *= 2
    values.append(limit)
    return values


def configuration_grid(partition: "Partition", *, max_nodes: int | None = None,
                   devices: Iterable[str] | None = None,
                   precisions: Iterable[str] | None = None,
                   uses_threads: bool = True) -> "dict[str, np.ndarray]":
    """Every valid configuration of ``partition`` as parallel arrays (vectorised).

    The same space as :func:`enumerate_configs` with its default ranges (nodes: powers of two
    and the maximum; ranks per node x threads <= cores; a GPU rank needs its own GPU), built
    without a Python loop per configuration so 10,000 candidates cost well under a
    millisecond (System 1 scores whole grids; tests/test_config.py holds the two equal).

    Args:
        partition: where the job runs.
        max_nodes: the most nodes allowed (``--max-nodes``); None: the partition's maximum.
        devices: devices to consider; None: cpu, plus gpu when the partition has GPUs.
        precisions: precisions to consider; None: all.
        uses_threads: False offers one thread per rank only.

    Returns:
        dict of ``(n,)`` arrays: ``nodes``, ``ranks_per_node``, ``threads`` (int64),
        ``device_code`` (int8 index into :data:`~hpcds1mpi.config.DEVICES`) and
        ``precision_code`` (int8 index into :data:`~hpcds1mpi.config.PRECISIONS`).
    """
    import numpy as np

    limit = partition.max_nodes if max_nodes is None else min(max_nodes, partition.max_nodes)
    if limit < 1:
        raise ConfigError(f"--max-nodes must be at least 1, got {max_nodes!r}")
    node_values = np.array([n for n in powers_up_to(partition.max_nodes) if n <= limit]
                           or [limit], dtype=np.int64)
    cores = partition.usable_cores_per_node  # the allocation's share inside one
    # Every (ranks, threads) with ranks x threads <= cores, built per rank count (a cores x
    # cores mesh is 10^12 cells at 10^6 cores): ranks r takes threads 1..cores // r.
    r = np.arange(1, cores + 1, dtype=np.int64)
    per_rank = np.minimum(cores // r, cores if uses_threads else 1)
    device_list = list(devices) if devices is not None else (
        ["cpu", "gpu"] if partition.gpus_per_node else ["cpu"])
    precision_list = list(precisions) if precisions is not None else list(PRECISIONS)
    for p in precision_list:
        if p not in PRECISIONS:
            raise ConfigError(f"precision must be one of {', '.join(PRECISIONS)}, got {p!r}")
    check_space_size(int(per_rank.sum()) * len(node_values) * len(device_list)
                     * len(precision_list), partition)
    pairs_r = np.repeat(r, per_rank)
    starts = np.cumsum(per_rank) - per_rank
    pairs_t = np.arange(len(pairs_r), dtype=np.int64) - np.repeat(starts, per_rank) + 1
    parts = {k: [] for k in ("nodes", "ranks_per_node", "threads", "device_code",
                             "precision_code")}
    for device in device_list:
        if device == "gpu":
            if partition.gpus_per_node < 1:
                raise ConfigError(
                    f"GPU asked but partition {partition.name!r} has no GPUs; "
                    "use --device cpu or a GPU partition")
            ok = pairs_r <= partition.gpus_per_node
        elif device == "cpu":
            ok = np.ones_like(pairs_r, dtype=bool)
        else:
            raise ConfigError(f"device must be cpu or gpu, got {device!r}")
        dr, dt = pairs_r[ok], pairs_t[ok]
        per_node = len(dr)
        for precision in precision_list:
            parts["nodes"].append(np.repeat(node_values, per_node))
            parts["ranks_per_node"].append(np.tile(dr, len(node_values)))
            parts["threads"].append(np.tile(dt, len(node_values)))
            n = per_node * len(node_values)
            parts["device_code"].append(np.full(n, DEVICES.index(device), dtype=np.int8))
            parts["precision_code"].append(np.full(n, PRECISIONS.index(precision), dtype=np.int8))
    return {k: (np.concatenate(v) if v else np.empty(0)) for k, v in parts.items()}
