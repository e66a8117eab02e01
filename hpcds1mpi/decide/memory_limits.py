"""How much memory a configuration may need on a partition, learned from measured failures.

A partition's stated memory is not what a job can use (the OS, MPI buffers, a GPU's runtime
take their share), and the share differs per machine. The runs that ended ``oom`` in the
training data say where the real limit lies: :func:`learn_memory_limits` turns them into one
:class:`MemoryLimit` per partition, and :func:`memory_need_and_limit` puts each candidate's
predicted need beside the limit it is judged by (host memory per node, GPU memory per GPU).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Sequence

import numpy as np

from hpcds1mpi.config import OK
from hpcds1mpi.decide.trained_hardware import hardware_columns, trained_partitions

if TYPE_CHECKING:  # pragma: no cover
    from hpcds1mpi.cluster import Partition

#: Share of a partition's nominal memory usable when no measured failure teaches a limit.
NOMINAL_MEMORY_SHARE = 0.9


@dataclass
class MemoryLimit:
    """How much memory a configuration may need on one partition.

    Attributes:
        partition: partition name.
        node_mb: host memory per node a job may use, MB.
        gpu_mb: memory per GPU a GPU rank may use, MB (0 without GPUs).
        node_source / gpu_source: ``"measured"`` (from out-of-memory failures there) or
            ``"nominal"`` (a share of the partition's stated memory).
        nominal_node_mb / nominal_gpu_mb: the partition's stated memory, MB.
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
        """The limit without measured failures: a share of the stated memory."""
        node = float(partition.memory_gb) * 1000.0
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

    key = ("memory_limits", tuple((p.name, float(p.memory_gb), float(p.gpu_memory_gb))
                                  for p in partitions))
    learned = bundle_cache.memo(bundle, key, lambda: learn_limits(bundle, partitions))
    return {name: replace(limit) for name, limit in learned.items()}


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


def memory_need_and_limit(cols: dict, partitions: Sequence["Partition"],
                          limits: dict[str, MemoryLimit]) -> tuple[np.ndarray, np.ndarray]:
    """Each candidate's predicted memory need and the limit it must stay under.

    Host memory is judged per node (peak per rank x ranks per node), GPU memory per GPU.

    Args:
        cols: parallel ``(n,)`` arrays with ``device``, ``ranks_per_node``, ``peak_rss_mb``
            and ``partition``.
        partitions: the partitions the candidates are on.
        limits: partition name -> limit; a partition without one gets its nominal limit.

    Returns:
        ``(need, limit)``, two ``(n,)`` arrays in MB.
    """
    gpu = cols["device"] == "gpu"
    rpn = cols["ranks_per_node"].astype(float)
    rss = cols["peak_rss_mb"]
    need = np.where(gpu, rss, rss * rpn)
    names = cols["partition"]
    limit_node = np.zeros(len(rpn))
    limit_gpu = np.zeros(len(rpn))
    for part in partitions:
        lim = limits.get(part.name) or MemoryLimit.nominal(part)
        sel = names == part.name
        limit_node[sel], limit_gpu[sel] = lim.node_mb, lim.gpu_mb
    return need, np.where(gpu, limit_gpu, limit_node)
