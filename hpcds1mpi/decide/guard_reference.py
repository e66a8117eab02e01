"""The guard's view of a bundle's training data: the standardised training matrix, the problem
of each row, and the configurations a job is placed at (moved out of
:mod:`~hpcds1mpi.decide.guard`, which keeps every name importable).

Built from the training rows as plain arrays (:class:`~hpcds1mpi.surrogates.columns.Columns`,
no pandas: a cold ``recommend`` builds it once); a bundle stand-in that predicts from
DataFrames is handed its query rows as a DataFrame.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from hpcds1mpi.decide.trained_hardware import hardware_columns, trained_partitions
from hpcds1mpi.errors import ModelError
from hpcds1mpi.surrogates.columns import Columns, first_rows, for_model

QUERY_CONFIGS = 48
MAX_REFERENCE_ROWS = 12000
#: The configuration columns a job is placed at.
CONFIG_COLUMNS = ("nodes", "ranks_per_node", "threads", "device", "precision", "partition")


@dataclass
class Reference:
    """The standardised training embedding and the problem of each row.

    Attributes:
        matrix: ``(n, d)`` standardised training rows (a deterministic subsample when large).
        workloads / sizes: ``(n,)`` the problem of each row.
        center / scale: ``(d,)`` the standardisation.
        configs: the training configurations used as query points (Columns).
        frame: the training rows kept (Columns; ``frame.to_frame()`` for a DataFrame).
        problems: (workload, size, partition) of every training row that ran ok, subsample or
            not (:meth:`measured`).
    """

    matrix: np.ndarray
    workloads: np.ndarray
    sizes: np.ndarray
    center: np.ndarray
    scale: np.ndarray
    configs: Columns
    frame: Columns
    #: The configurations placed on a partition, hardware filled in (:func:`query_frame`):
    #: (partition name, the bundle's partition table) -> Columns. None of it is the question's.
    placed: dict = field(default_factory=dict, repr=False, compare=False)
    problems: frozenset = field(default_factory=frozenset, repr=False, compare=False)
    _norms: np.ndarray | None = field(default=None, repr=False, compare=False)

    def measured(self, workload: str, size: float, partition_name: str | None) -> bool:
        """Whether ``workload`` at ``size`` ran ok on ``partition_name`` (a trained partition's
        name; None: hardware never trained on, so nothing is measured there)."""
        if partition_name is None:
            return False
        try:
            return (str(workload), float(size), str(partition_name)) in self.problems
        except (TypeError, ValueError):  # a size that is no number is refused elsewhere
            return False

    def norms(self) -> np.ndarray:
        """``(matrix ** 2).sum(axis=1)``, computed once (every question's distance needs it)."""
        if self._norms is None:
            self._norms = np.sum(self.matrix ** 2, axis=1)
        return self._norms


def reference(bundle, max_rows: int = MAX_REFERENCE_ROWS, seed: int = 0) -> Reference:
    """The guard's view of the training data of a bundle, built once per bundle object
    (:mod:`~hpcds1mpi.decide.bundle_cache`) by :func:`build_reference`."""
    from hpcds1mpi.decide import bundle_cache

    return bundle_cache.memo(bundle, ("guard_reference", max_rows, seed),
                             lambda: build_reference(bundle, max_rows, seed))


def build_reference(bundle, max_rows: int = MAX_REFERENCE_ROWS, seed: int = 0) -> Reference:
    """Build the guard's view of the training data from a bundle (:func:`reference` keeps it).

    The subsample and the query configurations are the rows pandas picked before
    (``drop_duplicates`` keeps first occurrences; ``sample(k, random_state=seed)`` is
    ``RandomState(seed).choice(n, k, replace=False)``), so verdicts stay the same.

    Raises:
        ModelError: the bundle's training matrix and frame disagree in length.
    """
    from hpcds1mpi.decide import bundle_cache

    frame = bundle_cache.training_columns(bundle)
    matrix = np.asarray(bundle.training_matrix(), dtype=float)
    if matrix.ndim != 2 or len(matrix) != len(frame):
        raise ModelError("model bundle's training matrix and frame differ in length; retrain it")
    problems = measured_problems(frame)  # before the subsample drops some (s31 reviewer)
    if len(frame) > max_rows:
        keep = np.sort(np.random.default_rng(seed).choice(len(frame), max_rows, replace=False))
        frame, matrix = frame.take(keep), matrix[keep]
    center = np.nanmean(matrix, axis=0)
    scale = np.nanstd(matrix, axis=0)
    scale = np.where(np.isfinite(scale) & (scale > 1e-9), scale, 1.0)
    std = np.nan_to_num((matrix - center) / scale)
    configs = frame[list(CONFIG_COLUMNS)].take(first_rows(frame, CONFIG_COLUMNS))
    if len(configs) > QUERY_CONFIGS:
        pick = np.random.RandomState(seed).choice(len(configs), QUERY_CONFIGS, replace=False)
        configs = configs.take(pick)
    return Reference(std, np.asarray(frame["workload"]).astype(str),
                     np.asarray(frame["size"], dtype=float), center, scale, configs, frame,
                     problems=problems)


def measured_problems(frame: Columns) -> frozenset:
    """(workload, size, partition) of each training row that ran ok: a problem whose runs all
    failed was "measured" at distance 0 (s31 reviewer). Every row where ``status`` is not
    recorded; partition ``""`` where none is."""
    from hpcds1mpi.config import OK

    ok = np.asarray(frame["status"]).astype(str) == OK if "status" in frame \
        else np.ones(len(frame), dtype=bool)
    parts = np.asarray(frame["partition"]).astype(str)[ok] if "partition" in frame \
        else np.full(int(ok.sum()), "")
    return frozenset(zip(np.asarray(frame["workload"]).astype(str)[ok].tolist(),
                         np.asarray(frame["size"], dtype=float)[ok].tolist(), parts.tolist()))


def query_frame(bundle, ref: Reference, workload: str, size: float,
                partition_name: str | None = None):
    """The job placed at the reference configurations (hardware from the bundle's table):
    Columns, or a DataFrame for a stand-in bundle that predicts from DataFrames.

    The configurations with their hardware do not depend on the job: they are built once per
    reference and partition (:attr:`Reference.placed`), and only the job's workload and size
    are put in front of a copy.
    """
    hw = trained_partitions(bundle)
    key = (partition_name, repr(sorted(hw.items())))
    placed = ref.placed.get(key)
    if placed is None:
        placed = ref.placed[key] = _placed_configs(ref, partition_name, hw)
    n = len(placed)
    q = Columns({"workload": np.full(n, str(workload)), "size": np.full(n, size),
                 **{k: v.copy() for k, v in placed.items()}})
    return for_model(bundle, q)


def _placed_configs(ref: Reference, partition_name: str | None, hw: dict) -> Columns:
    """The reference configurations on ``partition_name`` with their hardware columns."""
    q = ref.configs.copy()
    if partition_name is not None:
        q["partition"] = np.full(len(q), partition_name)
    q = hardware_columns(q, hw)
    # A GPU configuration cannot be placed on a partition without GPUs.
    if partition_name is not None:
        gpus = (hw.get(partition_name) or {}).get("gpus_per_node", 0) or 0
        q = q.take((q["device"] != "gpu") | (q["ranks_per_node"] <= gpus))
    return q
