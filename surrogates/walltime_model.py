"""The walltime to request: a conditional upper quantile of a job's run time, conformalized.

:class:`WalltimeModel` is the walltime half of
:class:`~hpcds1mpi.surrogates.job_runtime.RuntimePredictor`. It chooses, on the newest
training jobs only, among *variants* of one recipe — a centre ``c`` and a scale ``s`` (log
seconds) per job, and the walltime ``exp(c + k s)`` capped at the request, where ``k`` is a
split-conformal quantile of the scores ``(log run - c) / s`` on the calibration slice:

- **model** variants: ``c`` is the best single history candidate plus a LightGBM *quantile*
  regression (at :data:`UPPER_ALPHA`) of the residual from the submission features, and ``s``
  the distance from that upper quantile to a second, median regression, floored at one of
  :data:`FLOORS` (normalized conformal: a job whose run times the features pin down gets a
  small margin, an erratic one a large margin — and, capped at its request, costs nothing in
  kills). The floor ``inf`` is a plain shift;
- **anchor** variants (the earlier method, kept so a log where the regressions do not help
  loses nothing): ``c`` the longest of the last 5 / 20 like runs, ``s = 1``, optionally one
  ``k`` per bin of history depth (Mondrian).

How the choice is made: the regressions learn on the older training jobs (rounds stopped on
the older half of the calibration slice); each variant gets ``k`` from the older half of the
slice and is scored on the newer half, at the level that just covers that newer half at the
target (:data:`RANK_LEVELS`, below the target too: variants are compared at equal coverage,
not by how much each over-covers), and the least median over-request wins. Because the
months drift, the level then kept is the target *raised* until the newer half is covered
(:data:`LEVELS`; never lowered) — the kill budget is met inside the training part, not
assumed from exchangeability. The winner's ``k`` is then measured on the whole slice at that
level. On Curie's own training part (inner folds: learn on the first 60 % / 80 %, score the
next 20 %), this ranking picked the normalized variant in both folds (4.5 % killed at 3.6x,
5.4 % at 2.4x, against 4.5 % at 4.3x and 3.4 % at 3.9x for the earlier method).

A completed job never ran past its request, so capping there never adds a kill.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from .walltime_policy import choose_policy, conformal_offset, tight_mask

#: The upper quantile the residual regression learns (the conformal step does the rest).
UPPER_ALPHA = 0.8
#: Floors of the normalized score's scale (log s); ``inf``: a plain shift.
FLOORS = (0.25, 0.5, 1.0, math.inf)
#: Most of the older training jobs the regressions learn from (the newest ones): a bound on
#: time and memory for logs beyond Curie's (180k there, all used: on its inner folds the
#: newest 60k alone cut the CPU by half but gave 2.91x instead of 2.44x on the newer fold).
REGRESSION_ROWS = 200_000
#: The walltime's anchors of the earlier method: the longest of the last 5 / 20 like runs.
UPPER_ANCHORS = (("pace_max5", "request_max5", "name_max5", "user_max5", "log_limit"),
                 ("request_max20", "name_max20", "user_max20", "log_limit"))
#: Counts whose bins group the anchor variants' conformal factors (most specific first).
DEPTH = ("pace_n", "request_n", "user_n")
#: Fewest calibration jobs a bin needs for its own factor (else pooled).
MIN_BIN = 200
#: Fewest novel calibration jobs (:func:`novel_mask`) that give novel jobs their own offset;
#: with fewer, a novel job keeps its request (NREL Eagle's sample: a 197-task array asking
#: 42,000 s, whose user had finished one 50-s job of another request, got 730 s, all killed).
MIN_NOVEL = 30
#: How far above the target the conformal level may be raised against drift (steps of the
#: share left uncovered: 1, 0.9, ... 0.3 of it).
LEVELS = tuple(1 - 0.1 * j for j in range(8))
#: The levels the variants are *compared* at (below the target too): each at the level that
#: just covers the newer half, so that a variant is not ranked by how much it over-covers.
RANK_LEVELS = tuple(2 - 0.1 * j for j in range(18))


def novel_mask(features: pd.DataFrame) -> np.ndarray:
    """Jobs with no finished job of their own request (``request_n`` 0): their history
    values are borrowed from the user's other requests (:mod:`submit_features`), so they are
    not exchangeable with jobs that have their own (False where the log has no such column)."""
    if "request_n" not in features:
        return np.zeros(len(features), bool)
    return (pd.to_numeric(features["request_n"], errors="coerce").to_numpy(dtype=float) == 0)


def depth_bins(features: pd.DataFrame) -> np.ndarray:
    """Bin of how much finished history the job's most specific group has: log2 of its count."""
    n = np.full(len(features), np.nan)
    for c in DEPTH:
        if c in features:
            v = pd.to_numeric(features[c], errors="coerce").to_numpy(dtype=float)
            n = np.where(np.isnan(n) & (v > 0), v, n)
    return np.floor(np.log2(1 + np.nan_to_num(n))).clip(0, 12).astype(int)


