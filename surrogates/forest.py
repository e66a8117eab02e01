"""Compiled scoring of XGBoost ensembles: every member's trees as complete binary trees.

Scoring 10,000 job-table rows through ``libxgboost`` costs ~3 us per member and row here
(15 members of 20 depth-6 trees: ~15 ns per tree; its traversal branches on every level and
each member is a separate call). This module lays out every tree of every member as a complete
binary tree of one depth (a leaf above that depth becomes dummy splits whose leaves repeat its
value), so a row walks each tree with ``pos = 2 pos + 1 + (x >= threshold)``: no branch to
mispredict, blocks of rows walking each tree together, all members in one compiled pass.

The arithmetic is XGBoost's: inputs cast to float32, ``x < split`` goes left, a missing value
(NaN) follows the node's default direction, leaf values summed in float32 in tree order onto
the member's base margin (tested bit-equal to ``libxgboost``'s margins), then
:func:`logistic` for ``binary:logistic`` members.
"""

from __future__ import annotations

import json

import numpy as np

from hpcds1mpi.runtime import jit

#: Deeper trees stay with ``libxgboost``: a complete tree doubles in size with every level.
MAX_DEPTH = 10
#: Objectives this scorer reproduces (margin -> prediction).
OBJECTIVES = ("reg:squarederror", "binary:logistic")


class Forest:
    """All trees of several XGBoost members, laid out for :func:`_forest_rows`.

    Args:
        models: the members' JSON models (``Booster.save_raw("json")`` parsed).

    Raises:
        ValueError: a model this layout does not reproduce (another objective, categorical
            splits, vector leaves, trees deeper than :data:`MAX_DEPTH`).
    """

    def __init__(self, models: list[dict]):
        trees, owners, bases, logistic = [], [], [], []
        for index, model in enumerate(models):
            learner = model["learner"]
            objective = learner["objective"]["name"]
            params = learner["learner_model_param"]
            if objective not in OBJECTIVES or int(params.get("num_target", "1")) != 1 \
                    or int(params.get("num_class", "0")) > 1:
                raise ValueError(f"objective {objective} is not reproduced here")
            base = float(json.loads(params["base_score"])[0]
                         if params["base_score"].startswith("[") else params["base_score"])
            if objective == "binary:logistic":  # libxgboost: -logf(1.0f / p - 1.0f)
                odds = np.float32(1.0) / np.float32(base) - np.float32(1.0)
                base = float(np.float32(-np.log(np.float64(odds))))
            bases.append(base)
            logistic.append(objective == "binary:logistic")
            booster = learner["gradient_booster"]
            if booster.get("name", "gbtree") != "gbtree":
                raise ValueError(f"booster {booster.get('name')} is not reproduced here")
            for tree in booster["model"]["trees"]:
                if any(tree.get("split_type", [])) or \
                        int(tree["tree_param"].get("size_leaf_vector", "1")) > 1:
                    raise ValueError("categorical splits or vector leaves are not reproduced")
                trees.append(tree)
                owners.append(index)
        self.depth = max((_depth(t) for t in trees), default=0)
        if self.depth > MAX_DEPTH:
            raise ValueError(f"trees of depth {self.depth} > {MAX_DEPTH}")
        inner, leaves = 2 ** self.depth - 1, 2 ** self.depth
        self.feature = np.zeros((len(trees), max(inner, 1)), dtype=np.int32)
        self.threshold = np.full((len(trees), max(inner, 1)), np.inf, dtype=np.float32)
        self.default_left = np.ones((len(trees), max(inner, 1)), dtype=np.uint8)
        self.leaf = np.zeros((len(trees), leaves), dtype=np.float32)
        for t, tree in enumerate(trees):
            self._lay_out(t, tree)
        self.owner = np.asarray(owners, dtype=np.int32)
        #: the base margin of each member (float32, as XGBoost adds it).
        self.base = np.asarray(bases, dtype=np.float32)
        self.logistic = np.asarray(logistic, dtype=bool)

    def _lay_out(self, t: int, tree: dict) -> None:
        left, right = tree["left_children"], tree["right_children"]
        feature, split = tree["split_indices"], tree["split_conditions"]
        default_left = tree["default_left"]
        inner = 2 ** self.depth - 1
        stack = [(0, 0, 0)]  # (node, position in the complete tree, level)
        while stack:
            node, pos, level = stack.pop()
            if left[node] == -1:  # a leaf: every complete-tree leaf below pos gets its value
                first = pos
                for _ in range(self.depth - level):
                    first = 2 * first + 1
                width = 2 ** (self.depth - level)
                self.leaf[t, first - inner:first - inner + width] = np.float32(split[node])
                continue
            self.feature[t, pos] = feature[node]
            self.threshold[t, pos] = np.float32(split[node])
            self.default_left[t, pos] = 1 if default_left[node] else 0
            stack.append((left[node], 2 * pos + 1, level + 1))
            stack.append((right[node], 2 * pos + 2, level + 1))

    @property
    def n_members(self) -> int:
        return len(self.base)

    def margins(self, X32: np.ndarray, start: int = 0, stop: int | None = None) -> np.ndarray:
        """(n_members, stop - start) margins of rows [start, stop) of a float32 matrix."""
        stop = len(X32) if stop is None else stop
        out = np.empty((self.n_members, stop - start), dtype=np.float32)
        fn = jit.compiled(_forest_rows)
        args = (X32, out, start, stop, self.feature, self.threshold, self.default_left,
                self.leaf, self.owner, self.base, self.depth,
                bool(np.isnan(X32[start:stop]).any()))
        (fn or _forest_rows)(*args)
        return out

    def finish(self, margins: np.ndarray) -> np.ndarray:
        """Predictions (float64) from margins: P(class 1) for logistic members."""
        out = margins.astype(np.float64)
        if self.logistic.any():
            out[self.logistic] = logistic(margins[self.logistic])
        return out


