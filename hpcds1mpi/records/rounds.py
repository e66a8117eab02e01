"""One row per configuration from a sweep measured in rounds.

A plan with ``rounds = R`` (docs/telemetry.md, "Sweep plans") measures every configuration of
a problem R times in turn, each round under its own seed, so the runs table holds R rows of the
same configuration. Whatever judges a *pick* among a problem's configurations (the System 1
evaluation, the recipe cross-validation) needs one measured outcome per configuration, or the
"best measured" becomes the luckiest of R draws. :func:`collapse_rounds` gives it: the median
runtime (and energy) of the rounds, their spread folded into ``noise``, the repeats summed. A
configuration that failed in any round keeps that failure: it is a crash risk, whatever the
other rounds did. A round the sweep's ``--timeout`` cut short is no failure (it ran longer than
the limit, ``config.TIMEOUT``): a configuration ok in other rounds becomes the median of its ok
rounds, its ``error`` saying how many rounds timed out and why; one that only timed out stays
a timeout. A round that says nothing of how it runs (``interrupted``, ``cancelled``,
``unsupported``) is left out while another round says something. Rows of a sweep without
rounds pass through unchanged.
"""

from __future__ import annotations

import numpy as np

from hpcds1mpi.config import FAILED_TO_RUN, OK, TIMEOUT, UNINFORMATIVE_STATUSES

#: What identifies a configuration of a problem across rounds (those present are used); the
#: sweep id keeps two measurements of the same configuration (two files, two plans) apart.
IDENTITY = ("sweep_id", "machine_id", "workload", "size", "partition", "nodes", "ranks_per_node",
            "threads", "device", "precision", "command", "kind")
#: Measured values that become the median of the rounds.
MEDIANS = ("runtime_s", "energy_j", "avg_power_w", "peak_rss_mb", "fom")


def collapse_rounds(frame):
    """``frame`` (a runs table) with each configuration's rounds folded into one row (the
    same columns: what it returns trains and evaluates like any runs table)."""
    import pandas as pd

    keys = [c for c in IDENTITY if c in frame.columns]
    if frame.empty or not keys:
        return frame
    ident = frame[keys].astype(str).agg("\x1f".join, axis=1) if len(keys) > 1 else \
        frame[keys[0]].astype(str)
    counts = ident.map(ident.value_counts())
    if (counts <= 1).all():
        return frame
    single = frame[counts <= 1]
    folded = []
    status = frame["status"].astype(str) if "status" in frame.columns else None
    for _, idx in frame[counts > 1].groupby(ident[counts > 1], sort=False).groups.items():
        rows = frame.loc[idx]
        said = status.loc[idx] if status is not None else None
        informative = ~said.isin(UNINFORMATIVE_STATUSES) if said is not None else None
        if informative is not None and informative.any():
            rows, said = rows[informative], said[informative]
        if said is None or (said == OK).all():
            row = _median_row(rows)
        elif said.isin(FAILED_TO_RUN).any():
            row = rows[said.isin(FAILED_TO_RUN)].iloc[0].copy()
        elif (said == OK).any() and (said == TIMEOUT).any():
            row = _median_row(rows[said == OK])
            if "error" in rows.columns:
                row["error"] = _timed_out_note(rows[said == TIMEOUT], len(rows))
        else:
            row = rows.iloc[0].copy()
        folded.append(row)
    merged = pd.DataFrame(folded)
    for col in frame.columns:  # rows taken out as Series come back as objects
        try:
            merged[col] = merged[col].astype(frame[col].dtype)
        except (TypeError, ValueError):
            pass
    out = pd.concat([single, merged], ignore_index=False).sort_index()
    return out.reset_index(drop=True)


def _median_row(rows):
    """One row of ok ``rows``: the median of :data:`MEDIANS`, the spread between them folded
    into ``noise``, the repeats summed, the extremes of the runtime kept."""
    import pandas as pd

    row = rows.iloc[0].copy()
    for col in MEDIANS:
        if col in rows.columns:
            row[col] = _median(pd.to_numeric(rows[col], errors="coerce"))
    runtimes = pd.to_numeric(rows["runtime_s"], errors="coerce").to_numpy(float)
    if "noise" in rows.columns and np.isfinite(runtimes).all() and row["runtime_s"] > 0:
        between = float((runtimes.max() - runtimes.min()) / row["runtime_s"])
        within = _median(pd.to_numeric(rows["noise"], errors="coerce"))
        row["noise"] = max(between, within) if np.isfinite(within) else between
    if "repeats" in rows.columns:
        row["repeats"] = int(pd.to_numeric(rows["repeats"], errors="coerce").sum())
    for col, fold in (("runtime_min_s", "min"), ("runtime_max_s", "max")):
        if col in rows.columns:  # pandas skips NaN and gives NaN for none, silently
            row[col] = float(getattr(pd.to_numeric(rows[col], errors="coerce"), fold)())
    return row


