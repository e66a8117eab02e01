"""An SWF job's lines under one job number folded into one job.

The SWF spec writes a checkpointed or swapped job as its summary line (status 0, 1 or 5: the
whole job) plus one line per partial execution under the same job number: status 2 "to be
continued", 3 "last part, completed", 4 "last part, failed". Such lines are one job, not
malformed duplicates (s38 tester C7): the summary line is kept wherever it comes; a job written
only as parts is one job, its run time (and CPU time) the sum of the parts, its memory the
largest, its status from its last part (3 completed, 4 failed, 2 alone: not known), its end its
last part's end (not its first start + the summed run: s48 tester P15). A number
used again by another user, or more than 26 h apart (the rule of :mod:`.same_jobs` for Slurm
ids), is another job (a converter that restarted its count, two periods joined), kept.
"""

from __future__ import annotations

from .file_zones import ZONE_SPAN_S

#: SWF status codes of a partial execution.
PART_CODES = (2, 3, 4)

#: Lines of one number further apart than this (submit times, s) are different jobs: the
#: span of the time zones, as :mod:`.same_jobs` keeps Slurm ids apart.
REUSED_APART_S = ZONE_SPAN_S


def fold_parts(numbers, bad, report):
    """Mark in ``bad`` every line that is not its job's kept line; fold the parts into it.

    A job of parts only ran with gaps between its parts, so its end is not its start plus its
    summed run time: the end its last part gives is returned for the kept line.

    Args:
        numbers: the lines' 18 fields (float), changed in place where a job of parts only
            takes its parts' sum.
        bad: the lines already dropped (not read here).
        report: the file's FileReport: a second summary line of one job is dropped as a
            "duplicate job number"; folded parts and reused numbers are counted in notes.

    Returns:
        ``(bad, ends)``: ``bad`` with the lines folded away or dropped; ``ends`` (float
        Series, s from the log's origin, indexed by kept line) the end of each job of parts
        only whose parts' ends are known, for the reader to use instead of start + run.
    """
    import numpy as np
    import pandas as pd

    ends = pd.Series(dtype=float)
    lines = numbers[~bad]
    shared = lines["job"].duplicated(keep=False)
    if not shared.any():
        return bad, ends
    lines = lines[shared].assign(_at=np.arange(int(shared.sum())))
    lines = lines.sort_values(["job", "submit", "_at"], kind="stable")
    prev = lines.shift()
    known = (lines["user"] != -1) & (prev["user"] != -1)
    other_job = ((lines["job"] != prev["job"]) | (known & (lines["user"] != prev["user"]))
                 | (lines["submit"] - prev["submit"] > REUSED_APART_S))
    job = other_job.cumsum()
    reused = int(other_job.sum() - lines["job"].nunique())
    if reused:
        report.notes["job number used again by another job (another user, or submitted more "
                     "than 26 h apart): kept as a job of its own"] += reused
    part = lines["status"].isin(PART_CODES)
    has_summary = (~part).groupby(job).transform("any")
    # A job with a summary line: the first one kept (by file order), its parts folded away.
    summary = lines[has_summary & ~part]
    first = summary.groupby(job[summary.index])["_at"].transform("min") == summary["_at"]
    twice = summary.index[~first.to_numpy()]
    if len(twice):
        report.dropped["duplicate job number"] += len(twice)
    folded = lines.index[(has_summary & part).to_numpy()]
    if len(folded):
        report.notes["partial-execution line (status 2-4) of a job with a summary line: "
                     "folded into that job"] += len(folded)
    # A job of parts only: one line, the sums of its parts, the last part's status.
    parts = lines[~has_summary].assign(_start=lambda f: f["submit"] + f["wait"].clip(lower=0))
    parts = parts.sort_values(["_start", "_at"], kind="stable")
    of = job[parts.index]
    extra = parts.index[of.duplicated().to_numpy()]
    if len(extra):
        keep = parts.index[~of.duplicated().to_numpy()]
        # Groups in order of first appearance (sort=False): start order, as ``keep`` is.
        grouped = parts.groupby(of, sort=False)
        for name in ("run", "cpu_avg"):
            known_sum = parts[name].where(parts[name] >= 0).groupby(of, sort=False).sum(
                min_count=1)
            numbers.loc[keep, name] = known_sum.fillna(-1).to_numpy()
        numbers.loc[keep, "mem_used_kb"] = grouped["mem_used_kb"].max().to_numpy()
        numbers.loc[keep, "status"] = grouped["status"].last().to_numpy()
        # The job ends when its last-ending part does; a part with no wait or run time known
        # leaves the end unknown, so start + summed run stays (as for a job of one line).
        part_end = (parts["submit"] + parts["wait"] + parts["run"]).where(
            (parts["wait"] >= 0) & (parts["run"] >= 0))
        last_end = part_end.groupby(of, sort=False).max().where(
            part_end.notna().groupby(of, sort=False).all()).to_numpy()
        # Never before start + summed run (overlapping parts are a garbled log, not a job
        # that ended before it had run its time).
        start_plus_run = (numbers.loc[keep, "submit"] + numbers.loc[keep, "wait"]
                          + numbers.loc[keep, "run"]).to_numpy()
        ends = pd.Series(np.fmax(last_end, start_plus_run), index=keep)
        ends = ends[~np.isnan(last_end)]
        report.notes["partial-execution line (status 2-4) of a job without a summary line: "
                     "folded into one job (run time the sum of the parts, end and status "
                     "from the last)"] += len(extra)
    out = bad.copy()
    out[twice] = True
    out[folded] = True
    out[extra] = True
    return out, ends
