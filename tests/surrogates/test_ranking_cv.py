"""Choosing the ranking recipe by leave-size-out CV: the held-out sizes are never trained on,
every recipe is scored by its picks' measured speed, and ties keep the simpler recipe."""

from __future__ import annotations

import numpy as np
import pytest

from hpcds1mpi.surrogates import bundle as bundle_module
from hpcds1mpi.surrogates import ranking_cv
from hpcds1mpi.surrogates.models import KNOB_FEATURES
from tests.surrogates.test_bundle import make_runs


def trained_sizes(monkeypatch) -> list:
    """The set of sizes each ``train_bundle`` call from now on trains on, in call order."""
    seen = []
    real = bundle_module.train_bundle

    def spy(frame, **kw):
        seen.append(set(frame["size"].unique()))
        return real(frame, **kw)

    monkeypatch.setattr(bundle_module, "train_bundle", spy)
    return seen


def test_recipe_settings():
    assert ranking_cv.recipe_settings("absolute") == {
        "centre": (), "member_features": list(KNOB_FEATURES), "focus": 0.0, "denoise": False}
    cores = ranking_cv.recipe_settings("centred+cores")
    assert list(ranking_cv.RECIPES)[0] == "absolute"  # the simplest wins ties
    assert cores["centre"] == "auto" and cores["member_features"][-1] == "core_fraction"
    with pytest.raises(ValueError, match="unknown ranking recipe"):
        ranking_cv.recipe_settings("bogus")


@pytest.mark.parametrize("bad", ["absolute+neighbours", "absolute+neighbours1.5",
                                 "absolute+neighboursx", "bogus+neighbours0.5"])
def test_neighbours_suffix(bad):
    assert ranking_cv.recipe_settings("centred+cores+neighbours0.25")["neighbours"] == 0.25
    assert "neighbours" not in ranking_cv.recipe_settings("absolute")
    assert ranking_cv.recipe_name("absolute", 0.5) == "absolute+neighbours0.5"
    assert ranking_cv.recipe_name("absolute", 0.0) == "absolute"
    assert ranking_cv.split_recipe("absolute+neighbours0.5") == ("absolute", 0.5)
    with pytest.raises(ValueError, match="unknown ranking recipe"):
        ranking_cv.split_recipe(bad)


def test_settings_of_reads_the_neighbours_weight_back():
    manifest = {"metrics": {"ranking": {"centred_targets": [], "size_neighbours":
                                        {"weight": 0.75, "problems": 3}}}}
    assert ranking_cv.settings_of(manifest)["neighbours"] == 0.75
    manifest["metrics"]["ranking"]["size_neighbours"] = None
    assert "neighbours" not in ranking_cv.settings_of(manifest)


def test_a_neighbours_weight_is_kept_only_when_it_beats_the_recipe(monkeypatch):
    same = {"problems": 4, "geomean": 0.9, "median": 0.9, "within_5pct": 0.5}
    monkeypatch.setattr(ranking_cv, "cv_scores", lambda *a, **k: {"absolute": same})
    scores = {0.5: {**same, "geomean": 0.9 + ranking_cv.TIE / 2}, 1.0: {**same, "geomean": 0.8}}
    monkeypatch.setattr(ranking_cv, "weight_scores", lambda *a, **k: scores)
    name, got = ranking_cv.choose_recipe(None, recipes=("absolute",))
    assert name == "absolute" and set(got) == {"absolute", "absolute+neighbours0.5",
                                               "absolute+neighbours1"}
    scores[1.0] = {**same, "geomean": 0.95}
    assert ranking_cv.choose_recipe(None, recipes=("absolute",))[0] == "absolute+neighbours1"


