"""Tree regions: rows every tree of an ensemble sends down the same paths score alike.

:func:`split_thresholds` reads an XGBoost booster's split thresholds, :func:`merge_thresholds`
joins several members', and :func:`tree_regions` groups the rows of a design matrix that fall
between the same neighbouring thresholds of every feature, so one row per region is scored.
"""

from __future__ import annotations

import numpy as np

from .columns import factorize


def split_thresholds(booster) -> dict[int, np.ndarray]:
    """Every split threshold of an XGBoost booster, per feature index.

    Returns:
        feature index -> sorted unique float32 thresholds (XGBoost compares float32 values:
        ``x < threshold`` goes left).
    """
    import json

    model = json.loads(bytes(booster.save_raw("json")))
    found: dict[int, list] = {}
    for tree in model["learner"]["gradient_booster"]["model"]["trees"]:
        left = np.asarray(tree["left_children"])
        inner = left != -1
        features = np.asarray(tree["split_indices"])[inner]
        values = np.asarray(tree["split_conditions"], dtype=np.float32)[inner]
        for f, v in zip(features.tolist(), values):
            found.setdefault(int(f), []).append(v)
    return {f: np.unique(np.asarray(v, dtype=np.float32)) for f, v in found.items()}


def merge_thresholds(parts: list[dict[int, np.ndarray]]) -> dict[int, np.ndarray]:
    """Union of several models' thresholds, per feature."""
    out: dict[int, np.ndarray] = {}
    for part in parts:
        for f, thr in part.items():
            out[f] = np.union1d(out[f], thr) if f in out else thr
    return out


def tree_regions(Z: np.ndarray, thresholds: dict[int, np.ndarray]
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Group rows that every tree sends down the same paths.

    Two rows whose features fall between the same pair of neighbouring thresholds, for every
    feature any tree splits on, get the same prediction from every tree: each comparison
    ``x < t`` has the same answer. The rows of a System 1 grid differ in a few knobs, mostly
    outside the range the trees were trained on, so 10,000 candidates fall into a few hundred
    regions and scoring one row per region is exact and much cheaper.

    Args:
        Z: (n, f) design matrix.
        thresholds: feature index -> sorted float32 thresholds (:func:`merge_thresholds`).

    Returns:
        ``first`` (k,) one row index per region, ``inverse`` (n,) each row's region.
    """
    n = len(Z)
    key = np.zeros(n, dtype=np.int64)
    span = 1
    for f, thr in thresholds.items():
        x = Z[:, f].astype(np.float32)
        base = len(thr) + 2
        code = np.searchsorted(thr, x, side="right")
        code[np.isnan(x)] = base - 1  # missing values take the trees' default direction
        if span * base >= 2 ** 62:  # keep the mixed-radix key in int64
            key, uniques = factorize(key)
            key = key.astype(np.int64)
            span = len(uniques)
        key = key * base + code
        span *= base
    inverse, _ = factorize(key)
    # factorize numbers regions in order of first appearance: a region starts where the
    # running maximum of the codes grows.
    if n == 0:
        return np.zeros(0, dtype=np.int64), inverse
    new_region = np.empty(n, dtype=bool)
    new_region[0] = True
    new_region[1:] = inverse[1:] > np.maximum.accumulate(inverse)[:-1]
    return np.flatnonzero(new_region), inverse