def mondrian_offsets(scores: np.ndarray, bins: np.ndarray, coverage: float
                     ) -> tuple[dict, float]:
    """Conformal offsets per bin ({bin: offset}) and for the pooled rest: a bin with fewer
    than :data:`MIN_BIN` jobs joins the rest, so every job is covered at ``coverage`` within
    its own (pooled) bin and so overall."""
    big = {b for b in np.unique(bins) if np.sum(bins == b) >= MIN_BIN}
    per = {int(b): conformal_offset(scores[bins == b], coverage) for b in big}
    rest = ~np.isin(bins, list(big))
    pooled = conformal_offset(scores[rest] if rest.any() else scores, coverage)
    return per, pooled


def raise_level(old: np.ndarray, old_bins: np.ndarray, new: np.ndarray, new_bins: np.ndarray,
                fits: np.ndarray, coverage: float, shares=LEVELS
                ) -> tuple[float, np.ndarray, float]:
    """The lowest conformal level ``1 - (1 - coverage) * share`` for ``share`` in ``shares``
    (:data:`LEVELS`: from the target up) whose factors, measured on the ``old``
    scores, cover ``coverage`` of the ``new`` ones (the highest level if none does).

    Args:
        old, old_bins: scores and Mondrian bins the factors are measured on.
        new, new_bins: scores and bins of the newer jobs they are checked on.
        fits: per newer job, whether it can be covered at all (ran within its request).
        coverage: the target.

    Returns:
        (level, factor per newer job, the share of newer jobs covered).
    """
    for share in shares:
        level = 1 - (1 - coverage) * share
        per, rest = mondrian_offsets(old, old_bins, level)
        k = np.array([per.get(int(b), rest) for b in new_bins])
        cover = float(np.mean((new <= k + 1e-12) & fits))
        if cover >= coverage:
            break
    return level, k, cover


