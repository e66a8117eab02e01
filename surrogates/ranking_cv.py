"""Choosing System 1's ranking recipe by cross-validation on training sizes only.

A recipe is what the members learn and see (:data:`RECIPES`): absolute or problem-centred
targets (:mod:`.ranking`), the configuration knobs alone or with the cores-used fraction
(ranks x threads / cores: above 1 a layout is oversubscribed, which trees otherwise have to
build from a product of two knobs), whether rows near their problem's best weigh more, and
whether rows whose repeats scattered weigh less. :func:`choose_recipe` scores each on leave-size-out folds
of the data it is given, by what System 1 needs: the measured speed of the configuration the
model ranks first in each held-out problem (the best measured runtime / the pick's; a pick
that failed counts 0). The System 1 evaluation calls it inside each of its folds, on that
fold's training rows, so the recipe is never chosen on the sizes it is judged on.

Train the shipped bundle with the recipe chosen on all of its data::

    python -m hpcds1mpi.surrogates.ranking_cv --telemetry data/reference/telemetry.h5 \\
        --telemetry data/reference_choice/telemetry.h5 --out hpcds1mpi/data/default_model --force

then ``python -m hpcds1mpi.analysis.eval_system1 --model hpcds1mpi/data/default_model
--telemetry ... --write-calibration`` adds its guard and System 1 confidence calibrations.
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from typing import TYPE_CHECKING

import numpy as np

from .size_neighbours import WEIGHTS

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

#: name -> (centre, extra member features, near-best focus, noise weights); the first of
#: equal scores wins (simplest first). Five, not every combination: each costs a training per
#: fold and per outer fold of the evaluation, and more candidates make the winner of a noisy
#: comparison more a matter of luck (plain centring and the cores feature alone scored within
#: noise of these on the partial issue-20 sweep).
RECIPES: dict[str, tuple] = {
    "absolute": ((), (), 0.0, False),
    "centred+cores": ("auto", ("core_fraction",), 0.0, False),
    "centred+cores+focus": ("auto", ("core_fraction",), 1.0, False),
    "absolute+denoise": ((), (), 0.0, True),
    "centred+cores+focus+denoise": ("auto", ("core_fraction",), 1.0, True),
}
#: The shipped bundle's ensemble (README.txt of hpcds1mpi/data/default_model).
SHIPPED_SETTINGS = {"n_members": 5, "use_embedding": False, "seed": 0, "family": "xgboost"}
#: Scores closer than this (geometric-mean speed) are a tie: the recipe listed first is kept.
#: One point of geometric mean: on the reference sweep (6 configurations per problem) a
#: 0.2-point tie let the folds' choice wander between recipes on a pick or two each (geomean
#: 97.9 % vs 98.6 % for the plain recipe, and spreads of different recipes pooled into one
#: confidence calibration: AUROC 0.62 vs 0.83).
TIE = 0.01
#: Leave-size-out folds when choosing a recipe: each holds out every third size.
FOLDS = 3
_PROBLEM = ["workload", "size", "partition"]


#: A recipe name may end in this and a weight: the measured-neighbours correction
#: (:mod:`.size_neighbours`) at that weight, e.g. ``absolute+neighbours0.5``.
NEIGHBOURS = "+neighbours"
#: The members' budgets tried for the chosen recipe, cheapest first, as the suffix each adds
#: to its name (before any neighbours weight): 20 trees at learning rate 0.25, and 40 trees
#: (at 0.25, ``estimators.member_budget``'s rate for 40), against the default 20 trees at 0.5
#: for 5 members. The default's steps are coarse for ranking 18 configurations of a problem:
#: on the pooled issue-20 reference, leave-size-out with the recipe fixed, these scored 97.7
#: and 98.5 % of the best against 96.7 %; 40 trees cost System 1 about 13 % more time on
#: 11,595 configurations. Ties keep the cheaper.
BUDGETS = ("+lr0.25", "+trees40")
_BUDGET = re.compile(r"\+trees(\d+)|\+lr(\d*\.?\d+)")


def _parse(recipe: str) -> tuple[str, int | None, float | None, float]:
    """``(base, trees, learning rate, neighbours weight)`` of a recipe name: a base of
    :data:`RECIPES`, then optionally ``+treesN``, ``+lrX`` and ``+neighboursW``."""
    head, sep, weight = recipe.partition(NEIGHBOURS)
    try:
        value = float(weight) if sep else 0.0
    except ValueError:
        value = -1.0
    trees = rate = None
    base = head
    tail = re.search(r"((?:\+trees\d+|\+lr\d*\.?\d+)*)\Z", head)
    if tail and tail.group(1):
        base = head[:tail.start(1)]
        for t, lr in _BUDGET.findall(tail.group(1)):
            trees, rate = (int(t), rate) if t else (trees, float(lr))
    if base not in RECIPES or not 0.0 <= value <= 1.0 or trees == 0 or \
            (rate is not None and not 0.0 < rate <= 1.0):
        raise ValueError(f"unknown ranking recipe {recipe!r}; choose one of {', '.join(RECIPES)}"
                         f", optionally followed by +treesN (trees per member), +lrX (their "
                         f"learning rate, in (0, 1]) and {NEIGHBOURS}W with W in [0, 1]")
    return base, trees, rate, value


def split_recipe(recipe: str) -> tuple[str, float]:
    """``(base recipe, neighbours weight)`` of a recipe name (weight 0 when it has none)."""
    base, _, _, weight = _parse(recipe)
    return base, weight


def recipe_name(base: str, weight: float) -> str:
    """The name of ``base`` with the neighbours correction at ``weight`` (none at 0)."""
    return f"{base}{NEIGHBOURS}{weight:g}" if weight else base


def recipe_settings(recipe: str, member_features=None) -> dict:
    """``train_bundle`` keyword arguments of ``recipe`` on top of ``member_features`` (default:
    ``models.KNOB_FEATURES``)."""
    from .models import KNOB_FEATURES

    base_recipe, trees, rate, weight = _parse(recipe)
    centre, extra, focus, denoise = RECIPES[base_recipe]
    base = list(member_features or KNOB_FEATURES)
    out = {"centre": centre, "member_features": base + [f for f in extra if f not in base],
           "focus": focus, "denoise": denoise}
    if trees:
        out["member_trees"] = trees
    if rate:
        out["member_learning_rate"] = rate
    if weight:
        out["neighbours"] = weight
    return out


def settings_of(manifest: dict) -> dict:
    """The ranking ``train_bundle`` keywords a saved bundle was trained with, read back from
    its manifest (what ``hpcds1mpi learn`` retrains with): the targets it centred, its
    near-best focus and denoising. A bundle from before the ranking recipes: absolute."""
    ranking = (manifest.get("metrics") or {}).get("ranking") or {}
    out = {"centre": tuple(ranking.get("centred_targets") or ()),
           "focus": float(ranking.get("focus", 0.0)),
           "denoise": bool(ranking.get("denoise", False))}
    weight = (ranking.get("size_neighbours") or {}).get("weight")
    if weight:
        out["neighbours"] = float(weight)
    return out


def record_choice(bundle, recipe: str, scores: dict, folds: int, by: str) -> None:
    """Write into ``bundle``'s manifest which recipe cross-validation chose, how (``folds``
    leave-size-out folds, run by ``by``) and every recipe's scores."""
    bundle.manifest["metrics"]["ranking"].update({
        "recipe": recipe, "chosen_by": f"{folds}-fold leave-size-out CV of pick speed ({by})",
        "cv_scores": scores})