def _timed_out_note(timed_out, rounds: int) -> str:
    """What an ok configuration's ``error`` says of its ``timed_out`` rounds (of ``rounds``
    informative ones): how many, and the first one's reason."""
    reason = str(timed_out["error"].iloc[0]) if "error" in timed_out.columns else ""
    reason = "" if reason in ("", "nan", "None") else f" ({reason})"
    return (f"{len(timed_out)} of {rounds} rounds timed out{reason}: the runtime is the "
            f"median of the {rounds - len(timed_out)} ok rounds")


def first_rounds(runs, count: int):
    """The runs of each sweep's first ``count`` rounds: a round is a seed counted from the
    sweep's lowest (a plan in rounds gives round r the seed seed + r)."""
    if "seed" not in runs.columns:
        return runs
    seed = runs["seed"].astype(int)
    lowest = seed.groupby(runs["sweep_id"]).transform("min") if "sweep_id" in runs else seed.min()
    return runs[(seed - lowest) < count]


def pool_sweeps(runs):
    """``runs`` with every sweep of one machine under one sweep id, so that
    :func:`collapse_rounds` folds a configuration measured by several sweeps (the same plan
    run twice, under two seeds) into the median of all their rounds: more repeats of one
    configuration on one machine, not two configurations."""
    if runs.empty or "sweep_id" not in runs.columns:
        return runs
    machine = runs["machine_id"].astype(str) if "machine_id" in runs.columns else None
    ids = runs["sweep_id"].astype(str)
    pooled = ids.groupby(machine).transform(lambda s: "+".join(sorted(s.unique()))) \
        if machine is not None else "+".join(sorted(ids.unique()))
    return runs.assign(sweep_id=pooled)


def measured_outcomes(paths, first: int | None = None, pool: bool = False):
    """One row per configuration from telemetry files read as one table: each sweep's first
    ``first`` rounds when given (a sweep judged without its race rounds), the sweeps of one
    machine pooled when ``pool`` (:func:`pool_sweeps`), then :func:`collapse_rounds` -- in
    that order, so a median never sees the rounds left out."""
    import pandas as pd

    from hpcds1mpi.records.telemetry import read_runs

    runs = pd.concat([read_runs(p) for p in paths], ignore_index=True)
    runs = runs if first is None else first_rounds(runs, first)
    return collapse_rounds(pool_sweeps(runs) if pool else runs)


def _median(values) -> float:
    """The median of the finite values; NaN (no warning) when there is none (e.g. no meter)."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    return float(np.median(v)) if len(v) else float("nan")


def _at_least_one(text: str) -> int:
    import argparse

    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number of rounds, at least 1 "
                                         f"(got {text!r})")
    return value


def add_arguments(parser, *, pool: bool = True) -> None:
    """The options every reader of swept rounds shares: ``--first-rounds N`` (each sweep's
    first N rounds only) and, with ``pool``, ``--pool-sweeps`` (:func:`pool_sweeps`)."""
    parser.add_argument("--first-rounds", type=_at_least_one, default=None, metavar="N",
                        help="keep each sweep's first N rounds only (e.g. a sweep without its "
                        "race rounds)")
    if pool:
        parser.add_argument("--pool-sweeps", action="store_true",
                            help="fold a configuration measured by several sweeps of one "
                            "machine (the same plan under two seeds) into the median of all "
                            "their rounds, instead of keeping each sweep's apart")


def read_or_exit(prog: str, read, *args, **kwargs):
    """``read(*args, **kwargs)`` (e.g. :func:`measured_outcomes`), or, for a telemetry file that
    is missing or not ours, one line on stderr naming it and exit status 2."""
    import sys

    from hpcds1mpi.errors import HpcdsError

    try:
        return read(*args, **kwargs)
    except (OSError, HpcdsError) as exc:
        hint = "" if "hpcds1mpi sweep" in str(exc) else "; give telemetry files written by " \
            "hpcds1mpi sweep"
        print(f"{prog}: {exc}{hint}", file=sys.stderr)
        raise SystemExit(2) from None


def describe(args) -> str:
    """What ``add_arguments``' options did to the telemetry, for a results file ('' if nothing)."""
    said = []
    if getattr(args, "first_rounds", None):
        said.append(f"each sweep's first {args.first_rounds} rounds")
    if getattr(args, "pool_sweeps", False):
        said.append("sweeps of one machine pooled")
    return f" ({'; '.join(said)})" if said else ""
