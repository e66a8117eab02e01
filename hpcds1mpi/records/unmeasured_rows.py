"""Rows that look like measurements and are not: what training must not learn as measured.

A job log's *predicted* energy (CINECA Eurora's ``pred_power_W``) is blanked, so a bundle
never answers with it as if measured; a run made on the fake GPU (``HPCDS1MPI_FAKE_GPU=1``:
the GPU code run on the CPU, a test switch) is left out, and said, since it measured the CPU.
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def without_predicted_energy(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with energy and power blanked where a job log's authors *predicted* them."""
    if "energy_source" not in frame.columns:
        return frame
    from hpcds1mpi.records.ingest.eurora import ENERGY_PREDICTED

    predicted = frame["energy_source"].astype("string").fillna("") == ENERGY_PREDICTED
    if not predicted.any():
        return frame
    frame = frame.copy()
    for col in ("energy_j", "avg_power_w"):
        if col in frame.columns:
            frame.loc[predicted, col] = np.nan
    return frame


def fake_gpu_runs(frame: pd.DataFrame) -> pd.Series:
    """Which runs of a telemetry file were made on the fake GPU (``gpu_source`` ``fake``).
    Files written before runs said so are not guessed at: a machine that recorded no GPU may
    still have run on one (``nvidia-smi`` missing, a ROCm GPU)."""
    from hpcds1mpi.runtime.arrays import FAKE_GPU_SOURCE

    if "gpu_source" not in frame.columns:
        return pd.Series(False, index=frame.index)
    return frame["gpu_source"].astype("string").fillna("") == FAKE_GPU_SOURCE


def without_fake_gpu_runs(frame: pd.DataFrame, path) -> pd.DataFrame:
    """``frame`` without its fake-GPU runs (:func:`fake_gpu_runs`); the line saying how many
    were left out goes in ``attrs["left_out"]``."""
    fake = fake_gpu_runs(frame)
    if not fake.any():
        return frame
    kept = frame[~fake].reset_index(drop=True)
    kept.attrs = dict(frame.attrs)
    kept.attrs["left_out"] = [*frame.attrs.get("left_out", []), (
        f"{path}: {int(fake.sum())} GPU run(s) left out: made on the fake GPU "
        "(HPCDS1MPI_FAKE_GPU=1): they measured the CPU, not a GPU")]
    return kept