def recorded_recipe(manifest: dict) -> dict:
    """The manifest's record of how the recipe was chosen (name, by what), to carry over."""
    ranking = (manifest.get("metrics") or {}).get("ranking") or {}
    return {k: ranking[k] for k in ("recipe", "chosen_by") if k in ranking}


def size_folds(frame, folds: int, edges: bool = False) -> dict:
    """(workload, size) -> fold of every interior size of each workload (the end sizes are
    extrapolation: they stay in training unless ``edges``), spread over ``folds`` folds."""
    out = {}
    for w, g in frame.groupby("workload"):
        sizes = sorted(g["size"].unique())
        held = sizes if edges else sizes[1:-1] if len(sizes) > 2 else []
        for k, s in enumerate(held):
            out[(w, s)] = k % folds
    return out


def pick_speeds(bundle, test) -> list[float]:
    """The measured speed of the model's first-ranked configuration, per problem of ``test``.

    Ranked as System 1 ranks: by predicted runtime among the rows no member expects to fail
    (``fail_prob_max`` < 0.5), then the rest.
    """
    from hpcds1mpi.config import OK

    from hpcds1mpi.records.rounds import collapse_rounds

    from .features import INPUT_COLUMNS

    out = []
    test = collapse_rounds(test)  # a sweep in rounds: one measured outcome per configuration
    for _, sub in test.groupby(_PROBLEM, sort=True, observed=True):
        ok = (sub["status"].astype(str) == OK).to_numpy()
        if not ok.any():
            continue
        pred = bundle.predict(sub[list(INPUT_COLUMNS)].reset_index(drop=True))
        rt = pred["runtime_s"].to_numpy(float)
        bad = (pred["fail_prob_max"].to_numpy(float) >= 0.5) | ~np.isfinite(rt)
        pick = int(np.lexsort((np.where(np.isfinite(rt), rt, np.inf), bad))[0])
        measured = sub["runtime_s"].to_numpy(float)
        best = float(np.min(measured[ok]))
        out.append(best / measured[pick] if ok[pick] and measured[pick] > 0 else 0.0)
    return out