def available() -> bool:
    """The compiled walk can run here (numba installed, ``HPCDS1MPI_NO_JIT`` not set)."""
    return jit.compiled(_forest_rows) is not None


def logistic(margin: np.ndarray) -> np.ndarray:
    """P(class 1) of float32 margins, in float32 arithmetic like libxgboost (float64 out).

    libxgboost's own transform uses a vectorised expf that differs from numpy's in the last
    bit now and then, so every path here (this forest and :class:`XGBoostScorer`, which asks
    libxgboost for margins) applies this one function: the paths agree bit for bit.
    """
    m = np.asarray(margin, dtype=np.float32)
    return (np.float32(1.0) / (np.float32(1.0) + np.exp(-m))).astype(np.float64)


def _depth(tree: dict) -> int:
    left, right = tree["left_children"], tree["right_children"]
    deepest, stack = 0, [(0, 0)]
    while stack:
        node, level = stack.pop()
        if left[node] == -1:
            deepest = max(deepest, level)
        else:
            stack.append((left[node], level + 1))
            stack.append((right[node], level + 1))
    return deepest


#: Rows walked through one tree together: independent walks overlap in the CPU (a walk alone
#: is a chain of dependent loads). Measured on 10,000 job-table rows, 300 trees: one row
#: through every tree 77 ms, blocks of 64 rows 39 ms, of 256 rows 23 ms (one thread).
ROW_BLOCK = 256


def _forest_rows(X, out, r0, r1, feature, threshold, default_left, leaf, owner, base, depth,
                 has_nan):  # pragma: no cover - runs compiled
    """Margins of rows [r0, r1) of X (float32) into ``out`` (members, r1 - r0), summed in
    tree order onto each member's base margin (float32, as XGBoost sums). ``has_nan``: some
    value in those rows is missing (else the default directions are never looked at)."""
    inner = leaf.shape[1] - 1
    pos = np.empty(ROW_BLOCK, np.int64)
    for b0 in range(r0, r1, ROW_BLOCK):
        nb = min(b0 + ROW_BLOCK, r1) - b0
        for m in range(base.shape[0]):
            for i in range(nb):
                out[m, b0 - r0 + i] = base[m]
        for t in range(feature.shape[0]):
            for i in range(nb):
                pos[i] = 0
            for _ in range(depth):
                if has_nan:
                    for i in range(nb):
                        p = pos[i]
                        x = X[b0 + i, feature[t, p]]
                        # x < split: left; NaN: the node's default direction. Bitwise, not
                        # `or`: a branch here is mispredicted half the time (measured 2x slower)
                        right = (x >= threshold[t, p]) | ((x != x) & (default_left[t, p] == 0))
                        pos[i] = 2 * p + 1 + np.int64(right)
                else:
                    for i in range(nb):
                        p = pos[i]
                        pos[i] = 2 * p + 1 + np.int64(X[b0 + i, feature[t, p]] >= threshold[t, p])
            o = owner[t]
            for i in range(nb):
                out[o, b0 - r0 + i] += leaf[t, pos[i] - inner]
