"""A job's run time checked against its own start and end, the same way for every kind of log.

A job runs only between its start and its end, so its run time is never longer than end -
start by more than rounding (Slurm's Elapsed is End - Start less the time the job was
suspended; SWF's field 4 is "end time minus start time"). It may be shorter: a suspended job.
A run time longer than end - start is a wrong value (which one cannot be told): the job is
dropped and counted, as a job that ends before it starts is. A run time shorter is kept and
noted. When most jobs' run times are end - start in another unit (a table's runtime_s edited
into minutes: 60x below, in every row), the file is refused, as limits in another unit are
(:mod:`.time_limits`): a 25-minute job read as 25 s gets a 60-s walltime (s45 tester C4).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from hpcds1mpi.errors import IngestError

from .schema import FileReport
from .unit_verdict import MIN_JUDGED, another_unit  # noqa: F401 (MIN_JUDGED re-exported)

if TYPE_CHECKING:
    import pandas as pd

#: Each kind's run-time field and start/end fields, as the file names them.
READ_AS = {
    "swf": ("field 4 (run time)", "its start and end"),
    "pm100": ("run_time", "start_time and end_time"),
    "adastra": ("run_time", "start_time and end_time"),
    "eagle": ("run_time", "start_time and end_time"),
    "eurora": ("run_time_s", "start and end"),
    "sacct-p": ("ElapsedRaw or Elapsed", "Start and End"),
    "sacct-csv": ("ElapsedRaw or Elapsed", "Start and End"),
    "sacct-json": ("time.elapsed", "time.start and time.end"),
    "job-table": ("runtime_s", "start_time and end_time"),
}

#: Seconds a run time and end - start may differ by from rounding alone (whole-second times
#: beside a run time rounded to a tenth), besides :data:`ROUNDING_SHARE` of end - start.
ROUNDING_S = 2.0
ROUNDING_SHARE = 0.01
#: Units a run time may be in by mistake: (name, seconds in one, shortest end - start judged:
#: a job shorter than one unit cannot tell that unit from rounding).
UNITS = (("minutes", 60.0, 60.0), ("hours", 3600.0, 3600.0), ("milliseconds", 0.001, 10.0))

#: The reasons a job is dropped or noted under.
LONGER = ("run time longer than end - start (a job runs only between them): its run time or "
          "a time is wrong")
SHORTER = ("run time shorter than end - start beyond rounding: kept (a suspended job's run "
           "time leaves out the time it was suspended; if it was not suspended, its run time "
           "or a time is wrong)")


def _unit_note(unit: str) -> str:
    return (f"run time that is end - start in {unit}, not seconds: kept as it is; if it is "
            f"in {unit}, convert it to seconds and ingest again")


def _time_step(df: "pd.DataFrame") -> float:
    """60 where every start and end is a whole minute (a spreadsheet re-save drops the
    seconds: end - start is then known to the minute), else 0."""
    import pandas as pd

    times = pd.concat([pd.to_datetime(df[c], errors="coerce") for c in ("start_time",
                                                                        "end_time")]).dropna()
    return 60.0 if len(times) and (times.dt.second == 0).all() else 0.0


def check_run_times(df: "pd.DataFrame", path: str | Path, kind: str,
                    report: FileReport) -> "pd.DataFrame":
    """``df`` (the job table of one file) without jobs whose run time is longer than their end -
    start; those shorter noted in ``report``, as are those that are end - start in another unit.

    Raises:
        IngestError: most jobs' run times are their end - start in another unit.
    """
    import numpy as np
    import pandas as pd

    run_field, times = READ_AS.get(kind, READ_AS["job-table"])
    span = (pd.to_datetime(df["end_time"], errors="coerce")
            - pd.to_datetime(df["start_time"], errors="coerce")).dt.total_seconds()
    run = pd.to_numeric(df["runtime_s"], errors="coerce")
    known = (span.notna() & run.notna()).to_numpy(dtype=bool)
    span_v, run_v = span.to_numpy(dtype=float), run.to_numpy(dtype=float)
    slack = ROUNDING_S + ROUNDING_SHARE * np.where(known, span_v, 0.0) + _time_step(df)
    in_unit = np.zeros(len(df), bool)  # a job matched by one unit is noted under it only
    for unit, seconds, shortest in UNITS:
        judged = known & (span_v >= shortest) & (run_v > 0) & ~in_unit
        matched = judged & (np.abs(run_v * seconds - np.where(known, span_v, 0.0))
                            <= 0.5 * max(seconds, 1.0) + slack)
        matched &= np.abs(run_v - np.where(known, span_v, 0.0)) > slack  # seconds would not do
        if another_unit(judged.sum(), matched.sum()):
            way = "shorter" if seconds > 1 else "longer"
            factor = seconds if seconds > 1 else 1 / seconds
            raise IngestError(
                f"{path}: {int(matched.sum())} of {int(judged.sum())} jobs have a run time "
                f"{factor:g}x {way} than the time between their {times}, so {run_field} "
                f"looks like {unit}, not the seconds this reader takes; convert it to "
                "seconds and ingest again")
        if matched.any() and seconds > 1:  # a few far longer are dropped below, as wrong
            report.notes[_unit_note(unit)] += int(matched.sum())
            in_unit |= matched
    longer = known & ~in_unit & (run_v > np.where(known, span_v, 0.0) + slack)
    shorter = known & ~in_unit & (run_v < np.where(known, span_v, 0.0) - slack)
    if shorter.any():
        report.notes[SHORTER] += int(shorter.sum())
    if not longer.any():
        return df
    report.dropped[LONGER] += int(longer.sum())
    return df[~longer].reset_index(drop=True)
