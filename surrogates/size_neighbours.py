"""Correcting predicted runtimes by what was measured at the neighbouring sizes (issue 20).

A surrogate's error at a size it was not trained on is much like its error at a measured
size it did not see: the configuration it over-rates at 2,048 it mostly over-rates at 1,024
and 4,096 too. So the bundle keeps, for every measured configuration, its *out-of-fold*
residual (the measured log runtime minus the log runtime a model trained without that size
predicted; :func:`out_of_fold_log_runtime`), and a question at size ``s`` between two measured
sizes of the same workload and partition gets each configuration's residual interpolated in
log size between them, times a weight, added to the prediction. At a measured size it is that
size's residual; outside the measured range, or for a configuration not measured at either
neighbour, nothing is added (the model alone: an extrapolation has no neighbour to borrow from).

With weight 1 and a model that knew nothing, this is the neighbour-size oracle of
``analysis/system1_baselines.py``; with weight 0 it is the model. The weight is chosen by
leave-size-out cross-validation on training sizes only (``ranking_cv``). Runtime and energy
(whose training values are modelled from the runtime) are corrected by the same factor.
"""

from __future__ import annotations

import numpy as np

from hpcds1mpi.config import DEVICES, OK, PRECISIONS

#: The weights cross-validation chooses from, smallest first (ties keep the smaller).
WEIGHTS = (0.0, 0.25, 0.5, 0.75, 1.0)
_TEXT_CODES = {"device": DEVICES, "precision": PRECISIONS}


def _code(nodes, ranks_per_node, threads, device_index, precision_index):
    """The one formula of a configuration's code, for Python ints or int64 arrays alike."""
    return (((nodes * 4096 + ranks_per_node) * 1024 + threads) * 8 + device_index) * 8 \
        + precision_index


def config_codes(table) -> np.ndarray:
    """``(n,)`` int64 code of each row's configuration (nodes, ranks per node, threads,
    device, precision): equal codes, equal configurations. A text value that is not a known
    device or precision gets a code no measured row has."""
    nodes, rpn, threads = (np.asarray(table[c], dtype=np.int64)
                           for c in ("nodes", "ranks_per_node", "threads"))
    index = {}
    for col, names in _TEXT_CODES.items():
        values = np.asarray(table[col]).astype(str)
        idx = np.full(len(values), len(names), dtype=np.int64)
        for i, name in enumerate(names):
            idx[values == name] = i
        index[col] = idx
    return _code(nodes, rpn, threads, index["device"], index["precision"])


def config_code(nodes, ranks_per_node, threads, device, precision) -> int:
    """:func:`config_codes` of one configuration, without arrays (System 1's pick)."""
    index = {}
    for col, value in (("device", device), ("precision", precision)):
        names, value = _TEXT_CODES[col], str(value)
        index[col] = names.index(value) if value in names else len(names)
    return _code(int(nodes), int(ranks_per_node), int(threads), index["device"],
                 index["precision"])


def out_of_fold_log_runtime(frame, train) -> np.ndarray:
    """``(n,)`` each ok row's log runtime predicted by a bundle trained without its size
    (NaN for other rows). Leave one size out, the k-th size of every workload in fold k: the
    residual is then the error of a model that lacked only that size, as the full model lacks
    only the size a question asks about (every third size out gave larger, less telling
    residuals: a CV geomean 1-4 points lower on the issue-20 reference).

    Args:
        frame: the training rows (a runs table).
        train: ``train(rows)`` -> a bundle, trained as the caller's (without this correction).
    """
    from .features import INPUT_COLUMNS

    out = np.full(len(frame), np.nan)
    workloads = frame["workload"].astype(str).to_numpy()
    sizes = frame["size"].to_numpy(float)
    fold = np.zeros(len(frame), dtype=int)
    for w in np.unique(workloads):
        mine = workloads == w
        order = {s: k for k, s in enumerate(np.unique(sizes[mine]))}
        fold[mine] = [order[s] for s in sizes[mine]]
    ok = (frame["status"].astype(str) == OK).to_numpy()
    for k in range(int(fold.max()) + 1 if len(fold) else 0):
        held = fold == k
        if not (held & ok).any() or held.all():
            continue
        bundle = train(frame[~held].reset_index(drop=True))
        rows = frame[held & ok].reset_index(drop=True)
        pred = bundle.predict(rows[list(INPUT_COLUMNS)])
        out[held & ok] = np.log(np.asarray(pred["runtime_s"], dtype=float))
    return out


