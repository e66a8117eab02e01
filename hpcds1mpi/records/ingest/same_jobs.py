"""The same job in several files, kept once.

A Slurm job id names one job across files: its copies are one job whatever their submit
times (a requeue resets Submit, and a file read in the wrong time zone shifts every time by
whole hours). Copies of one attempt are kept once, the best copy kept (``sacct -P`` first:
22.05's ``--json`` loses exit codes; then the copy with the most fields known); attempts of a
requeued job seen in several files keep the last one; copies that name another user or job
name are two jobs under one id and all are dropped. Two files whose shared jobs are a whole
quarter-hour apart were read in different time zones, said in one line. Jobs of other kinds
are the same job when their id and submit time agree.
"""

from __future__ import annotations

from collections import Counter

#: Kinds whose job ids are Slurm's (one id, one job, across files).
SLURM_KINDS = ("sacct-p", "sacct-csv", "sacct-json")
#: Time zones differ by whole quarter-hours (Nepal's +5:45 included).
_ZONE_STEP_S = 900


def keep_once(table, paths: list, notes: Counter):
    """``table`` (several files' jobs, each row's file index in ``_file``) with every job once.

    Args:
        table: the concatenated job tables, with ``_file``.
        paths: the files, by index (named in the notes).
        notes: cross-file notes, counted (added to).

    Returns:
        The table without the copies, in its order, ``_file`` kept.
    """
    import pandas as pd

    priority = {"sacct-p": 0, "sacct-csv": 0, "sacct-json": 1}  # every other kind: 2
    table = table.assign(_prio=table["source_kind"].map(priority).fillna(2),
                         _unknown=_unknown_fields(table),
                         _slurm=table["source_kind"].isin(SLURM_KINDS))
    table = table.sort_values(["_prio", "_unknown"], kind="stable")
    table = _drop_two_jobs_under_one_id(table, notes)
    shift = table["_file"].map(_zone_offsets(table, paths, notes)).fillna(0)
    table["_submit"] = table["submit_time"] - pd.to_timedelta(
        shift.where(table["_slurm"], 0), unit="s")
    key = ["job_id", "_submit", "_slurm"]
    # Only a copy from another file is a duplicate: within a file each reader decides.
    dup = table.duplicated(subset=key) & ~table.duplicated(subset=[*key, "_file"])
    if dup.any():
        notes["same job in several files, kept once (sacct -P preferred, then the copy with "
              "the most fields known)"] = int(dup.sum())
        # Copies of one kind that disagree (another run time, status or request) are said
        # apart: the files describe the job differently, and only the first one read is kept.
        # (Across kinds they differ by design: sacct --json lacks what -P has.)
        facts = [c for c in ("runtime_s", "status", "time_limit_s", "nodes", "user")
                 if c in table.columns]
        same = [*key, "source_kind"]
        differs = (table.duplicated(subset=same) & ~table.duplicated(subset=[*same, "_file"])
                   & ~table.duplicated(subset=[*same, *facts]))
        if differs.any():
            notes["of those, copies that disagree (run time, status, request or user): "
                  "the one with the most fields known kept (of equals, the first file's); "
                  "check which file is right"] = int(differs.sum())
    table = _last_attempts(table[~dup], notes)
    return table.drop(columns=["_prio", "_unknown", "_slurm", "_submit"]).sort_index()


def _last_attempts(table, notes: Counter):
    """Slurm jobs seen in several files at other submit times: attempts of a requeued job
    (their user and name agree), the last one kept, as ``sacct -D`` within a file (s31
    tester R2: all 65 jobs of two files had been kept twice)."""
    slurm = table[table["_slurm"]]
    several = slurm.groupby("job_id")["_file"].transform("nunique").gt(1)
    if not several.any():
        return table
    rows = slurm[several].sort_values("_submit", kind="stable", na_position="first")
    earlier = rows.index[rows.duplicated(subset="job_id", keep="last")]
    if len(earlier):
        notes["earlier attempt of a requeued job in another file (the last attempt "
              "kept)"] = len(earlier)
    return table.drop(index=earlier)


