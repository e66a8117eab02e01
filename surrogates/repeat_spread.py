"""How far one run's repeats fell from its median, as the training runs measured them.

The model predicts a configuration's median over its repeats; a single run lands wherever its
repeats may. Each training run keeps its fastest and slowest repeat (``runtime_min_s``,
``runtime_max_s``). :class:`RepeatSpread` keeps them per (workload, partition), measured size
and configuration, and the workload's typical ratio of fastest and of slowest repeat to the
run's median (the median over its ok runs); :func:`add_repeat_columns` gives System 1's
candidates :data:`FASTEST` / :data:`SLOWEST` (its runs at the size asked) and
:data:`FAST_RATIO` / :data:`SLOW_RATIO` (its workload's, on its hardware), from which
``decide/run_scatter`` makes the single-run band (s38 tester B3: a band read from the noise
alone, as the median +- half of it, had said "about 0 ms-403 ms" for launches of 150 ms or
600 ms). A bundle whose training frame predates those columns gives none: NaN.
"""

from __future__ import annotations

import numpy as np

from hpcds1mpi.config import OK

from .columns import distinct
from .size_neighbours import config_codes

#: Columns :func:`add_repeat_columns` adds: the fastest and slowest repeat of the candidate's
#: ok runs at the size asked (NaN where it has none), in seconds.
FASTEST, SLOWEST = "repeat_fastest_s", "repeat_slowest_s"
#: And its workload's typical fastest and slowest repeat over the run's median (NaN: unknown).
FAST_RATIO, SLOW_RATIO = "repeat_fast_ratio", "repeat_slow_ratio"
COLUMNS = (FASTEST, SLOWEST, FAST_RATIO, SLOW_RATIO)
_CONFIG = ("nodes", "ranks_per_node", "threads", "device", "precision")


class RepeatSpread:
    """The training runs' fastest and slowest repeats.

    Attributes:
        runs: (workload, partition) -> (sorted sizes ``(m,)``, sorted keys ``(k,)`` — size
            index * 2**44 + configuration code —, fastest ``(k,)`` and slowest ``(k,)`` repeat
            over the key's ok runs, s).
        ratios: (workload, partition) -> (fastest, slowest) repeat over the run's median, the
            median over its ok runs.
    """

    def __init__(self, runs: dict | None = None, ratios: dict | None = None):
        self.runs = runs or {}
        self.ratios = ratios or {}

    @classmethod
    def fit(cls, table) -> "RepeatSpread":
        """From training rows (DataFrame or Columns); empty where they have no fastest and
        slowest repeat (a job table, a bundle older than those columns)."""
        if "runtime_min_s" not in table or "runtime_max_s" not in table:
            return cls()
        status = np.asarray(table["status"]).astype(str)
        median, fastest, slowest, sizes = (np.asarray(table[c], dtype=float) for c in (
            "runtime_s", "runtime_min_s", "runtime_max_s", "size"))
        with np.errstate(invalid="ignore"):  # NaN compares False: left out
            ok = (status == OK) & (fastest > 0) & (fastest <= median) & (median <= slowest) \
                & np.isfinite(slowest) & np.isfinite(sizes)
        idx = np.flatnonzero(ok)
        if not len(idx):
            return cls()
        codes = config_codes({c: np.asarray(table[c])[idx] for c in _CONFIG})
        workloads = np.asarray(table["workload"]).astype(str)[idx]
        partitions = np.asarray(table["partition"]).astype(str)[idx]
        sizes, median, fastest, slowest = sizes[idx], median[idx], fastest[idx], slowest[idx]
        runs, ratios = {}, {}
        for key in set(zip(workloads.tolist(), partitions.tolist())):
            mine = np.flatnonzero((workloads == key[0]) & (partitions == key[1]))
            levels = np.unique(sizes[mine])
            k = np.searchsorted(levels, sizes[mine]).astype(np.int64) << 44 | codes[mine]
            order = np.argsort(k, kind="stable")
            keys, first = np.unique(k[order], return_index=True)  # runs measured again: all
            runs[key] = (levels, keys, np.minimum.reduceat(fastest[mine][order], first),
                         np.maximum.reduceat(slowest[mine][order], first))
            ratios[key] = (float(np.median(fastest[mine] / median[mine])),
                           float(np.median(slowest[mine] / median[mine])))
        return cls(runs, ratios)


