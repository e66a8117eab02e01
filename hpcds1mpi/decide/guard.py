"""The familiarity guard: is a job familiar enough to act on without a person?

Verdicts: ``auto`` (act), ``confirm`` (show the pick, ask first), ``escalate`` (no guessed
settings; ``recommend`` writes a calibration sweep instead).

Checks, each reported on its own:

* **learned** — the job's distance to the training data in the model's embedding space. The job
  is placed at a fixed set of configurations measured in training (so the distance measures the
  *problem*, not how far the configuration grid reaches), each row's distance is the mean
  Euclidean distance to its ``k`` nearest training rows after standardising each embedding
  dimension, and the job's distance is the median over its rows. Thresholds are calibrated on
  held-out problems (:func:`calibrate`): every training problem (workload, size) is scored
  against the training rows of *other* problems, and the ``auto`` / ``escalate`` thresholds are
  upper quantiles of those held-out-problem distances. Leave-one-workload-out distances are
  computed too and reported (catch rate of the learned check alone), never used to set the
  thresholds.
* **hardware** — the partition must match a partition the model was trained on (same cores and
  GPUs per node, memory within 25 %; :mod:`~hpcds1mpi.decide.trained_hardware`); a machine the
  model never saw is escalated; one whose CPU model is known and not the one measured there
  (``cpu``) is at most ``confirm``.
* **size range** — sizes beyond the measured range are extrapolation: up to 2x beyond asks to
  confirm, further escalates.
* **name** — the workload was never measured. Kept apart from the learned check: the
  evaluation counts the learned check's catches without it.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

import numpy as np

from hpcds1mpi.decide.guard_bracket import bracket_thresholds
from hpcds1mpi.decide.neighbours import knn_distance
from hpcds1mpi.decide.guard_reference import (  # moved there; importable from here, as before
    MAX_REFERENCE_ROWS,
    QUERY_CONFIGS,
    Reference,
    _placed_configs,
    build_reference,
    query_frame,
    reference,
)
from hpcds1mpi.decide.guard_reasons import (hardware_reason, learned_reason, name_reason,
                                            size_reason)
from hpcds1mpi.decide.trained_hardware import cpu_differs, matching_partition
from hpcds1mpi.errors import HpcdsError, ModelError
from hpcds1mpi.user_cache import cache_dir, folder_key

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from hpcds1mpi.cluster import Partition

#: Names that moved to guard_reference, kept importable from here.
MOVED = (MAX_REFERENCE_ROWS, QUERY_CONFIGS, Reference, build_reference, _placed_configs)
VERDICTS = ("auto", "confirm", "escalate")
CALIBRATION_FILE = "guard_calibration.json"
#: Quantiles of held-out-problem distances that set the thresholds.
AUTO_QUANTILE = 0.90
ESCALATE_QUANTILE = 0.99
#: Escalate threshold = max(quantile, this multiple of the auto threshold).
ESCALATE_MIN_RATIO = 1.5
#: System 1 confidence below which an otherwise familiar job asks to confirm.
CONFIDENCE_AUTO = 0.7
K_NEIGHBOURS = 3
SIZE_CONFIRM_RATIO = 2.0


# --------------------------------------------------------------------------------------------
# Distances


def job_distance(bundle, ref: Reference, workload: str, size: float,
                 partition_name: str | None = None, exclude: np.ndarray | None = None,
                 k: int = K_NEIGHBOURS) -> float:
    """The job's learned distance to the training data (median over its query rows); 0 for a
    problem measured on ``partition_name`` (s31 tester Q2: its rows' nearest neighbours are
    its other layouts, which put a measured problem of a one-size model beyond a threshold).

    Args:
        exclude: ``(n,)`` booleans of reference rows to leave out (calibration).
    """
    if exclude is None and ref.measured(workload, size, partition_name):
        return 0.0
    q = query_frame(bundle, ref, workload, size, partition_name)
    if len(q) == 0:
        return float("inf")
    return median(rows_distance(bundle, ref, q, exclude, k))


def median(values: np.ndarray) -> float:
    """``np.median`` of a 1-d array (NaN if any value is), from one sort: np.median's first
    call imports numpy.ma (10-30 ms of a cold ``recommend``)."""
    x = np.sort(np.asarray(values, dtype=float).ravel())
    n = len(x)
    if n == 0 or np.isnan(x[-1]):
        return float("nan")
    return float(x[n // 2]) if n % 2 else float((x[n // 2 - 1] + x[n // 2]) / 2.0)


def rows_distance(bundle, ref: Reference, rows: "pd.DataFrame",
                  exclude: np.ndarray | None = None, k: int = K_NEIGHBOURS) -> np.ndarray:
    """Each prediction row's learned distance to the training data: ``(len(rows),)``.

    Args:
        rows: prediction input rows (workload, size, configuration, hardware).
        exclude: ``(n,)`` booleans of reference rows to leave out.
    """
    # The reference is ``training_matrix`` ([features, embedding]); ``design`` gives the same
    # columns for new rows (``embed`` alone where a bundle has no ``design``).
    project = getattr(bundle, "design", None) or bundle.embed
    return design_distance(ref, project(rows), exclude, k)


def design_distance(ref: Reference, emb, exclude: np.ndarray | None = None,
                    k: int = K_NEIGHBOURS) -> np.ndarray:
    """Each row of a design matrix ``emb`` (``design``'s columns), standardised as the
    reference was, to its ``k`` nearest reference rows: ``(len(emb),)``."""
    emb = np.nan_to_num((np.asarray(emb, dtype=float) - ref.center) / ref.scale)
    if exclude is None:
        return knn_distance(emb, ref.matrix, k, ref.norms())
    return knn_distance(emb, ref.matrix[~exclude], k)


# --------------------------------------------------------------------------------------------
# Calibration


@dataclass
class GuardCalibration:
    """Thresholds of the learned check and the held-out evidence behind them.

    Attributes:
        auto_threshold / escalate_threshold: distances (standardised embedding units).
        heldout_problem_distances: one per training problem, scored without its own rows.
        heldout_workload_distances: one per training problem, scored without its workload.
        catch_rate: share of leave-one-workload-out problems the learned check escalates
            (with thresholds calibrated without that workload; NaN with fewer than 2
            workloads).
        false_escalations: share of held-out-size problems it escalates.
    """

    auto_threshold: float
    escalate_threshold: float
    heldout_problem_distances: list = field(default_factory=list)
    heldout_workload_distances: list = field(default_factory=list)
    catch_rate: float = float("nan")
    false_escalations: float = float("nan")
    k: int = K_NEIGHBOURS
    source: str = "computed"

    def as_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "GuardCalibration":
        known = {f for f in cls.__dataclass_fields__}
        return cls(**{k: v for k, v in data.items() if k in known})

    def impossible(self) -> str | None:
        """Why the thresholds cannot be used (an infinite one passes every job), or None."""
        for key in ("auto_threshold", "escalate_threshold"):
            value = getattr(self, key)
            if type(value) not in (int, float) or not math.isfinite(value) or value < 0:
                return f"{key} is {value!r}, not a finite distance of at least 0"
        if self.auto_threshold > self.escalate_threshold:
            return (f"auto_threshold {self.auto_threshold!r} is above escalate_threshold "
                    f"{self.escalate_threshold!r}")
        if type(self.k) is not int or self.k < 1:
            return f"k is {self.k!r}, not a whole number of neighbours of at least 1"
        return None


def thresholds_from(distances: Sequence[float]) -> tuple[float, float]:
    """(auto, escalate) thresholds from held-out-problem distances."""
    d = np.asarray([x for x in distances if math.isfinite(x)], dtype=float)
    if len(d) == 0:
        return 0.0, 0.0
    auto = float(np.quantile(d, AUTO_QUANTILE))
    esc = max(float(np.quantile(d, ESCALATE_QUANTILE)), ESCALATE_MIN_RATIO * auto)
    return auto, esc


def calibrate(bundle, ref: Reference | None = None, k: int = K_NEIGHBOURS) -> GuardCalibration:
    """Calibrate the learned check on held-out problems of the bundle's training data.

    Every training problem (workload, size, on its most-measured partition) is scored twice:
    without its own rows (a new size of a known workload: should pass) and without its whole
    workload (a never-seen workload: should be escalated). Thresholds come from the first set
    only; the catch rate is computed per workload with thresholds from the other workloads.
    """
    ref = ref or reference(bundle)
    frame = ref.frame.to_frame()  # only without a shipped calibration: pandas is fine here
    problems = (frame.groupby(["workload", "size"])["partition"]
                .agg(lambda s: s.value_counts().index[0]).reset_index())
    # Held-out end sizes are extrapolation, which the size-range check judges; the learned
    # check's thresholds come from the interior (interpolated) problems, whose distances are
    # what a familiar new size looks like. Without interior problems, all are used.
    size_lo = frame.groupby("workload")["size"].min()
    size_hi = frame.groupby("workload")["size"].max()
    lopo, lowo, names, interior = [], [], [], []
    for row in problems.itertuples(index=False):
        interior.append(bool(size_lo[row.workload] < row.size < size_hi[row.workload]))
        same_workload = ref.workloads == str(row.workload)
        same_problem = same_workload & (ref.sizes == float(row.size))
        lopo.append(job_distance(bundle, ref, row.workload, row.size, row.partition,
                                 exclude=same_problem, k=k))
        lowo.append(job_distance(bundle, ref, row.workload, row.size, row.partition,
                                 exclude=same_workload, k=k))
        names.append(str(row.workload))
    inner = [d for d, i in zip(lopo, interior) if i] or lopo
    auto, esc = thresholds_from(inner)
    names_arr = np.asarray(names)
    caught = []
    for w in sorted(set(names)):
        others = [d for d, n, i in zip(lopo, names, interior) if n != w and i] or \
            [d for d, n in zip(lopo, names) if n != w]
        if not others:
            continue
        _, esc_w = thresholds_from(others)
        caught += [d > esc_w for d in np.asarray(lowo)[names_arr == w]]
    catch = float(np.mean(caught)) if caught else float("nan")
    false_esc = float(np.mean([d > esc for d in lopo])) if lopo else float("nan")
    return GuardCalibration(auto, esc, [float(x) for x in lopo], [float(x) for x in lowo],
                            catch, false_esc, k)


def write_calibration(bundle, model_dir: str | os.PathLike) -> GuardCalibration:
    """Calibrate ``bundle`` (saved in ``model_dir``) and ship the result there as
    :data:`CALIBRATION_FILE`, so ``recommend`` never computes it on first use."""
    from hpcds1mpi.atomic import write_text

    cal = calibrate(bundle)
    write_text(Path(model_dir) / CALIBRATION_FILE, json.dumps(cal.as_dict()), "guard calibration")
    return cal


def load_calibration(bundle, model_dir: str | os.PathLike | None,
                     ref: Reference | None = None) -> GuardCalibration:
    """The guard calibration shipped with a bundle, else a cached one, else computed now.

    Computed calibrations are cached under ``~/.cache/hpcds1mpi`` (``HPCDS1MPI_CACHE``) keyed
    by the bundle directory's files, so only the first call per bundle pays for it. Whichever
    it is, it is kept with the loaded bundle (:mod:`~hpcds1mpi.decide.bundle_cache`) while
    the file it was read from stays the same (``learn`` may rewrite it); each call gets its
    own copy. A readable shipped file wins, so while it is there only it is looked at (one
    ``stat``: the whole directory's key cost every question of ``serve`` ~1 ms).
    """
    from dataclasses import replace

    from hpcds1mpi.decide import bundle_cache

    if model_dir:
        shipped = Path(model_dir) / CALIBRATION_FILE
        stamp = file_stamp(shipped)
        if stamp is not None:
            cal = bundle_cache.memo(bundle, ("guard_calibration_shipped", str(shipped), stamp),
                                    lambda: _read_shipped(shipped))
            if cal is not None:
                return replace(cal)
    # The answer is kept while the files it would be read from stay the same.
    stamps = [file_stamp(path) for path in _calibration_files(model_dir)]
    key = ("guard_calibration", model_dir and str(model_dir), tuple(stamps), str(cache_dir()))
    return replace(bundle_cache.memo(bundle, key,
                                     lambda: _read_or_calibrate(bundle, model_dir, ref)))


def _calibration_files(model_dir) -> tuple[Path, ...]:
    """Where a bundle's calibration is read from, in order: shipped with it, then the user's
    cache (none without a home: computed each time then)."""
    if not model_dir:
        return ()
    cache = cache_dir()
    shipped = Path(model_dir) / CALIBRATION_FILE
    return (shipped,) if cache is None else \
        (shipped, cache / f"guard-{folder_key(model_dir)}.json")


def file_stamp(path: Path) -> tuple | None:
    """What changes when a file is rewritten (in place or replaced): its mtime, size, inode
    and ctime; None when it is not there."""
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino, st.st_ctime_ns)


def _read_shipped(path: Path) -> GuardCalibration | None:
    """The calibration in ``path``, None when it cannot be read as one (it is computed then);
    ModelError when it reads but its thresholds are impossible."""
    try:
        cal = GuardCalibration.from_dict(json.loads(path.read_text()))
    except (OSError, ValueError, TypeError, AttributeError):  # AttributeError: not an object
        return None
    problem = cal.impossible()
    if problem is not None:
        raise ModelError(f"{path}: {problem}; fix it, or delete it (the guard then "
                         "calibrates from the bundle itself)")
    cal.source = str(path)
    return cal


def _read_or_calibrate(bundle, model_dir, ref: Reference | None) -> GuardCalibration:
    """:func:`load_calibration` without keeping the answer."""
    files = _calibration_files(model_dir)
    for path in files:
        try:
            cal = _read_shipped(path)
        except ModelError:  # the bundle's own file is the user's to fix; the cache's, ours
            if path == files[0]:
                raise
            cal = None  # computed again and replaced below
        if cal is not None:
            return cal
    cal = calibrate(bundle, ref)
    if len(files) == 2:  # a bundle folder and a cache to keep its calibration in
        cached = files[1]
        try:
            cached.parent.mkdir(parents=True, exist_ok=True)
            from hpcds1mpi.atomic import write_text

            write_text(cached, json.dumps(cal.as_dict()), "guard calibration cache")
        except (OSError, HpcdsError):
            pass  # a read-only home only costs the next call the same computation
    return cal


# --------------------------------------------------------------------------------------------
# Verdict


@dataclass
class Verdict:
    """The guard's decision on one job and every reason behind it.

    Attributes:
        verdict: ``auto``, ``confirm`` or ``escalate``.
        reasons: one line per check that was not passed.
        checks: check name -> ``pass`` / ``confirm`` / ``escalate``.
        distance: the learned distance, with the thresholds it was compared to.
    """

    verdict: str
    reasons: list[str] = field(default_factory=list)
    checks: dict[str, str] = field(default_factory=dict)
    distance: float = float("nan")
    auto_threshold: float = float("nan")
    escalate_threshold: float = float("nan")

    def as_dict(self) -> dict:
        """The fields as plain data (copies: the caller may change them), NaN as None; as
        ``dataclasses.asdict`` gives them, without its deep copy of every value."""
        out = {"verdict": self.verdict, "reasons": list(self.reasons),
               "checks": dict(self.checks), "distance": self.distance,
               "auto_threshold": self.auto_threshold,
               "escalate_threshold": self.escalate_threshold}
        return {k: (None if isinstance(v, float) and not math.isfinite(v) else v)
                for k, v in out.items()}


def _below(value: float, bound: float) -> str:
    """``value`` (under ``bound``) with the fewest decimals, 2 or more, that still read under it:
    0.6968 is "0.697", not "0.70" ("confidence 0.70 is below 0.7", s46 tester G4)."""
    for digits in range(2, 8):
        if float(shown := f"{value:.{digits}f}") < bound:
            return shown
    return repr(value)


def _escalate_worst(current: str, new: str) -> str:
    return max(current, new, key=VERDICTS.index)


def judge(bundle, workload: str, size: int, partition: "Partition",
          calibration: GuardCalibration, ref: Reference, confidence: float | None = None,
          distance: float | None = None) -> Verdict:
    """The guard's verdict for ``workload`` at ``size`` on ``partition``.

    Args:
        distance: the job's learned distance, when the caller computed it already
            (:func:`~hpcds1mpi.decide.guard_batch.judge_many`, many jobs in one pass); None:
            :func:`job_distance` now.
    """
    verdict = Verdict("auto", auto_threshold=calibration.auto_threshold,
                      escalate_threshold=calibration.escalate_threshold)

    def mark(check: str, level: str, reason: str = "") -> None:
        verdict.checks[check] = level
        if level != "pass":
            verdict.verdict = _escalate_worst(verdict.verdict, level)
            if reason:
                verdict.reasons.append(reason)

    trained = matching_partition(bundle, partition)
    if trained is None:
        mark("hardware", "escalate", hardware_reason(bundle, partition))
    else:
        mark("hardware", "pass")
        other_cpu = cpu_differs(bundle, partition)  # never auto on another CPU (s31 tester Q4)
        if other_cpu:  # only then: "checks" keeps its keys where both name one CPU
            mark("cpu", "confirm", other_cpu)
    known = [str(w) for w in getattr(bundle, "workloads", [])]
    if workload not in known:
        mark("name", "escalate", name_reason(workload, known))
    else:
        mark("name", "pass")
    lo_hi = (getattr(bundle, "size_range", {}) or {}).get(workload)
    if lo_hi is not None:
        lo, hi = float(lo_hi[0]), float(lo_hi[1])
        ratio = max(lo / size if size < lo else 1.0, size / hi if size > hi else 1.0)
        if ratio <= 1.0:
            mark("size_range", "pass")
        else:
            far = ratio > SIZE_CONFIRM_RATIO
            mark("size_range", "escalate" if far else "confirm",
                 size_reason(size, lo, hi, ratio, far, SIZE_CONFIRM_RATIO))
    if distance is None:
        distance = job_distance(bundle, ref, workload, size, trained, k=calibration.k)
    verdict.distance = distance
    auto, esc, between = calibration.auto_threshold, calibration.escalate_threshold, None
    if math.isfinite(distance) and distance > auto:  # between measured sizes: their wandering
        auto, esc, between = bracket_thresholds(
            bundle, workload, size, trained, calibration, ESCALATE_MIN_RATIO,
            lambda s: job_distance(bundle, ref, workload, s, trained, k=calibration.k))
    far = not math.isfinite(distance) or distance > esc
    if far or distance > auto:
        mark("learned", "escalate" if far else "confirm", learned_reason(
            workload, size, distance, esc if far else auto, calibration, far, between))
    else:
        mark("learned", "pass")
    if confidence is not None and verdict.verdict == "auto":
        if confidence < CONFIDENCE_AUTO:
            mark("confidence", "confirm",
                 f"System 1 confidence {_below(confidence, CONFIDENCE_AUTO)} is below "
                 f"{CONFIDENCE_AUTO}")
        else:
            mark("confidence", "pass")
    return verdict

