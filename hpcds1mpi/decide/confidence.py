"""System 1's confidence: the probability that its pick is within 5 % of the best.

The inputs are the ensemble's runtime spread at the pick and the margin to the runner-up; a
logistic model maps them to a probability. ``analysis/eval_system1.py`` fits it on held-out
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


@dataclass
class ConfidenceModel:
    """Logistic map from (log spread, margin / spread) to P(pick within 5 % of best)."""

    coef: tuple[float, float, float] = (0.0, -1.0, 0.5)  # intercept, log-spread, margin ratio
    calibrated: bool = False
    source: str = "uncalibrated default"

    @staticmethod
    def features(spread: np.ndarray, margin: np.ndarray) -> np.ndarray:
        """``(n, 2)`` features: log relative spread and margin in units of spread."""
        s = np.clip(np.asarray(spread, float), 1e-4, None)
        m = np.clip(np.asarray(margin, float), 0.0, 10.0)
        return np.column_stack([np.log(s), np.clip(m / s, 0.0, 20.0)])

    def predict(self, spread, margin) -> np.ndarray:
        """``(n,)`` probabilities for ``(n,)`` spreads and margins."""
        z = self.coef[0] + self.features(spread, margin) @ np.asarray(self.coef[1:])
        return 1.0 / (1.0 + np.exp(-z))

    @classmethod
    def load(cls, model_dir: str | Path | None) -> "ConfidenceModel":
        """The calibration stored next to a bundle, else the uncalibrated default."""
        if model_dir is None:
            return cls()
        path = Path(model_dir) / CALIBRATION_FILE
        try:
            data = json.loads(path.read_text())
            coef = tuple(float(c) for c in data["coef"])
            if len(coef) != 3 or not all(math.isfinite(c) for c in coef):
                return cls()
            return cls(coef=coef, calibrated=True, source=str(path))
        except (OSError, ValueError, KeyError, TypeError):
            return cls()

    def save(self, path: str | Path, **extra) -> None:
        """Write the coefficients (and ``extra`` evidence) as JSON."""
        from hpcds1mpi.atomic import write_text

        write_text(path, json.dumps({"coef": list(self.coef), **extra}, indent=2),
                   "confidence calibration")
