"""Training data: the one checked container that sweep telemetry and job tables train models in.

A :class:`TrainingData` holds a runs table (``telemetry.read_runs``), an ingested job table
(``ingest``), or both concatenated, after one check of what a model needs from data: known
column names, ``workload`` / ``status`` / ``runtime_s`` present, runs of one machine only, at
least 4 ok runs with a positive runtime (ok jobs of a job log without one, such as the
sub-second jobs Slurm records as 0 s, are left out and counted; a sweep run without one is a
damaged file, refused). Build it once (:meth:`TrainingData.read` from files,
:meth:`TrainingData.from_frame` from a DataFrame) and hand it on: training, ``learn`` and the
held-out evaluations take it as it is, without checking again.

Every column of the input is kept, the kernels' work models included (``work_flops``,
``work_bytes``, ``comm_messages``, ``comm_bytes``, ``mem_bytes_per_rank``): the surrogates'
features read them. Filling configuration columns a job table lacks is the features' business
(``surrogates.features.normalise_frame``), not the data's.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from hpcds1mpi.config import DEVICES, MIN_OK_RUNS, OK, PRECISIONS, STATUSES
from hpcds1mpi.errors import DataError, TelemetryError
from hpcds1mpi.lock_files import not_regular
from hpcds1mpi.records import remeasured_runs
from hpcds1mpi.records.machines import launcher_note, machine_ids, refuse_foreign_machines
from hpcds1mpi.records.table_files import read_file
from hpcds1mpi.records.telemetry_rows import telemetry_rows
from hpcds1mpi.records.unmeasured_rows import without_predicted_energy

#: Columns a training table may have besides the runs table (``telemetry.RUN_COLUMNS``) and
#: the job table (``ingest.JOB_COLUMNS``): ``kept`` (a bundle's sampling mark) and the
#: partition hardware a bundle records (``cpu_model``: the run's machine's, s31 tester Q4;
#: ``cpu_signature``, s38 tester K2), and what a program's sweep records of it
#: (``telemetry_rows``). Anything else is refused, not silently used or ignored.
EXTRA_COLUMNS: frozenset[str] = frozenset({"kept", "gpu_memory_gb", "max_nodes", "cpu_model",
                                           "cpu_signature",
                                           "runtime_source", "measure_options",
                                           "command_template", "launched_with",
                                           "swept_in", "input_stamps"})


def known_columns() -> frozenset[str]:
    """Every column name a training table may hold."""
    from hpcds1mpi.records.ingest import JOB_COLUMNS
    from hpcds1mpi.records.telemetry import RUN_COLUMNS

    return EXTRA_COLUMNS | {c for c, _ in RUN_COLUMNS} | {c for c, _ in JOB_COLUMNS}


def read_frames(telemetry: tuple[str, ...] | list[str] = (),
                jobs: tuple[str, ...] | list[str] = ()) -> pd.DataFrame:
    """One unchecked DataFrame from telemetry files and job tables (job rows carry no
    machine id).

    Args:
        telemetry: sweep telemetry files (``.h5``).
        jobs: job tables written by ``hpcds1mpi ingest`` (``.parquet``).

    Raises:
        DataError: no input given, a job table missing, or no rows in any input.
        TelemetryError: a file that is not telemetry / not a parquet job table.
    """
    frames, libraries, left_out = [], {}, []
    for path in telemetry:
        frames.append(telemetry_rows(path))
        libraries.update(frames[-1].attrs.get("mpi_libraries", {}))
        left_out += frames[-1].attrs.get("left_out", [])
    if len(frames) > 1:  # one run read twice trained as two agreeing repeats (s47 tester M8)
        frames, twice = _runs_once(frames)
        left_out += [twice] if twice else []
    for path in jobs:
        if kind := not_regular(path):  # a FIFO's read waits forever (s47 tester M3)
            raise DataError(f"{path}: {kind}, not a regular file; give the job table "
                            "(.parquet) itself")
        try:
            frames.append(read_file(pd.read_parquet, path))
        except FileNotFoundError:
            raise DataError(f"{path}: job table not found") from None
        except Exception as exc:  # noqa: BLE001 - pyarrow raises many kinds
            raise TelemetryError(f"{path}: not a parquet job table ({type(exc).__name__}); "
                                 "make one with `hpcds1mpi ingest`") from None
    if not frames:
        raise DataError("no training data: give --telemetry FILE.h5 and/or --jobs FILE.parquet")
    frames = [f for f in frames if len(f)]
    if not frames:
        raise DataError("training data is empty: no runs; measure with `hpcds1mpi sweep` first")
    frame = pd.concat(frames, ignore_index=True, sort=False) if len(frames) > 1 else frames[0]
    frame.attrs["mpi_libraries"] = libraries  # machine_id -> mpi_library, for refusals only
    # runs that are no measurement, one line per file; runs read twice (dict: a file given
    # twice says its lines once)
    frame.attrs["left_out"] = list(dict.fromkeys(left_out))
    return frame


def _runs_once(frames: list[pd.DataFrame]) -> tuple[list[pd.DataFrame], str | None]:
    """The telemetry ``frames`` as one, each run record once: a file given twice, a copy, a
    shard beside its merge. By learn's rule (:func:`merge_runs`; merge keys runs alike): the
    same record (machine, ``run_id``, start) is kept once, as is a crashed run and its sweep's
    retry; a configuration measured again keeps both. Also the line saying how many were
    dropped (None: none)."""
    frames = [f for f in frames if len(f)]
    if len(frames) < 2:
        return frames, None
    merged = remeasured_runs.merge_runs(frames[0], pd.concat(frames[1:], ignore_index=True,
                                                             sort=False))
    if not merged.replaced:
        return [merged.frame], None
    return [merged.frame], (
        f"{merged.replaced} run(s) read twice, the same record in two --telemetry files (a "
        "file given twice, a copy, a shard beside its merge): each counted once")


def merge_runs(old: pd.DataFrame, new: pd.DataFrame) -> pd.DataFrame:
    """Old training rows plus new ones: a record read again (or a crashed run retried) keeps
    the newest row, a configuration measured again keeps both
    (:func:`hpcds1mpi.records.remeasured_runs.merge_runs` says why)."""
    return remeasured_runs.merge_runs(old, new).frame


def impossible_rows(frame: pd.DataFrame, what: str = "training data",
                    fix: str = "fix or drop those rows") -> str | None:
    """The first column with values no run can have, as a message about ``what`` ending in
    ``fix``; None when every row could have run.

    The numbers follow the input rules (:data:`hpcds1mpi.schemas.runs.RUN_RULES`: sizes
    1..2^40, counts whole 1..10^6, times finite and at most a year, energies and memory peaks
    finite and not negative). A sweep's runs table (``run_id``) must give every row a size and
    a layout, whole numbers; a job table may leave them out (job logs carry no problem size),
    but what it gives must be real; a run time, energy or memory peak is checked where given.
    Text columns hold one of the known devices, precisions and statuses, and a workload's
    sweep runs come from one program (:func:`~hpcds1mpi.records.run_sources.mixed_programs`).
    """
    from hpcds1mpi.schemas.runs import EVERY_SWEEP_ROW, RUN_RULES

    sweep = not is_job_table(frame)
    for rule in RUN_RULES:
        if rule.column not in frame.columns:
            continue
        col = rule.column
        values = pd.to_numeric(frame[col], errors="coerce").astype(float)
        required = sweep and col in EVERY_SWEEP_ROW
        whole = rule.whole or required
        given = pd.Series(True, index=values.index) if required else values.notna()
        with np.errstate(invalid="ignore"):
            good = np.isfinite(values) & (values >= rule.low) & (values <= rule.high)
            if whole:
                good &= values == np.floor(values)
        bad = given & ~good
        if bad.any():
            words = rule.words if not whole or rule.whole else \
                rule.words.replace("numbers", "whole numbers")
            return (f"{what} has {int(bad.sum())} row(s) with {col} "
                    f"{str(frame[col][bad].iloc[0])[:40]}: {words}; {fix}")
    if "workload" in frame.columns:  # a sweep's label, as sweep --label takes it
        from hpcds1mpi.schemas.runs import WORKLOAD_LABEL, WORKLOAD_LABEL_WORDS

        label = frame["workload"].astype("string").fillna("")
        bad = _sweep_rows(frame) & ~label.str.fullmatch(WORKLOAD_LABEL).fillna(False)
        if bad.any():
            return (f"{what} has {int(bad.sum())} sweep row(s) with workload "
                    f"{ascii(str(label[bad].iloc[0]))[:40]}: {WORKLOAD_LABEL_WORDS}; {fix}")
    for col, allowed in (("device", DEVICES), ("precision", PRECISIONS), ("status", STATUSES)):
        if col not in frame.columns:
            continue
        text = frame[col]
        bad = text.notna() & ~text.astype(str).isin(allowed)
        if bad.any():
            return (f"{what} has {int(bad.sum())} row(s) with {col} "
                    f"{str(text[bad].iloc[0])[:40]!r}: use one of {', '.join(allowed)}; "
                    f"{fix}")
    from hpcds1mpi.records.run_sources import mixed_programs

    return mixed_programs(frame, what, fix)  # one name, two programs: no row is impossible


@dataclass(frozen=True)
class RuntimeGaps:
    """Ok jobs of a job table left out of training for want of a run time.

    Attributes:
        zero: those whose run time is 0 s (they ran under a second: Slurm's ``ElapsedRaw``
            has whole seconds).
        missing: those with no run time at all (a log without a run-time column).
    """

    zero: int = 0
    missing: int = 0

    @property
    def total(self) -> int:
        return self.zero + self.missing

    def describe(self) -> str:
        """``"3 that ran under 1 s (0 s recorded) and 2 with none"`` (the non-zero parts)."""
        parts = []
        if self.zero:
            parts.append(f"{self.zero} that ran under 1 s (0 s recorded)")
        if self.missing:
            parts.append(f"{self.missing} with none")
        return " and ".join(parts)


def _checked(frame: pd.DataFrame, machine: str | None, allow_columns
             ) -> tuple[pd.DataFrame, RuntimeGaps]:
    """``frame`` refused or returned checked, with the ok jobs left out for want of a run
    time (:func:`_without_jobs_lacking_runtimes`)."""
    if frame is None or len(frame) == 0:
        raise DataError("training data is empty: no runs; measure with `hpcds1mpi sweep` first")
    known = known_columns() | set(allow_columns or ())
    unknown = sorted(str(c) for c in frame.columns if c not in known)
    if unknown:
        raise DataError(
            f"training data has unknown column(s) {', '.join(unknown[:8])}"
            f"{' ...' if len(unknown) > 8 else ''}; expected runs-table / job-table columns "
            "(docs/architecture.md, 'Runs table')"
        )
    for col in ("workload", "status", "runtime_s"):
        if col not in frame.columns:
            raise DataError(f"training data has no {col!r} column; expected a runs table "
                            "or an ingested job table")
    impossible = impossible_rows(frame)
    if impossible:
        raise DataError(impossible)
    if "machine_id" in frame.columns:
        ids = sorted(frame["machine_id"].dropna().astype(str).unique())
        if machine is not None:
            if machine not in ids:
                raise DataError(f"no runs from machine {machine!r}; the data has "
                                f"{', '.join(ids) or 'none'}")
            frame = frame[frame["machine_id"].astype(str) == machine]
        elif len(ids) > 1:
            raise DataError(
                f"training data mixes {len(ids)} machines ({', '.join(i[:12] for i in ids)}); "
                "runs from different machines are never mixed: train one bundle per machine "
                "with --machine ID" + launcher_note(frame, ids)
            )
    ok = frame["status"].astype(str) == OK
    if not ok.any():
        unknown = frame["status"].isna()
        if unknown.all():  # a log that records no status (Theta): not "statuses: {}"
            raise DataError(f"training data has no successful runs: all {len(frame)} jobs have "
                            "an unknown status (the log records none; analysis/runtime_eval.py"
                            " counts them as completed, train learns only from jobs marked ok):"
                            " use a log that records job status, or set the job table's status"
                            " to 'ok' if you know every job completed")
        counts = frame.loc[~unknown, "status"].astype(str).value_counts().to_dict()
        raise DataError(f"training data has no successful runs (statuses: {counts}"
                        f"{f', and {int(unknown.sum())} unknown' if unknown.any() else ''}); "
                        "a model needs ok runs to learn runtimes")
    frame, dropped = _without_jobs_lacking_runtimes(frame, ok)
    ok = frame["status"].astype(str) == OK
    if ok.sum() < MIN_OK_RUNS:
        raise DataError(f"only {int(ok.sum())} ok run(s); a model needs at least {MIN_OK_RUNS}")
    out = frame.drop(columns=["kept"], errors="ignore")
    out = without_predicted_energy(out)
    no_energy = ("energy_j" not in out.columns
                 or pd.to_numeric(out["energy_j"], errors="coerce").isna().all())
    if no_energy and "avg_power_w" in out.columns:
        out = out.copy()
        out["energy_j"] = (pd.to_numeric(out["avg_power_w"], errors="coerce")
                           * pd.to_numeric(out["runtime_s"], errors="coerce"))
    return out.reset_index(drop=True), dropped


def _without_jobs_lacking_runtimes(frame: pd.DataFrame, ok: pd.Series
                                   ) -> tuple[pd.DataFrame, RuntimeGaps]:
    """``frame`` without the ok job-log rows that have no run time to learn from, and what
    was left out.

    Slurm records ``ElapsedRaw 0`` for a job that ran under a second (a failed launch, ``srun
    true``), and a log exported without a run-time column has none at all: real histories
    hold many such jobs, and they say nothing about how long a configuration runs, so they
    are left out, however many, and counted. A sweep's run (it has a ``run_id``) always
    measured its runtime: one without is a damaged file and is refused.

    Raises:
        DataError: an ok sweep run without a positive runtime, or fewer than
            :data:`MIN_OK_RUNS` ok jobs left with a run time (saying why).
    """
    runtime = pd.to_numeric(frame["runtime_s"], errors="coerce")
    missing = ok & runtime.isna()
    zero = ok & (runtime <= 0)
    sweep = _sweep_rows(frame)
    broken = (missing | zero) & sweep
    if broken.any():
        first = frame.loc[broken, "run_id"].iloc[0]
        raise DataError(f"{int(broken.sum())} ok run(s) of a sweep have a NaN or "
                        f"non-positive runtime_s (first: run_id {first}); a completed run always "
                        "measures one, so that telemetry is damaged: restore it from a copy, "
                        "or measure those configurations again (rerun its sweep with "
                        "--resume: it re-measures them)")
    gaps = RuntimeGaps(zero=int(zero.sum()), missing=int(missing.sum()))
    if not gaps.total:
        return frame, gaps
    left = int(ok.sum()) - gaps.total
    if left < MIN_OK_RUNS:
        raise DataError(_too_few_runtimes(int(ok.sum()), left, gaps))
    return frame[~(zero | missing)], gaps


def _too_few_runtimes(ok: int, left: int, gaps: RuntimeGaps) -> str:
    """Why a job table cannot train a runtime model: which of its ok jobs lack a run time,
    and what to do about it."""
    if gaps.missing == ok:
        return (f"the job table has no run times: none of its {ok} ok job(s) has a runtime_s "
                "(the log had no run-time column, e.g. sacct without ElapsedRaw in --format); "
                "export it again with the run time (sacct -P --format=...,ElapsedRaw,...), "
                "ingest that and train on it")
    return (f"only {left} of the job table's {ok} ok job(s) have a run time to learn from, "
            f"after leaving out {gaps.describe()}; a model needs at least {MIN_OK_RUNS}: give "
            "a longer job history (e.g. a wider sacct -S/-E range)"
            + ("; export it with ElapsedRaw in sacct --format so every job has its run time"
               if gaps.missing else ""))


def _sweep_rows(frame: pd.DataFrame) -> pd.Series:
    """Which rows are a sweep's runs (a ``run_id`` given), not job-log rows: a table may be
    both concatenated."""
    if "run_id" not in frame.columns:
        return pd.Series(False, index=frame.index)
    ids = frame["run_id"]
    return ids.notna() & (ids.astype(str) != "")


def is_job_table(frame: pd.DataFrame) -> bool:
    """True for rows from job logs (no sweep ``run_id``), False for sweep telemetry."""
    return "run_id" not in frame.columns


@dataclass(frozen=True)
class TrainingData:
    """Checked training rows and where they came from.

    Build with :meth:`read` or :meth:`from_frame` (which check); the constructor itself trusts
    ``frame``.

    Attributes:
        frame: the checked rows (n, columns of the runs / job table), index 0..n-1; rows of
            one machine only.
        kind: ``telemetry`` (sweep runs, with ``run_id``) or ``jobs`` (job-log rows).
        sources: the files the rows were read from (recorded in a bundle).
        dropped_zero_runtime_jobs: ok jobs of a job table left out for a zero or missing
            runtime (the manifest records this total).
        runtime_gaps: those jobs by cause (:class:`RuntimeGaps`: ran under 1 s, or no run
            time at all).
        replaced: rows of the last :meth:`merge` that replaced an earlier record of the same
            run (the same record read again, or a sweep's retry of a crashed run).
        repeated: new rows of the last :meth:`merge` that measure a configuration measured
            before: kept beside the earlier row, both learnt.
        disagreements: one line per repeated configuration of the last :meth:`merge` whose
            measurements disagree beyond their noise (:mod:`~hpcds1mpi.records.remeasured_runs`).
        left_out: lines saying which runs of the files read were no measurement and were left
            out (fake-GPU runs: :mod:`~hpcds1mpi.records.unmeasured_rows`).
    """

    frame: pd.DataFrame
    kind: str
    sources: tuple[str, ...] = ()
    dropped_zero_runtime_jobs: int = 0
    replaced: int = 0
    runtime_gaps: RuntimeGaps = RuntimeGaps()
    left_out: tuple[str, ...] = ()
    repeated: int = 0
    disagreements: tuple[str, ...] = ()

    @classmethod
    def from_frame(cls, frame: pd.DataFrame, *, machine: str | None = None,
                   sources: tuple[str, ...] | list[str] = (), kind: str | None = None,
                   allow_columns: set[str] | None = None) -> "TrainingData":
        """Check ``frame`` once and wrap it.

        Args:
            frame: a runs table, a job table, or both concatenated.
            machine: keep only this machine's runs (needed when the rows mix machines).
            sources: files the rows came from.
            kind: ``telemetry`` or ``jobs``; default: ``jobs`` when there is no ``run_id``.
            allow_columns: column names accepted besides the runs / job table's.

        Raises:
            DataError: one line: empty table, unknown columns, no ok runs, an ok sweep run
                without a positive runtime, runs from several machines without ``machine``
                chosen, fewer than 4 ok runs (or ok jobs with a run time: ok jobs of a job
                table without one are left out and counted, not refused).
        """
        checked, gaps = _checked(frame, machine, allow_columns)
        kind = kind or ("jobs" if is_job_table(frame) else "telemetry")
        return cls(checked, kind, tuple(str(s) for s in sources), gaps.total,
                   runtime_gaps=gaps)

    @classmethod
    def read(cls, telemetry: tuple[str, ...] | list[str] = (),
             jobs: tuple[str, ...] | list[str] = (), *,
             machine: str | None = None) -> "TrainingData":
        """Read telemetry files and job tables (:func:`read_frames`) and check them.

        ``kind`` is ``telemetry`` when any telemetry file is given, else ``jobs``.
        """
        frame = read_frames(telemetry, jobs)
        out = cls.from_frame(frame, machine=machine, sources=[*telemetry, *jobs],
                             kind="telemetry" if telemetry else "jobs")
        return replace(out, left_out=tuple(frame.attrs.get("left_out", ())))

    @property
    def machine_ids(self) -> set[str]:
        """Machine fingerprints of the rows (empty for job tables)."""
        return machine_ids(self.frame)

    def __len__(self) -> int:
        return len(self.frame)

    def merge(self, new: pd.DataFrame, *, machines: set[str] | None = None,
              sources: tuple[str, ...] | list[str] = ()) -> "TrainingData":
        """These rows plus ``new`` ones, checked again as one table.

        A run read again, or retried by its sweep, keeps the newest row (``replaced`` counts
        them); a configuration measured again keeps both rows (``repeated`` counts them, and
        ``disagreements`` names those whose measurements disagree beyond their noise):
        :mod:`~hpcds1mpi.records.remeasured_runs`. ``new`` is not checked on its own: a few
        new runs (fewer than a model needs) may be added.

        Args:
            new: unchecked runs (:func:`read_frames`).
            machines: the machines ``new`` may come from (default: these rows' machines).
            sources: files ``new`` came from (appended to :attr:`sources`).

        Raises:
            DataError: ``new`` holds runs of another machine, or the merged rows fail the
                check of :meth:`from_frame`.
        """
        refuse_foreign_machines(self.machine_ids if machines is None else set(machines), new)
        merged = remeasured_runs.merge_runs(self.frame, new)
        out = TrainingData.from_frame(merged.frame, sources=(*self.sources, *sources))
        return replace(out, replaced=merged.replaced, repeated=merged.repeated,
                       disagreements=merged.disagreements)


__all__ = ["EXTRA_COLUMNS", "MIN_OK_RUNS", "TrainingData", "is_job_table", "known_columns",
           "machine_ids", "merge_runs", "read_frames",
           "refuse_foreign_machines"]
