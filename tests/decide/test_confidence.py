"""System 1's confidence model: its direction, and its calibration file."""

from __future__ import annotations

import numpy as np
import pytest

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
    old = ConfidenceModel(coef=(0.5, -0.5, 0.3), calibrated=True)  # an older file
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


def test_named_inputs_round_trip_and_the_measured_best_share_raises_confidence(tmp_path):
    model = ConfidenceModel(coef=(0.2, 0.7, 1.3), calibrated=True,
                            inputs=("log_margin", "measured_best_share"))
    assert model.uses("measured_best_share") and not model.uses("log_noise")
    none, half, both = model.predict([0.1] * 3, [0.05] * 3, None, [0.0, 0.5, 1.0])
    assert none < half < both
    # Unknown (nothing measured around) counts as not the measured best.
    assert model.predict([0.1], [0.05], None, [float("nan")])[0] == none
    model.save(tmp_path / CALIBRATION_FILE)
    loaded = ConfidenceModel.load(tmp_path)
    assert loaded.inputs == ("log_margin", "measured_best_share") and loaded.coef == model.coef
    # Older files name no inputs: the number of coefficients says which.
    assert ConfidenceModel(coef=(1.0, -2.0, 0.3)).uses("margin_ratio")


def test_a_file_whose_inputs_do_not_match_its_coefficients_is_not_used(tmp_path):
    import json

    path = tmp_path / CALIBRATION_FILE
    for body in ({"coef": [1.0, 2.0], "inputs": ["log_margin", "measured_best_share"]},
                 {"coef": [1.0, 2.0], "inputs": ["not_an_input"]},
                 {"coef": [1.0, 2.0, 3.0, 4.0, 5.0]}):
        path.write_text(json.dumps(body))
        assert not ConfidenceModel.load(tmp_path).calibrated, body


def test_uncalibrated_confidence_reads_the_measured_noise_and_calibrated_keeps_its_fit():
    # Issue 20 / session 25 tester E 6: members fitted to the same medians agree at a measured
    # point (spread 0.002), so a 17 % margin read confidence 1.00 on a program whose repeats
    # scattered 50 %. Uncalibrated, the noise now widens the spread.
    default = ConfidenceModel()
    quiet, noisy, unknown = default.predict([0.002] * 3, [0.17] * 3, [0.02, 0.5, float("nan")])
    assert noisy < 0.75 < quiet and unknown == default.predict([0.002], [0.17])[0]
    assert noisy < default.predict([0.002], [0.17])[0]
    fitted = ConfidenceModel(coef=(0.0, -1.0, 0.5), calibrated=True)
    assert fitted.predict([0.002], [0.17], [0.5])[0] == fitted.predict([0.002], [0.17])[0]


def test_a_coefficient_that_is_not_finite_is_refused_naming_the_file(tmp_path):
    """``"coef": [NaN, ...]`` silently became "(uncalibrated)" (s27 tester P, 2)."""
    import json
    import re

    import pytest

    from hpcds1mpi.errors import ModelError

    path = tmp_path / CALIBRATION_FILE
    for bad in (float("nan"), float("inf"), float("-inf")):
        path.write_text(json.dumps({"coef": [0.1, bad, 0.3],
                                    "inputs": ["log_spread", "margin_ratio"]}))
        with pytest.raises(ModelError,
                           match=re.escape(f"{path}: coef holds {bad!r}, not a finite")):
            ConfidenceModel.load(tmp_path)


def test_uncalibrated_confidence_is_a_probability_a_tie_inside_the_noise_is_not_auto():
    """The uncalibrated map read a measured tie 1 / (1 + noise) — 0.73 on a pick 8 % ahead
    inside 42 % scatter, so ``auto``; re-measured it was 2.5x slower (s40 tester C2). It is
    now P(pick within 5 % of the best) with each log-runtime uncertain by the spread."""
    import math

    from hpcds1mpi.decide.guard import CONFIDENCE_AUTO

    default = ConfidenceModel()
    tie, cp2k, lead = default.predict([0.1, 0.334, 0.1], [0.0, 0.078, 0.5], [0.3, 0.4165, 0.1])
    assert 0.5 < tie < 0.6 and cp2k < CONFIDENCE_AUTO and lead > 0.99
    for noise in (0.1, 0.2, 0.43, 1.0):  # a tie at any noise over 7 % is confirmed
        assert default.predict([0.01], [0.0], [noise])[0] < CONFIDENCE_AUTO
    # Phi((log(1 + margin) + log(1.05)) / (sqrt(2) * spread)), the spread at least the noise.
    z = (math.log(1.2) + math.log(1.05)) / (math.sqrt(2) * 0.25)
    want = 0.5 * math.erfc(-z / math.sqrt(2))
    assert abs(default.predict([0.25], [0.2])[0] - want) < 1e-12
    assert abs(default.predict([0.05], [0.2], [0.25])[0] - want) < 1e-12
    # A calibrated map keeps its fitted logistic form.
    fitted = ConfidenceModel(coef=(0.0, -1.0, 0.5), calibrated=True)
    assert abs(fitted.predict([0.3], [0.0])[0] - 1 / (1 + 0.3)) < 1e-12


def test_the_uncalibrated_z_is_an_input_a_calibration_may_map():
    """s41: a calibration may map the uncalibrated probability's own z (monotone: its order of
    the picks kept); Phi(z) is that probability."""
    import math

    from hpcds1mpi.decide.confidence import design, uncalibrated_confidence, uncalibrated_z

    spread, margin, noise = np.array([0.1, 0.3, 0.05]), np.array([0.2, 0.0, 0.5]), \
        np.array([np.nan, 0.4, 0.01])
    z = uncalibrated_z(spread, margin, noise)
    assert np.allclose(design(("uncalibrated_z",), spread, margin, noise)[:, 0], z)
    assert np.allclose([0.5 * math.erfc(-v / math.sqrt(2)) for v in z],
                       uncalibrated_confidence(spread, margin, noise))
    assert z[1] == pytest.approx(math.log(1.05) / (math.sqrt(2) * 0.4))  # the noise, not spread
    model = ConfidenceModel(coef=(0.0, 1.0), calibrated=True, inputs=("uncalibrated_z",))
    assert np.all(np.diff(model.predict(spread, margin, noise)[np.argsort(z)]) > 0)
