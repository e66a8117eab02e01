"""What a bundle's manifest records about its training: the data's hash, the package versions,
the in-sample metrics (moved out of :mod:`.bundle`, which keeps them importable)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .models import SurrogateModel
from .targets import target_values

if TYPE_CHECKING:  # pragma: no cover - training only: loading a bundle imports no pandas
    import pandas as pd


def data_hash(frame: "pd.DataFrame") -> str:
    """SHA-256 of the training table's content (column order independent)."""
    import pandas as pd

    cols = sorted(str(c) for c in frame.columns)
    import hashlib  # training only: a bundle load does not need it

    h = hashlib.sha256("\x00".join(cols).encode())
    for col in cols:
        series = frame[col]
        try:
            hashed = pd.util.hash_pandas_object(series, index=False).to_numpy()
        except TypeError:  # unhashable cells (lists): hash their text
            hashed = pd.util.hash_pandas_object(series.astype(str), index=False).to_numpy()
        h.update(hashed.tobytes())
    return h.hexdigest()


def package_versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for name in ("hpcds1mpi", "numpy", "pandas", "scikit-learn", "lightgbm", "xgboost", "torch",
                 "pytorch-tabnet"):
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = "missing"
    return out


def _metrics(model: SurrogateModel, frame: "pd.DataFrame", Z: np.ndarray) -> dict:
    """In-sample fit of the ensemble median (held-out numbers: ``python -m hpcds1mpi.analysis.h1_eval``)."""
    preds = model.predict_design(Z)
    out = {}
    for target in model.targets_:
        y = target_values(frame, target)
        have = np.isfinite(y)
        if target == "failed":
            p = preds[target].mean(axis=0)[have]
            out[target] = {"n": int(have.sum()), "rate": float(y[have].mean()),
                           "brier_in_sample": float(np.mean((p - y[have]) ** 2))}
            continue
        truth = np.exp(y[have])
        guess = np.exp(np.median(preds[target], axis=0)[have])
        ss_res = float(np.sum((truth - guess) ** 2))
        ss_tot = float(np.sum((truth - truth.mean()) ** 2))
        out[target] = {"n": int(have.sum()),
                       "mape_in_sample": float(np.mean(np.abs(guess - truth) / truth)),
                       "r2_in_sample": 1.0 - ss_res / ss_tot if ss_tot > 0 else float("nan")}
    return out
