"""How much memory a configuration may need on a partition, learned from measured failures.

A partition's stated memory is not what a job can use (the OS, MPI buffers, a GPU's runtime
take their share), and the share differs per machine. The runs that ended ``oom`` in the
training data say where the real limit lies: :func:`learn_memory_limits` turns them into one
:class:`MemoryLimit` per partition, and :func:`memory_need_and_limit` puts each candidate's
predicted need beside the limit it is judged by (host memory per node, GPU memory per GPU).

The learned need (the surrogate's ``peak_rss_mb``) does not extrapolate: beyond the measured
sizes it stays near the largest measured peak. A kernel declares its working set per rank
(``Kernel.work(size, ranks).memory_bytes``), so there its need is never below that
(:func:`declared_need_mb`); a user's program declares none: above its sizes its need is never
below its peak grown as measured (:mod:`~hpcds1mpi.decide.memory_growth`, s46 tester J7).

Every figure here is MiB, the unit of the learned ``peak_rss_mb`` (docs/telemetry.md); a
partition's GB is 1000 of them, as Slurm's RealMemory is read into it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache
from typing import TYPE_CHECKING, Sequence

import numpy as np

from hpcds1mpi.config import OK
from hpcds1mpi.decide.trained_hardware import hardware_columns, trained_names, trained_partitions

if TYPE_CHECKING:  # pragma: no cover
    from hpcds1mpi.cluster import Partition

#: Share of a partition's nominal memory usable when no measured failure teaches a limit.
NOMINAL_MEMORY_SHARE = 0.9


@dataclass
class MemoryLimit:
    """How much memory a configuration may need on one partition.

    Attributes:
        partition: partition name.
        node_mb: host memory per node a job may use, MiB.
        gpu_mb: memory per GPU a GPU rank may use, MiB (0 without GPUs).
        node_source / gpu_source: ``"measured"`` (from out-of-memory failures there) or
            ``"nominal"`` (a share of the partition's stated memory).
        nominal_node_mb / nominal_gpu_mb: the partition's stated memory, MiB.
        failures: measured out-of-memory runs the limits were learned from.
    """

    partition: str
    node_mb: float
    gpu_mb: float
    node_source: str = "nominal"
    gpu_source: str = "nominal"
    nominal_node_mb: float = 0.0
    nominal_gpu_mb: float = 0.0
    failures: int = 0

    @classmethod
    def nominal(cls, partition: "Partition") -> "MemoryLimit":
        """The limit without measured failures: a share of the stated memory (inside an
        allocation, of its share of a node)."""
        node = float(partition.usable_memory_gb) * 1000.0
        gpu = float(partition.gpu_memory_gb) * 1000.0
        return cls(partition.name, NOMINAL_MEMORY_SHARE * node, NOMINAL_MEMORY_SHARE * gpu,
                   nominal_node_mb=node, nominal_gpu_mb=gpu)

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def learn_memory_limits(bundle, partitions: Sequence["Partition"]) -> dict[str, MemoryLimit]:
    """Per-partition memory limits learned from measured out-of-memory failures, learned once
    per bundle object and set of partitions (:mod:`~hpcds1mpi.decide.bundle_cache`; each
    call gets its own copies). See :func:`learn_limits`."""
    from hpcds1mpi.decide import bundle_cache

    key = ("memory_limits", tuple((p.name, float(p.usable_memory_gb), float(p.gpu_memory_gb))
                                  for p in partitions))
    learned = bundle_cache.memo(bundle, key, lambda: learn_limits(bundle, partitions))
    return {name: replace(limit) for name, limit in learned.items()}


def trained_limits(bundle, partitions: Sequence["Partition"]) -> dict[str, MemoryLimit]:
    """:func:`learn_memory_limits`, a partition predicted under a trained partition's name
    (``system1.model_table``) limited by that partition's measured failures."""
    renamed = trained_names(bundle, partitions)
    if not renamed:
        return learn_memory_limits(bundle, partitions)
    limits = {}
    for part in partitions:  # one by one: two partitions may share a trained name
        name = renamed.get(part.name, part.name)
        learned = learn_memory_limits(bundle, [replace(part, name=name)])[name]
        limits[part.name] = replace(learned, partition=part.name)
    return limits


def learn_limits(bundle, partitions: Sequence["Partition"]) -> dict[str, MemoryLimit]:
    """Per-partition memory limits learned from measured out-of-memory failures.

    For each partition the training data holds runs that ended ``oom``. The memory such a run
    needed is the surrogate's peak-memory prediction for it (the same quantity candidates are
    judged by; the measured peak of a killed run is only a lower bound). The limit is the
    smallest need among those failures, but never below the largest need of a run that
    succeeded there (noise must not forbid what was measured to work), and never above the
    nominal memory. Host memory is judged per node (peak per rank x ranks per node); GPU runs
    per GPU (one rank per GPU). Without failures the limit is a share of the nominal memory.

    Args:
        bundle: the model bundle (``training_frame``, ``predict``, ``partitions``).
        partitions: partitions to learn limits for (matched by name).

    Returns:
        partition name -> :class:`MemoryLimit`.
    """
    from hpcds1mpi.decide import bundle_cache

    from hpcds1mpi.surrogates.columns import for_model

    frame = bundle_cache.training_columns(bundle)  # plain arrays: no pandas
    limits: dict[str, MemoryLimit] = {}
    needed = {"status", "partition", "peak_rss_mb", "ranks_per_node", "device"}
    usable = frame is not None and needed.issubset(frame.columns)
    oom_need = None
    if usable:
        frame = frame[np.isin(frame["partition"], [p.name for p in partitions])]
        frame = frame[_not_real_oom(frame, partitions)]  # s46 G1, H1: a kill -9 is no limit
        oom = frame[frame["status"] == "oom"]
        if len(oom):
            pred = bundle.predict(for_model(bundle, hardware_columns(
                oom, trained_partitions(bundle))))
            oom_need = np.asarray(pred["peak_rss_mb"], dtype=float)
            measured = np.asarray(oom["peak_rss_mb"], dtype=float)
            # A killed run's measured peak is a floor of what it needed.
            oom_need = np.fmax(oom_need, np.nan_to_num(measured, nan=0.0))
    for part in partitions:
        limit = MemoryLimit.nominal(part)
        if usable and oom_need is not None:
            _learn(limit, frame, oom_need)
        limits[part.name] = limit
    return limits


def _not_real_oom(frame, partitions: Sequence["Partition"]) -> np.ndarray:
    """``(n,)`` True for the rows of ``frame`` to learn from: all but the ``oom`` rows an older
    hpcds1mpi gave a bare SIGKILL, with no out-of-memory word and a peak far under the node's
    memory (:func:`~hpcds1mpi.measure.oom_evidence.real_oom`): such a row had taught a node of
    a few hundred MB (s46 testers G1, H1)."""
    from hpcds1mpi.measure.oom_evidence import real_oom

    status = np.asarray(frame["status"])
    keep = np.ones(len(status), dtype=bool)
    if "error" not in frame.columns:
        return keep
    nominal = {p.name: float(p.usable_memory_gb) * 1000.0 for p in partitions}
    errors, names = np.asarray(frame["error"]), np.asarray(frame["partition"])
    node_peak = np.asarray(frame["peak_rss_mb"], dtype=float) * np.asarray(
        frame["ranks_per_node"], dtype=float)
    for i in np.flatnonzero(status == "oom"):
        keep[i] = real_oom(str(errors[i]), float(node_peak[i]), nominal.get(names[i], 0.0))
    return keep


def _learn(limit: MemoryLimit, frame, oom_need: np.ndarray) -> None:
    """Tighten ``limit`` (in place) by the out-of-memory runs of its partition.

    Args:
        limit: the nominal limit of one partition.
        frame: the training rows of the partitions being judged.
        oom_need: ``(n_oom,)`` the memory each ``oom`` row of ``frame`` needed, per rank.
    """
    here = np.asarray(frame["partition"] == limit.partition)
    failed = frame[frame["status"] == "oom"]
    for kind in ("cpu", "gpu"):
        per_node = kind == "cpu"
        ok_rows = frame[here & np.asarray(frame["device"] == kind)
                        & np.asarray(frame["status"] == OK)]
        ok_need = np.asarray(ok_rows["peak_rss_mb"], dtype=float) * (
            np.asarray(ok_rows["ranks_per_node"], dtype=float) if per_node else 1.0)
        ok_max = float(np.nanmax(ok_need)) if np.isfinite(ok_need).any() else 0.0
        oom_mask = np.asarray(failed["partition"] == limit.partition) \
            & np.asarray(failed["device"] == kind)
        if not oom_mask.any():
            continue
        rpn = np.asarray(failed["ranks_per_node"], dtype=float)[oom_mask]
        need = oom_need[oom_mask] * (rpn if per_node else 1.0)
        learned = max(float(np.nanmin(need)), ok_max)
        if per_node:
            limit.node_mb = min(learned, limit.nominal_node_mb)
            limit.node_source = "measured"
        else:
            limit.gpu_mb = min(learned, limit.nominal_gpu_mb) if limit.nominal_gpu_mb else learned
            limit.gpu_source = "measured"
        limit.failures += int(oom_mask.sum())


#: Bytes per value of each precision over fp64's: kernels count their working set at fp64.
_PRECISION_SHARE = {"fp64": 1.0, "fp32": 0.5, "bf16": 0.25}


def declared_need_mb(workload: str, size: int, ranks: np.ndarray,
                     precision: np.ndarray | None = None, measured_sizes=None
                     ) -> np.ndarray | None:
    """The memory per rank, MiB, a kernel's own model says ``size`` needs on each job's total
    rank count: ``(n,)`` for ``ranks`` ``(n,)`` (NaN where the model cannot say); None for a
    workload that is no kernel (it declares no memory model), and for a size within
    ``measured_sizes`` (the workload's ``(smallest, largest)`` measured size; None: never
    measured), where the learned need was measured and is not extrapolated.

    Kernels count their values at 8 bytes (``WorkModel.memory_bytes``); a ``precision`` of
    narrower values scales that down (fp32 by half, bf16 by a quarter): a floor of the need,
    never above what the kernel declares."""
    from hpcds1mpi.kernels import declaring

    if measured_sizes is not None and size <= float(measured_sizes[1]):
        return None
    try:
        kernel = declaring(workload)  # an option deck's arrays are its kernel's (s41 D5)
    except Exception:  # noqa: BLE001 - a broken plugin declares nothing
        return None
    if kernel is None:
        return None
    unique, where = _distinct(np.asarray(ranks, dtype=np.int64))  # a grid has few of them
    per_rank = _declared_mb(kernel, int(size), tuple(unique.tolist()))
    if per_rank is None:
        return None
    need = per_rank[where]
    if precision is not None:
        for name, share in _PRECISION_SHARE.items():
            if share != 1.0:
                need = np.where(precision == name, need * share, need)
    return need


def _distinct(ranks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(ranks, return_inverse=True)`` for positive counts; by a table of seen
    counts where they are small (a tenth of the time: System 1 is latency-tuned)."""
    top = int(ranks.max()) if len(ranks) else 0
    if top > 16 * len(ranks) + 4096 or int(ranks.min(initial=1)) < 0:
        unique = np.unique(ranks)
        return unique, np.searchsorted(unique, ranks)
    seen = np.zeros(top + 1, dtype=bool)
    seen[ranks] = True
    return np.flatnonzero(seen), (np.cumsum(seen) - 1)[ranks]


@lru_cache(maxsize=256)
def _declared_mb(workload: str, size: int, ranks: tuple) -> np.ndarray | None:
    """:func:`declared_need_mb` for distinct rank counts, kept (a service asks again)."""
    from hpcds1mpi.kernels import get

    try:
        kernel = get(workload)
    except Exception:  # noqa: BLE001
        return None
    out = np.full(len(ranks), np.nan)
    for i, r in enumerate(ranks):
        try:
            # MiB, the learned peak's unit, which fmax compares it with (s40 D1: was 1e6)
            out[i] = float(kernel.work(size, max(int(r), 1)).memory_bytes) / 2 ** 20
        except Exception:  # noqa: BLE001 - a size the model cannot place: learned need only
            pass
    out.flags.writeable = False
    return out


def memory_need_and_limit(cols: dict, partitions: Sequence["Partition"],
                          limits: dict[str, MemoryLimit],
                          declared_mb: np.ndarray | None = None
                          ) -> tuple[np.ndarray, np.ndarray]:
    """Each candidate's predicted memory need and the limit it must stay under.

    Host memory is judged per node (need per rank x ranks per node), GPU memory per GPU. The
    need per rank is the learned peak, or the kernel's declared working set where that is
    larger.

    Args:
        cols: parallel ``(n,)`` arrays with ``device``, ``ranks_per_node``, ``peak_rss_mb``
            and ``partition``.
        partitions: the partitions the candidates are on.
        limits: partition name -> limit; a partition without one gets its nominal limit.
        declared_mb: ``(n,)`` the kernel's declared memory per rank, MiB
            (:func:`declared_need_mb`); None for a workload without a memory model.

    Returns:
        ``(need, limit)``, two ``(n,)`` arrays in MiB.
    """
    gpu = cols["device"] == "gpu"
    rpn = cols["ranks_per_node"].astype(float)
    rss = cols["peak_rss_mb"]
    if declared_mb is not None:  # fmax: a NaN on either side leaves the other
        rss = np.fmax(rss, declared_mb)
    need = np.where(gpu, rss, rss * rpn)
    names = cols["partition"]
    limit_node = np.zeros(len(rpn))
    limit_gpu = np.zeros(len(rpn))
    for part in partitions:
        lim = limits.get(part.name) or MemoryLimit.nominal(part)
        sel = names == part.name
        limit_node[sel], limit_gpu[sel] = lim.node_mb, lim.gpu_mb
    return need, np.where(gpu, limit_gpu, limit_node)
