"""What the ensemble learns: the targets of a runs or job table, and the bootstrap over problems.

Targets (:data:`TARGETS`): ``runtime_s`` (regressed in log space), ``energy_j`` (log),
``peak_rss_mb`` (log, System 1's memory checks) on runs with status ``ok``, and ``failed``
(the failure classifier's label: a failure status vs ok, NaN for the uninformative statuses
and for a ``timeout``) on all runs. A run cut short at the sweep's ``--timeout`` ran longer
than that limit, which is no failure of its configuration: the classifier learns nothing from
it, as the measured failure evidence counts none (``decide.measured_here``), and
``decide.timed_out`` bounds the runtime predicted there by the limit instead. Labelled a
failure, a ``--timeout 2`` sweep taught the classifier that a size 2 ranks run in 2.3 s fails.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from hpcds1mpi.config import FAILED_TO_RUN, OK

if TYPE_CHECKING:  # pragma: no cover - training code hands DataFrames; scoring imports none
    import pandas as pd

REGRESSION_TARGETS = ("runtime_s", "energy_j", "peak_rss_mb")
#: Targets regressed relative to the analytic time estimate (see features.log_baseline):
#: energy = power x runtime scales with the runtime.
BASELINE_TARGETS = ("runtime_s", "energy_j")
TARGETS = (*REGRESSION_TARGETS, "failed")
#: Fewest runs with a finite value of a target for the bundle to learn it (``train`` says so).
MIN_TARGET_RUNS = 2


#: Where a run that did not measure a target says why.
UNMEASURED_WHY = "the runs' `telemetry export` says why each was not measured"


def left_out_words(target: str, measured: int | None = None, ok: int | None = None) -> str:
    """Why a bundle did not learn ``target``: ``measured`` of its ``ok`` runs had it (None:
    not counted) against :data:`MIN_TARGET_RUNS`, and for memory where each run says why. One
    wording for ``train``'s left-out line and ``recommend``'s memory-not-judged line."""
    counted = ("too few runs measured it" if measured is None else
               f"{measured} of {ok} ok run(s) measured it")
    why = f" ({UNMEASURED_WHY})" if target == "peak_rss_mb" else ""
    return f"{counted}, at least {MIN_TARGET_RUNS} are needed{why}"


def failure_labels(status: pd.Series) -> np.ndarray:
    """1.0 failed, 0.0 ok, NaN for statuses that are neither (unsupported, cancelled, ...) and
    for a ``timeout`` (ran longer than the limit: not a failure, see the module's text)."""
    s = status.astype(str).to_numpy()
    out = np.full(len(s), np.nan)
    out[s == OK] = 0.0
    out[np.isin(s, sorted(FAILED_TO_RUN))] = 1.0
    return out


def target_values(frame: pd.DataFrame, target: str) -> np.ndarray:
    """Training values of ``target`` (log for regression targets); NaN where not applicable."""
    n = len(frame)
    if target == "failed":
        return failure_labels(frame["status"]) if "status" in frame.columns else np.zeros(n)
    if target not in frame.columns:
        return np.full(n, np.nan)
    import pandas as pd

    values = pd.to_numeric(frame[target], errors="coerce").to_numpy(dtype=np.float64,
                                                                    na_value=np.nan)
    ok = frame["status"].astype(str).to_numpy() == OK if "status" in frame.columns \
        else np.ones(n, bool)
    with np.errstate(invalid="ignore", divide="ignore"):
        logged = np.where(ok & (values > 0), np.log(values), np.nan)
    return np.where(np.isfinite(logged), logged, np.nan)


def problem_groups(frame: pd.DataFrame) -> np.ndarray:
    """(n,) integer id of each row's problem = (workload, size)."""
    import pandas as pd

    size = frame["size"].astype(str) if "size" in frame.columns else ""
    key = frame["workload"].astype(str) + "\x00" + size
    return pd.factorize(key)[0]


def bootstrap_weights(groups: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Row weights of a Bayesian bootstrap over problems (Rubin 1981).

    Every problem gets one weight drawn from Exp(1) (the Dirichlet weights of the Bayesian
    bootstrap, scaled to mean 1 per row); its rows share it. The ensemble's spread then comes
    from re-weighting whole problems, as a bootstrap drawing problems with replacement would,
    but no problem is left out: with a few sizes per workload (the reference sweep has 9, 5 of
    them in a training split) a drawn-with-replacement member often saw one or two sizes of a
    workload and extrapolated wildly (measured: held-out MAPE 51 % vs 24 % for seed 0).

    Returns:
        (n,) positive weights, mean 1.
    """
    uniq, inverse = np.unique(groups, return_inverse=True)
    if len(uniq) < 2:
        w = rng.exponential(1.0, size=len(groups))
    else:
        w = rng.exponential(1.0, size=len(uniq))[inverse]
    return w / w.mean()
