"""The model bundle: a versioned directory holding a fitted surrogate and what it was trained on.

Layout of ``model/``::

    manifest.json          format version, package versions, feature spec, targets, workloads,
                           size ranges, machine ids, partitions, energy source, sampling record,
                           metrics, training-data hash, embedding configuration
    embedding.npz          TabNet encoder weights as numpy arrays (prediction needs no torch)
    members.pkl            per-target ensemble members (scikit-learn-style estimators)
    training_data.parquet  every training row offered (``kept`` marks the sampled ones)
    training_matrix.npy    [features, embedding] of those rows (float32), for the guard
    README.txt             what the bundle is, how it was trained, where energy came from

:func:`train_bundle` checks the data, samples it (paper's intelligent sampling), fits the
:class:`~hpcds1mpi.surrogates.models.SurrogateModel` and returns a :class:`Bundle`;
:func:`load_bundle` reads one back without retraining and refuses other format versions.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import time
from pathlib import Path

import numpy as np
import pandas as pd

from hpcds1mpi.errors import DataError, ModelError

from .features import INPUT_COLUMNS, REQUEST_COLUMNS, build_features, normalise_frame
from .models import (REGRESSION_TARGETS, SurrogateModel, failure_labels, member_budget,
                     target_values)

BUNDLE_FORMAT = 1
MANIFEST = "manifest.json"

#: Columns a training table may have besides the runs table (``telemetry.RUN_COLUMNS``) and
#: the job table (``ingest.JOB_COLUMNS``). Anything else is refused, not silently used or ignored.
EXTRA_COLUMNS: frozenset[str] = frozenset({"kept", "gpu_memory_gb", "max_nodes", *REQUEST_COLUMNS})


def known_columns() -> frozenset[str]:
    """Every column name a training table may hold."""
    from hpcds1mpi.records.ingest import JOB_COLUMNS
    from hpcds1mpi.records.telemetry import RUN_COLUMNS

    return EXTRA_COLUMNS | {c for c, _ in RUN_COLUMNS} | {c for c, _ in JOB_COLUMNS}


#: Columns :meth:`Bundle.training_frame` returns (problem, configuration, outcome).
FRAME_COLUMNS = ("workload", "size", "nodes", "ranks_per_node", "ranks", "threads", "device",
                 "precision", "partition", "cores_per_node", "memory_gb", "gpus_per_node",
                 "status", "error", "runtime_s", "energy_j", "peak_rss_mb", "gpu_peak_mem_mb",
                 "machine_id", "energy_source")


# --------------------------------------------------------------------------------------------
# checking the training data


def check_training_frame(frame: pd.DataFrame, *, machine: str | None = None,
                         allow_columns: set[str] | None = None) -> pd.DataFrame:
    """Refuse training data that cannot train a model; return it normalised.

    Raises:
        DataError: one line: empty table, unknown columns, no ok runs, NaN runtimes of ok
            runs, runs from several machines without ``machine`` chosen.
    """
    if frame is None or len(frame) == 0:
        raise DataError("training data is empty: no runs; measure with `hpcds1mpi sweep` first")
    known = known_columns() | set(allow_columns or ())
    unknown = sorted(str(c) for c in frame.columns if c not in known)
    if unknown:
        raise DataError(
            f"training data has unknown column(s) {', '.join(unknown[:8])}"
            f"{' ...' if len(unknown) > 8 else ''}; expected runs-table / job-table columns "
            "(docs/architecture.md, 'Runs table')"
        )
    for col in ("workload", "status", "runtime_s"):
        if col not in frame.columns:
            raise DataError(f"training data has no {col!r} column; expected a runs table "
                            "or an ingested job table")
    if "machine_id" in frame.columns:
        ids = sorted(frame["machine_id"].dropna().astype(str).unique())
        if machine is not None:
            if machine not in ids:
                raise DataError(f"no runs from machine {machine!r}; the data has "
                                f"{', '.join(ids) or 'none'}")
            frame = frame[frame["machine_id"].astype(str) == machine]
        elif len(ids) > 1:
            raise DataError(
                f"training data mixes {len(ids)} machines ({', '.join(i[:12] for i in ids)}); "
                "runs from different machines are never mixed: train one bundle per machine "
                "with --machine ID"
            )
    status = frame["status"].astype(str)
    ok = status == "ok"
    if not ok.any():
        counts = status.value_counts().to_dict()
        raise DataError(f"training data has no successful runs (statuses: {counts}); "
                        "a model needs ok runs to learn runtimes")
    runtime = pd.to_numeric(frame["runtime_s"], errors="coerce")
    bad_rows = ok & (~np.isfinite(runtime) | (runtime <= 0))
    bad = int(bad_rows.sum())
    dropped = 0
    if bad:
        # Sweep telemetry (has run_id): a completed run without a runtime is a broken file.
        # Job logs: schedulers record 0-second jobs; drop them, counted in the manifest.
        is_job_table = "run_id" not in frame.columns
        if not is_job_table or bad > 0.05 * int(ok.sum()):
            raise DataError(f"{bad} ok run(s) have a NaN or non-positive runtime_s target; "
                            "fix or drop those rows")
        frame = frame[~bad_rows]
        ok = frame["status"].astype(str) == "ok"
        dropped = bad
    if ok.sum() < 4:
        raise DataError(f"only {int(ok.sum())} ok run(s); a model needs at least 4")
    out = normalise_frame(frame.drop(columns=["kept"], errors="ignore"))
    out.attrs["dropped_zero_runtime_jobs"] = dropped
    if "energy_j" not in out.columns or pd.to_numeric(out["energy_j"], errors="coerce").isna().all():
        if "avg_power_w" in out.columns:
            out["energy_j"] = (pd.to_numeric(out["avg_power_w"], errors="coerce")
                               * pd.to_numeric(out["runtime_s"], errors="coerce"))
    out = out.reset_index(drop=True)
    out.attrs["dropped_zero_runtime_jobs"] = dropped
    return out


def data_hash(frame: pd.DataFrame) -> str:
    """SHA-256 of the training table's content (column order independent)."""
    cols = sorted(str(c) for c in frame.columns)
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


