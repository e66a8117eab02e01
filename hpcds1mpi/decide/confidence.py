"""System 1's confidence: the probability that its pick is within 5 % of the best.

The inputs are the ensemble's runtime spread at the pick, the margin to the runner-up and,
where the bundle recorded it, the measured repeat noise of the workload's training runs (a
kernel whose repeats scatter by 100 % has an order no model learns from them, and whose
picks are often off: issue 20); a logistic model maps them to a probability. ``analysis/eval_system1.py`` fits it on held-out
picks and stores ``system1_calibration.json`` next to the bundle; without that file a fixed
heuristic is used and labelled ``uncalibrated``.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

#: Picks within this fraction of the best measured runtime count as "good" in calibration.
GOOD_PICK_TOLERANCE = 0.05
CALIBRATION_FILE = "system1_calibration.json"
#: The noise assumed where a bundle recorded none (the reference sweep's median, 0.16).
DEFAULT_NOISE = 0.16


@dataclass
class ConfidenceModel:
    """Logistic map from (log spread, margin / spread[, log noise]) to P(pick within 5 % of
    best); 3 coefficients (older calibrations) leave the noise out, 4 use it."""

    coef: tuple[float, ...] = (0.0, -1.0, 0.5)  # intercept, log-spread, margin ratio[, noise]
    calibrated: bool = False
    source: str = "uncalibrated default"

    @staticmethod
    def features(spread: np.ndarray, margin: np.ndarray, noise=None) -> np.ndarray:
        """``(n, 2)`` features: log relative spread and margin in units of spread; ``(n, 3)``
        with the log of the workload's measured noise (NaN: :data:`DEFAULT_NOISE`)."""
        s = np.clip(np.asarray(spread, float), 1e-4, None)
        m = np.clip(np.asarray(margin, float), 0.0, 10.0)
        cols = [np.log(s), np.clip(m / s, 0.0, 20.0)]
        if noise is not None:
            n = np.asarray(noise, float)
            n = np.where(np.isfinite(n), n, DEFAULT_NOISE)
            cols.append(np.log(np.clip(n, 1e-3, 100.0)))
        return np.column_stack(cols)

    def predict(self, spread, margin, noise=None) -> np.ndarray:
        """``(n,)`` probabilities for ``(n,)`` spreads, margins (and workload noises)."""
        uses_noise = len(self.coef) == 4
        if uses_noise and noise is None:
            noise = np.full(len(np.atleast_1d(spread)), np.nan)
        X = self.features(spread, margin, noise if uses_noise else None)
        z = self.coef[0] + X @ np.asarray(self.coef[1:])
        return 1.0 / (1.0 + np.exp(-z))

    @classmethod
    def load(cls, model_dir: str | Path | None) -> "ConfidenceModel":
        """The calibration stored next to a bundle, else the uncalibrated default.

        What a file held is kept while the file stays the same (its mtime, size, inode and
        ctime: ``learn`` may rewrite it), so ``serve``, asked many questions of one bundle,
        reads it once, not once a question; each call gets its own model.
        """
        if model_dir is None:
            return cls()
        path = Path(model_dir) / CALIBRATION_FILE
        try:
            st = path.stat()
        except OSError:
            return cls()
        key = (str(path), st.st_mtime_ns, st.st_size, st.st_ino, st.st_ctime_ns)
        kept = _LOADED.get(key)
        if kept is None:
            kept = _read(path)
            if len(_LOADED) >= _KEEP:  # bounded: a long-lived process sees few bundles
                _LOADED.clear()
            _LOADED[key] = kept
        return cls(coef=kept[0], calibrated=True, source=kept[1]) if kept[0] else cls()

    def save(self, path: str | Path, **extra) -> None:
        """Write the coefficients (and ``extra`` evidence) as JSON."""
        from hpcds1mpi.atomic import write_text

        write_text(path, json.dumps({"coef": list(self.coef), **extra}, indent=2),
                   "confidence calibration")


#: (path, mtime, size, inode, ctime) -> (coefficients or (), source) of files read.
_LOADED: dict[tuple, tuple] = {}
_KEEP = 64


def _read(path: Path) -> tuple:
    """(coefficients, source) in the calibration file, ``()`` for coefficients where it
    cannot be used (the uncalibrated default then)."""
    try:
        data = json.loads(path.read_text())
        coef = tuple(float(c) for c in data["coef"])
        if len(coef) not in (3, 4) or not all(math.isfinite(c) for c in coef):
            return (), ""
        return coef, str(path)
    except (OSError, ValueError, KeyError, TypeError):
        return (), ""