def _summary(speeds: list[float]) -> dict:
    s = np.asarray(speeds, float)
    if not len(s):
        return {"problems": 0, "geomean": float("nan"), "median": float("nan")}
    geomean = math.exp(np.mean(np.log(np.maximum(s, 1e-3))))
    return {"problems": int(len(s)), "geomean": float(geomean), "median": float(np.median(s)),
            "within_5pct": float(np.mean(s >= 1 / 1.05))}


def cv_scores(frame, recipes=tuple(RECIPES), folds: int = FOLDS, member_features=None,
              **train_kw) -> dict[str, dict]:
    """Leave-size-out score of each recipe on ``frame`` (a runs table): recipe -> summary
    (``geomean`` / ``median`` speed of the picks, ``within_5pct``, ``problems``)."""
    from .bundle import train_bundle

    speeds: dict[str, list] = {r: [] for r in recipes}
    settings = {**SHIPPED_SETTINGS, **train_kw}
    for train, test in _fold_splits(frame, folds):
        for r in recipes:  # the recipe's own budget, if it names one, over train_kw's
            bundle = train_bundle(train, **{**settings, **recipe_settings(r, member_features)})
            speeds[r] += pick_speeds(bundle, test)
    return {r: _summary(v) for r, v in speeds.items()}


def weight_scores(frame, recipe: str, weights=WEIGHTS, folds: int = FOLDS,
                  member_features=None, **train_kw) -> dict[float, dict]:
    """Leave-size-out score of ``recipe`` with the measured-neighbours correction at each of
    ``weights``: weight -> summary. One bundle per fold (its residuals from its own training
    sizes only), judged at every weight."""
    from .bundle import train_bundle

    speeds: dict[float, list] = {w: [] for w in weights}
    settings = {**SHIPPED_SETTINGS, **train_kw, **recipe_settings(recipe, member_features),
                "neighbours": 1.0}
    for train, test in _fold_splits(frame, folds):
        bundle = train_bundle(train, **settings)
        for w in weights:
            bundle.model.size_neighbours_.weight = w
            speeds[w] += pick_speeds(bundle, test)
    return {w: _summary(v) for w, v in speeds.items()}


def _fold_splits(frame, folds: int):
    """``(training rows, held-out rows)`` of each leave-size-out fold (ok and failed runs)."""
    from hpcds1mpi.config import FAILURE_STATUSES, OK

    frame = frame[frame["status"].astype(str).isin([OK, *FAILURE_STATUSES])]
    frame = frame.reset_index(drop=True)
    fold_of = size_folds(frame, folds)
    keys = list(zip(frame["workload"], frame["size"]))
    for fold in range(folds):
        mask = np.array([fold_of.get(k) == fold for k in keys])
        if mask.any() and not mask.all():
            yield frame[~mask].reset_index(drop=True), frame[mask]