def _metrics(model: SurrogateModel, frame: pd.DataFrame, Z: np.ndarray) -> dict:
    """In-sample fit of the ensemble median (held-out numbers come from analysis/h1_eval.py)."""
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

    def __init__(self, model: SurrogateModel, manifest: dict, data: pd.DataFrame | None,
                 matrix: np.ndarray | None = None, path: Path | None = None):
        self.model = model
        self.manifest = manifest
        self._data_frame = data
        self._matrix = matrix
        self._path = path

    @property
    def _data(self) -> pd.DataFrame:
        # Read lazily: scoring needs none of it, and a 231,000-row table costs a cold start.
        if self._data_frame is None:
            try:
                self._data_frame = pd.read_parquet(self._path / "training_data.parquet")
            except OSError as exc:
                raise ModelError(f"{self._path}: training data unreadable ({exc}); "
                                 "retrain with `hpcds1mpi train`") from None
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
    def predict(self, df: pd.DataFrame) -> pd.DataFrame:
        """Predict every row of ``df``.

        Args:
            df: (n rows) with :data:`~hpcds1mpi.surrogates.features.INPUT_COLUMNS`.

        Returns:
            DataFrame aligned with ``df``: ``runtime_s`` (ensemble median), ``runtime_lo`` /
            ``runtime_hi`` (10th / 90th percentile over members), ``runtime_spread`` (std of
            log runtime over members), ``energy_j`` / ``energy_lo`` / ``energy_hi``,
            ``fail_prob`` (mean over members), ``fail_prob_max``, and ``peak_rss_mb`` when
            trained.

        Raises:
            ModelError: a required input column is missing.
        """
        # Statistics over members are taken per tree region (rows every tree treats alike)
        # and spread to the rows after: the baseline is the same for every member, so
        # quantile(members + baseline) = quantile(members) + baseline.
        if self.model.embedding_ is None:  # no matrix products: no BLAS limit needed
            preds, inverse, baseline = self.model.predict_frame_regions(df)
        else:
            with _one_blas_thread():
                preds, inverse, baseline = self.model.predict_frame_regions(df)

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
        return pd.DataFrame(out, index=df.index)

    def _design(self, df: pd.DataFrame) -> np.ndarray:
        with _one_blas_thread():
            return self.model.design_matrix(df)

    def embed(self, df: pd.DataFrame) -> np.ndarray:
        """The TabNet embedding of ``df``'s rows: (n, d) (d = 0 without embedding)."""
        X = build_features(df, self.model.spec_).to_numpy()
        if self.model.embedding_ is None:
            return np.zeros((len(df), 0))
        with _one_blas_thread():
            return self.model.embedding_.transform(X)

    def design(self, df: pd.DataFrame) -> np.ndarray:
        """[features, embedding] of ``df``: (n, f + d), comparable with :meth:`training_matrix`."""
        return self._design(df)

    def training_matrix(self) -> np.ndarray:
        """[features, embedding] of every training row: (n_train, f + d), float32."""
        if self._matrix is None and self._path is not None \
                and (self._path / "training_matrix.npy").exists():
            self._matrix = np.load(self._path / "training_matrix.npy")
        if self._matrix is None:
            self._matrix = self._design(self._data).astype(np.float32)
        return self._matrix

    def training_frame(self) -> pd.DataFrame:
        """Problem, configuration and outcome columns of every training row (``kept`` marks the
        rows the sampler kept), aligned with :meth:`training_matrix`."""
        cols = [c for c in (*FRAME_COLUMNS, "kept") if c in self._data.columns]
        return self._data[cols].copy()

    def training_data(self) -> pd.DataFrame:
        """Every column of the training rows (what ``learn`` retrains on)."""
        return self._data.copy()

    # -- persistence ---------------------------------------------------------------------
    def save(self, path: str | os.PathLike) -> Path:
        """Write the bundle directory (created if needed; files replaced)."""
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        model = self.model
        if model.embedding_ is not None:
            arrays, meta = model.embedding_.to_arrays()
            np.savez(path / "embedding.npz", **arrays)
            self.manifest["embedding"] = meta
        else:
            self.manifest["embedding"] = None
        with open(path / "members.pkl", "wb") as fh:
            pickle.dump(model.members_, fh, protocol=pickle.HIGHEST_PROTOCOL)
        matrix = self.training_matrix()
        data = self._data
        if self._path is None or Path(path).resolve() != Path(self._path).resolve():
            data.to_parquet(path / "training_data.parquet", index=False)
            np.save(path / "training_matrix.npy", matrix)
        self._path = path
        with open(path / MANIFEST, "w") as fh:
            json.dump(self.manifest, fh, indent=2, default=_json_default)
        (path / "README.txt").write_text(_readme(self.manifest))
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


