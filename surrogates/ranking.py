"""System 1's ranking recipe: runtime members that learn the order within a problem.

System 1 picks among one problem's configurations, so what its members must get right is the
*order* of a problem's configurations, not the level of one problem against another. Trained on
absolute log runtimes, a small ensemble (5 members x 20 trees) spends most of its splits on the
size-to-size and kernel-to-kernel differences (a factor of 1,000 between problems) and little on
the 2-4x between configurations of one problem (issue 20: 93.7 % of best on 18-configuration
problems, below a LightGBM ranker's 96.5 %).

*Centred* targets take each problem's level out before the members see it (a pointwise ranking
loss whose unit stays log runtime, so the members still predict a runtime and their spread is
still a spread of runtimes):

* each problem's ``(workload, size)`` mean of the (baseline-relative) log target over its runs
  is subtracted, and the members regress the rest from the configuration knobs;
* :class:`ProblemLevels` stores those means per workload against log size and puts them back
  at prediction: piecewise linear in log size between the measured sizes, flat beyond the ends,
  the median of every problem's for a workload it never saw. It is one number per problem, so
  it never changes the order within a problem, only the runtime printed beside it.

Centring needs problems with several configurations: a table where most problems have one or
two rows (a job log) would leave the members nothing to learn, so :func:`centred_targets`
applies it only to sweep-like data (:data:`MIN_ROWS_PER_PROBLEM`).
"""

from __future__ import annotations

import numpy as np

#: Targets centred per problem by default (energy is modelled from the runtime here and is
#: ranked by the ``energy``/``edp`` objectives the same way).
CENTRED_TARGETS: tuple[str, ...] = ("runtime_s", "energy_j")
#: Centring applies when the median problem has at least this many rows with the target.
MIN_ROWS_PER_PROBLEM = 4
#: The features a problem's level is read from (in the feature spec's names).
LEVEL_FEATURES = ("workload_code", "log_size")


def centred_targets(requested, groups: np.ndarray, targets: dict[str, np.ndarray]
                    ) -> list[str]:
    """Which of ``requested`` targets to centre: those whose median problem has enough rows.

    Args:
        requested: target names asked for (``"auto"`` means :data:`CENTRED_TARGETS`).
        groups: (n,) problem id of every row.
        targets: target -> (n,) values (NaN where not measured).
    """
    names = CENTRED_TARGETS if requested == "auto" else tuple(requested or ())
    out = []
    for t in names:
        y = targets.get(t)
        if y is None:
            continue
        have = np.isfinite(y)
        if not have.any():
            continue
        counts = np.bincount(groups[have])
        counts = counts[counts > 0]
        if np.median(counts) >= MIN_ROWS_PER_PROBLEM:
            out.append(t)
    return out


