"""Features of a job known when it is submitted: its request and its user's finished history.

One row per job of a job table (:data:`hpcds1mpi.records.ingest.JOB_COLUMNS`, any reader):

- identity (strings; the predictor encodes them): ``user``, ``account``, ``workload`` (job name
  or SWF executable id), ``partition``;
- the request: requested nodes, processors, time (s, log) and memory (GB); the log's allocated
  counts stand in where it records only those (PM100, sacct: fixed at submission for these
  jobs); hour of day and day of week of the submission;
- how long after the user's previous submission the job came (``user_gap``, log seconds;
  only submissions strictly earlier count, so the row order of a tie cannot matter);
- the history of four groups of the job — the user, the user's same job name, the user's
  same request (time limit, processors and partition), and the same request at the same
  *pace* (also the same bin of ``user_gap``: a workflow's steps, each submitted at its own
  interval after the previous one; a group without finished jobs yet takes the values of
  the user, for the pace group of the same request) — over those of its jobs that had **finished by the job's submit
  time** (``end_time <= submit_time``): how many, the last two run times, the mean,
  spread (std), median and longest of the last five and the median and longest of the last
  20 (log seconds), their run time / limit ratios (and the run time that ratio gives at this
  job's request), how often they hit their limit, how often they failed, and seconds since
  the last one ended; for the user also how many of their jobs were still queued or running
  at that moment;
- *in flight*, only when asked (``in_flight=True``): per group, the jobs **running** at the
  submit time -- how many, and how long the earliest and the latest of them had run by then
  (``{group}_running``, ``_run_longest``, ``_run_newest``; log seconds): what a scheduler knows
  of them, their starts, never their run times. Off by default: a history of *finished* jobs
  (``recommend --history``) does not hold the jobs running now, and on the real logs they
  helped Curie's walltimes but not Gaia's (``runtime_eval --in-flight``, session 49).

Nothing uses a job that had not finished (in flight: only the starts of those running, never
their ends): times are compared in whole seconds, the end rounded up and the submission down,
so a tie counts as finished only when the record says so. Every
history is computed at once for all jobs (sorted arrays and ``searchsorted``, no per-job loop):
Curie's 313k jobs take a few seconds.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .running_jobs import running_at, running_spans

#: Identity columns (strings; missing -> "").
CATEGORICAL = ("user", "account", "workload", "partition")
#: History groups: name -> the identity columns (besides the user) that define it.
GROUPS = {"user": (), "name": ("workload",),
          "request": ("time_limit_s", "req_procs", "partition"),
          "pace": ("time_limit_s", "req_procs", "partition", "gap_bin")}
#: Width of the "pace" group's bins of the gap to the user's previous submission (log2 s):
#: a workflow that submits its steps at its own rhythm (one job 1 s after the other, the next
#: 10-20 s later, the next minutes later) gives each step its own bin.
GAP_BIN = 1.0
#: How many of a group's last finished jobs the window statistics look at.
WINDOW = 5
#: The longer window of the median (robust to one odd run among many alike).
LONG_WINDOW = 20
#: A run within this share of its limit is counted as having hit it.
HIT_SHARE = 0.99
#: Job statuses whose run time says how long the work takes (as the joblogs README keeps them).
COMPLETED = ("ok", "completed", "unknown", "")
#: Every column :func:`submit_features` reads (a fit on its output is a function of these).
INPUT_COLUMNS = CATEGORICAL + ("time_limit_s", "req_procs", "ranks", "cores", "req_nodes",
                               "nodes", "mem_req_gb", "submit_time", "start_time", "end_time",
                               "runtime_s", "status", "state_raw")


def _column(table: pd.DataFrame, name: str, *fallbacks: str) -> pd.Series:
    """A numeric column, the first fallback that exists filling its gaps; NaN when none."""
    out = pd.Series(np.nan, index=table.index, dtype="float64")
    for col in (name, *fallbacks):
        if col in table.columns:
            out = out.fillna(pd.to_numeric(table[col], errors="coerce").astype("float64"))
    return out


def _seconds(series: pd.Series, up: bool) -> np.ndarray:
    """Datetimes as int64 whole seconds (rounded up or down); missing -> int64 max / min."""
    ts = pd.to_datetime(series, errors="coerce")
    ns = ts.to_numpy(dtype="datetime64[ns]").astype("int64")
    missing = ts.isna().to_numpy()
    sec = -(-ns // 10**9) if up else ns // 10**9
    return np.where(missing, np.iinfo(np.int64).max if up else np.iinfo(np.int64).min, sec)


def _status(table: pd.DataFrame) -> pd.Series:
    """Lower-case status; a missing one is "unknown" only where the log says it is not known
    (SWF -1, a log without statuses), else "partial" (SWF 2-4: a checkpointed job's part)."""
    status = table["status"].astype("string").str.lower() if "status" in table \
        else pd.Series(pd.NA, index=table.index, dtype="string")
    raw = table["state_raw"].astype("string").fillna("") if "state_raw" in table \
        else pd.Series("", index=table.index, dtype="string")
    guess = raw.str.contains("unknown", case=False) | (raw == "")
    return status.fillna(guess.map({True: "unknown", False: "partial"}).astype("string"))


def completed_mask(table: pd.DataFrame) -> np.ndarray:
    """Jobs whose run time measures the work: completed or unknown status, run time > 0."""
    run = _column(table, "runtime_s")
    return (_status(table).isin(COMPLETED) & (run > 0)).to_numpy()


def submit_times(table: pd.DataFrame) -> pd.Series:
    """When each job was submitted; its start stands in where the log has no submit time
    (the CSD3 sacct sample): the earliest moment the log says it existed."""
    sub = pd.to_datetime(table["submit_time"], errors="coerce") if "submit_time" in table \
        else pd.Series(pd.NaT, index=table.index, dtype="datetime64[ns]")
    if "start_time" in table:
        sub = sub.fillna(pd.to_datetime(table["start_time"], errors="coerce"))
    return sub


def submit_order(table: pd.DataFrame, rows=None) -> np.ndarray:
    """``rows`` (positions into ``table``; default all of them) in submission order, a total
    order on the jobs' content: submit time (:func:`submit_times`), then the job id (its
    number first: 99 before 100), end time, run time, and last everything the features read
    (:data:`INPUT_COLUMNS`), missing values last. Jobs submitted in the same second (an
    array, a loop of sbatch) so come in one order whatever the file's line order, and which
    are the newest (the walltime's calibration slice, a split's test part) with them (s39
    tester C10: a sacct export with its lines reversed gave 88x the walltime).

    Returns:
        int64 array, shape (len(rows),): ``rows`` reordered.
    """
    rows = np.arange(len(table)) if rows is None else np.asarray(rows, dtype=np.int64)
    part = table.iloc[rows]
    latest = np.iinfo(np.int64).max  # NaT and a missing id sort last

    def stamps(times: pd.Series) -> np.ndarray:
        return np.where(times.isna().to_numpy(), latest,
                        times.to_numpy(dtype="datetime64[ns]").astype("int64"))

    ids = (part["job_id"] if "job_id" in part else pd.Series("", index=part.index)
           ).astype("string").fillna("")
    number = pd.to_numeric(ids.str.extract(r"^(\d+)", expand=False), errors="coerce")
    run = _column(part, "runtime_s").to_numpy()
    content = part[[c for c in INPUT_COLUMNS if c in part.columns]]
    try:
        same = pd.util.hash_pandas_object(content, index=False).to_numpy()
    except TypeError:  # a column of unhashable values: the other keys order it
        same = np.zeros(len(part), np.uint64)
    keys = (same, np.where(np.isnan(run), np.inf, run), stamps(end_times(part)),
            pd.factorize(ids, sort=True)[0],
            number.fillna(np.inf).to_numpy(dtype=float), stamps(submit_times(part)))
    return rows[np.lexsort(keys)]


def end_times(table: pd.DataFrame) -> pd.Series:
    """When each job ended: its end, else start + run time; NaT where neither is known (a
    PM100 table without start or end: its jobs never count as finished for anyone)."""
    end = pd.to_datetime(table["end_time"], errors="coerce") if "end_time" in table \
        else pd.Series(pd.NaT, index=table.index, dtype="datetime64[ns]")
    if "start_time" in table:
        start = pd.to_datetime(table["start_time"], errors="coerce")
        end = end.fillna(start + pd.to_timedelta(_column(table, "runtime_s"), unit="s"))
    return end


def unnamed_users(table: pd.DataFrame) -> np.ndarray:
    """Per job, whether the log names users but not this job's (SWF user -1 on some lines);
    all False in a log that names no user at all (one anonymous user: the machine's)."""
    user = (table["user"] if "user" in table else pd.Series("", index=table.index)
            ).astype("string").fillna("")
    unknown = (user == "").to_numpy(dtype=bool)
    return unknown if not unknown.all() else np.zeros(len(user), bool)


def history_users(table: pd.DataFrame) -> pd.Series:
    """Whose history each job belongs to: its user; a job of :func:`unnamed_users` is
    nobody's -- a key of its own -- so that unknown users are not pooled into one whose runs
    feed every such job's history (s38 tester C3)."""
    user = (table["user"] if "user" in table else pd.Series("", index=table.index)
            ).astype("string").fillna("")
    unnamed = unnamed_users(table)
    if not unnamed.any():
        return user
    own = pd.Series([f"\0job {i}" for i in range(len(user))], index=table.index,
                    dtype="string")
    return user.where(~unnamed, own)


def _group_codes(table: pd.DataFrame, cols: tuple[str, ...]) -> np.ndarray:
    """One int64 code per distinct (user, *cols) combination (:func:`history_users`)."""
    keys = [history_users(table)]
    keys += [table[c].astype("string").fillna("") if c in table else
             pd.Series("", index=table.index) for c in cols]
    return pd.MultiIndex.from_arrays(keys).factorize()[0].astype(np.int64)


class _Finished:
    """The finished jobs of each group in end order, to look up "finished by time t" at once."""

    def __init__(self, codes: np.ndarray, end: np.ndarray, values: dict[str, np.ndarray],
                 ties: tuple[np.ndarray, ...] = ()):
        ok = end < np.iinfo(np.int64).max
        # Jobs ending in the same second: ordered by ``ties`` (submit time, run time), never
        # by their row order, so a table's order cannot change which one is "the last".
        order = np.lexsort(tuple(t[ok] for t in reversed(ties)) + (end[ok], codes[ok]))
        self.codes = codes[ok][order]
        self.end = end[ok][order]
        self.values = {k: v[ok][order] for k, v in values.items()}
        self.t0 = int(self.end.min()) if len(self.end) else 0
        self.span = int(self.end.max()) - self.t0 + 2 if len(self.end) else 2

    def positions(self, codes: np.ndarray, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(first index of the group, one past its last job with end <= t) per query."""
        start = np.searchsorted(self.codes, codes, side="left")
        # Composite key (group, end): one sorted search answers every (group, time) query.
        tq = np.clip(t - self.t0, -1, self.span - 1)
        key = self.codes * self.span + (self.end - self.t0)
        stop = np.searchsorted(key, codes * self.span + tq, side="right")
        return start, np.maximum(stop, start)

    def last(self, name: str, start, stop, k: int) -> np.ndarray:
        """(n, k) matrix of the last k values (most recent first); NaN where fewer."""
        vals = self.values[name]
        out = np.full((len(start), k), np.nan)
        for j in range(1, k + 1):
            has = stop - j >= start
            out[has, j - 1] = vals[stop[has] - j]
        return out

    def total(self, name: str, start, stop) -> np.ndarray:
        """Sum of a value over each query's finished jobs."""
        cs = np.concatenate([[0.0], np.cumsum(self.values[name])])
        return cs[stop] - cs[start]


def _nan_stats(m: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Row mean, std and max ignoring NaN (NaN for an empty row), without warnings."""
    n = np.sum(~np.isnan(m), axis=1)
    s = np.nansum(m, axis=1)
    mean = np.where(n > 0, s / np.maximum(n, 1), np.nan)
    var = np.where(n > 0, np.nansum((m - mean[:, None]) ** 2, axis=1) / np.maximum(n, 1), np.nan)
    mx = np.where(n > 0, np.nanmax(np.where(np.isnan(m), -np.inf, m), axis=1), np.nan)
    return mean, np.sqrt(var), mx


def _count_before(codes: np.ndarray, times: np.ndarray) -> np.ndarray:
    """Per row: rows of the same code with a strictly earlier time."""
    n = len(codes)
    order = np.lexsort((times, codes))
    sc, st = codes[order], times[order]
    first = np.searchsorted(sc, sc, side="left")
    new_run = np.r_[True, (sc[1:] != sc[:-1]) | (st[1:] != st[:-1])] if n else np.zeros(0, bool)
    run_start = np.maximum.accumulate(np.where(new_run, np.arange(n), 0)) if n else first
    out = np.empty(n, dtype=np.int64)
    out[order] = run_start - first
    return out


def gap_before(codes: np.ndarray, times: np.ndarray) -> np.ndarray:
    """Per row: ``times`` minus the latest strictly earlier time of the same code; NaN for a
    code's first time. Rows sharing a time share the value (no row order is used)."""
    n = len(codes)
    order = np.lexsort((times, codes))
    sc, st = codes[order], times[order]
    new_code = np.r_[True, sc[1:] != sc[:-1]] if n else np.zeros(0, bool)
    new_run = np.r_[True, new_code[1:] | (st[1:] != st[:-1])] if n else new_code
    idx = np.arange(n)
    run_start = np.maximum.accumulate(np.where(new_run, idx, 0)) if n else idx
    code_start = np.maximum.accumulate(np.where(new_code, idx, 0)) if n else idx
    prev = run_start - 1  # the last row of the previous time of this code, if any
    has = prev >= code_start
    gap = np.full(n, np.nan)
    gap[has] = (st - st[np.maximum(prev, 0)])[has]
    out = np.empty(n)
    out[order] = gap
    return out


def _nan_median(m: np.ndarray) -> np.ndarray:
    """Row median ignoring NaN (NaN for an empty row), without warnings."""
    srt = np.sort(m, axis=1)  # NaN sort last
    n = np.sum(~np.isnan(m), axis=1)
    lo = srt[np.arange(len(m)), np.maximum((n - 1) // 2, 0)]
    hi = srt[np.arange(len(m)), np.maximum(n // 2, 0)]
    return np.where(n > 0, (lo + hi) / 2, np.nan)


def _limits(table: pd.DataFrame) -> np.ndarray:
    """The requested time (s); a limit of 0 or less is none."""
    limit = _column(table, "time_limit_s").to_numpy()
    return np.where(limit > 0, limit, np.nan)


def _procs(table: pd.DataFrame) -> np.ndarray:
    """The requested processors, the allocated counts standing in."""
    return _column(table, "req_procs", "ranks", "cores").to_numpy()


def _has_values(tab: pd.DataFrame, cols: tuple[str, ...]) -> bool:
    """Whether any of ``cols`` holds a value (a group without them would repeat the user's)."""
    return not cols or any(c in tab and tab[c].notna().any() and
                           (tab[c].astype("string").fillna("") != "").any() for c in cols)


def feature_groups(table: pd.DataFrame) -> tuple[str, ...]:
    """The :data:`GROUPS` whose history features ``table`` has (e.g. no ``name`` group in a log
    without job names). The groups of two tables together are those of either."""
    tab = table.assign(time_limit_s=_limits(table), req_procs=_procs(table), gap_bin=0)
    return tuple(g for g, cols in GROUPS.items() if _has_values(tab, cols))


def submit_features(table: pd.DataFrame, groups: tuple[str, ...] | None = None,
                    in_flight: bool = False) -> pd.DataFrame:
    """The submission-time features of every job of a job table (same index, same order).

    Args:
        table: a job table; uses ``user`` (a log without users is one anonymous user: the
            history is then the machine's; a job without one in a log with users has no
            user history: :func:`history_users`), ``submit_time`` (else ``start_time``),
            ``end_time`` (else start + run time), ``runtime_s``, ``status``, ``state_raw``, ``account``, ``workload``, ``partition``, ``req_nodes`` /
            ``nodes``, ``req_procs`` / ``ranks`` / ``cores``, ``time_limit_s`` and
            ``mem_req_gb`` where present (NaN where not).

        groups: the history groups to compute (:func:`feature_groups`; default: the table's
            own): given, a part of a table gets the whole table's columns.
        in_flight: also the jobs of each group running at the submit time (their count and
            how long they had run; :mod:`.running_jobs`), for a table that holds the jobs
            running then (a whole log, not a history of finished jobs asked about "now").

    Returns:
        DataFrame, one row per job: the :data:`CATEGORICAL` columns as strings, then numeric
        features (NaN where unknown). Row ``i`` depends only on row ``i``'s request and on its
        user's jobs with ``end_time <= submit_time[i]``, plus the count and the gap of the
        user's jobs submitted before it and, ``in_flight``, the starts of those running at
        ``submit_time[i]`` (with ``groups`` given, the user's rows alone give
        their features: ``recommend --history`` computes only the new job's row).
    """
    groups = feature_groups(table) if groups is None else tuple(groups)
    if "user" not in groups:
        raise ValueError(f"the user group is always computed, got groups {groups}")
    n = len(table)
    feats: dict[str, object] = {}
    for c in CATEGORICAL:
        feats[c] = (table[c].astype("string").fillna("") if c in table
                    else pd.Series("", index=table.index, dtype="string")).to_numpy(dtype=object)
    limit = _limits(table)
    procs = _procs(table)
    feats["req_nodes"] = _column(table, "req_nodes", "nodes").to_numpy()
    feats["req_procs"] = procs
    feats["log_limit"] = np.log(limit)
    feats["mem_req_gb"] = _column(table, "mem_req_gb").to_numpy()
    submit_ts = submit_times(table)
    feats["hour"] = submit_ts.dt.hour.to_numpy(dtype="float64", na_value=np.nan)
    feats["weekday"] = submit_ts.dt.day_of_week.to_numpy(dtype="float64", na_value=np.nan)

    submit = _seconds(submit_ts, up=False)
    end = _seconds(end_times(table), up=True)
    run = _column(table, "runtime_s").to_numpy()
    status = _status(table).to_numpy(dtype=object)
    done = completed_mask(table)
    hit = (run >= HIT_SHARE * limit) | (status == "timeout")
    # Failed as the log calls it: an SWF status 0 that ran to its request is a timeout to the
    # walltime's kill evidence (s38 tester C5) and still "0 failed" in its log, as the
    # features were measured on Gaia and Curie (counted apart, the walltime policy chose
    # otherwise and kept Gaia's requests for 76 % of jobs: 1.36x -> 392x over-request).
    raw = (table["state_raw"].astype("string").fillna("") if "state_raw" in table
           else pd.Series("", index=table.index, dtype="string"))
    failed = (~np.isin(status, COMPLETED + ("partial",)) & (status != "timeout")) | \
        raw.str.startswith("0 failed").to_numpy(dtype=bool)
    known = np.isfinite(run) & (run >= 0)
    end = np.where(known, end, np.iinfo(np.int64).max)
    spans = running_spans(_seconds(table["start_time"], up=True) if "start_time" in table
                          else np.full(n, np.iinfo(np.int64).max), submit, end, known,
                          limit) if in_flight else None
    tab = table.assign(time_limit_s=limit, req_procs=procs)
    log_run = np.log(np.maximum(run, 1.0))
    ratio = np.log(np.maximum(run, 1.0) / limit)
    ties = (submit, np.nan_to_num(run, nan=-1.0), np.nan_to_num(limit, nan=-1.0))
    gap = gap_before(_group_codes(tab, ()), submit.astype(float))
    feats["user_gap"] = np.log1p(gap)
    tab = tab.assign(gap_bin=np.where(np.isnan(gap), -1, np.floor(
        np.log2(1 + np.nan_to_num(gap)) / GAP_BIN)).astype(np.int64))

    for gname, cols in GROUPS.items():
        if gname not in groups:
            continue  # e.g. no job names in this log: the group would repeat the user's
        codes = _group_codes(tab, cols)
        # Run-time statistics from completed jobs; limit hits and failures from all finished.
        comp = _Finished(codes, np.where(done, end, np.iinfo(np.int64).max),
                         {"log_run": log_run, "ratio": ratio}, ties)
        allf = _Finished(codes, end, {"hit": hit.astype(float), "failed": failed.astype(float),
                                      "one": np.ones(n), "end": end.astype(float)}, ties)
        s, e = comp.positions(codes, submit)
        last = comp.last("log_run", s, e, LONG_WINDOW)
        mean, std, mx = _nan_stats(last[:, :WINDOW])
        p = f"{gname}_"
        feats[p + "n"] = (e - s).astype(float)
        feats[p + "last1"] = last[:, 0]
        feats[p + "last2"] = last[:, 1]
        feats[p + "mean5"] = mean
        feats[p + "std5"] = std
        feats[p + "max5"] = mx
        feats[p + "med5"] = _nan_median(last[:, :WINDOW])
        feats[p + "med20"] = _nan_median(last)
        feats[p + "max20"] = _nan_stats(last)[2]
        rlast = comp.last("ratio", s, e, WINDOW)
        feats[p + "ratio1"] = rlast[:, 0]
        feats[p + "ratio_mean5"] = _nan_stats(rlast)[0]
        s2, e2 = allf.positions(codes, submit)
        cnt = allf.total("one", s2, e2)
        with np.errstate(invalid="ignore", divide="ignore"):
            feats[p + "hit_rate"] = np.where(cnt > 0, allf.total("hit", s2, e2) / cnt, np.nan)
            feats[p + "fail_rate"] = np.where(cnt > 0, allf.total("failed", s2, e2) / cnt, np.nan)
        if in_flight:
            count, longest, newest = running_at(codes, *spans, submit)
            feats[p + "running"] = count
            feats[p + "run_longest"] = np.log1p(longest)
            feats[p + "run_newest"] = np.log1p(newest)
        last_end = allf.last("end", s2, e2, 1)[:, 0]
        feats[p + "since_last"] = np.log1p(np.maximum(submit - last_end, 0.0))
        if gname == "user":
            # Queued or running at submission: submitted strictly before this job (a tie is
            # no order: the table's row order must not matter), not finished by then.
            feats["user_active"] = np.maximum(_count_before(codes, submit) - cnt, 0
                                              ).astype(float)
    # A job name or request never seen before borrows its user's history (its own count, 0,
    # says so): job names that are one-off ids (Gaia's executables) then cost nothing. A new
    # pace borrows the same request's (already filled from the user's where that is new too).
    for gname in GROUPS:
        if gname == "user" or f"{gname}_n" not in feats:
            continue
        donor = "request" if gname == "pace" and "request_n" in feats else "user"
        empty = feats[f"{gname}_n"] == 0
        for stat in ("last1", "last2", "mean5", "std5", "max5", "med5", "med20", "max20", "ratio1",
                     "ratio_mean5", "hit_rate", "fail_rate", "since_last"):
            col = feats[f"{gname}_{stat}"]
            feats[f"{gname}_{stat}"] = np.where(empty & np.isnan(col),
                                                feats[f"{donor}_{stat}"], col)
    # The run time a group's recent share of its request would give at this job's request
    # (users who scale the request with the work): a sum the trees cannot form themselves.
    for gname in GROUPS:
        if f"{gname}_ratio1" in feats:
            feats[f"{gname}_scaled1"] = feats["log_limit"] + feats[f"{gname}_ratio1"]
            feats[f"{gname}_scaled5"] = feats["log_limit"] + feats[f"{gname}_ratio_mean5"]
    out = pd.DataFrame(feats, index=table.index)
    for c in CATEGORICAL:
        out[c] = out[c].astype("string")
    return out


def numeric_columns(features: pd.DataFrame) -> list[str]:
    """The numeric feature columns (everything but :data:`CATEGORICAL`)."""
    return [c for c in features.columns if c not in CATEGORICAL]