def _json_default(value):
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.floating,)):
        return float(value)
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


class _one_blas_thread:
    """Limit BLAS to one thread: the small matmuls of the embedding are 10-100x slower when
    OpenBLAS spreads them over busy cores."""

    _controller = None

    def __enter__(self):
        try:
            from threadpoolctl import ThreadpoolController
        except ImportError:  # pragma: no cover
            self._ctx = None
            return self
        if _one_blas_thread._controller is None:
            _one_blas_thread._controller = ThreadpoolController()
        self._ctx = _one_blas_thread._controller.limit(limits=1, user_api="blas")
        self._ctx.__enter__()
        return self

    def __exit__(self, *exc):
        if self._ctx is not None:
            self._ctx.__exit__(*exc)
        return False


def _readme(manifest: dict) -> str:
    src = manifest.get("energy_source", "none")
    energy_line = (
        "Energy predictions were trained on MODELLED energy (no RAPL/NVML/Slurm meter on the "
        "training machine): they reproduce the power model, not a measurement."
        if src == "modelled" else f"Energy predictions were trained on energy from: {src}."
    )
    s = manifest.get("sampling", {})
    return (
        "hpcds1mpi model bundle (format {fmt})\n\n"
        "Trained {when} on {n} rows ({kept} kept by intelligent sampling at target rate "
        "{rate}, achieved {ach:.3f}, seed {seed}).\n"
        "Family: {fam} x {k} members (Bayesian bootstrap over problems, {trees} trees each); "
        "TabNet embedding: {emb}; member features: {mf}.\n"
        "Sources: {src}.\n"
        "Targets: {targets}.\n{energy}\n"
        "Training-data SHA-256: {h}\n"
        "Metrics in manifest.json are in-sample; held-out accuracy: analysis/h1_eval.py.\n"
    ).format(fmt=manifest["format_version"], when=manifest["created"],
             n=s.get("n_total"), kept=s.get("n_kept"), rate=s.get("target_rate"),
             ach=s.get("achieved_rate", float("nan")), seed=s.get("seed"),
             fam=manifest["family"], k=manifest["n_members"],
             trees=(manifest.get("member_trees_and_learning_rate") or ["?"])[0],
             mf=(f"{len(manifest['member_features'])} problem/knob features"
                 if manifest.get("member_features") else "all"),
             src=", ".join(manifest.get("sources") or []) or "not recorded",
             emb="yes" if manifest.get("use_embedding") else "no",
             targets=", ".join(manifest["targets"]), energy=energy_line,
             h=manifest["data_hash"])