def problem_means(y: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """(n,) the mean of ``y`` over each row's problem (finite values only; NaN where none)."""
    have = np.isfinite(y)
    k = int(groups.max()) + 1 if len(groups) else 0
    sums = np.bincount(groups[have], weights=y[have], minlength=k)
    counts = np.bincount(groups[have], minlength=k)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = sums / counts
    return means[groups]


def near_best_weights(y: np.ndarray, groups: np.ndarray, focus: float,
                      floor: float = 0.05) -> np.ndarray:
    """(n,) row weights exp(-focus x (y - the problem's smallest y)), at least ``floor``.

    ``y`` is a log target: a configuration 10x slower than its problem's best gets
    exp(-focus x 2.3). Squared error on log runtime otherwise spends the trees on telling
    100x from 1,000x slower layouts, which no pick is made among. NaN rows get ``floor``.
    """
    have = np.isfinite(y)
    k = int(groups.max()) + 1 if len(groups) else 0
    best = np.full(k, np.inf)
    np.minimum.at(best, groups[have], y[have])
    gap = y - best[groups]
    w = np.exp(-focus * np.where(np.isfinite(gap), gap, np.inf))
    return np.maximum(w, floor)


def noise_weights(frame) -> np.ndarray:
    """(n,) row weights 1 / (1 + measured repeat noise); 1 where no noise was measured."""
    import pandas as pd

    if "noise" not in frame.columns:
        return np.ones(len(frame))
    noise = pd.to_numeric(frame["noise"], errors="coerce").to_numpy(float, na_value=np.nan)
    return 1.0 / (1.0 + np.where(np.isfinite(noise) & (noise > 0), noise, 0.0))


def workload_noise(frame) -> dict[str, float]:
    """workload -> median measured repeat noise ((max - min) / median over repeats) of its ok
    runs; workloads without a finite ``noise`` are left out."""
    import pandas as pd

    if "noise" not in frame.columns or "workload" not in frame.columns:
        return {}
    ok = frame["status"].astype(str) == "ok" if "status" in frame.columns else True
    noise = pd.to_numeric(frame["noise"], errors="coerce").where(ok)
    med = noise.groupby(frame["workload"].astype(str)).median()
    return {str(w): float(v) for w, v in med.items() if np.isfinite(v)}


def noise_of(noise: dict[str, float], workloads) -> np.ndarray:
    """(n,) the training noise of each row's workload (NaN for a workload without one)."""
    import pandas as pd

    if isinstance(workloads.dtype, pd.CategoricalDtype):  # a System 1 grid: one lookup each
        cats = np.array([noise.get(str(c), np.nan) for c in workloads.cat.categories] + [np.nan])
        return cats[workloads.cat.codes.to_numpy()]  # code -1 (missing) -> the NaN at the end
    values = workloads.astype(str).to_numpy()
    uniq, inverse = np.unique(values, return_inverse=True)
    return np.array([noise.get(u, np.nan) for u in uniq], dtype=float)[inverse]


def noise_of_column(noise: dict[str, float], workloads) -> np.ndarray:
    """:func:`noise_of` for a :class:`~.columns.Columns` column too (a text array, or its
    ``(codes, values)``: no pandas); a pandas Series goes to :func:`noise_of`."""
    if isinstance(workloads, tuple):
        codes, values = workloads
        return np.array([noise.get(str(v), np.nan) for v in values], dtype=float)[codes]
    if not isinstance(workloads, np.ndarray):
        return noise_of(noise, workloads)
    uniq, inverse = np.unique(workloads.astype(str), return_inverse=True)
    return np.array([noise.get(u, np.nan) for u in uniq.tolist()], dtype=float)[inverse]


class ProblemLevels:
    """A problem's level (its mean centred-out log value) per workload code against log size.

    Attributes:
        table: workload code -> (sorted log sizes, levels).
        fallback: the level of a workload code never trained on (median over problems).
    """

    def __init__(self, table: dict[int, tuple[np.ndarray, np.ndarray]], fallback: float):
        self.table = {int(k): (np.asarray(x, float), np.asarray(y, float))
                      for k, (x, y) in table.items()}
        self.fallback = float(fallback)

    @classmethod
    def fit(cls, codes: np.ndarray, log_sizes: np.ndarray, levels: np.ndarray
            ) -> "ProblemLevels":
        """From one value per row (rows of a problem share theirs); NaN rows are ignored."""
        ok = np.isfinite(levels)
        codes, log_sizes, levels = codes[ok], log_sizes[ok], levels[ok]
        table = {}
        for code in np.unique(codes):
            sel = codes == code
            xs, inverse = np.unique(log_sizes[sel], return_inverse=True)
            ys = np.bincount(inverse, weights=levels[sel]) / np.bincount(inverse)
            table[int(round(code))] = (xs, ys)
        per_problem = np.concatenate([y for _, y in table.values()]) if table else np.zeros(1)
        return cls(table, float(np.median(per_problem)))

    def predict(self, codes: np.ndarray, log_sizes: np.ndarray) -> np.ndarray:
        """(n,) levels of rows with workload ``codes`` and ``log_sizes``."""
        codes = np.asarray(codes)
        log_sizes = np.asarray(log_sizes, float)
        n = len(codes)
        if n and (codes == codes[0]).all() and (log_sizes == log_sizes[0]).all():
            # One problem (a System 1 grid): one lookup, not n.
            return np.full(n, self._one(int(round(float(codes[0]))), log_sizes[:1])[0])
        out = np.empty(n)
        rounded = np.rint(codes).astype(np.int64)
        for code in np.unique(rounded):
            sel = rounded == code
            out[sel] = self._one(int(code), log_sizes[sel])
        return out

    def _one(self, code: int, log_sizes: np.ndarray) -> np.ndarray:
        entry = self.table.get(code)
        if entry is None:
            return np.full(len(log_sizes), self.fallback)
        xs, ys = entry
        return np.interp(log_sizes, xs, ys)  # flat beyond the measured ends

    def as_dict(self) -> dict:
        return {"table": {str(k): [x.tolist(), y.tolist()] for k, (x, y) in self.table.items()},
                "fallback": self.fallback}

    @classmethod
    def from_dict(cls, data: dict) -> "ProblemLevels":
        return cls({int(k): (v[0], v[1]) for k, v in data["table"].items()},
                   float(data["fallback"]))
