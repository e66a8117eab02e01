"""Choosing the ranking recipe by leave-size-out CV: the held-out sizes are never trained on,
every recipe is scored by its picks' measured speed, and ties keep the simpler recipe."""

from __future__ import annotations

import re

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


def _fake_cv(monkeypatch, geomeans: dict, default: float = 0.9):
    """cv_scores answering each recipe asked for with its geomean in ``geomeans`` (else
    ``default``); returns the list of recipe lists asked for."""
    asked = []

    def cv_scores(frame, recipes, *a, **k):
        asked.append(list(recipes))
        return {r: {"problems": 4, "geomean": geomeans.get(r, default), "median": 0.9,
                    "within_5pct": 0.5} for r in recipes}

    monkeypatch.setattr(ranking_cv, "cv_scores", cv_scores)
    return asked


def test_a_neighbours_weight_is_kept_only_when_it_beats_the_recipe(monkeypatch):
    same = {"problems": 4, "geomean": 0.9, "median": 0.9, "within_5pct": 0.5}
    _fake_cv(monkeypatch, {})
    scores = {0.5: {**same, "geomean": 0.9 + ranking_cv.TIE / 2}, 1.0: {**same, "geomean": 0.8}}
    monkeypatch.setattr(ranking_cv, "weight_scores", lambda *a, **k: scores)
    name, got = ranking_cv.choose_recipe(None, recipes=("absolute",))
    assert name == "absolute" and set(got) == {
        "absolute", "absolute+lr0.25", "absolute+trees40", "absolute+neighbours0.5",
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


def test_size_folds_hold_out_the_end_sizes_only_when_asked():
    runs = make_runs(sizes=(16, 24, 32, 48))
    interior = ranking_cv.size_folds(runs, 2)
    every = ranking_cv.size_folds(runs, 2, edges=True)
    assert {s for _, s in interior} == {24, 32}
    assert {s for _, s in every} == {16, 24, 32, 48}
    assert set(every.values()) == {0, 1}


def test_cv_trains_without_the_sizes_it_scores(monkeypatch):
    runs = make_runs(sizes=(16, 24, 32, 48, 64, 96))
    seen = trained_sizes(monkeypatch)
    folds = ranking_cv.size_folds(runs, 2)
    assert set(folds) == {(w, s) for w in ("stencil", "gemm") for s in (24, 32, 48, 64)}
    name, scores = ranking_cv.choose_recipe(runs, recipes=("absolute", "centred+cores"),
                                            folds=2, weights=(), threads=1, n_members=2)
    assert ranking_cv.split_recipe(name)[0] in ("absolute", "centred+cores")
    # 2 folds x 2 recipes, then 2 folds x the chosen one's 2 budgets; each fold's models
    # never saw its held-out sizes.
    assert len(seen) == 8
    held = [{s for (_, s), f in folds.items() if f == k} for k in (0, 1)]
    for k, sizes in enumerate(seen):
        assert not sizes & held[(k // 2) % 2]
    for s in scores.values():
        assert s["problems"] == 8 and 0 < s["geomean"] <= 1.0


def test_ties_keep_the_recipe_listed_first(monkeypatch):
    both = ("absolute", "centred+cores")
    _fake_cv(monkeypatch, {"centred+cores": 0.9 + ranking_cv.TIE / 2})
    assert ranking_cv.choose_recipe(None, recipes=both, weights=())[0] == "absolute"
    _fake_cv(monkeypatch, {"centred+cores": 0.95})
    assert ranking_cv.choose_recipe(None, recipes=both, weights=())[0] == "centred+cores"


def test_a_members_budget_is_kept_only_when_it_beats_the_default_and_the_cheaper(monkeypatch):
    """After the recipe, its budgets (cheapest first): one within the tie is not kept; a
    dearer one must beat the cheaper by more than the tie; none is tried when the caller
    fixed the trees."""
    tie = ranking_cv.TIE
    _fake_cv(monkeypatch, {"centred+cores+lr0.25": 0.9 + tie / 2,
                           "centred+cores+trees40": 0.9 + tie / 2})
    name, got = ranking_cv.choose_recipe(None, recipes=("centred+cores",), weights=())
    assert name == "centred+cores" and "centred+cores+trees40" in got
    _fake_cv(monkeypatch, {"centred+cores+lr0.25": 0.9 + 2 * tie,
                           "centred+cores+trees40": 0.9 + 2.5 * tie})
    assert ranking_cv.choose_recipe(None, recipes=("centred+cores",), weights=())[0] \
        == "centred+cores+lr0.25"
    _fake_cv(monkeypatch, {"centred+cores+lr0.25": 0.9 + 2 * tie,
                           "centred+cores+trees40": 0.9 + 3.5 * tie})
    assert ranking_cv.choose_recipe(None, recipes=("centred+cores",), weights=())[0] \
        == "centred+cores+trees40"
    asked = _fake_cv(monkeypatch, {"centred+cores+trees40": 0.99})
    name, got = ranking_cv.choose_recipe(None, recipes=("centred+cores",), weights=(),
                                         member_trees=30)
    assert name == "centred+cores" and asked == [["centred+cores"]]
    asked = _fake_cv(monkeypatch, {})  # a recipe that already names a budget gets no other
    assert ranking_cv.choose_recipe(None, recipes=("absolute+trees40",), weights=())[0] \
        == "absolute+trees40" and asked == [["absolute+trees40"]]


@pytest.mark.parametrize("name, trees, rate, weight", [
    ("centred+cores+trees40", 40, None, None),
    ("centred+cores+lr0.25+neighbours0.5", None, 0.25, 0.5),
    ("centred+cores+focus+denoise+trees40+lr0.1", 40, 0.1, None)])
def test_a_recipe_names_its_members_budget(name, trees, rate, weight):
    got = ranking_cv.recipe_settings(name)
    assert (got.get("member_trees"), got.get("member_learning_rate"), got.get("neighbours")) \
        == (trees, rate, weight)
    assert ranking_cv.split_recipe(name)[0] in ranking_cv.RECIPES


@pytest.mark.parametrize("bad", ["centred+cores+trees0", "absolute+lr0", "absolute+lr1.5",
                                 "absolute+treesx", "bogus+trees40", "absolute+trees40+bogus",
                                 "absolute+trees40\n"])
def test_a_bad_budget_is_refused(bad):
    # The refusal names the recipe it read and says what a budget may be.
    with pytest.raises(ValueError, match=re.escape(f"unknown ranking recipe {bad!r}") +
                       r".*\+treesN \(trees per member\), \+lrX"):
        ranking_cv.split_recipe(bad)


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