def test_weight_scores_never_train_on_the_sizes_they_score(monkeypatch):
    runs = make_runs(sizes=(16, 24, 32, 48, 64, 96))
    seen = trained_sizes(monkeypatch)
    folds = ranking_cv.size_folds(runs, 2)
    got = ranking_cv.weight_scores(runs, "absolute", (0.0, 1.0), folds=2, threads=1,
                                   n_members=2)
    held = [{s for (_, s), f in folds.items() if f == k} for k in (0, 1)]
    # per fold: its bundle, then one residual model per training size (5 sizes each)
    assert len(seen) == 2 * (1 + 4)
    for k, sizes in enumerate(seen):
        assert not sizes & held[k // 5]
    assert set(got) == {0.0, 1.0} and all(s["problems"] == 8 for s in got.values())


def test_cv_trains_without_the_sizes_it_scores(monkeypatch):
    runs = make_runs(sizes=(16, 24, 32, 48, 64, 96))
    seen = trained_sizes(monkeypatch)
    folds = ranking_cv.size_folds(runs, 2)
    assert set(folds) == {(w, s) for w in ("stencil", "gemm") for s in (24, 32, 48, 64)}
    name, scores = ranking_cv.choose_recipe(runs, recipes=("absolute", "centred+cores"),
                                            folds=2, weights=(), threads=1, n_members=2)
    assert name in ("absolute", "centred+cores")
    # 2 folds x 2 recipes; each fold's models never saw its held-out sizes.
    assert len(seen) == 4
    held = [{s for (_, s), f in folds.items() if f == k} for k in (0, 1)]
    for k, sizes in enumerate(seen):
        assert not sizes & held[k // 2]
    for s in scores.values():
        assert s["problems"] == 8 and 0 < s["geomean"] <= 1.0


def test_ties_keep_the_recipe_listed_first(monkeypatch):
    same = {"problems": 4, "geomean": 0.9, "median": 0.9, "within_5pct": 0.5}
    monkeypatch.setattr(ranking_cv, "cv_scores", lambda *a, **k: {
        "absolute": same, "centred": {**same, "geomean": 0.9 + ranking_cv.TIE / 2}})
    assert ranking_cv.choose_recipe(None, recipes=("absolute", "centred"), weights=())[0] \
        == "absolute"
    monkeypatch.setattr(ranking_cv, "cv_scores", lambda *a, **k: {
        "absolute": same, "centred": {**same, "geomean": 0.95}})
    assert ranking_cv.choose_recipe(None, recipes=("absolute", "centred"), weights=())[0] \
        == "centred"


def test_pick_speeds_counts_a_failed_pick_as_zero():
    runs = make_runs()

    class Answer:
        def predict(self, frame):
            import pandas as pd

            # Rank the gemm OOM rows first: they failed, so the pick scores 0.
            rt = np.where(frame["ranks_per_node"] * frame["nodes"] <= 2, 1e-3, 1.0)
            return pd.DataFrame({"runtime_s": rt, "fail_prob_max": np.zeros(len(frame))})

    big = runs[(runs["workload"] == "gemm") & (runs["size"] == 96)]
    assert ranking_cv.pick_speeds(Answer(), big) == [0.0]


def test_record_choice_says_how_many_folds_and_who_chose():
    from types import SimpleNamespace

    from hpcds1mpi.surrogates.ranking_cv import record_choice, recorded_recipe

    bundle = SimpleNamespace(manifest={"metrics": {"ranking": {"focus": 0.5}}})
    record_choice(bundle, "centred", {"centred": {"geomean": 0.9}}, 4, by="a test")
    ranking = bundle.manifest["metrics"]["ranking"]
    assert ranking["chosen_by"] == "4-fold leave-size-out CV of pick speed (a test)"
    assert ranking["focus"] == 0.5 and ranking["cv_scores"] == {"centred": {"geomean": 0.9}}
    assert recorded_recipe(bundle.manifest) == {"recipe": "centred",
                                                "chosen_by": ranking["chosen_by"]}


def test_training_frame_folds_rounds_and_leaves_out_what_it_is_told():
    import pandas as pd

    from hpcds1mpi.surrogates.ranking_cv import training_frame

    def row(workload, seed, runtime):
        return {"machine_id": "m", "workload": workload, "size": 512, "partition": "p",
                "nodes": 1, "ranks_per_node": 1, "threads": 1, "device": "cpu",
                "precision": "fp64", "seed": seed, "status": "ok", "runtime_s": runtime,
                "energy_j": runtime, "noise": 0.0, "repeats": 2}

    files = {"a.h5": pd.DataFrame([row("gemm", s, t) for s, t in [(0, 1.0), (1, 3.0), (2, 2.0)]]
                                  + [row("fft", 0, 5.0)]),
             "b.h5": pd.DataFrame([row("cg", 0, 4.0)])}
    out = training_frame(["a.h5", "b.h5"], {"a.h5": {"fft"}}, lambda p: files[p[0]])
    assert sorted(out["workload"]) == ["cg", "gemm"]  # fft left out of a.h5
    assert out.loc[out["workload"] == "gemm", "runtime_s"].item() == 2.0  # three rounds, median
