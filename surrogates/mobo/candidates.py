"""The finite design space of one problem, and its encoding as GP inputs.

Candidates come from the one configuration enumerator (:func:`hpcds1mpi.config.enumerate_configs`
over :func:`~hpcds1mpi.config.powers_up_to`), limited to what the kernel declares
(:func:`hpcds1mpi.kernels.support`). Inputs are encoded as log2(nodes), log2(ranks per node),
log2(threads) (integers on their natural multiplicative scale), device as a 0/1 flag and
precision one-hot, each column min-max scaled over the candidate set so the GP sees [0, 1]^d.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

import numpy as np

from hpcds1mpi.errors import ConfigError

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from hpcds1mpi.cluster import Partition
    from hpcds1mpi.surrogates.measured_offer import Offer

SPACES = ("nodes", "full")
NODE_COUNTS = ("pow2", "all")


def build_candidates(partition: "Partition", workload: str, size: int, space: str = "full", *,
                     nodes: Sequence[int] | None = None, ranks_per_node: Sequence[int] | None = None,
                     threads: Sequence[int] | None = None, devices: Sequence[str] | None = None,
                     precisions: Sequence[str] | None = None, fixed: dict | None = None,
                     offer: "Offer | None" = None) -> "pd.DataFrame":
    """Enumerate the candidate configurations of one problem.

    Args:
        partition: where the job runs.
        workload, size: the problem (copied into every row).
        space: ``"nodes"`` (the paper's: node count alone, 1..max_nodes, the rest fixed by
            ``fixed``: default one rank per core, one thread, CPU, fp64) or ``"full"`` (nodes,
            ranks per node, threads, device, precision; ranges default to powers of two).
        nodes, ranks_per_node, threads, devices, precisions: ranges for the full space.
        fixed: the configuration held fixed in the nodes-only space.
        offer: a program's measured levels
            (:func:`hpcds1mpi.surrogates.measured_offer.measured_offer`): only those are
            candidates; None: what the kernel declares.

    Returns:
        DataFrame with columns nodes, ranks_per_node, threads, device, precision, workload, size.

    Raises:
        ConfigError: unknown space, or no valid configuration.
    """
    import pandas as pd

    from hpcds1mpi.config import Configuration, check_fits, enumerate_configs, powers_up_to

    if space not in SPACES:
        raise ConfigError(f"unknown space {space!r}; choose from {', '.join(SPACES)}")
    if space == "nodes":
        base = {"ranks_per_node": partition.cores_per_node, "threads": 1, "device": "cpu",
                "precision": "fp64", **_measured_base(offer, partition), **(fixed or {})}
        node_list = [int(n) for n in (nodes or range(1, partition.max_nodes + 1))]
        layout = dict(ranks_per_node=[int(base["ranks_per_node"])], threads=[int(base["threads"])],
                      devices=[str(base["device"])], precisions=[str(base["precision"])])
        # The largest count with the fixed layout fails with the reason when anything does.
        check_fits(Configuration(max(node_list), *(v[0] for v in layout.values())), partition)
        configs = list(enumerate_configs(partition, nodes=node_list, **layout))
    else:
        from hpcds1mpi.kernels import offered

        # Only what the workload can run: a kernel's declared precisions, devices and threads.
        uses_threads, declared_precisions, declared_devices = offered(workload, partition)
        if offer is not None:  # a program: only the levels it was measured with
            uses_threads, declared_precisions = offer.uses_threads, offer.precisions
            declared_devices = [d for d in declared_devices if d in (offer.devices or ())]
        devices = declared_devices if devices is None else devices
        pow2 = powers_up_to(partition.cores_per_node)
        threads = threads or pow2
        ranks_per_node = ranks_per_node or pow2
        if offer is not None:
            threads = [t for t in threads if t in (offer.threads or [1])] or [1]
            if offer.max_ranks_per_node:
                ranks_per_node = [r for r in ranks_per_node if r <= offer.max_ranks_per_node]
        configs = list(enumerate_configs(
            partition, nodes=nodes, ranks_per_node=ranks_per_node, threads=threads,
            devices=devices, precisions=precisions or declared_precisions,
            uses_threads=uses_threads,
        ))
    if not configs:
        raise ConfigError(f"no valid configuration on partition {partition.name!r}")
    frame = pd.DataFrame([c.as_dict() for c in configs])
    frame["workload"] = workload
    frame["size"] = int(size)
    return frame


def _measured_base(offer, partition) -> dict:
    """The nodes space's fixed layout within a program's measured levels (none: no change)."""
    if offer is None or offer.levels is None:
        return {}
    lv = offer.levels
    rpn = min(partition.cores_per_node, offer.max_ranks_per_node or partition.cores_per_node)
    return {"ranks_per_node": rpn, "threads": 1 if 1 in (offer.threads or [1]) else
            min(offer.threads), "device": "cpu" if "cpu" in lv.devices or not lv.devices
            else lv.devices[0], "precision": "fp64" if "fp64" in lv.precisions or not
            lv.precisions else lv.precisions[0]}


def node_counts(partition: "Partition", which: str = "pow2") -> list[int] | None:
    """Node counts of the full space: ``"pow2"`` (powers of two and the maximum; None, the
    :func:`build_candidates` default) or ``"all"`` (every count 1..max_nodes, as a scheduler
    accepts; the space grows ~max_nodes / log2(max_nodes) times)."""
    if which == "pow2":
        return None
    if which == "all":
        return list(range(1, partition.max_nodes + 1))
    raise ConfigError(f"unknown node counts {which!r}; choose from {', '.join(NODE_COUNTS)}")


def encode(candidates: "pd.DataFrame") -> np.ndarray:
    """Numeric GP inputs in [0, 1]^d for a candidate set.

    Columns that do not vary over the set are dropped (they carry no information).

    Returns:
        ``(n, d)`` float64 array.
    """
    cols = [
        np.log2(candidates["nodes"].to_numpy(float)),
        np.log2(candidates["ranks_per_node"].to_numpy(float)),
        np.log2(candidates["threads"].to_numpy(float)),
        (candidates["device"] == "gpu").to_numpy(float),
    ]
    cols += [(candidates["precision"] == p).to_numpy(float) for p in ("fp64", "fp32", "bf16")]
    X = np.stack(cols, axis=1)
    lo, hi = X.min(axis=0), X.max(axis=0)
    varies = hi > lo
    X = (X[:, varies] - lo[varies]) / (hi[varies] - lo[varies])
    if X.shape[1] == 0:
        X = np.zeros((len(candidates), 1))
    return X