# --------------------------------------------------------------------------------------------
# train / load


def train_bundle(frame: pd.DataFrame, *, sample_rate: float = 1.0, seed: int = 0,
                 family: str = "xgboost", n_members: int = 5, use_embedding: bool = True,
                 embedding_params: dict | None = None, threads: int = 2,
                 machine: str | None = None, sources: list[str] | None = None,
                 checked: bool = False, use_baseline: bool = True,
                 member_trees: int | None = None,
                 member_features: list[str] | None = None) -> Bundle:
    """Check, sample and fit; return an unsaved :class:`Bundle`.

    Args:
        frame: a runs table (``telemetry.read_runs``) or an ingested job table.
        sample_rate: intelligent-sampling target rate (0.5, 0.75 or 1.0 in the paper).
        seed: seed of sampling, bootstrap and TabNet.
        family: ensemble member family (``xgboost``, ``lightgbm``, ``rf``).
        n_members: bootstrap members per target.
        use_embedding: feed the TabNet embedding to the members.
        embedding_params: TabNet settings (see :class:`~.embedding.TabNetEmbedding`).
        threads: threads for training.
        machine: machine id to train on when the data mixes machines.
        sources: file names the data came from (recorded).
        checked: ``frame`` already went through :func:`check_training_frame`.
        use_baseline: regress runtime and energy relative to the analytic time estimate.
        member_trees: trees per ensemble member (default: models.member_budget).
        member_features: feature names the members see (default all; see
            ``models.KNOB_FEATURES``).
    """
    from .features import fit_spec
    from .sampling import intelligent_sample

    t0 = time.perf_counter()
    data = frame if checked else check_training_frame(frame, machine=machine)
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
                           member_features=member_features)
    model.fit(kept)
    t_fit = time.perf_counter() - t0 - t_sample
    data = data.copy()
    data["kept"] = keep
    bundle = Bundle(model, {}, data)
    Z = bundle.training_matrix()
    metrics = _metrics(model, data[keep].reset_index(drop=True), Z[keep].astype(np.float64))
    metrics["train_seconds"] = {"sampling": t_sample, "fit": t_fit}
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
    partitions = {}
    hw_cols = [c for c in ("cores_per_node", "memory_gb", "gpus_per_node", "gpu_memory_gb",
                           "max_nodes") if c in data.columns]
    for name, rows in data.groupby(data["partition"].astype(str)):
        partitions[name] = {c: (None if pd.isna(rows[c].iloc[0]) else _plain(rows[c].iloc[0]))
                            for c in hw_cols}
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
        "data_hash": data_hash(frame if checked else data.drop(columns=["kept"])),
        "n_rows": int(len(data)),
        "dropped_zero_runtime_jobs": int(data.attrs.get("dropped_zero_runtime_jobs", 0)),
        "family": family,
        "n_members": int(n_members),
        "member_trees_and_learning_rate": list(member_budget(n_members, member_trees)),
        "member_trees": member_trees,
        "member_features": model.member_features,
        "use_embedding": bool(use_embedding),
        "use_baseline": bool(use_baseline),
        "seed": int(seed),
        "sources": list(sources or []),
    }
    bundle.manifest = manifest
    return bundle


