"""The least energy a job can take: what its layout draws by the power model modelled energy
is made with.

System 1's energy is modelled (a surrogate trained on modelled or measured rows); one that
learned from few node counts can predict less for many nodes than those nodes draw. The floor
had been the nodes' idle draw alone, which put nbody on 4 nodes x 2 ranks at 24 W where the
telemetry's own model gives the 8 busy cores 80 W: the 4-node job read 3x cheaper than one
node, not 16 % dearer (s47 tester N1). So :func:`floor_energy` raises every predicted energy
to ``floor W x runtime``, the floor being the telemetry's modelled power, made by its one
formula (``measure.meters.modelled_watts``, docs/telemetry.md) with the same figures
(``Partition.power_figures``):

* every node's idle draw, its GPUs' idle draw included (a node's GPUs idle when the job
  leaves them unused): :func:`idle_watts`;
* plus each core the layout uses (ranks per node x threads, at most the node's cores, on
  each node) at its share of the node's dynamic range, ``(max - idle) / cores per node``,
  times the busy share of those cores: the least its workload's own ok runs showed
  (:func:`busy_share`; a program whose ranks wait on each other keeps its cores less busy
  than its layout, and the floor never rises above what its runs measured), 1 where no run
  says it.

``recommend`` says when its pick sits on that floor (:func:`floor_words`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

import numpy as np

from hpcds1mpi.measure.meters import modelled_watts, power_model

if TYPE_CHECKING:  # pragma: no cover
    from hpcds1mpi.cluster import Partition

#: Column: the floor's watts of each candidate (:func:`floor_watts`).
FLOOR_WATTS = "energy_floor_w"


def idle_watts(part: "Partition") -> float:
    """A node's idle draw, W: its own and its GPUs' (a node's GPUs idle when the job leaves them
    unused). The cluster file's ``idle_watts_node`` / ``idle_watts_gpu``, else the default
    figures modelled rows were computed with (``Partition.power_figures``)."""
    return float(modelled_watts(power_model(part), 1, 0, part.gpus_per_node))


def core_watts(part: "Partition") -> float:
    """What one busy core adds to its node's draw, W, as the telemetry's modelled power counts
    it (``PowerModel.core_watts``)."""
    return float(power_model(part).core_watts)


#: A layout's key: ranks per node x this + threads (no node holds this many threads).
_KEY = 1 << 20


def busy_share(bundle, workload: str, cols: dict, partitions: Sequence["Partition"]
               ) -> np.ndarray:
    """``(n,)`` the share of each candidate's used cores' dynamic range its workload's ok
    training runs drew at the least (energy / runtime, less the nodes' idle draw, over the
    used cores' range, with the candidate partition's figures), in [0, 1]: the least of the
    runs of its ranks per node and threads (threads keep their cores less busy than ranks:
    nbody's 1 rank x 2 threads drew 45 % of two cores, its ranks all of theirs), else of all
    its workload's runs, else 1 (no run says it: a stand-in bundle, no energy). Each
    partition's table read once per bundle and workload."""
    from hpcds1mpi.decide import bundle_cache

    key = (np.asarray(cols["ranks_per_node"], dtype=np.int64) * _KEY
           + np.asarray(cols["threads"], dtype=np.int64))
    out = np.ones(len(key))
    names = cols["partition"]
    for part in partitions:
        known, shares, least = bundle_cache.memo(
            bundle, ("busy_share", str(workload), repr(part)),
            lambda part=part: _measured_shares(bundle, workload, part))
        rows = slice(None) if len(partitions) == 1 else names == part.name
        if not len(known):
            out[rows] = least
            continue
        asked = key[rows]
        at = np.minimum(np.searchsorted(known, asked), len(known) - 1)
        out[rows] = np.where(known[at] == asked, shares[at], least)
    return out


def _measured_shares(bundle, workload: str, part: "Partition") -> tuple:
    """``(layout keys sorted, their least shares, the least of all or 1)`` of ``workload``'s
    ok training runs with ``part``'s figures (:func:`busy_share`)."""
    from hpcds1mpi.decide import bundle_cache

    none = (np.zeros(0, dtype=np.int64), np.zeros(0), 1.0)
    try:
        rows = bundle_cache.training_columns(bundle)
        mine = (np.asarray(rows["workload"]).astype(str) == str(workload)) \
            & (np.asarray(rows["status"]).astype(str) == "ok")
        energy, runtime, nodes, rpn, threads, cores = (
            np.asarray(rows[c], dtype=float)[mine] for c in (
                "energy_j", "runtime_s", "nodes", "ranks_per_node", "threads", "cores_per_node"))
    except (AttributeError, KeyError, TypeError, ValueError):
        return none
    model = power_model(part)
    used = np.minimum(rpn * threads, cores) * nodes * model.core_watts
    idle = modelled_watts(model, nodes, 0.0, part.gpus_per_node * nodes)
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.clip((energy / runtime - idle) / used, 0.0, 1.0)
    good = np.isfinite(share)
    if not good.any():
        return none
    keys = rpn[good].astype(np.int64) * _KEY + threads[good].astype(np.int64)
    known, which = np.unique(keys, return_inverse=True)
    least = np.ones(len(known))
    np.minimum.at(least, which, share[good])
    return known, least, float(share[good].min())


def floor_watts(cols: dict, partitions: Sequence["Partition"],
                share: np.ndarray | None = None) -> np.ndarray:
    """``(n,)`` each candidate's floor, W: the modelled power (``meters.modelled_watts``) of its
    nodes, their GPUs idle, and its used cores (ranks per node x threads, at most the node's
    cores) busy at its ``share`` (:func:`busy_share`; None: 0, the idle draw alone). A row of a
    partition not in ``partitions`` gets the first's figures."""
    names = cols["partition"]
    if not partitions:
        return np.zeros(len(names))
    nodes = np.asarray(cols["nodes"], dtype=float)
    asked = np.asarray(cols["ranks_per_node"], dtype=float) \
        * np.asarray(cols["threads"], dtype=float) if share is not None else None
    out = np.zeros(len(names))
    for i, part in enumerate(partitions):  # one partition (the common case): no comparison
        rows = slice(None) if i == 0 else names == part.name
        model, n = power_model(part), nodes[rows]
        busy = 0.0 if share is None else \
            np.minimum(asked[rows], model.cores_per_node) * share[rows] * n
        out[rows] = modelled_watts(model, n, busy, part.gpus_per_node * n)
    return out


def floor_energy(cols: dict, partitions: Sequence["Partition"],
                 watts: np.ndarray | None = None) -> None:
    """Never less energy than the floor: ``energy >= watts x runtime`` for the median and both
    bounds, in place on System 1's columns (``watts``: :func:`floor_watts`; None: the nodes'
    idle draw). An upper runtime end not known (a timed-out layout's ``inf``) leaves the
    model's energy end, held no lower than the floored median times as far above the median
    as it was: a median raised to the floor had met it there, a zero-width interval (s47
    review RX3)."""
    draw = floor_watts(cols, partitions) if watts is None else watts
    unknown = np.isinf(draw * cols["runtime_hi"])
    if unknown.any():
        with np.errstate(divide="ignore", invalid="ignore"):
            above = np.fmax(cols["energy_hi"] / cols["energy_j"], 1.0)  # NaN: 1
    for energy, runtime in (("energy_j", "runtime_s"), ("energy_lo", "runtime_lo"),
                            ("energy_hi", "runtime_hi")):
        least = draw * cols[runtime]
        if energy == "energy_hi" and unknown.any():
            least = np.where(unknown, cols["energy_j"] * above, least)
        cols[energy] = np.maximum(cols[energy], least)


def floor_words(part: "Partition", row: dict) -> str:
    """How candidate ``row``'s floor is made, in words ("1 node x 6 W idle + 2 busy cores x
    7 W x 17 % busy"), from its :data:`FLOOR_WATTS` and layout."""
    nodes = int(row["nodes"])
    text = f"{nodes} node{'s' if nodes > 1 else ''} x {idle_watts(part):.3g} W idle"
    busy = float(row.get(FLOOR_WATTS, 0.0)) - idle_watts(part) * nodes
    if busy > 1e-9 * max(idle_watts(part) * nodes, 1.0):
        cores = min(int(row["ranks_per_node"]) * int(row["threads"]), part.cores_per_node)
        share = busy / (cores * nodes * core_watts(part))
        text += (f" + {cores * nodes} busy core{'s' if cores * nodes > 1 else ''} x "
                 f"{core_watts(part):.3g} W" + (f" x {share:.0%} busy" if share < 0.995 else ""))
    return text
