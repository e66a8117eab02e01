"""The model bundle: a fitted surrogate with what it was trained on, and its training.

:func:`train_bundle` takes checked training data (a
:class:`~hpcds1mpi.records.training.TrainingData`, or a DataFrame it checks into one), samples
it (paper's intelligent sampling), fits the
:class:`~hpcds1mpi.surrogates.models.SurrogateModel` and returns a :class:`Bundle`;
:func:`load_bundle` reads one back without retraining (files and format:
:mod:`~hpcds1mpi.surrogates.bundle_files`).
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from hpcds1mpi.errors import DataError
from hpcds1mpi.runtime.blas_threads import one_blas_thread

from .bundle_manifest import _metrics, data_hash, package_versions  # noqa: F401
from .bundle_files import (BUNDLE_FORMAT, FRAME_COLUMNS, LAUNCH_COLUMNS, LEVELS_FILE,  # noqa: F401
                           TRAINING_DATA, TRAINING_FRAME, TRAINING_MATRIX, default_bundle_path,
                           is_bundle,
                           read_bundle, read_training_columns, read_training_frame,
                           read_training_matrix, read_training_rows, write_bundle)
from .columns import Columns, as_columns, is_columns
from .features import INPUT_COLUMNS, build_features, feature_block, normalise_frame
from .estimators import member_budget
from .models import SurrogateModel
from .partition_hardware import partition_hardware
from .ranking import noise_of_column
from .size_neighbours import SizeNeighbours, correct_by_neighbours
from .targets import REGRESSION_TARGETS, failure_labels, target_values

if TYPE_CHECKING:  # pragma: no cover - pandas only where a caller hands or asks for a frame
    import pandas as pd

    from hpcds1mpi.records.training import TrainingData


# --------------------------------------------------------------------------------------------
# the bundle


class Bundle:
    """A fitted surrogate with its provenance; what System 1, the guard and recommend use.

    Attributes (read-only views of the manifest):
        targets: set of trained target names (``runtime_s``, ``energy_j``, ``failed``,
            ``peak_rss_mb``).
        workloads: workloads seen in training.
        size_range: workload -> (min size, max size) seen.
        machine_ids: machine fingerprints the training runs came from.
        partitions: partition name -> hardware dict.
        energy_source: where the training energies came from (e.g. ``modelled``).
    """

    #: :meth:`predict`, :meth:`design` and :meth:`embed` take :class:`~.columns.Columns`
    #: (System 1 and the guard then build no DataFrame; stand-ins without it get DataFrames).
    takes_columns = True
    #: :meth:`predict` and :meth:`design` take ``groups``: several jobs' tables stacked, each
    #: answered as alone (a stand-in without it is asked for the stack as is).
    takes_groups = True

    def __init__(self, model: SurrogateModel, manifest: dict, data: "pd.DataFrame | None",
                 matrix: np.ndarray | None = None, path: Path | None = None):
        self.model = model
        self.manifest = manifest
        self._data_frame = data
        self._matrix = matrix
        self._path = path

    @property
    def _data(self) -> "pd.DataFrame":
        # Read lazily: scoring needs none of it, and a 231,000-row table costs a cold start.
        if self._data_frame is None:
            self._data_frame = read_training_rows(self._path)
        return self._data_frame

    # -- views ---------------------------------------------------------------------------
    @property
    def targets(self) -> set[str]:
        return set(self.manifest["targets"])

    @property
    def workloads(self) -> set[str]:
        return set(self.manifest["workloads"])

    @property
    def size_range(self) -> dict[str, tuple[float, float]]:
        return {w: tuple(v) for w, v in self.manifest["size_range"].items()}

    @property
    def machine_ids(self) -> set[str]:
        return set(self.manifest["machine_ids"])

    @property
    def partitions(self) -> dict[str, dict]:
        return {k: dict(v) for k, v in self.manifest["partitions"].items()}

    @property
    def energy_source(self) -> str:
        return self.manifest.get("energy_source", "none")

    @property
    def input_columns(self) -> list[str]:
        return self.model.spec_.input_columns

    # -- prediction ----------------------------------------------------------------------
    def warm_up_scoring(self) -> bool:
        """Pay the compiled forest's one-time cost now (~0.55 s), so that every later
        :meth:`predict` here scores through it, whatever the rows (for long-lived processes:
        the service). False when there is none (``models.SurrogateModel.warm_forest``)."""
        warm = getattr(self.model, "warm_forest", None)
        return bool(warm()) if warm is not None else False

    def predict(self, df: "pd.DataFrame | Columns", groups: "list[int] | None" = None
                ) -> "pd.DataFrame | Columns":
        """Predict every row of ``df``.

        Args:
            df: (n rows) with :data:`~hpcds1mpi.surrogates.features.INPUT_COLUMNS`: a
                DataFrame, or :class:`~.columns.Columns` (the recommend path: no pandas).
            groups: the row counts of the tables stacked in ``df`` (several jobs' grids),
                each then answered exactly as :meth:`predict` of that table alone; None: one.

        Returns:
            the same kind as ``df`` (a DataFrame keeps ``df``'s index): ``runtime_s`` (ensemble median), ``runtime_lo`` /
            ``runtime_hi`` (10th / 90th percentile over members), ``runtime_spread`` (std of
            log runtime over members), ``energy_j`` / ``energy_lo`` / ``energy_hi``,
            ``fail_prob`` (mean over members), ``fail_prob_max``, and ``peak_rss_mb`` when
            trained; ``runtime_noise`` (the measured repeat noise of the workload's training
            runs, NaN for an unknown workload) when the bundle recorded it.

        Raises:
            ModelError: a required input column is missing.
        """
        # Statistics over members are taken per tree region (rows every tree treats alike)
        # and spread to the rows after: the baseline is the same for every member, so
        # quantile(members + baseline) = quantile(members) + baseline.
        if self.model.embedding_ is None:  # no matrix products: no BLAS limit needed
            from .forest_walk import predict_regions  # a grid's regions walked in numpy

            preds, inverse, baseline = predict_regions(self.model, df)
        else:
            with one_blas_thread():
                preds, inverse, baseline = self.model.predict_frame_regions(df, groups)

        def rows(values: np.ndarray) -> np.ndarray:
            return values if inverse is None else values[inverse]

        out = {}
        n = len(df)
        for target, prefix in (("runtime_s", "runtime"), ("energy_j", "energy")):
            if target in preds:
                logs = preds[target]
                q10, q50, q90 = (rows(q) + baseline[target]
                                 for q in _quantiles(logs, (0.1, 0.5, 0.9)))
                out[target], out[f"{prefix}_lo"], out[f"{prefix}_hi"] = (
                    np.exp(q50), np.exp(q10), np.exp(q90))
                if prefix == "runtime":
                    out["runtime_spread"] = rows(logs.std(axis=0))
            else:
                nan = np.full(n, np.nan)
                out[target], out[f"{prefix}_lo"], out[f"{prefix}_hi"] = nan, nan, nan
        if "failed" in preds:
            out["fail_prob"] = rows(preds["failed"].mean(axis=0))
            out["fail_prob_max"] = rows(preds["failed"].max(axis=0))
        else:
            out["fail_prob"] = np.zeros(n)
            out["fail_prob_max"] = np.zeros(n)
        if "peak_rss_mb" in preds:
            out["peak_rss_mb"] = np.exp(rows(_quantiles(preds["peak_rss_mb"], (0.5,))[0])
                                        + baseline["peak_rss_mb"])
        correct_by_neighbours(self.model, df, out)  # measured neighbouring sizes, if kept
        if self.model.noise_ and "workload" in df.columns:
            workloads = (df.coded("workload") if is_columns(df) else None) or df["workload"]
            out["runtime_noise"] = noise_of_column(self.model.noise_, workloads)
        if is_columns(df):
            return Columns(out)
        import pandas as pd

        return pd.DataFrame(out, index=df.index)

    def _design(self, df: "pd.DataFrame | Columns", groups: "list[int] | None" = None
                ) -> np.ndarray:
        if self.model.embedding_ is None:  # no matrix products: no BLAS limit (~50 ms cold)
            return self._features(df)
        with one_blas_thread():
            return self.model._design(self._features(df), groups)

    def _features(self, df: "pd.DataFrame | Columns") -> np.ndarray:
        """The (n, f) feature matrix of ``df`` (``build_features`` without its DataFrame)."""
        spec = self.model.spec_
        return feature_block(df, spec, spec.names).T

    def embed(self, df: "pd.DataFrame | Columns") -> np.ndarray:
        """The TabNet embedding of ``df``'s rows: (n, d) (d = 0 without embedding)."""
        X = self._features(df)
        if self.model.embedding_ is None:
            return np.zeros((len(df), 0))
        with one_blas_thread():
            return self.model.embedding_.transform(X)

    def design(self, df: "pd.DataFrame | Columns", groups: "list[int] | None" = None
               ) -> np.ndarray:
        """[features, embedding] of ``df``: (n, f + d), comparable with :meth:`training_matrix`
        (``groups`` as :meth:`predict`'s)."""
        return self._design(df, groups)

    def training_matrix(self) -> np.ndarray:
        """[features, embedding] of every training row: (n_train, f + d), float32."""
        if self._matrix is None and self._path is not None:
            self._matrix = read_training_matrix(self._path)
        if self._matrix is None:
            self._matrix = self._design(self._data).astype(np.float32)
        return self._matrix

    def training_frame(self) -> "pd.DataFrame":
        """Problem, configuration and outcome columns of every training row (``kept`` marks the
        rows the sampler kept), aligned with :meth:`training_matrix`."""
        if self._data_frame is None and self._path is not None:
            view = read_training_frame(self._path)  # no parquet reader on recommend's path
            if view is not None:
                return view
        return self._data[[c for c in FRAME_COLUMNS if c in self._data.columns]].copy()

    def training_columns(self, need: tuple[str, ...] = ()) -> Columns:
        """:meth:`training_frame` and :data:`LAUNCH_COLUMNS` as plain arrays (:class:`~.columns.
        Columns`: text as ``<U`` arrays, ``""`` where missing), read without pandas from a
        bundle that stores them; those of ``need`` its stored frame lacks (written before they
        were kept in it) read from its rows."""
        if self._data_frame is None and self._path is not None:
            view = read_training_columns(self._path)
            lack = tuple(c for c in need if view is not None and c not in view)
            if lack:
                rows = as_columns(read_training_rows(self._path, lack))
                view = Columns({**dict(view.items()), **dict(rows.items())})
            if view is not None:
                return view
        return as_columns(self._data, FRAME_COLUMNS + LAUNCH_COLUMNS)

    def training_data(self) -> "pd.DataFrame":
        """Every column of the training rows (what ``learn`` retrains on)."""
        return self._data.copy()

    # -- persistence ---------------------------------------------------------------------
    def save(self, path: str | os.PathLike, *, keep: tuple[str, ...] = ()) -> Path:
        """Write the bundle folder whole into a temporary folder beside ``path``, swapped in
        when complete: an old bundle there stays whole until then, and after a failure. Which
        folders may be replaced is the caller's check (``atomic.check_output_dir``, ``is_bundle``).

        Args:
            path: the bundle folder (parents created).
            keep: files of the old folder to carry over (``learn``: the calibrations).

        Raises:
            OutputError: the place is not writable (exit 2).
            WriteError: the write failed part-way, e.g. disk full (exit 1); nothing changed.
        """
        from hpcds1mpi.atomic import atomic_dir, carry_files

        path = Path(path)
        same = self._path is not None and path.resolve() == Path(self._path).resolve()
        # Saved where it was loaded from: the training files are linked over, not rewritten.
        data, matrix = (None, None) if same else (self._data, self.training_matrix())
        with atomic_dir(path, "bundle") as tmp:
            # carried first: the manifest write_bundle writes records every file's hash
            carry_files(path, tmp, (*keep, TRAINING_DATA, TRAINING_MATRIX, LEVELS_FILE,
                                    TRAINING_FRAME) if same else keep)
            write_bundle(tmp, self.model, self.manifest, data, matrix)
        self._path = path
        return path


def _quantiles(values: np.ndarray, qs: tuple[float, ...]) -> list[np.ndarray]:
    """Quantiles over axis 0 of a (K, n) array, linear interpolation (np.percentile's default
    method) from one sort: np.percentile costs ~3 ms per call on 10,000 columns."""
    ordered = np.sort(values, axis=0)
    k = len(ordered)
    out = []
    for q in qs:
        pos = q * (k - 1)
        lo = int(np.floor(pos))
        hi = min(lo + 1, k - 1)
        frac = pos - lo
        out.append(ordered[lo] if frac == 0 else ordered[lo] + (ordered[hi] - ordered[lo]) * frac)
    return out


# --------------------------------------------------------------------------------------------
# train / load


def train_bundle(data: "TrainingData | pd.DataFrame", *, sample_rate: float = 1.0,
                 seed: int = 0, family: str = "xgboost", n_members: int = 5,
                 use_embedding: bool = True, embedding_params: dict | None = None,
                 threads: int = 2, machine: str | None = None,
                 sources: list[str] | None = None, use_baseline: bool = True,
                 member_trees: int | None = None, member_learning_rate: float | None = None,
                 member_features: list[str] | None = None, centre=(),
                 focus: float = 0.0, denoise: bool = False, neighbours: float = 0.0) -> Bundle:
    """Sample and fit; return an unsaved :class:`Bundle`.

    Args:
        data: checked training data; a DataFrame (a runs table from ``telemetry.read_runs``
            or an ingested job table) is checked into one first
            (:meth:`TrainingData.from_frame`).
        sample_rate: intelligent-sampling target rate (0.5, 0.75 or 1.0 in the paper).
        seed: seed of sampling, bootstrap and TabNet.
        family: ensemble member family (``xgboost``, ``lightgbm``, ``rf``).
        n_members: bootstrap members per target.
        use_embedding: feed the TabNet embedding to the members.
        embedding_params: TabNet settings (see :class:`~.embedding.TabNetEmbedding`).
        threads: threads for training.
        machine: machine id to train on when the data mixes machines.
        sources: file names the data came from (recorded; default ``data.sources``).
        use_baseline: regress runtime and energy relative to the analytic time estimate.
        member_trees, member_learning_rate: trees per member, their rate (models.member_budget).
        member_features: feature names the members see (default all; ``models.KNOB_FEATURES``).
        centre: targets whose members learn the order within a problem (``"auto"``: runtime
            and energy on sweep-like data; ``()``, the default: absolute regression; the
            shipped bundle's recipe is chosen by :mod:`~hpcds1mpi.surrogates.ranking_cv`).
        focus: near-best weighting of the centred targets' rows (see ``SurrogateModel``).
        denoise: weigh runtime / energy rows by their measured repeat noise (idem).
        neighbours: weight of the correction by measured neighbouring sizes (0: none; see
            :mod:`~.size_neighbours`, which trains it once more per measured size, without it).
    """
    inner = {k: v for k, v in locals().items() if k not in ("data", "sample_rate", "machine",
                                                          "sources", "neighbours")}
    import pandas as pd

    from hpcds1mpi.records.training import TrainingData

    from .features import fit_spec
    from .measured_inputs import measured_inputs
    from .sampling import intelligent_sample

    t0 = time.perf_counter()
    if not isinstance(data, TrainingData):
        data = TrainingData.from_frame(data, machine=machine, sources=sources or ())
    elif machine is not None:
        data = TrainingData.from_frame(data.frame, machine=machine, sources=data.sources)
    training = data
    data = normalise_frame(training.frame)
    spec = fit_spec(data)
    X = build_features(data, spec).to_numpy()
    targets = {t: (target_values(data, t), "regression") for t in REGRESSION_TARGETS
               if np.isfinite(target_values(data, t)).any()}
    targets["failed"] = (failure_labels(data["status"]), "classification")
    keep, record = intelligent_sample(X, targets, sample_rate, seed=seed)
    kept = data[keep].reset_index(drop=True)
    if (kept["status"].astype(str) == "ok").sum() < 4:
        raise DataError(f"sampling at {sample_rate} kept fewer than 4 ok runs; use a higher "
                        "--sample-rate or more data")
    t_sample = time.perf_counter() - t0
    model = SurrogateModel(family=family, n_members=n_members, use_embedding=use_embedding,
                           embedding_params=embedding_params, seed=seed, threads=threads,
                           use_baseline=use_baseline, member_estimators=member_trees,
                           member_features=member_features, centre=centre, focus=focus,
                           denoise=denoise, member_learning_rate=member_learning_rate)
    model.fit(kept)
    if neighbours:  # the residuals' models: the same settings, on rows already sampled
        model.size_neighbours_ = SizeNeighbours.trained(
            kept, lambda rows: train_bundle(rows, **inner), neighbours)
    t_fit = time.perf_counter() - t0 - t_sample
    data = data.copy()
    data["kept"] = keep
    bundle = Bundle(model, {}, data)
    Z = bundle.training_matrix()
    metrics = _metrics(model, data[keep].reset_index(drop=True), Z[keep].astype(np.float64))
    metrics["train_seconds"] = {"sampling": t_sample, "fit": t_fit}
    metrics["ranking"] = {"centred_targets": sorted(model.levels_), "focus": float(focus),
                          "denoise": bool(denoise), "size_neighbours":
                          model.size_neighbours_.summary() if neighbours else None}
    ok = data["status"].astype(str) == "ok"
    energy_sources = sorted(
        data.loc[ok & pd.to_numeric(data.get("energy_j"), errors="coerce").notna(),
                 "energy_source"].astype(str).unique().tolist()
    ) if "energy_source" in data.columns and "energy_j" in data.columns else []
    energy_source = ",".join(energy_sources) if energy_sources else (
        "unknown" if "energy_j" in model.targets_ else "none")
    if "energy_j" in model.targets_:
        metrics["energy_j"]["energy_source"] = energy_source
        if energy_source == "modelled":
            metrics["energy_j"]["note"] = ("trained on modelled energy (no hardware meter); "
                                           "predictions reproduce the power model")
    sizes = pd.to_numeric(data["size"], errors="coerce")
    size_range = {
        w: (float(s.min()), float(s.max()))
        for w, s in sizes.groupby(data["workload"].astype(str)) if s.notna().any()
    }
    partitions = partition_hardware(data)
    manifest = {
        "format_version": BUNDLE_FORMAT,
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "packages": package_versions(),
        "feature_spec": model.spec_.as_dict(),
        "targets": list(model.targets_),
        "embedding_targets": list(getattr(model, "embedding_targets_", [])),
        "workloads": sorted(data["workload"].astype(str).unique().tolist()),
        "size_range": size_range,
        "machine_ids": sorted(data["machine_id"].dropna().astype(str).unique().tolist())
        if "machine_id" in data.columns else [],
        "partitions": partitions,
        "energy_source": energy_source,
        "sampling": record.as_dict(),
        "metrics": metrics,
        "data_hash": data_hash(data.drop(columns=["kept"])),
        "n_rows": int(len(data)),
        "dropped_zero_runtime_jobs": int(training.dropped_zero_runtime_jobs),
        "family": family,
        "n_members": int(n_members),
        "member_trees_and_learning_rate": list(member_budget(n_members, member_trees,
                                                             member_learning_rate)),
        "member_trees": member_trees,
        "member_learning_rate": member_learning_rate,
        "member_features": model.member_features,
        "use_embedding": bool(use_embedding),
        "use_baseline": bool(use_baseline),
        "seed": int(seed),
        "sources": list(training.sources if sources is None else sources),
        **measured_inputs(data),  # which input files its programs' runs read (s48 O4)
    }
    bundle.manifest = manifest
    return bundle


def load_bundle(path: str | os.PathLike | None = None) -> Bundle:
    """Read a bundle directory written by :meth:`Bundle.save`, without retraining.

    Args:
        path: the bundle directory; None loads the bundle shipped with the package
            (:func:`default_bundle_path`, trained on ``data/reference/telemetry.h5``).

    Raises:
        ModelError: missing directory or files, or a different bundle format version.
    """
    model, manifest, path = read_bundle(path)
    return Bundle(model, manifest, None, None, path=path)


__all__ = ["Bundle", "BUNDLE_FORMAT", "INPUT_COLUMNS", "default_bundle_path", "is_bundle",
           "load_bundle", "train_bundle"]