def _plain(value):
    if isinstance(value, np.generic):
        return value.item()
    return value


def default_bundle_path() -> Path:
    """Where the bundle shipped with the package lives (``hpcds1mpi/data/default_model``)."""
    import hpcds1mpi

    return Path(hpcds1mpi.__file__).resolve().parent / "data" / "default_model"


def load_bundle(path: str | os.PathLike | None = None) -> Bundle:
    """Read a bundle directory written by :meth:`Bundle.save`, without retraining.

    Args:
        path: the bundle directory; None loads the bundle shipped with the package
            (:func:`default_bundle_path`, trained on ``data/reference/telemetry.h5``).

    Raises:
        ModelError: missing directory or files, or a different bundle format version.
    """
    from .embedding import TabNetEmbedding
    from .features import FeatureSpec

    path = Path(path) if path is not None else default_bundle_path()
    manifest_path = path / MANIFEST
    if not manifest_path.is_file():
        raise ModelError(f"{path}: not a model bundle (no {MANIFEST}); train one with "
                         "`hpcds1mpi train --telemetry FILE --out DIR`")
    try:
        manifest = json.loads(manifest_path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise ModelError(f"{manifest_path}: unreadable ({exc}); retrain the bundle") from None
    version = manifest.get("format_version")
    if version != BUNDLE_FORMAT:
        raise ModelError(f"{path}: bundle format {version} but this hpcds1mpi reads format "
                         f"{BUNDLE_FORMAT}; retrain with `hpcds1mpi train`")
    spec = FeatureSpec.from_dict(manifest["feature_spec"])
    from .features import FEATURE_FORMAT

    if spec.format != FEATURE_FORMAT:
        raise ModelError(f"{path}: feature format {spec.format} but this hpcds1mpi builds "
                         f"format {FEATURE_FORMAT}; retrain with `hpcds1mpi train`")
    model = SurrogateModel(family=manifest["family"], n_members=manifest["n_members"],
                           use_embedding=manifest["use_embedding"], seed=manifest["seed"],
                           use_baseline=manifest.get("use_baseline", False),
                           member_features=manifest.get("member_features"))
    model.spec_ = spec
    model.targets_ = list(manifest["targets"])
    model.n_features_in_ = len(spec.names)
    try:
        if manifest.get("embedding"):
            with np.load(path / "embedding.npz") as npz:
                arrays = {k: npz[k] for k in npz.files}
            model.embedding_ = TabNetEmbedding.from_arrays(arrays, manifest["embedding"])
        else:
            model.embedding_ = None
        with open(path / "members.pkl", "rb") as fh:
            model.members_ = pickle.load(fh)
        if not (path / "training_data.parquet").is_file():
            raise OSError("training_data.parquet missing")
    except (OSError, pickle.UnpicklingError, EOFError, KeyError, ValueError) as exc:
        raise ModelError(f"{path}: bundle is incomplete or damaged ({type(exc).__name__}: "
                         f"{exc}); retrain with `hpcds1mpi train`") from None
    return Bundle(model, manifest, None, None, path=path)


__all__ = ["Bundle", "BUNDLE_FORMAT", "INPUT_COLUMNS", "check_training_frame",
           "default_bundle_path", "load_bundle", "train_bundle"]