def choose_recipe(frame, recipes=tuple(RECIPES), folds: int = FOLDS, member_features=None,
                  weights=WEIGHTS, **train_kw) -> tuple[str, dict]:
    """The recipe with the best leave-size-out geometric-mean pick speed on ``frame``
    (ties within :data:`TIE`: the one listed first), then the members' budget of
    :data:`BUDGETS` (unless ``train_kw`` sets trees or a learning rate; ties keep the
    cheaper), then the measured-neighbours weight (of ``weights``; ties keep the smaller)
    with the best score for it; and every scored recipe's summary (the weighted ones named by
    :func:`recipe_name`)."""
    scores = cv_scores(frame, recipes, folds, member_features, **train_kw)
    best = None
    for r in recipes:
        g = scores[r]["geomean"]
        if math.isfinite(g) and (best is None or g > scores[best]["geomean"] + TIE):
            best = r
    best = best or recipes[0]
    if train_kw.get("member_trees") is None and train_kw.get("member_learning_rate") is None \
            and _parse(best)[1:] == (None, None, 0.0):  # a plain recipe: no budget named yet
        budgets = [best + suffix for suffix in BUDGETS]
        scores.update(cv_scores(frame, budgets, folds, member_features, **train_kw))
        for r in budgets:
            if math.isfinite(scores[r]["geomean"]) and \
                    scores[r]["geomean"] > scores[best]["geomean"] + TIE:
                best = r
    if not weights:
        return best, scores
    # Then the neighbours correction's weight for that recipe, on the same folds; weight 0
    # is the recipe itself, already scored.
    by_weight = weight_scores(frame, best, [w for w in weights if w], folds, member_features,
                              **train_kw)
    chosen = best
    for w, summary in by_weight.items():
        name = recipe_name(best, w)
        scores[name] = summary
        if math.isfinite(summary["geomean"]) and \
                summary["geomean"] > scores[chosen]["geomean"] + TIE:
            chosen = name
    return chosen, scores


def training_frame(paths: list[str], leave: dict[str, set], read, *, first: int | None = None,
                   pool: bool = False) -> "pd.DataFrame":
    """The rows the bundle learns from: every file's, less the workloads ``leave`` names for
    it, a sweep measured in rounds folded to one median row per configuration
    (:func:`~hpcds1mpi.records.rounds.collapse_rounds`, as ``eval_system1`` trains and judges),
    so a configuration measured three times is not three samples of its luckiest conditions.

    Args:
        read: ``read([path])`` -> that file's runs (``records.training.read_frames``).
        first, pool: as :func:`~hpcds1mpi.records.rounds.measured_outcomes`.
    """
    import pandas as pd

    from hpcds1mpi.records.rounds import collapse_rounds, first_rounds, pool_sweeps

    frames = []
    for path in paths:
        rows = read([path])
        frames.append(rows[~rows["workload"].astype(str).isin(leave.get(path, set()))])
    runs = pd.concat(frames, ignore_index=True)
    runs = runs if first is None else first_rounds(runs, first)
    return collapse_rounds(pool_sweeps(runs) if pool else runs)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="Train a bundle with the System 1 ranking "
                                     "recipe chosen by leave-size-out cross-validation.")
    parser.add_argument("--telemetry", action="append", required=True, help="runs (.h5)")
    parser.add_argument("--out", required=True, help="bundle directory to write")
    parser.add_argument("--folds", type=int, default=FOLDS)
    parser.add_argument("--force", action="store_true", help="replace a bundle at --out")
    parser.add_argument("--leave-out", action="append", default=[], metavar="FILE=W1,W2",
                        help="leave these workloads' rows of FILE out (measured with kernels "
                        "changed since)")
    from hpcds1mpi.records import rounds

    rounds.add_arguments(parser)
    args = parser.parse_args(argv)

    from hpcds1mpi.atomic import check_output_dir
    from hpcds1mpi.records.training import TrainingData, read_frames

    from .bundle import is_bundle, train_bundle

    check_output_dir(args.out, ours=is_bundle, force=args.force)
    leave = {}
    for item in args.leave_out:
        path, _, names = item.partition("=")
        if path not in args.telemetry or not names:
            parser.error(f"--leave-out {item!r}: give FILE=W1,W2 with FILE one of --telemetry")
        leave[path] = set(names.split(","))
    sources = [p + (f" (without {', '.join(sorted(leave[p]))})" if p in leave else "")
               + rounds.describe(args) for p in args.telemetry]
    frame = rounds.read_or_exit(parser.prog, training_frame, args.telemetry, leave, read_frames,
                                first=args.first_rounds, pool=args.pool_sweeps)
    data = TrainingData.from_frame(frame, sources=sources, kind="telemetry")
    recipe, scores = choose_recipe(data.frame, folds=args.folds)
    for r, s in scores.items():
        print(f"{r:<16} geomean {100 * s['geomean']:.1f} %  median {100 * s['median']:.1f} %  "
              f"within 5 % {100 * s.get('within_5pct', float('nan')):.0f} %  "
              f"({s['problems']} held-out problems)")
    bundle = train_bundle(data, **SHIPPED_SETTINGS, **recipe_settings(recipe))
    record_choice(bundle, recipe, scores, args.folds, by="surrogates/ranking_cv.py")
    bundle.save(args.out)
    print(f"recipe {recipe!r}; bundle written to {args.out}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
