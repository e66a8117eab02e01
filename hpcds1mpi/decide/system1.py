"""System 1: score every valid configuration of a job at once and pick one per objective.

For a problem (workload, size) and one or more partitions, System 1 builds the whole grid of
valid configurations (nodes x ranks per node x threads x device x precision) as arrays, asks the
surrogate ensemble for all of them in one ``Bundle.predict`` call, removes configurations that
any ensemble member expects to fail (``fail_prob_max``) or that need more memory than the
partition can give (limits learned from measured out-of-memory failures, see
:func:`learn_memory_limits`), applies the user's constraints, and picks per objective:

* ``time`` — the lowest predicted median runtime;
* ``energy`` — the lowest predicted energy;
* ``edp`` — the lowest energy x runtime;
* ``balanced`` — the knee of the runtime–energy Pareto front (the front point farthest from
  the chord between its two ends, in log-normalised units).

Its confidence combines the ensemble's spread at the pick and the margin to the runner-up,
mapped to a probability by a logistic model fitted on held-out data
(``analysis/eval_system1.py`` writes ``system1_calibration.json``); without that file the
confidence is a fixed heuristic and is labelled ``uncalibrated``.

Everything here is numpy / pandas; nothing imports torch.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Sequence

import numpy as np

from hpcds1mpi.config import DEVICES, PRECISIONS, Configuration, configuration_grid
from hpcds1mpi.errors import ConfigError, ModelError

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from hpcds1mpi.cluster import Partition

OBJECTIVES = ("time", "energy", "edp", "balanced")
#: A configuration is excluded when any ensemble member's failure probability reaches this.
FAIL_PROB_MAX = 0.5
#: Share of a partition's nominal memory usable when no measured failure teaches a limit.
NOMINAL_MEMORY_SHARE = 0.9
#: Picks within this fraction of the best measured runtime count as "good" in calibration.
GOOD_PICK_TOLERANCE = 0.05
CALIBRATION_FILE = "system1_calibration.json"

# --------------------------------------------------------------------------------------------
# Candidate grid


# --------------------------------------------------------------------------------------------
# Learned memory limits


@dataclass
class MemoryLimit:
    """How much memory a configuration may need on one partition.

    Attributes:
        partition: partition name.
        node_mb: host memory per node a job may use, MB.
        gpu_mb: memory per GPU a GPU rank may use, MB (0 without GPUs).
        node_source / gpu_source: ``"measured"`` (from out-of-memory failures there) or
            ``"nominal"`` (a share of the partition's stated memory).
        nominal_node_mb / nominal_gpu_mb: the partition's stated memory, MB.
        failures: measured out-of-memory runs the limits were learned from.
    """

    partition: str
    node_mb: float
    gpu_mb: float
    node_source: str = "nominal"
    gpu_source: str = "nominal"
    nominal_node_mb: float = 0.0
    nominal_gpu_mb: float = 0.0
    failures: int = 0

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def _hardware_columns(frame: "pd.DataFrame", partitions: dict) -> "pd.DataFrame":
    """Fill cores/memory/GPUs from the bundle's partition table where a row lacks them."""
    frame = frame.copy()
    for col in ("cores_per_node", "memory_gb", "gpus_per_node"):
        mapped = frame["partition"].map(lambda p, c=col: (partitions.get(p) or {}).get(c, np.nan))
        if col in frame.columns:
            frame[col] = frame[col].fillna(mapped)
        else:
            frame[col] = mapped
    return frame


def learn_memory_limits(bundle, partitions: Sequence["Partition"]) -> dict[str, MemoryLimit]:
    """Per-partition memory limits learned from measured out-of-memory failures.

    For each partition the training data holds runs that ended ``oom``. The memory such a run
    needed is the surrogate's peak-memory prediction for it (the same quantity candidates are
    judged by; the measured peak of a killed run is only a lower bound). The limit is the
    smallest need among those failures, but never below the largest need of a run that
    succeeded there (noise must not forbid what was measured to work), and never above the
    nominal memory. Host memory is judged per node (peak per rank x ranks per node); GPU runs
    per GPU (one rank per GPU). Without failures the limit is a share of the nominal memory.

    Args:
        bundle: the model bundle (``training_frame``, ``predict``, ``partitions``).
        partitions: partitions to learn limits for (matched by name).

    Returns:
        partition name -> :class:`MemoryLimit`.
    """
    frame = bundle.training_frame()
    hw = dict(getattr(bundle, "partitions", {}) or {})
    limits: dict[str, MemoryLimit] = {}
    needed = {"status", "partition", "peak_rss_mb", "ranks_per_node", "device"}
    usable = frame is not None and needed.issubset(frame.columns)
    oom_need = None
    if usable:
        frame = frame[frame["partition"].isin([p.name for p in partitions])]
        oom = frame[frame["status"] == "oom"]
        if len(oom):
            pred = bundle.predict(_hardware_columns(oom, hw))
            oom_need = np.asarray(pred["peak_rss_mb"], dtype=float)
            measured = np.asarray(oom["peak_rss_mb"], dtype=float)
            # A killed run's measured peak is a floor of what it needed.
            oom_need = np.fmax(oom_need, np.nan_to_num(measured, nan=0.0))
    for part in partitions:
        nominal_node = float(part.memory_gb) * 1000.0
        nominal_gpu = float(part.gpu_memory_gb) * 1000.0
        limit = MemoryLimit(part.name, NOMINAL_MEMORY_SHARE * nominal_node,
                            NOMINAL_MEMORY_SHARE * nominal_gpu,
                            nominal_node_mb=nominal_node, nominal_gpu_mb=nominal_gpu)
        if usable:
            here = (frame["partition"] == part.name).to_numpy()
            for kind in ("cpu", "gpu"):
                on_kind = here & (frame["device"] == kind).to_numpy()
                per_node = kind == "cpu"
                ok_rows = frame[on_kind & (frame["status"] == "ok").to_numpy()]
                ok_need = np.asarray(ok_rows["peak_rss_mb"], dtype=float) * (
                    np.asarray(ok_rows["ranks_per_node"], dtype=float) if per_node else 1.0)
                ok_max = float(np.nanmax(ok_need)) if np.isfinite(ok_need).any() else 0.0
                if oom_need is None:
                    continue
                oom_mask = (frame.loc[frame["status"] == "oom", "partition"] == part.name) \
                    .to_numpy() & (frame.loc[frame["status"] == "oom", "device"] == kind).to_numpy()
                if not oom_mask.any():
                    continue
                rpn = np.asarray(frame.loc[frame["status"] == "oom", "ranks_per_node"],
                                 dtype=float)[oom_mask]
                need = oom_need[oom_mask] * (rpn if per_node else 1.0)
                learned = max(float(np.nanmin(need)), ok_max)
                if per_node:
                    limit.node_mb = min(learned, nominal_node)
                    limit.node_source = "measured"
                else:
                    limit.gpu_mb = min(learned, nominal_gpu) if nominal_gpu else learned
                    limit.gpu_source = "measured"
                limit.failures += int(oom_mask.sum())
        limits[part.name] = limit
    return limits


# --------------------------------------------------------------------------------------------
# Scoring


@dataclass
class Constraints:
    """User constraints: ``--max-nodes``, ``--deadline`` (s), ``--energy-budget`` (J)."""

    max_nodes: int | None = None
    deadline_s: float | None = None
    energy_budget_j: float | None = None
    devices: Sequence[str] | None = None
    precisions: Sequence[str] | None = None


@dataclass
class Scores:
    """Every candidate of a problem with its predictions and why it is (in)feasible.

    Attributes:
        cols: parallel ``(n,)`` arrays, one per candidate: the input columns, the bundle's
            prediction columns, ``mem_need_mb`` (per node on CPU, per GPU on GPU),
            ``mem_limit_mb``, ``feasible`` and ``reason`` (``""`` when feasible, else ``fail``
            / ``memory`` / ``deadline`` / ``energy``).
        workload, size: the problem.
        limits: the memory limits used, per partition.
    """

    cols: dict
    workload: str
    size: int
    limits: dict[str, MemoryLimit] = field(default_factory=dict)
    _frame: "pd.DataFrame | None" = None

    def __len__(self) -> int:
        return len(self.cols["nodes"])

    @property
    def frame(self) -> "pd.DataFrame":
        """The same columns as a DataFrame (built once, on first use)."""
        if self._frame is None:
            import pandas as pd

            self._frame = pd.DataFrame({k: np.asarray(v) for k, v in self.cols.items()})
        return self._frame

    def row(self, index: int) -> dict:
        """One candidate as a plain dict of Python values."""
        out = {}
        for k, v in self.cols.items():
            value = v[index]
            out[k] = value.item() if hasattr(value, "item") else value
        return out


def candidate_frame(workload: str, size: int, partitions: Sequence["Partition"],
                    constraints: Constraints | None = None, uses_threads: bool = True
                    ) -> "pd.DataFrame":
    """The prediction input frame for every candidate on every partition (one row each).

    Text columns are pandas categoricals: building and comparing them costs microseconds where
    10,000 Python strings would cost milliseconds.
    """
    import pandas as pd

    constraints = constraints or Constraints()
    blocks, used = [], []
    for part in partitions:
        devices = constraints.devices
        if devices is not None and part.gpus_per_node < 1:
            devices = [d for d in devices if d != "gpu"]
            if not devices:
                continue
        grid = configuration_grid(part, max_nodes=constraints.max_nodes, devices=devices,
                              precisions=constraints.precisions, uses_threads=uses_threads)
        n = len(grid["nodes"])
        if part.name not in used:
            used.append(part.name)
        grid["partition_code"] = np.full(n, used.index(part.name), dtype=np.int16)
        grid["cores_per_node"] = np.full(n, part.cores_per_node, dtype=np.int64)
        grid["memory_gb"] = np.full(n, float(part.memory_gb))
        grid["gpus_per_node"] = np.full(n, part.gpus_per_node, dtype=np.int64)
        blocks.append(grid)
    if not blocks:
        raise ConfigError("no partition can run the requested devices; check --device/--partition")
    columns = {k: np.concatenate([b[k] for b in blocks]) for k in blocks[0]}
    n = len(columns["nodes"])
    data = {
        "workload": pd.Categorical.from_codes(np.zeros(n, dtype=np.int8), [workload]),
        "size": np.full(n, int(size), dtype=np.int64),
        "device": pd.Categorical.from_codes(columns.pop("device_code"), list(DEVICES)),
        "precision": pd.Categorical.from_codes(columns.pop("precision_code"), list(PRECISIONS)),
        "partition": pd.Categorical.from_codes(columns.pop("partition_code"), used),
        **columns,
    }
    order = ["workload", "size", "nodes", "ranks_per_node", "threads", "device", "precision",
             "partition", "cores_per_node", "memory_gb", "gpus_per_node"]
    return pd.DataFrame({k: data[k] for k in order})


_PRED_COLUMNS = ("runtime_s", "runtime_lo", "runtime_hi", "energy_j", "energy_lo", "energy_hi",
                 "fail_prob", "fail_prob_max", "peak_rss_mb")


def _column_array(frame: "pd.DataFrame", col: str) -> np.ndarray:
    series = frame[col]
    if hasattr(series, "cat"):
        cats = np.asarray(series.cat.categories, dtype=object)
        return cats[series.cat.codes.to_numpy()]
    return series.to_numpy()


def score(bundle, workload: str, size: int, partitions: Sequence["Partition"],
          constraints: Constraints | None = None, limits: dict[str, MemoryLimit] | None = None,
          uses_threads: bool = True, frame: "pd.DataFrame | None" = None) -> Scores:
    """Predict every candidate at once and mark which are feasible.

    Args:
        bundle: the model bundle.
        workload, size: the problem (size > 0).
        partitions: where it may run.
        constraints: user constraints.
        limits: memory limits per partition (learned when None).
        uses_threads: False when the workload cannot use threads.
        frame: a ready candidate frame (evaluation replays measured configurations).

    Raises:
        ConfigError: size <= 0 or no partition.
        ModelError: the bundle's answer lacks a column or has the wrong length.
    """
    if not isinstance(size, (int, np.integer)) or isinstance(size, bool) or size <= 0:
        raise ConfigError(f"--size must be a positive integer, got {size!r}")
    if not partitions:
        raise ConfigError("no partition to choose from; check --cluster / --partition")
    constraints = constraints or Constraints()
    if frame is None:
        frame = candidate_frame(workload, int(size), partitions, constraints, uses_threads)
    pred = bundle.predict(frame)
    missing = [c for c in _PRED_COLUMNS if c not in pred.columns]
    if missing or len(pred) != len(frame):
        raise ModelError(f"model answer lacks {', '.join(missing) or 'rows'}; "
                         "retrain the bundle with this version")
    cols = {c: _column_array(frame, c) for c in
            ("nodes", "ranks_per_node", "threads", "device", "precision", "partition")}
    for col in _PRED_COLUMNS:
        cols[col] = pred[col].to_numpy(dtype=float)
    if limits is None:
        limits = learn_memory_limits(bundle, partitions)
    gpu = cols["device"] == "gpu"
    rpn = cols["ranks_per_node"].astype(float)
    rss = cols["peak_rss_mb"]
    need = np.where(gpu, rss, rss * rpn)
    names = cols["partition"]
    limit_node = np.zeros(len(rpn))
    limit_gpu = np.zeros(len(rpn))
    for part in partitions:
        lim = limits.get(part.name) or MemoryLimit(
            part.name, part.memory_gb * 1000.0 * NOMINAL_MEMORY_SHARE,
            part.gpu_memory_gb * 1000.0 * NOMINAL_MEMORY_SHARE)
        sel = names == part.name
        limit_node[sel], limit_gpu[sel] = lim.node_mb, lim.gpu_mb
    mem_limit = np.where(gpu, limit_gpu, limit_node)
    cols["mem_need_mb"] = need
    cols["mem_limit_mb"] = mem_limit
    reason = np.full(len(rpn), "", dtype=object)
    runtime, energy = cols["runtime_s"], cols["energy_j"]
    bad_pred = ~np.isfinite(runtime) | ~np.isfinite(energy) | (runtime <= 0)
    fail = (cols["fail_prob_max"] >= FAIL_PROB_MAX) | bad_pred
    memory = np.isfinite(need) & (need > mem_limit)
    if constraints.deadline_s is not None:
        reason[cols["runtime_hi"] > constraints.deadline_s] = "deadline"
    if constraints.energy_budget_j is not None:
        costly = cols["energy_hi"] > constraints.energy_budget_j
        reason[costly & (reason == "")] = "energy"
    reason[memory] = "memory"
    reason[fail] = "fail"
    cols["reason"] = reason
    cols["feasible"] = ~(fail | memory) & (reason == "")
    return Scores(cols=cols, workload=workload, size=int(size), limits=limits)


# --------------------------------------------------------------------------------------------
# Choosing


def pareto_front_2d(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Indices of the non-dominated points of (x, y), both minimised, sorted by x.

    Vectorised (sort + running minimum), O(n log n); exact duplicates keep one point.
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    ok = np.flatnonzero(np.isfinite(x) & np.isfinite(y))
    if len(ok) == 0:
        return ok
    order = ok[np.lexsort((y[ok], x[ok]))]
    ys = y[order]
    prev_min = np.concatenate([[np.inf], np.minimum.accumulate(ys)[:-1]])
    return order[ys < prev_min]


def knee(x: np.ndarray, y: np.ndarray) -> int:
    """Position (in the given arrays) of the knee of a front sorted by x.

    In log units normalised to [0, 1] per objective, the knee is the point farthest below the
    chord joining the front's two ends; fronts of one or two points take the point with the
    smallest normalised sum.
    """
    lx, ly = np.log(np.asarray(x, float)), np.log(np.asarray(y, float))
    span_x = (lx.max() - lx.min()) or 1.0
    span_y = (ly.max() - ly.min()) or 1.0
    nx, ny = (lx - lx.min()) / span_x, (ly - ly.min()) / span_y
    if len(nx) <= 2:
        return int(np.argmin(nx + ny))
    # Chord from (0, 1) (fastest end) to (1, 0) (cheapest end): distance ∝ 1 - nx - ny.
    return int(np.argmax(1.0 - nx - ny))


def objective_values(cols, objective: str) -> np.ndarray:
    """The value each candidate is ranked by (lower is better) for ``time``/``energy``/``edp``.

    Args:
        cols: a mapping (dict of arrays or DataFrame) with ``runtime_s`` and ``energy_j``.
    """
    runtime = np.asarray(cols["runtime_s"], dtype=float)
    energy = np.asarray(cols["energy_j"], dtype=float)
    if objective == "time":
        return runtime
    if objective == "energy":
        return energy
    if objective == "edp":
        return runtime * energy
    raise ConfigError(f"objective must be one of {', '.join(OBJECTIVES)}, got {objective!r}")


@dataclass
class Choice:
    """System 1's answer for one problem.

    Attributes:
        index: row of the pick in ``scores.frame`` (None when nothing is feasible).
        ranking: feasible rows, best first, by the objective (``balanced``: the knee first,
            then the rest by normalised distance to the knee).
        front: feasible rows on the runtime–energy Pareto front, sorted by runtime.
        objective: the objective used.
        spread: relative runtime interval width at the pick, (hi - lo) / median.
        margin: relative objective gap between the pick and the runner-up.
        confidence: probability the pick is within 5 % of the best (calibrated or not).
        calibrated: whether ``confidence`` came from a held-out calibration.
    """

    scores: Scores
    index: int | None
    ranking: np.ndarray
    front: np.ndarray
    objective: str
    spread: float = float("nan")
    margin: float = float("nan")
    confidence: float = 0.0
    calibrated: bool = False

    @property
    def pick(self) -> dict | None:
        return None if self.index is None else self.scores.row(self.index)

    def config(self, row: int | None = None) -> Configuration:
        r = self.scores.cols
        i = self.index if row is None else row
        return Configuration(int(r["nodes"][i]), int(r["ranks_per_node"][i]),
                             int(r["threads"][i]), str(r["device"][i]), str(r["precision"][i]))


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
        Path(path).write_text(json.dumps({"coef": list(self.coef), **extra}, indent=2))


def choose(scores: Scores, objective: str = "time",
           confidence_model: ConfidenceModel | None = None) -> Choice:
    """Pick the best feasible candidate for ``objective``.

    Returns:
        a :class:`Choice`; ``index`` is None when nothing is feasible.
    """
    if objective not in OBJECTIVES:
        raise ConfigError(f"objective must be one of {', '.join(OBJECTIVES)}, got {objective!r}")
    cols = scores.cols
    feasible = np.flatnonzero(cols["feasible"])
    confidence_model = confidence_model or ConfidenceModel()
    if len(feasible) == 0:
        return Choice(scores, None, feasible, feasible, objective)
    runtime, energy = cols["runtime_s"], cols["energy_j"]
    front = feasible[pareto_front_2d(runtime[feasible], energy[feasible])]
    if objective == "balanced":
        k = front[knee(runtime[front], energy[front])]
        # Rank the rest by their distance to the knee in log-normalised units.
        lr, le = np.log(runtime[feasible]), np.log(energy[feasible])
        sr = (lr.max() - lr.min()) or 1.0
        se = (le.max() - le.min()) or 1.0
        dist = np.hypot((lr - math.log(runtime[k])) / sr, (le - math.log(energy[k])) / se)
        # Knee first; others by how much worse they are than the knee in the sum of both.
        value = np.maximum(lr - math.log(runtime[k]), 0) / sr + \
            np.maximum(le - math.log(energy[k]), 0) / se + 1e-3 * dist
        value[feasible == k] = -1.0
        ranking = feasible[np.argsort(value, kind="stable")]
        vals = runtime * energy  # the margin of a balanced pick is measured in EDP
    else:
        vals = objective_values(cols, objective)
        ranking = feasible[np.argsort(vals[feasible], kind="stable")]
    index = int(ranking[0])
    lo, hi = cols["runtime_lo"][index], cols["runtime_hi"][index]
    spread = float(max(hi - lo, 0.0) / runtime[index]) if runtime[index] > 0 else float("inf")
    if len(ranking) > 1:
        runner = int(ranking[1])
        margin = float((vals[runner] - vals[index]) / abs(vals[index])) if vals[index] else 0.0
        margin = abs(margin)
    else:
        margin = 1.0
    confidence = float(confidence_model.predict([spread], [margin])[0])
    return Choice(scores, index, ranking, front, objective, spread, margin, confidence,
                  confidence_model.calibrated)


def recommend_system1(bundle, workload: str, size: int, partitions: Sequence["Partition"],
                      objective: str = "time", constraints: Constraints | None = None,
                      confidence_model: ConfidenceModel | None = None,
                      limits: dict[str, MemoryLimit] | None = None) -> Choice:
    """Score and choose in one call (the library entry point)."""
    return choose(score(bundle, workload, size, partitions, constraints, limits), objective,
                  confidence_model)
