"""The training rows' frame as plain numpy arrays (``training_frame.npz`` in a bundle): what
``recommend`` reads of them without a parquet reader (a cold start), text stored as codes.

:func:`write_training_frame` writes it beside the rows; :func:`read_training_frame` gives it
back as a DataFrame, :func:`read_training_columns` as :class:`~.columns.Columns` (no pandas).
A bundle written before the file, or before a column was kept in it, lacks it: its reader
reads the rows (``bundle_files.read_training_rows``).
"""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from hpcds1mpi.errors import ModelError

from .columns import Columns

if TYPE_CHECKING:  # pragma: no cover - pandas is imported where a DataFrame is made
    import pandas as pd

#: The training rows' problem, configuration and outcome columns as plain numpy arrays: what
#: ``recommend`` reads (the guard, memory limits) without importing a parquet reader.
TRAINING_FRAME = "training_frame.npz"
#: Columns :meth:`~hpcds1mpi.surrogates.bundle.Bundle.training_frame` returns.
FRAME_COLUMNS = ("workload", "size", "nodes", "ranks_per_node", "ranks", "threads", "device",
                 "precision", "partition", "cores_per_node", "memory_gb", "gpus_per_node",
                 "status", "error", "runtime_s", "energy_j", "peak_rss_mb", "gpu_peak_mem_mb",
                 "machine_id", "energy_source", "kept", "runtime_min_s", "runtime_max_s")
#: Kept in :data:`TRAINING_FRAME` too, read by :func:`read_training_columns` alone: what a
#: kernel run's launch spent (``decide/kernel_job_time.py``). Not in the DataFrame, where a
#: ``kind`` column would change the levels read from it (``levels.levels_from_frame``).
LAUNCH_COLUMNS = ("kind", "elapsed_s", "measured_s")


def write_training_frame(path: Path, data: "pd.DataFrame") -> None:
    """Write :data:`TRAINING_FRAME`: each of :data:`FRAME_COLUMNS` and :data:`LAUNCH_COLUMNS`
    the rows have; text as codes into its distinct values (``<col>.codes``, -1 where missing;
    ``<col>.values``), so long repeated error texts cost one copy each; no pickled objects."""
    import pandas as pd

    arrays = {}
    for col in (c for c in FRAME_COLUMNS + LAUNCH_COLUMNS if c in data.columns):
        series = data[col]
        if pd.api.types.is_bool_dtype(series.dtype) or pd.api.types.is_numeric_dtype(series.dtype):
            arrays[col] = series.to_numpy()
            continue
        codes, uniques = pd.factorize(series, use_na_sentinel=True)
        arrays[f"{col}.codes"] = codes.astype(np.int32)
        arrays[f"{col}.values"] = np.asarray([str(u) for u in uniques], dtype=str)
    np.savez(path / TRAINING_FRAME, **arrays)


def read_training_frame(path: Path) -> "pd.DataFrame | None":
    """The frame :func:`write_training_frame` wrote (the same values as those columns of the
    parquet rows); None when the bundle predates the file.

    Raises:
        ModelError: the file is there but unreadable.
    """
    import pandas as pd

    def text(values: np.ndarray, codes: np.ndarray):
        text = pd.Series(values.tolist() + [""], dtype="str")
        return pd.Series(text.to_numpy()[codes], dtype="str").mask(codes < 0)

    out = _read_frame_file(path, text, FRAME_COLUMNS)
    return None if out is None else pd.DataFrame(out)


def read_training_columns(path: Path) -> Columns | None:
    """:func:`read_training_frame` as plain arrays (:class:`~.columns.Columns`, no pandas),
    :data:`LAUNCH_COLUMNS` too where kept (not in a file written before them): text as ``<U``
    arrays, ``""`` where the frame has a missing value; None when the bundle predates the file.

    Raises:
        ModelError: the file is there but unreadable.
    """
    def text(values: np.ndarray, codes: np.ndarray) -> np.ndarray:
        return np.append(values.astype(str), "")[codes]  # code -1: the "" appended

    out = _read_frame_file(path, text, FRAME_COLUMNS + LAUNCH_COLUMNS)
    return None if out is None else Columns(out)


def _read_frame_file(path: Path, text, names: tuple[str, ...]) -> dict | None:
    """The columns ``names`` of :data:`TRAINING_FRAME` it has, text columns made by
    ``text(values, codes)``."""
    file = Path(path) / TRAINING_FRAME
    if not file.is_file():
        return None
    try:
        with np.load(file, allow_pickle=False) as npz:
            arrays = {k: npz[k] for k in npz.files}
        out = {}
        for col in names:
            if col in arrays:
                out[col] = arrays[col]
            elif f"{col}.codes" in arrays:
                out[col] = text(arrays[f"{col}.values"], arrays[f"{col}.codes"])
        return out
    except (OSError, ValueError, KeyError, TypeError, EOFError, IndexError,
            zipfile.BadZipFile) as exc:
        raise ModelError(f"{file}: unreadable ({exc}); retrain with `hpcds1mpi train`") from None


__all__ = ["FRAME_COLUMNS", "LAUNCH_COLUMNS", "TRAINING_FRAME", "read_training_columns",
           "read_training_frame", "write_training_frame"]