def _zone_offsets(table, paths: list, notes: Counter) -> dict[int, float]:
    """Seconds each file's Slurm submit times are ahead of the first file sharing its jobs,
    where most shared jobs are apart by the same whole quarter-hour (one file read in the wrong
    time zone: ``sacct -P`` writes local times); said once per pair of files."""
    import pandas as pd

    rows = table[table["_slurm"] & table["submit_time"].notna()]
    rows = rows[["job_id", "_file", "submit_time", "start_time", "runtime_s", "source_kind"]]
    pairs = rows.merge(rows, on="job_id")
    pairs = pairs[pairs["_file_x"] < pairs["_file_y"]]
    if pairs.empty:
        return {}
    apart = (pairs["submit_time_y"] - pairs["submit_time_x"]).dt.total_seconds()
    # A zone shifts every time of a job alike and keeps its run time; a requeue does not.
    started = (pairs["start_time_y"] - pairs["start_time_x"]).dt.total_seconds()
    alike = ((started == apart) | (pairs["start_time_x"].isna() & pairs["start_time_y"].isna())
             ) & ((pairs["runtime_s_x"] == pairs["runtime_s_y"]).fillna(False) |
                  (pairs["runtime_s_x"].isna() & pairs["runtime_s_y"].isna()))
    apart = apart.where(alike)
    offsets: dict[int, float] = {}
    for (a, b), seconds in apart.groupby([pairs["_file_x"], pairs["_file_y"]], sort=True):
        if seconds.isna().all():
            continue
        common = seconds.mode().iloc[0]
        n = int((seconds == common).sum())
        if b in offsets or common == 0 or common % _ZONE_STEP_S or 2 * n < len(seconds):
            continue
        offsets[b] = offsets.get(a, 0.0) + common
        kinds = pairs.loc[seconds.index, ["source_kind_x", "source_kind_y"]].iloc[0].tolist()
        utc = [paths[f] for f, k in zip((a, b), kinds) if k == "sacct-json"]
        local = [paths[f] for f, k in zip((a, b), kinds) if k != "sacct-json"]
        which = (f"{utc[0]} (sacct --json) is UTC, so {local[0]} was read in the wrong zone"
                 if len(utc) == 1 else "one of them was read in the wrong zone")
        notes[f"same job in {paths[a]} and {paths[b]} with times {abs(common) / 3600:g} h "
              f"apart: {which}; sacct -P writes the local time of where sacct ran, so ingest "
              "that file with TZ set to that zone (TZ=Area/City hpcds1mpi ingest ...), or "
              "export with sacct --json; kept once, with the times of the copy kept"] = n
    return {f: s for f, s in offsets.items() if pd.notna(s)}


def _drop_two_jobs_under_one_id(table, notes: Counter):
    """Slurm rows of one id from several files that name another user or job name are two
    different jobs under one id (a forged or corrupt export): which is real cannot be told, so
    every copy is dropped and the ids named. Grouped by id alone, not by submit time: a
    requeue resets Submit (its attempts agree on user and name, as within a file), and a
    forged copy may carry any Submit."""
    import pandas as pd

    slurm = table[table["_slurm"]]
    if slurm.empty:
        return table
    # An empty value (a -P export without User) is no disagreement: nunique skips NA.
    who = slurm[["user", "workload"]].astype("string").replace("", pd.NA)
    clash = (who.assign(job_id=slurm["job_id"]).groupby("job_id", dropna=False)
             [["user", "workload"]].transform("nunique").gt(1).any(axis=1))
    if not clash.any():
        return table
    ids = sorted(set(slurm.loc[clash[clash].index, "job_id"].astype(str)))
    notes[f"two different jobs under one id in several files (user or name differ: a forged "
          f"or corrupt export), every copy dropped: jobs {', '.join(ids[:5])}"
          f"{' ...' if len(ids) > 5 else ''}; check them with sacct -j, or export with sacct "
          "--json"] = int(clash.sum())
    return table.drop(index=clash[clash].index)


def _unknown_fields(table):
    """How many of each row's job columns have no value (NA, or empty text)."""
    columns = [c for c in table.columns if not c.startswith("_") and c not in
               ("source_file", "source_kind")]
    unknown = table[columns].isna()
    for c in columns:
        if str(table[c].dtype) in ("string", "object"):
            unknown[c] |= table[c].astype("string").fillna("").eq("").astype(bool)
    return unknown.sum(axis=1)
