"""The compiled forest's walk (:mod:`.forest`) in numpy, for the few tree regions of a grid.

A System 1 grid of 11,595 candidates falls into ~40 tree regions (:mod:`.regions`): scoring
them is 15 ``libxgboost`` calls of ~40 rows, whose per-call cost (~0.1-0.3 ms: argument JSON,
ctypes, the library's own set-up) was most of ``Bundle.predict``; the compiled forest is kept
for 2,048 rows and more because importing numba costs a cold process ~0.3 s. Here every tree of
every member walks those rows at once, one level per step, in numpy: the same layout, the same
float32 comparisons and the same float32 sums in tree order as :func:`.forest._forest_rows`
(which is tested bit-equal to libxgboost), so the margins are the same bits.

:func:`predict_regions` is ``SurrogateModel.predict_frame_regions`` with that member scoring
(used by ``Bundle.predict`` for a grid); anything it does not cover goes to the model's own.
"""

from __future__ import annotations

import numpy as np

from .estimators import ConstantClassifier
from .forest import Forest
from .regions import tree_regions
from .targets import BASELINE_TARGETS
from .xgboost_scorer import XGBoostScorer

#: Scored rows from which the walk replaces libxgboost (below, a few calls cost as little);
#: from models.FOREST_MIN_ROWS on the model's own compiled forest scores them.
WALK_MIN_ROWS = 16
WALK_MAX_ROWS = 2047
#: Grids a model scores through libxgboost before its forest is laid out: the layout costs
#: ~0.25 s of Python (the shipped bundle's 300 trees), which a one-question process (a cold
#: ``recommend`` with a large cluster file) must not pay; a process asking again (the
#: service, the API, ``tune``, a benchmark) pays it once.
LAYOUT_AFTER_GRIDS = 1


def margins(forest: Forest, X32: np.ndarray) -> np.ndarray:
    """(n_members, n) float32 margins of the rows of a float32 matrix: every tree at once.

    Each member's margin is its base plus its trees' leaves added one tree at a time in
    float32, in tree order (a member without a j-th tree adds an exact 0.0).
    """
    n = len(X32)
    n_trees, width = forest.feature.shape
    inner = forest.leaf.shape[1] - 1
    # Flat indices (one-dimensional takes are cheaper than two-dimensional fancy indexing).
    tree_start = (np.arange(n_trees, dtype=np.intp) * width)[:, None]
    row_start = (np.arange(n, dtype=np.intp) * X32.shape[1])[None, :]
    feature, threshold = forest.feature.ravel(), forest.threshold.ravel()
    default_left, x_flat = forest.default_left.ravel(), np.ascontiguousarray(X32).ravel()
    pos = np.zeros((n_trees, n), dtype=np.intp)
    has_nan = bool(np.isnan(X32).any())
    for _ in range(forest.depth):
        node = tree_start + pos
        x = x_flat.take(row_start + feature.take(node))
        right = x >= threshold.take(node)
        if has_nan:  # a missing value takes the node's default direction
            right |= (x != x) & (default_left.take(node) == 0)
        pos = 2 * pos + 1 + right
    leaf_at = (np.arange(n_trees, dtype=np.intp) * forest.leaf.shape[1])[:, None] + pos - inner
    leaves = np.vstack([forest.leaf.ravel().take(leaf_at), np.zeros((1, n), np.float32)])
    order = _tree_order(forest)
    out = np.repeat(forest.base[:, None], n, axis=1).astype(np.float32)
    for j in range(order.shape[1]):
        out += leaves[order[:, j]]
    return out


def _tree_order(forest: Forest) -> np.ndarray:
    """(n_members, most trees) index of each member's j-th tree (the zero row when none)."""
    cached = getattr(forest, "_walk_order", None)
    if cached is None:
        zero = forest.feature.shape[0]
        counts = np.bincount(forest.owner, minlength=forest.n_members)
        cached = np.full((forest.n_members, max(int(counts.max(initial=0)), 1)), zero, np.intp)
        seen = np.zeros(forest.n_members, dtype=np.intp)
        for t, m in enumerate(forest.owner.tolist()):
            cached[m, seen[m]] = t
            seen[m] += 1
        forest._walk_order = cached
    return cached


