"""Rows that look measured and are not: fake-GPU runs left out of training, and said."""

from __future__ import annotations

from hpcds1mpi.records import telemetry
from hpcds1mpi.records.training import TrainingData, read_frames
from hpcds1mpi.records.unmeasured_rows import fake_gpu_runs
from tests.records.telemetry.rows import run_row


def _file(tmp_path, fake: int, cpu: int = 5):
    path = tmp_path / "t.h5"
    rows = [run_row(i, size=64 + i) for i in range(cpu)]
    rows += [run_row(100 + i, device="gpu", gpu_source="fake") for i in range(fake)]
    rows.append(run_row(200, device="gpu", gpu_source="nvml"))  # a real GPU run stays
    telemetry.append(path, rows)
    return path


def test_fake_gpu_runs_are_left_out_and_said(tmp_path):
    """HPCDS1MPI_FAKE_GPU=1 runs the GPU code on the CPU (a test switch); its runs had been
    trained on as GPU measurements (s26 tester l 12)."""
    path = _file(tmp_path, fake=3)
    data = TrainingData.read([str(path)])
    assert len(data) == 6 and (data.frame["gpu_source"] != "fake").all()
    assert (data.frame["device"] == "gpu").sum() == 1  # the NVML-measured run is kept
    assert len(data.left_out) == 1 and "3 GPU run(s) left out" in data.left_out[0]
    assert "HPCDS1MPI_FAKE_GPU=1" in data.left_out[0] and str(path) in data.left_out[0]
    (tmp_path / "clean").mkdir()
    assert TrainingData.read([str(_file(tmp_path / "clean", fake=0))]).left_out == ()


def test_only_the_recorded_mark_counts(tmp_path):
    """A GPU run without the mark is not guessed fake (nvidia-smi may be missing, a ROCm GPU)."""
    frame = read_frames([str(_file(tmp_path, fake=0))])
    assert not fake_gpu_runs(frame).any() and frame.attrs["left_out"] == []