def add_repeat_columns(cols: dict, spread: RepeatSpread, workload: str, size: float,
                       trained: dict | None = None) -> None:
    """Add :data:`COLUMNS` to System 1's candidate ``cols``, in place.

    Args:
        trained: partition -> the measured partition of its hardware, None where none has it
            (absent: itself), as the other measured bounds read it.
    """
    partitions = np.asarray(cols["partition"]).astype(str)
    n = len(partitions)
    for col in COLUMNS:
        cols[col] = np.full(n, np.nan)
    for part in distinct(partitions).tolist():
        name = trained.get(part, part) if trained is not None else part
        key = (str(workload), str(name))
        if name is None or key not in spread.ratios:
            continue
        on = np.flatnonzero(partitions == part)
        cols[FAST_RATIO][on], cols[SLOW_RATIO][on] = spread.ratios[key]
        levels, keys, fastest, slowest = spread.runs[key]
        at = np.flatnonzero(np.isclose(levels, size, rtol=1e-9, atol=0.0))
        if not len(at):
            continue
        wanted = np.int64(at[0]) << 44 | config_codes({c: np.asarray(cols[c])[on]
                                                        for c in _CONFIG})
        pos = np.clip(np.searchsorted(keys, wanted), 0, len(keys) - 1)
        found = keys[pos] == wanted
        cols[FASTEST][on[found]] = fastest[pos[found]]
        cols[SLOWEST][on[found]] = slowest[pos[found]]


#: The interval ends as :func:`cover_repeats` found them (the median's interval) and as it
#: left them: :func:`median_interval` reads the median's interval back after later steps.
_ENDS = ("runtime_lo", "runtime_hi", "energy_lo", "energy_hi")
_BEFORE = {end: f"{end}_median" for end in _ENDS}
_COVERED = {end: f"{end}_covered" for end in _ENDS}


def cover_repeats(cols: dict, shown_rules=()) -> None:
    """Widen, in place, each candidate's runtime interval to hold its :data:`FASTEST` and
    :data:`SLOWEST` repeat at the size asked (where it has them), and its energy ends by the
    same factor: the held-to-measured interval was the runs' medians and at most +-50 % of
    the median, so a run whose repeats scattered 0.70-2.30 s around 1.45 s read 0.72-2.17 s
    (s40 tester C1). Call after :func:`add_repeat_columns`, last of the interval rules.

    ``shown_rules``: the rules that hold a row's interval to other rows' (``f(cols)``, in
    place), run again on the widened interval, so a never-measured layout is shown no surer
    than a measured one as shown (s42 review R2). The ends before the widening and after
    these rules are kept for :func:`median_interval`."""
    fastest, slowest = (np.asarray(cols[c], dtype=float) for c in (FASTEST, SLOWEST))
    lo, hi = (np.asarray(cols[c], dtype=float) for c in ("runtime_lo", "runtime_hi"))
    for end in _ENDS:
        cols[_BEFORE[end]] = np.array(cols[end], dtype=float)
    with np.errstate(invalid="ignore"):  # NaN compares False: left as it was
        lower = np.isfinite(fastest) & (fastest > 0) & (fastest < lo)
        upper = np.isfinite(slowest) & (hi > 0) & (slowest > hi)
    for rows, end, to in ((lower, "lo", fastest), (upper, "hi", slowest)):
        if not rows.any():
            continue
        runtime = np.array(cols[f"runtime_{end}"], dtype=float)  # a copy: answers may share
        energy = np.array(cols[f"energy_{end}"], dtype=float)
        energy[rows] *= to[rows] / runtime[rows]
        runtime[rows] = to[rows]
        cols[f"runtime_{end}"], cols[f"energy_{end}"] = runtime, energy
    for rule in shown_rules:
        rule(cols)
    for end in _ENDS:
        cols[_COVERED[end]] = np.array(cols[end], dtype=float)


def median_interval(cols: dict, quantity: str) -> tuple[np.ndarray, np.ndarray]:
    """``(lo, hi)`` of ``quantity`` (``runtime`` or ``energy``) without :func:`cover_repeats`'
    own widening: the interval of the median, which is what System 2 compares runs by and
    what the edge carries beyond the sizes. One run's repeats are the run's noise (System 2
    measures it; ``decide/run_scatter`` shows it): carried into the median's interval at the
    edge size they had made every fft size-32 configuration of the race as unsure as a single
    run and reordered System 2's tries (72/72 -> 71/72 within 5 %). An end a later step moved
    past the cover is kept as it is now; one the cover (or a shown rule after it) set is the
    end before it; NaN where it is NaN now."""
    lo, hi = (np.asarray(cols[f"{quantity}_{end}"], dtype=float) for end in ("lo", "hi"))
    if _BEFORE[f"{quantity}_lo"] not in cols:
        return lo, hi
    b_lo, b_hi, c_lo, c_hi = (np.asarray(cols[names[f"{quantity}_{end}"]], dtype=float)
                              for names, end in ((_BEFORE, "lo"), (_BEFORE, "hi"),
                                                 (_COVERED, "lo"), (_COVERED, "hi")))
    with np.errstate(invalid="ignore"):  # NaN compares False: the end as it is now
        m_lo = np.where(lo < c_lo, lo, np.fmax(b_lo, lo))
        m_hi = np.where(hi > c_hi, hi, np.fmin(b_hi, hi))
    return np.where(np.isnan(lo), lo, m_lo), np.where(np.isnan(hi), hi, m_hi)


__all__ = ["COLUMNS", "FASTEST", "FAST_RATIO", "RepeatSpread", "SLOWEST", "SLOW_RATIO",
           "add_repeat_columns", "cover_repeats", "median_interval"]