def _layout(model, build: bool = True):
    """(forest of the model's XGBoost members, their job indices), laid out once per model;
    None when a member is neither an XGBoost scorer nor a constant, or the layout refuses, or
    it is not laid out yet and ``build`` is false."""
    if not hasattr(model, "_walk_forest"):
        if not build:
            return None
        jobs = [m for members in model.members_.values() for m in members]
        index = [i for i, m in enumerate(jobs) if isinstance(m, XGBoostScorer)]
        layout = None
        if index and all(isinstance(m, (XGBoostScorer, ConstantClassifier)) for m in jobs):
            try:
                layout = (Forest([jobs[i].json_model() for i in index]), index)
            except ValueError:  # a model the layout does not reproduce: libxgboost
                layout = None
        model._walk_forest = layout
    return model._walk_forest


def _varying(Z: np.ndarray, thresholds: dict) -> dict:
    """The thresholds of the features that vary over the rows of ``Z``: a column with one
    value (a grid's workload, size, hardware) puts every row in the same interval, so the
    regions are the same without it (a column with a NaN is kept: min and max are NaN)."""
    cols = np.fromiter(thresholds, dtype=np.intp, count=len(thresholds))
    if len(Z) == 0 or len(cols) == 0:
        return thresholds
    part = Z[:, cols]
    same = part.min(axis=0) == part.max(axis=0)
    return {f: thresholds[f] for f, keep in zip(cols.tolist(), (~same).tolist()) if keep}


def predict_regions(model, frame):
    """``model.predict_frame_regions(frame)`` (same return values), the members scored by
    :func:`margins` where the grid's regions are between :data:`WALK_MIN_ROWS` and
    :data:`WALK_MAX_ROWS` rows; otherwise the model's own path."""
    from .models import REGION_PROBE_ROWS, member_predictions

    if model.embedding_ is not None or not model.member_features or len(frame) <= 256:
        return model.predict_frame_regions(frame)
    thresholds = model._thresholds()
    grids = getattr(model, "_walk_grids", 0)
    model._walk_grids = grids + 1
    if thresholds is None or _layout(model, build=grids >= LAYOUT_AFTER_GRIDS) is None:
        return model.predict_frame_regions(frame)
    Z, base, levels = model.member_block(frame)
    thresholds = _varying(Z, thresholds)
    if len(Z) > 4 * REGION_PROBE_ROWS:  # the model's probe: mostly distinct rows, no grouping
        probe, _ = tree_regions(Z[:REGION_PROBE_ROWS], thresholds)
        if len(probe) > 0.5 * REGION_PROBE_ROWS:
            return model._predict_regions(Z, base, levels)
    first, inverse = tree_regions(Z, thresholds)
    if len(first) > 0.5 * len(Z) or not WALK_MIN_ROWS <= len(first) <= WALK_MAX_ROWS:
        return model._predict_regions(Z, base, levels)
    Z_score = Z[first]
    forest, index = _layout(model)
    values = forest.finish(margins(forest, np.ascontiguousarray(Z_score, dtype=np.float32)))
    jobs = [(target, m) for target, members in model.members_.items() for m in members]
    out = member_predictions(values, index, jobs, Z_score)
    preds, baseline = {}, {}
    for target in model.members_:
        preds[target] = np.vstack([v for (t, _), v in zip(jobs, out) if t == target])
        baseline[target] = base if (base is not None and target in BASELINE_TARGETS) else 0.0
        if target in model.levels_ and levels is not None:
            baseline[target] = baseline[target] + model.levels_[target].predict(*levels)
    return preds, inverse, baseline
