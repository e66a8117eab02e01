"""System 1's confidence model: its direction, and its calibration file."""

from __future__ import annotations

from hpcds1mpi.decide.confidence import CALIBRATION_FILE, ConfidenceModel


def test_confidence_grows_with_margin_and_shrinks_with_spread():
    model = ConfidenceModel()
    assert model.predict([0.05], [0.5])[0] > model.predict([0.05], [0.0])[0]
    assert model.predict([0.05], [0.1])[0] > model.predict([1.0], [0.1])[0]


def test_confidence_calibration_round_trip(tmp_path):
    ConfidenceModel(coef=(1.0, -2.0, 0.3), calibrated=True).save(tmp_path / CALIBRATION_FILE)
    loaded = ConfidenceModel.load(tmp_path)
    assert loaded.calibrated and loaded.coef == (1.0, -2.0, 0.3)
    (tmp_path / CALIBRATION_FILE).write_text("{not json")
    assert not ConfidenceModel.load(tmp_path).calibrated


def test_a_noisy_workload_lowers_the_confidence_and_three_coefficients_ignore_it():
    model = ConfidenceModel(coef=(0.5, -0.5, 0.3, -1.0), calibrated=True)
    quiet, noisy = model.predict([0.1, 0.1], [0.2, 0.2], [0.05, 2.0])
    assert quiet > noisy
    # Unknown noise is the default noise, not an error; without noise given, the same.
    unknown = model.predict([0.1], [0.2], [float("nan")])[0]
    assert unknown == model.predict([0.1], [0.2])[0] == model.predict(
        [0.1], [0.2], [0.16])[0]
    old = ConfidenceModel(coef=(0.5, -0.5, 0.3))
    assert old.predict([0.1], [0.2], [2.0])[0] == old.predict([0.1], [0.2], [0.05])[0]


def test_four_coefficients_round_trip(tmp_path):
    ConfidenceModel(coef=(1.0, -2.0, 0.3, -0.7), calibrated=True).save(
        tmp_path / CALIBRATION_FILE)
    assert ConfidenceModel.load(tmp_path).coef == (1.0, -2.0, 0.3, -0.7)
    ConfidenceModel(coef=(1.0, -2.0), calibrated=True).save(tmp_path / CALIBRATION_FILE)
    assert not ConfidenceModel.load(tmp_path).calibrated


def test_the_file_is_read_once_and_again_when_rewritten(tmp_path, monkeypatch):
    from hpcds1mpi.decide import confidence

    ConfidenceModel(coef=(1.0, -2.0, 0.3)).save(tmp_path / CALIBRATION_FILE)
    reads = []
    real = confidence._read
    monkeypatch.setattr(confidence, "_read", lambda p: reads.append(p) or real(p))
    models = [ConfidenceModel.load(tmp_path) for _ in range(3)]
    assert len(reads) == 1 and all(m.coef == (1.0, -2.0, 0.3) and m.calibrated for m in models)
    assert models[0] is not models[1]
    # Rewritten (``learn``), same size: the new coefficients, not the kept ones.
    ConfidenceModel(coef=(1.0, -2.0, 0.4)).save(tmp_path / CALIBRATION_FILE)
    assert ConfidenceModel.load(tmp_path).coef == (1.0, -2.0, 0.4) and len(reads) == 2
    (tmp_path / CALIBRATION_FILE).unlink()
    assert not ConfidenceModel.load(tmp_path).calibrated
