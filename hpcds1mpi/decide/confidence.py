"""System 1's confidence: the probability that its pick is within 5 % of the best.

A logistic model maps a few inputs at the pick to a probability; which inputs is part of the
calibration (:data:`INPUTS` names them). The ensemble's runtime spread and the margin to the
runner-up come from the prediction; the measured repeat noise of the workload's training
runs, where the bundle recorded it (a kernel whose repeats scatter by 100 % has an order no
model learns from them: issue 20); and the share of the measured sizes around the question at
which the picked configuration measured fastest (:mod:`~hpcds1mpi.surrogates.measured_best`:
on the AMD rounds reference the input that separated good picks from bad best).
``analysis/eval_system1.py`` fits the map on held-out picks and stores
``system1_calibration.json`` next to the bundle, with the inputs it kept; without that file
:func:`uncalibrated_confidence` (the same probability under a stated noise model, nothing
fitted) is used and labelled ``uncalibrated``.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

#: Picks within this fraction of the best measured runtime count as "good" in calibration.
GOOD_PICK_TOLERANCE = 0.05
CALIBRATION_FILE = "system1_calibration.json"
#: The noise assumed where a bundle recorded none (the reference sweep's median, 0.16).
DEFAULT_NOISE = 0.16
#: The inputs a calibration may use, with what each is (the calibration file names them).
INPUTS = {
    "log_spread": "log of the ensemble's relative runtime spread at the pick",
    "margin_ratio": "margin to the runner-up in units of that spread",
    "log_noise": "log of the workload's measured repeat noise",
    "log_margin": "log of the margin to the runner-up",
    "measured_best_share": "share of the measured sizes around at which the pick was fastest",
    "uncalibrated_z": "z of the uncalibrated probability (margin over spread or noise)",
}
#: Older calibration files name no inputs: their number of coefficients says which.
_BY_COUNT = {3: ("log_spread", "margin_ratio"), 4: ("log_spread", "margin_ratio", "log_noise")}


def design(inputs: tuple[str, ...], spread, margin, noise=None,
           measured_best_share=None) -> np.ndarray:
    """``(n, len(inputs))`` the named inputs (see :data:`INPUTS`) of ``(n,)`` picks. Unknown
    noise is :data:`DEFAULT_NOISE`; an unknown share (nothing measured around) is 0."""
    s = np.clip(np.asarray(spread, float), 1e-4, None)
    m = np.clip(np.asarray(margin, float), 0.0, 10.0)
    n = len(s)
    cols = []
    for name in inputs:
        if name == "log_spread":
            cols.append(np.log(s))
        elif name == "margin_ratio":
            cols.append(np.clip(m / s, 0.0, 20.0))
        elif name == "log_margin":
            cols.append(np.log(np.clip(m, 1e-4, None)))
        elif name == "log_noise":
            v = np.full(n, np.nan) if noise is None else np.asarray(noise, float)
            cols.append(np.log(np.clip(np.where(np.isfinite(v), v, DEFAULT_NOISE), 1e-3, 100.0)))
        elif name == "measured_best_share":
            v = np.full(n, np.nan) if measured_best_share is None else \
                np.asarray(measured_best_share, float)
            cols.append(np.where(np.isfinite(v), np.clip(v, 0.0, 1.0), 0.0))
        elif name == "uncalibrated_z":
            # A logistic map of z alone is monotone in it: calibrating keeps the order
            # the uncalibrated probability gives picks (its AUROC), only its scale moves.
            cols.append(uncalibrated_z(s, m, noise))
        else:
            raise ValueError(f"unknown confidence input {name!r}")
    return np.column_stack(cols) if cols else np.zeros((n, 0))


@dataclass
class ConfidenceModel:
    """Logistic map from the named :data:`INPUTS` to P(pick within 5 % of best).

    ``coef`` is the intercept, then one coefficient per input; ``inputs`` None means the
    older files' meaning (3 coefficients: log spread and margin / spread; 4: and log noise).
    Only a calibrated map reads ``coef``: uncalibrated, :func:`uncalibrated_confidence` is
    the probability (the default's coefficients only name the inputs it reads).
    """

    coef: tuple[float, ...] = (0.0, -1.0, 0.5)  # intercept, log-spread, margin ratio
    calibrated: bool = False
    source: str = "uncalibrated default"
    inputs: tuple[str, ...] | None = None

    def names(self) -> tuple[str, ...]:
        """The inputs this map reads, in the order of ``coef[1:]``."""
        return tuple(self.inputs) if self.inputs is not None else _BY_COUNT[len(self.coef)]

    def uses(self, name: str) -> bool:
        """Whether the map reads the input ``name`` (callers skip computing the others)."""
        return name in self.names()

    def predict(self, spread, margin, noise=None, measured_best_share=None) -> np.ndarray:
        """``(n,)`` probabilities for ``(n,)`` spreads, margins (and workload noises, shares
        of the measured sizes around at which the pick was fastest); uncalibrated,
        :func:`uncalibrated_confidence` of the spreads, margins and noises."""
        spread = np.atleast_1d(np.asarray(spread, float))
        if not self.calibrated:
            return uncalibrated_confidence(spread, margin, noise)
        X = design(self.names(), spread, np.atleast_1d(margin), noise,
                   measured_best_share)
        z = self.coef[0] + X @ np.asarray(self.coef[1:])
        return 1.0 / (1.0 + np.exp(-z))

    @classmethod
    def load(cls, model_dir: str | Path | None) -> "ConfidenceModel":
        """The calibration stored next to a bundle, else the uncalibrated default.

        What a file held is kept while the file stays the same (its mtime, size, inode and
        ctime: ``learn`` may rewrite it), so ``serve``, asked many questions of one bundle,
        reads it once, not once a question; each call gets its own model.
        """
        if model_dir is None:
            return cls()
        path = Path(model_dir) / CALIBRATION_FILE
        try:
            st = path.stat()
        except OSError:
            return cls()
        key = (str(path), st.st_mtime_ns, st.st_size, st.st_ino, st.st_ctime_ns)
        kept = _LOADED.get(key)
        if kept is None:
            kept = _read(path)
            if len(_LOADED) >= _KEEP:  # bounded: a long-lived process sees few bundles
                _LOADED.clear()
            _LOADED[key] = kept
        return cls(coef=kept[0], calibrated=True, source=kept[1], inputs=kept[2]) \
            if kept[0] else cls()

    def save(self, path: str | Path, **extra) -> None:
        """Write the coefficients (and ``extra`` evidence) as JSON."""
        from hpcds1mpi.atomic import write_text

        body = {"coef": list(self.coef), **extra}
        if self.inputs is not None:
            body["inputs"] = list(self.inputs)
        write_text(path, json.dumps(body, indent=2),
                   "confidence calibration")


def uncalibrated_confidence(spread, margin, noise=None) -> np.ndarray:
    """``(n,)`` P(pick within :data:`GOOD_PICK_TOLERANCE` of the best) without a calibration.

    The pick's and the runner-up's log-runtimes (log objective values) are each taken as
    normal around the predicted ones, with a standard deviation of the relative ``spread``
    at the pick, at least the workload's measured repeat ``noise`` where known: members fitted
    to the same medians agree at a measured point however much its repeats scattered (issue
    20: a 50 %-noisy program read 1.00 on a 17 % margin). Their true difference is then
    normal around the predicted margin with sd ``sqrt(2) * spread``, and the pick is good
    where it is less than 5 % slower::

        P = Phi((log(1 + margin) + log(1.05)) / (sqrt(2) * spread))

    A measured tie reads 0.5-0.6, below the guard's ``CONFIDENCE_AUTO`` (0.7) at any noise
    over 7 % (the old logistic heuristic read a tie 1 / (1 + noise): 0.7 at 43 % noise, so a
    pick 8 % ahead inside 40 % scatter was applied automatically, and measured 2.5x slower:
    s40 tester C2); a 50 % lead at 10 % noise reads 1.00. Using the whole spread (a width,
    not a half-width) as the deviation is deliberately wide: a few repeats understate how far
    a later run drifts from them on a shared machine (s40 tester C: 2-10x under load).
    """
    z = uncalibrated_z(spread, margin, noise)
    return np.array([0.5 * math.erfc(-x / math.sqrt(2.0)) for x in np.ravel(z)])


def uncalibrated_z(spread, margin, noise=None) -> np.ndarray:
    """``(n,)`` the standard-normal quantile whose probability :func:`uncalibrated_confidence`
    is: ``(log(1 + margin) + log(1.05)) / (sqrt(2) * max(spread, noise))``, the noise where
    known; a calibration may map it (input ``uncalibrated_z``)."""
    s = np.clip(np.atleast_1d(np.asarray(spread, float)), 1e-4, None)
    if noise is not None:
        v = np.atleast_1d(np.asarray(noise, float))
        s = np.where(np.isfinite(v), np.maximum(s, v), s)
    m = np.clip(np.nan_to_num(np.atleast_1d(np.asarray(margin, float)), nan=0.0), 0.0, 10.0)
    return (np.log1p(m) + math.log1p(GOOD_PICK_TOLERANCE)) / (math.sqrt(2.0) * s)


#: (path, mtime, size, inode, ctime) -> (coefficients or (), source, inputs) of files read.
_LOADED: dict[tuple, tuple] = {}
_KEEP = 64


def _read(path: Path) -> tuple:
    """(coefficients, source, inputs) in the calibration file; ``()`` for coefficients where
    it cannot be used (the uncalibrated default then): unreadable, or not one coefficient per
    input it names (or, naming none, not 3 or 4).

    Raises:
        ModelError: a coefficient is not finite (NaN, Infinity: JSON as Python writes it),
            which no fit writes; read as "cannot be used" it silently dropped the calibration.
    """
    try:
        data = json.loads(path.read_text())
        coef = tuple(float(c) for c in data["coef"])
        bad = next((c for c in coef if not math.isfinite(c)), None)
        if bad is not None:
            from hpcds1mpi.errors import ModelError

            raise ModelError(f"{path}: coef holds {bad!r}, not a finite number; fix it, or "
                             "delete the file (confidence is uncalibrated without it)")
        inputs = data.get("inputs")
        if inputs is not None:
            inputs = tuple(str(x) for x in inputs)
            if len(coef) != len(inputs) + 1 or not set(inputs) <= set(INPUTS):
                return (), "", None
        elif len(coef) not in _BY_COUNT:
            return (), "", None
        return coef, str(path), inputs
    except (OSError, ValueError, KeyError, TypeError):
        return (), "", None


def measured_best_of(bundle):
    """The :class:`~hpcds1mpi.surrogates.measured_best.MeasuredBest` of ``bundle``'s
    training rows, fitted once per loaded bundle (empty where it keeps none)."""
    from hpcds1mpi.decide import bundle_cache
    from hpcds1mpi.surrogates.measured_best import MeasuredBest

    def fit():
        try:  # the training rows every check reads (read once per bundle; no pandas)
            return MeasuredBest.fit(bundle_cache.training_columns(bundle))
        except (AttributeError, KeyError):  # no training rows, or none with outcomes
            return MeasuredBest({})

    return bundle_cache.memo(bundle, ("measured_best",), fit)


def measured_best_share(bundle, table) -> np.ndarray:
    """``(n,)`` :meth:`~hpcds1mpi.surrogates.measured_best.MeasuredBest.share` of ``table``'s
    rows on ``bundle``'s training rows (NaN where it keeps none)."""
    return measured_best_of(bundle).share(table)


def measured_best_lookup(bundle, partitions=()):
    """A call that gives, when first asked, :func:`measured_best_of` ``bundle`` and the name
    of the trained partition each of ``partitions`` (those scored) corresponds to — a
    cluster file's ``standard`` may be the ``local`` the bundle measured
    (:func:`~hpcds1mpi.decide.trained_hardware.measured_partition`; None: hardware, or a
    CPU, it never saw). System 1's ``Scores.measured_best``: a calibration that does not read the share
    never fits it. The bundle is held weakly (kept answers must not keep a replaced bundle)."""
    import weakref

    parts = tuple(partitions)
    kept: list = []  # the partition names, matched once (a lookup is asked once a choice)

    def answer(alive):
        if not kept:
            from hpcds1mpi.decide.trained_hardware import measured_partition

            kept.append({p.name: measured_partition(alive, p) for p in parts})
        return measured_best_of(alive), kept[0]

    try:
        ref = weakref.ref(bundle)
    except TypeError:  # not weakly referable: a stand-in, kept as long as its answers
        return lambda: answer(bundle)
    return lambda: None if ref() is None else answer(ref())


def pick_measured_best_share(scores, index: int) -> float:
    """:func:`measured_best_share` of candidate ``index`` of System 1's ``scores`` (their
    ``measured_best`` lookup, set from the bundle that scored them), on the trained partition
    its partition corresponds to; NaN where they have none or the hardware was never
    measured."""
    lookup = getattr(scores, "measured_best", None)
    found = lookup() if lookup is not None else None
    if found is None:
        return float("nan")
    measured, trained = found
    cols = scores.cols
    partition = trained.get(str(cols["partition"][index]))
    if partition is None:
        return float("nan")
    return measured.share_of(scores.workload, scores.size, partition, *(cols[k][index] for k in (
        "nodes", "ranks_per_node", "threads", "device", "precision")))


def pick_confidence(model: ConfidenceModel, scores, index: int, spread: float,
                    margin: float) -> tuple[float, float]:
    """(confidence, workload noise) of candidate ``index`` of System 1's ``scores``, its
    spread and margin given; the measured-best share is looked up only when ``model`` reads
    it."""
    cols = scores.cols
    noise = float(cols["runtime_noise"][index]) if "runtime_noise" in cols else float("nan")
    share = pick_measured_best_share(scores, index) if model.uses("measured_best_share") \
        else float("nan")
    return float(model.predict([spread], [margin], [noise], [share])[0]), noise
