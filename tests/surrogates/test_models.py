"""The fitted stack: each family's ensemble and its spread, member features and tree regions."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from hpcds1mpi.surrogates.estimators import FAMILIES
from hpcds1mpi.surrogates.models import KNOB_FEATURES, SurrogateModel
from tests.surrogates.test_bundle import SMALL_TABNET, make_runs


@pytest.mark.parametrize("family", FAMILIES)
def test_each_family_fits_an_ensemble_with_spread(family):
    frame = make_runs()
    model = SurrogateModel(family=family, n_members=3, use_embedding=family == "lightgbm",
                           embedding_params=SMALL_TABNET, threads=1).fit(frame)
    preds = model.predict_members(frame)
    assert preds["runtime_s"].shape == (3, len(frame))
    assert preds["failed"].shape == (3, len(frame))
    assert (preds["runtime_s"].std(axis=0) > 0).any()  # members differ
    ok = frame["status"] == "ok"
    truth = np.log(frame.loc[ok, "runtime_s"].to_numpy())
    guess = np.median(preds["runtime_s"], axis=0)[ok.to_numpy()]
    assert np.corrcoef(truth, guess)[0, 1] > 0.9


def test_knob_member_features_collapse_a_grid_and_match_plain_scoring():
    frame = make_runs()
    model = SurrogateModel(family="xgboost", n_members=3, use_embedding=False, threads=1,
                           member_features=list(KNOB_FEATURES)).fit(frame)
    big = pd.concat([frame] * 30, ignore_index=True)
    big["ranks_per_node"] = np.resize(np.arange(1, 65), len(big))
    Z = model.design_matrix(big)
    preds, inverse, baseline = model.predict_regions(Z)
    assert inverse is not None and preds["runtime_s"].shape[1] < len(big) / 4
    grouped = model.predict_design(Z)
    model._thresholds_cache = None  # force the plain path
    plain = model.predict_design(Z)
    for target in plain:
        assert np.array_equal(grouped[target], plain[target])


def test_members_pickled_under_the_old_module_paths_still_load(monkeypatch):
    """Bundles saved before XGBoostScorer and ConstantClassifier moved out of models.py (the
    shipped bundle until issue 20's retraining) name hpcds1mpi.surrogates.models.XGBoostScorer
    and .ConstantClassifier: such a members.pkl, written here as they were, still loads."""
    import pickle
    from importlib.resources import files

    from hpcds1mpi.surrogates.estimators import ConstantClassifier
    from hpcds1mpi.surrogates.xgboost_scorer import XGBoostScorer

    path = files("hpcds1mpi") / "data" / "default_model" / "members.pkl"
    members = pickle.loads(path.read_bytes())
    for cls in (XGBoostScorer, ConstantClassifier):
        monkeypatch.setattr(cls, "__module__", "hpcds1mpi.surrogates.models")
    old = pickle.dumps(members)
    monkeypatch.undo()
    assert b"hpcds1mpi.surrogates.models" in old
    members = pickle.loads(old)
    scorers = [m for ms in members.values() for m in ms if isinstance(m, XGBoostScorer)]
    import json

    n = len(json.loads((path.parent / "manifest.json").read_text())["member_features"])
    assert scorers and np.isfinite(scorers[0].predict(np.zeros((2, n)))).all()