class SizeNeighbours:
    """Measured configurations' out-of-fold residuals, per (workload, partition) and size.

    Attributes:
        weight: the share of the interpolated residual added to a prediction's log runtime.
        groups: (workload, partition) -> (sorted log sizes ``(m,)``, sorted keys ``(k,)``,
            residuals ``(k,)``); a key is ``size index * 2**44 + configuration code``.
    """

    def __init__(self, weight: float, groups: dict):
        self.weight = float(weight)
        self.groups = groups

    @classmethod
    def trained(cls, frame, train, weight: float) -> "SizeNeighbours":
        """Fitted on ``frame`` with residuals from ``train`` (see
        :func:`out_of_fold_log_runtime`)."""
        return cls.fit(frame, out_of_fold_log_runtime(frame, train), weight)

    @classmethod
    def fit(cls, frame, oof_log_runtime: np.ndarray, weight: float) -> "SizeNeighbours":
        """From the training rows and :func:`out_of_fold_log_runtime`'s answer for them."""
        measured = np.log(np.clip(frame["runtime_s"].to_numpy(float), 1e-12, None))
        resid = measured - np.asarray(oof_log_runtime, dtype=float)
        ok = np.isfinite(resid)
        rows = frame[ok].reset_index(drop=True)
        resid = resid[ok]
        codes = config_codes(rows)
        groups = {}
        keys = zip(rows["workload"].astype(str), rows["partition"].astype(str))
        by_group: dict = {}
        for i, key in enumerate(keys):
            by_group.setdefault(key, []).append(i)
        for key, idx in by_group.items():
            idx = np.asarray(idx)
            log_sizes = np.log(rows["size"].to_numpy(float)[idx])
            levels = np.unique(log_sizes)
            k = np.searchsorted(levels, log_sizes).astype(np.int64) << 44 | codes[idx]
            order = np.argsort(k, kind="stable")
            # a configuration measured twice at one size (two files): the mean residual
            k, first = np.unique(k[order], return_index=True)
            sums = np.add.reduceat(resid[idx][order], first)
            counts = np.diff(np.append(first, len(order)))
            groups[key] = (levels, k, sums / counts)
        return cls(weight, groups)

    def log_correction(self, table) -> np.ndarray:
        """``(n,)`` what to add to each row's predicted log runtime (0 where nothing
        measured brackets it)."""
        n = len(table)
        out = np.zeros(n)
        if self.weight == 0.0 or not n or not self.groups:
            return out
        workloads = np.asarray(table["workload"]).astype(str)
        partitions = np.asarray(table["partition"]).astype(str)
        known = {w for w, _ in self.groups}
        present = [w for w in np.unique(workloads) if w in known]
        if not present:
            return out
        codes = config_codes(table)
        log_sizes = np.log(np.asarray(table["size"], dtype=float))
        for w in present:
            for p in np.unique(partitions[workloads == w]):
                group = self.groups.get((w, p))
                if group is None:
                    continue
                rows = np.flatnonzero((workloads == w) & (partitions == p))
                out[rows] = _interpolate(group, log_sizes[rows], codes[rows])
        return self.weight * out

    def to_arrays(self) -> dict[str, np.ndarray]:
        """The correction as plain arrays (``size_neighbours.npz``: no pickled objects)."""
        names = list(self.groups)
        pieces = [self.groups[k] for k in names]
        return {"weight": np.array(self.weight),
                "workload": np.array([w for w, _ in names], dtype=str),
                "partition": np.array([p for _, p in names], dtype=str),
                "level_counts": np.array([len(g[0]) for g in pieces], dtype=np.int64),
                "key_counts": np.array([len(g[1]) for g in pieces], dtype=np.int64),
                "levels": np.concatenate([g[0] for g in pieces]) if pieces else np.zeros(0),
                "keys": np.concatenate([g[1] for g in pieces]) if pieces else
                np.zeros(0, np.int64),
                "residuals": np.concatenate([g[2] for g in pieces]) if pieces else np.zeros(0)}

    @classmethod
    def from_arrays(cls, arrays) -> "SizeNeighbours":
        """Back from :meth:`to_arrays`."""
        level_at = np.cumsum(np.concatenate([[0], arrays["level_counts"]]))
        key_at = np.cumsum(np.concatenate([[0], arrays["key_counts"]]))
        groups = {}
        for i, (w, p) in enumerate(zip(arrays["workload"].tolist(),
                                       arrays["partition"].tolist())):
            groups[(w, p)] = (arrays["levels"][level_at[i]:level_at[i + 1]],
                              arrays["keys"][key_at[i]:key_at[i + 1]],
                              arrays["residuals"][key_at[i]:key_at[i + 1]])
        return cls(float(arrays["weight"]), groups)

    def summary(self) -> dict:
        """What the manifest records: the weight and how much was measured."""
        return {"weight": self.weight, "problems": int(sum(len(g[0]) for g in self.groups.values())),
                "configurations": int(sum(len(g[1]) for g in self.groups.values()))}


def correct_by_neighbours(model, table, out: dict) -> None:
    """Scale ``out``'s runtime and energy columns (``Bundle.predict``'s answer for ``table``)
    by the correction ``model`` kept, if it kept one (bundles from before it did not)."""
    neighbours = getattr(model, "size_neighbours_", None)
    if neighbours is None or not neighbours.weight:
        return
    factor = np.exp(neighbours.log_correction(table))
    for col in ("runtime_s", "runtime_lo", "runtime_hi", "energy_j", "energy_lo", "energy_hi"):
        out[col] = out[col] * factor


def _interpolate(group, log_sizes: np.ndarray, codes: np.ndarray) -> np.ndarray:
    levels, keys, resid = group
    hi = np.searchsorted(levels, log_sizes)  # first measured size >= the question's
    exact = (hi < len(levels)) & np.isclose(levels[np.minimum(hi, len(levels) - 1)], log_sizes)
    lo = np.where(exact, hi, hi - 1)
    inside = exact | ((hi > 0) & (hi < len(levels)))
    lo_c, hi_c = np.clip(lo, 0, len(levels) - 1), np.clip(hi, 0, len(levels) - 1)
    span = levels[hi_c] - levels[lo_c]
    t = np.where(span > 0, (log_sizes - levels[lo_c]) / np.where(span > 0, span, 1.0), 0.0)
    r_lo, has_lo = _lookup(keys, resid, lo_c.astype(np.int64) << 44 | codes)
    r_hi, has_hi = _lookup(keys, resid, hi_c.astype(np.int64) << 44 | codes)
    both = has_lo & has_hi
    value = np.where(both, (1 - t) * r_lo + t * r_hi, np.where(has_lo, r_lo, r_hi))
    return np.where(inside & (has_lo | has_hi), value, 0.0)


def _lookup(keys: np.ndarray, values: np.ndarray, wanted: np.ndarray):
    at = np.clip(np.searchsorted(keys, wanted), 0, len(keys) - 1)
    found = keys[at] == wanted
    return np.where(found, values[at], 0.0), found