class WalltimeModel:
    """Calibrated walltime of a job at submission (see the module's note).

    Args:
        coverage: share of jobs the walltime should cover (1 - the kill budget).
        params: LightGBM parameters of the two residual regressions.
        patience: rounds without gain before they stop.
    """

    def __init__(self, coverage: float, params: dict, patience: int = 20):
        self.coverage = coverage
        self.params = params
        self.patience = patience

    def fit(self, predictor, feats: pd.DataFrame, y: np.ndarray, fit: slice, cal: slice,
            base: tuple[str, ...]) -> "WalltimeModel":
        """Learn from the training jobs in submit order: ``fit`` the older, ``cal`` the
        newest slice; ``predictor`` (a fitted point half) gives the request and the feature
        matrix, ``base`` the columns of the centre (the best single candidate, then its
        fallbacks)."""
        self.base_, self.base_chain_ = base[0], tuple(base)
        fc, cc = feats.iloc[fit], feats.iloc[cal]
        yc = y[cal]
        half = len(yc) // 2
        self.regressions_ = self._fit_regressions(predictor, fc, y[fit], cc.iloc[:half],
                                                  yc[:half])
        variants = [("anchor", a, b) for a in range(len(UPPER_ANCHORS)) for b in (False, True)]
        if self.regressions_ is not None:
            variants += [("model", f, False) for f in FLOORS]
        lim = np.log(predictor._limit(cc))
        xc = predictor._matrix(cc)  # once for the regressions and the gate
        reg = self._regress(xc)  # once for every variant and the policy
        best = None
        for v in variants:
            centre, scale, _ = self._parts(predictor, cc, v, reg)
            score = (yc - centre) / scale
            bins = depth_bins(cc) if v[2] else np.zeros(len(yc), int)
            fits = yc[half:] <= lim[half:]
            # Ranked at equal coverage of the newer half; the level kept is only ever raised.
            _, k, cover = raise_level(score[:half], bins[:half], score[half:], bins[half:],
                                      fits, self.coverage, RANK_LEVELS)
            wall = np.minimum(centre[half:] + k * scale[half:], lim[half:])
            over = float(np.median(np.exp(wall - yc[half:])))
            # Covering the target comes first, then the least over-request.
            key = (min(cover, self.coverage), -over)
            if best is None or key > best[0]:
                level, k, kept = raise_level(score[:half], bins[:half], score[half:],
                                             bins[half:], fits, self.coverage)
                best = (key, v, level, {"coverage": kept, "ranked_coverage": cover,
                                        "ranked_over_request": over})
        _, self.variant_, self.level_, self.validation_ = best
        # The winner's parts on the calibration slice, computed once for everything below.
        centre, scale, width = self._parts(predictor, cc, self.variant_, reg)
        score = (yc - centre) / scale
        self.offsets_, self.rest_offset_ = mondrian_offsets(score, self._bins(cc), self.level_)
        self.policy_ = None
        tight = np.ones(len(yc), bool)
        if self.regressions_ is not None:
            self.policy_ = choose_policy(centre, scale, width, yc, lim, 1 - self.coverage)
            tight = tight_mask(self.policy_, width, lim)
        self._fit_novel(cc, score, tight)
        wall, _ = self._combine(cc, centre, scale, width, lim)
        self._fit_gate(predictor, xc, yc, lim, wall)
        if self.gate_ is not None:
            wall, tight = self.gate_.wall(xc, predictor.cal_point_, lim)
            wall = np.where(self._novel_kept(cc, tight, lim), wall, lim)
        self.calibration_coverage_ = float(np.mean(yc <= wall + 1e-12))
        return self

    def _fit_gate(self, predictor, xc: pd.DataFrame, yc, lim, wall) -> None:
        """The risk gate (:mod:`.walltime_gate`), kept only where, on the calibration jobs it
        chose on, it over-requests less than the recipe above (or the recipe overran the
        budget there)."""
        from .walltime_gate import LEARN_SHARE, RiskGate

        self.gate_ = None
        point = getattr(predictor, "cal_point_", None)
        if point is None or len(point) != len(yc):
            return
        gate = RiskGate.fit(xc, point, yc, lim, 1 - self.coverage,
                            self.params)
        if gate is None:
            return
        new = slice(int(len(yc) * LEARN_SHARE), None)
        kill = float(np.mean(yc[new] > wall[new] + 1e-12))
        over = float(np.median(np.exp(wall[new] - yc[new])))
        self.recipe_check_ = {"kill_rate": kill, "over_request": over}
        if gate.over < over or kill > 1 - self.coverage:
            self.gate_ = gate

    def chosen_coverage(self, n_calibration: int) -> tuple[float, int, float] | None:
        """What the walltime covered of the jobs its last choice was made on, which is no
        check on other jobs: the choice keeps only options covering enough of these very jobs
        (s48 tester P11: printed as "96.0 % of the newest 4127 ... were covered", it was the
        gate's own score on 2751).

        Args:
            n_calibration: the calibration jobs the model was fitted with
                (``RuntimePredictor.n_calibration_``).

        Returns:
            (share covered, how many jobs it was measured on, the share the choice required
            there) -- of the risk gate's choosing jobs (the newest third), else of the
            policy's or the level's newer half; None when not measured.
        """
        from .walltime_gate import LEARN_SHARE, SAFETY

        newer_half = n_calibration - n_calibration // 2
        if self.gate_ is not None:
            return (1.0 - self.gate_.kill, n_calibration - int(n_calibration * LEARN_SHARE),
                    1.0 - (1.0 - self.coverage) * SAFETY)
        if self.policy_ is not None and np.isfinite(self.policy_.kill):
            return 1.0 - self.policy_.kill, newer_half, self.coverage
        cover = self.validation_.get("coverage")
        return None if cover is None else (cover, newer_half, self.coverage)

    def _fit_novel(self, cc: pd.DataFrame, score: np.ndarray, tight: np.ndarray):
        """The offset of *novel* calibration jobs (:func:`novel_mask`) among the tight ones,
        at the level kept; None (novel jobs then keep their request) when fewer than
        :data:`MIN_NOVEL`: their history is borrowed, so the other jobs' coverage says
        nothing about them."""
        novel = novel_mask(cc) & tight
        level = self.level_ if self.policy_ is None else self.policy_.level
        self.novel_n_ = int(novel.sum())
        self.novel_k_ = (conformal_offset(score[novel], level) if self.novel_n_ >= MIN_NOVEL
                         else None)

    def _regress(self, x: pd.DataFrame | None):
        """(median, upper) residual regressions per job (log s) from the jobs' feature matrix
        (:meth:`RuntimePredictor._matrix`); None without them."""
        if self.regressions_ is None:
            return None
        return tuple(m.predict(x) for m in self.regressions_)

    def _parts(self, predictor, feats: pd.DataFrame, variant, reg) -> tuple:
        """(centre, scale, width) per job (log s): the variant's walltime recipe and the
        predicted tail width, upper minus median residual regression (None without them);
        ``reg``: :meth:`_regress` of the same jobs."""
        kind, arg, _ = variant
        med, hi = reg if reg is not None else (None, None)
        width = None if reg is None else hi - med
        if kind == "anchor":
            return predictor._chain(feats, UPPER_ANCHORS[arg]), np.ones(len(feats)), width
        base = predictor._chain(feats, self.base_chain_)
        # An infinite floor is the plain shift: one margin for every job.
        scale = np.ones(len(feats)) if math.isinf(arg) else np.maximum(width, arg)
        return base + hi, scale, width

    def _combine(self, feats, centre, scale, width, lim) -> tuple[np.ndarray, np.ndarray]:
        """(log walltime, tight mask) per job from its parts: the per-job policy where there
        is one, novel jobs at least at their own offset or, without one, kept."""
        if self.policy_ is None:
            k, tight = self._k(feats), np.ones(len(feats), bool)
        else:
            k = np.full(len(feats), self.policy_.k)
            tight = tight_mask(self.policy_, width, lim)
        novel = novel_mask(feats)
        if self.novel_k_ is None:
            tight = self._novel_kept(feats, tight, lim)
        else:
            k = np.where(novel, np.maximum(k, self.novel_k_), k)
        return np.where(tight, np.minimum(centre + k * scale, lim), lim), tight

    def _novel_kept(self, feats, tight, lim) -> np.ndarray:
        """``tight`` without the novel jobs that have a request, when too few novel
        calibration jobs were seen to calibrate them (``novel_k_`` None): those keep their
        request, whichever part proposed for the others -- the recipe or the risk gate."""
        if getattr(self, "novel_k_", None) is not None:
            return tight
        return tight & ~(novel_mask(feats) & np.isfinite(lim))

    def _wall(self, predictor, feats: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        """(log walltime, tight mask) per job."""
        if getattr(self, "gate_", None) is not None:
            x = predictor._matrix(feats)  # once for the point and the gate
            lim = np.log(predictor._limit(feats))
            wall, tight = self.gate_.wall(x, np.log(predictor.predict(feats, matrix=x)), lim)
            tight = self._novel_kept(feats, tight, lim)  # the gate never saw them apart
            return np.where(tight, wall, lim), tight
        x = predictor._matrix(feats) if self.regressions_ is not None else None
        centre, scale, width = self._parts(predictor, feats, self.variant_, self._regress(x))
        return self._combine(feats, centre, scale, width, np.log(predictor._limit(feats)))

    def tight(self, predictor, feats: pd.DataFrame) -> np.ndarray:
        """Per job, whether it gets a tight proposal (else it is kept at its request)."""
        return self._wall(predictor, feats)[1]

    def _fit_regressions(self, predictor, fc, yf, cc, yc):
        """The median and upper quantile regressions of the residual from the base
        candidate (None when too few jobs to learn them)."""
        if len(yf) < 200 or len(yc) < 50:
            return None
        from lightgbm import LGBMRegressor, early_stopping

        fc, yf = fc.iloc[-REGRESSION_ROWS:], yf[-REGRESSION_ROWS:]
        xf, xc = predictor._matrix(fc), predictor._matrix(cc)
        rf = yf - predictor._chain(fc, self.base_chain_)
        rc = yc - predictor._chain(cc, self.base_chain_)
        out = []
        for alpha in (0.5, UPPER_ALPHA):
            out.append(LGBMRegressor(objective="quantile", alpha=alpha, **self.params).fit(
                xf, rf, eval_X=(xc,), eval_y=(rc,),
                callbacks=[early_stopping(self.patience, verbose=False)]))
        return out

    def _bins(self, feats: pd.DataFrame) -> np.ndarray:
        return depth_bins(feats) if self.variant_[2] else np.zeros(len(feats), int)

    def _k(self, feats: pd.DataFrame) -> np.ndarray:
        return np.array([self.offsets_.get(int(b), self.rest_offset_)
                         for b in self._bins(feats)])

    def walltime(self, predictor, feats: pd.DataFrame) -> np.ndarray:
        """Walltime (s) per job, capped at the request, at least 1 s."""
        return self.walltime_tight(predictor, feats)[0]

    def walltime_tight(self, predictor, feats: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        """(walltime (s) as :meth:`walltime`, tight mask as :meth:`tight`) from one pass."""
        raw, tight = self._wall(predictor, feats)
        return np.maximum(np.minimum(np.exp(raw), predictor._limit(feats)), 1.0), tight

    def describe(self) -> dict:
        """What was chosen, for the evaluation's JSON."""
        kind, arg, binned = self.variant_
        name = ("+".join(UPPER_ANCHORS[arg][:1]) if kind == "anchor" else
                f"{self.base_} + quantile {UPPER_ALPHA} regression")
        return {"kind": kind, "centre": name, "scale_floor": None if kind == "anchor" else
                (None if math.isinf(arg) else arg), "binned": binned,
                "level": self.level_, "validation": self.validation_,
                "policy": None if self.policy_ is None else self.policy_.to_dict(),
                "gate": None if getattr(self, "gate_", None) is None else self.gate_.to_dict(),
                "recipe_check": getattr(self, "recipe_check_", None),
                "novel": {"n_calibration": self.novel_n_, "k": self.novel_k_}}
