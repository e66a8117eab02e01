"""The same job in several files, kept once.

A Slurm job id names one job across files while its copies are close in time: a requeue
resets Submit (the later attempt submitted after the earlier one started, by its end), and a
file read in the wrong time zone shifts every time by whole quarter-hours, at most 26 h
(UTC-12 to UTC+14). Copies of one id further apart are different jobs (another cluster's, or
ids reused after a reset or a MaxJobId wrap), each kept (s31 verifier V1). Copies of one
attempt (by its own Submit; a copy without Submit is the newest attempt another file dates)
are kept once, the best copy kept (``sacct -P`` first: 22.05's ``--json`` loses exit codes;
then the copy with the most fields known), said to disagree only on values both know;
attempts of a requeued job seen in several files keep the last one; close copies that name
another user or job name are different jobs under one id (two clusters' exports), each kept
(s32 verifier V2), unless a copy comes from an export whose last column is free text (a
forged record: every copy dropped). Files read in different time zones: :mod:`.file_zones`.
Jobs of other kinds are the same job when their id and submit time agree.
"""

from __future__ import annotations

from collections import Counter

from .slurm_fields import FIRST_SUBMIT

#: Kinds whose job ids are Slurm's (one id, one job, across files).
SLURM_KINDS = ("sacct-p", "sacct-csv", "sacct-json")


def keep_once(table, paths: list, notes: Counter, forgeable=frozenset()):
    """``table`` (several files' jobs, each row's file index in ``_file``) with every job once.

    Args:
        table: the concatenated job tables, with ``_file``.
        paths: the files, by index (named in the notes).
        notes: cross-file notes, counted (added to).
        forgeable: indices of the files whose records a job's own values can forge (a -P
            export with a free-text column last): a job under one id with another user or
            name there is dropped, not kept as another cluster's.

    Returns:
        The table without the copies, in its order, ``_file`` kept.
    """
    import pandas as pd

    from .cluster_ids import match_keys, qualify_shared
    from .eagle_tasks import lone_tasks
    from .file_zones import shift_times, zone_offsets

    table = lone_tasks(table, notes)  # an export's one task of an array: named as its tasks
    priority = {"sacct-p": 0, "sacct-csv": 0, "sacct-json": 1}  # every other kind: 2
    unended = table["_unended"].fillna(False) if "_unended" in table else False
    table = table.assign(_prio=table["source_kind"].map(priority).fillna(2),
                         _unknown=_unknown_fields(table),
                         _slurm=table["source_kind"].isin(SLURM_KINDS),
                         _unended=pd.Series(unended, index=table.index).astype(bool))
    undated = (table["_slurm"] & table["submit_time"].isna()).astype(bool)
    # A line not ended is never the copy kept of an attempt another file lists ended, nor
    # one without Submit (which attempt it is cannot be told) of one another file dates.
    table = table.assign(_undated=undated).sort_values(
        ["_unended", "_undated", "_prio", "_unknown"], kind="stable")
    # A Slurm job is (cluster, id), however each file wrote its id (.cluster_ids), the id
    # Slurm's own number wherever an export gives it (s43 tester H7).
    ids = _slurm_numbers(table)
    table = _components_listed_whole(table, ids, notes)
    table["_key"] = match_keys(table, table["_slurm"], ids.loc[table.index])
    _say_id_forms_not_tied(table, notes)
    table["_job"] = _same_job_numbers(table, notes)
    table = _split_two_jobs_under_one_id(table, notes, forgeable)
    slurm = table["_slurm"].to_numpy(dtype=bool)
    # A copy from an export without Cluster takes its job's cluster from the other copies.
    table.loc[slurm, "cluster"] = table.loc[slurm, "cluster"].fillna(
        table[slurm].groupby("_job")["cluster"].transform("first"))
    offsets, shifted, zones = zone_offsets(table, paths, notes)
    table = shift_times(table, offsets, shifted, zones)
    # Files in another zone that cannot be told wrong keep their times; matched as if shifted.
    unshifted = table["_file"].map(offsets).fillna(0).where(
        table["_slurm"] & ~table["_file"].isin(shifted), 0)
    table["_submit"] = table["submit_time"] - pd.to_timedelta(unshifted, unit="s")
    # An attempt's own Submit: a -D reader moved a requeued job's submit_time back to its
    # first submission, which would order the job before its own re-run (s44 tester O5).
    own = table["_attempt_s"].fillna(0) if "_attempt_s" in table else 0.0
    table["_attempt"] = table["_submit"] + pd.to_timedelta(own, unit="s")
    # The job's first submission as each copy knows it: a line not ended gives it as seconds
    # before its own Submit; every other copy's submit_time is it, as its reader kept it.
    back = table["_first_submit_s"].fillna(0) if "_first_submit_s" in table else 0.0
    table["_first"] = table["_submit"] - pd.to_timedelta(back, unit="s")
    firsts = _first_submissions(table)  # before any copy, ended or not, is dropped
    table["_match"] = _attempt_to_match(table)
    key = ["_key", "_job", "_match", "_slurm"]
    # Only a copy from another file is a duplicate: within a file each reader decides.
    dup = table.duplicated(subset=key) & ~table.duplicated(subset=[*key, "_file"])
    # A line not ended that another file lists ended (by the attempt's own Submit) is that
    # attempt seen before it ended: dropped silently, as a copy.
    attempt = ["_key", "_job", "_attempt", "_slurm"]
    dup |= (table["_unended"] & table.duplicated(subset=attempt)
            & ~table.duplicated(subset=[*attempt, "_file"]))
    if (dup & ~table["_unended"]).any():
        notes["same job in several files, kept once (sacct -P preferred, then the copy with "
              "the most fields known)"] = int((dup & ~table["_unended"]).sum())
        differs = _disagreeing(table, key)
        if differs:
            notes["of those, copies that disagree (run time, status, request or user): "
                  "the one with the most fields known kept (of equals, the first file's); "
                  "check which file is right"] = differs
    shown = _jobid_forms(table, ids)
    table = _last_attempts(table[~dup], notes)
    table = table[~table["_unended"]]  # counted by its reader; its job's attempts gone above
    table = _keep_first_submissions(table, firsts, notes)
    if len(shown):
        named = table["_key"].map(shown).astype("string")
        table["job_id"] = named.where(named.notna(), table["job_id"].astype("string"))
    qualify_shared(table, table["_slurm"], table["_key"], notes)
    return table.drop(columns=["_prio", "_unknown", "_slurm", "_submit", "_job", "_key",
                               "_unended", "_attempt", "_attempt_s", "_first",
                               "_first_submit_s", "_undated", "_match"],
                      errors="ignore").sort_index()


def _attempt_to_match(table):
    """Each row's attempt as copies of one are matched by: its own Submit (``_attempt``; a -D
    reader moved submit_time back to the first submission), and for a Slurm row without
    Submit (an export without that column) its job's newest ended attempt another file
    dates, the one an export without -D lists. s48 tester P12: every job of such an export,
    and a -D copy of a plain export's job, was "an earlier attempt of a requeued job"."""
    match = table["_attempt"].copy()
    if not table["_undated"].any():
        return match
    dated = table["_slurm"] & table["_attempt"].notna() & ~table["_unended"]
    newest = table.loc[dated].groupby("_job")["_attempt"].max()
    undated = table["_undated"] & table["_job"].isin(newest.index)
    if undated.any():
        match[undated] = table.loc[undated, "_job"].map(newest)
    return match


def _disagreeing(table, key: list) -> int:
    """How many rows copy a job's attempt (``key``) from another file of the same kind and
    give another run time, status, request or user than its first copy: a value a copy lacks
    is no disagreement (s48 tester P12: every job of an export without User "disagreed").
    Across kinds copies differ by design (sacct --json lacks what -P has)."""
    facts = [c for c in ("runtime_s", "status", "time_limit_s", "nodes", "user")
             if c in table.columns]
    same = [*key, "source_kind"]
    copies = (table.duplicated(subset=same) & ~table.duplicated(subset=[*same, "_file"])
              & ~table["_unended"])
    if not copies.any() or not facts:
        return 0
    values = table[facts].astype(object).where(table[facts].notna(), None)
    values = values.where(values != "", None)  # an empty user: an export without User
    first = values.groupby([table[c] for c in same], dropna=False).transform("first")
    known = values.notna() & first.notna()
    differs = (known & (values != first)).any(axis=1)
    return int((differs & copies).sum())


def _slurm_numbers(table):
    """Each row's job id as Slurm numbers it (JobIDRaw): the row's ``raw_id`` (a
    heterogeneous job's, its leader's), else the number another export gave that id
    (``123_4`` is ``127`` in every file once one export has both), else its job id. Array
    tasks and heterogeneous jobs are then one job whether an export wrote ``123_4`` or
    ``127`` (s43 tester H7: 8 jobs for 4)."""
    import pandas as pd

    ids = table["job_id"].astype("string").fillna("")
    if "raw_id" not in table.columns:
        return ids
    lead = table["raw_id"].astype("string").str.split(",", n=1).str[0]
    has = (table["_slurm"] & lead.notna() & lead.ne("")).fillna(False).astype(bool)
    if not has.any():
        return ids
    alias = pd.Series(lead[has].to_numpy(), index=ids[has].to_numpy())
    alias = alias[~alias.index.duplicated()]
    named = ids.map(alias).where(table["_slurm"])
    return lead.where(has, named.where(named.notna(), ids)).astype("string")


#: The note on jobs a JobIDRaw-only export may list beside a JobID-only one's.
ID_FORMS_NOT_TIED = (
    "job(s) of an export without JobID matching no job of an export without JobIDRaw but "
    "submitted in the same second by the same user under the same name as one of its jobs: "
    "array tasks (a task's JobIDRaw is a job id of its own, not told by its JobID 123_4) or "
    "heterogeneous job components (123+1 under a raw id of its own), which no file here ties "
    "to the other's ids: they may be counted twice; export with both JobID and JobIDRaw in "
    "--format, or with --json")


def _say_id_forms_not_tied(table, notes: Counter) -> None:
    """Count under :data:`ID_FORMS_NOT_TIED` the Slurm rows with a raw id whose job no other
    file lists, submitted in the same second by the same user under the same name as a row of
    another file that has no raw id (README's left item from s43 H7: an array's tasks or a
    heterogeneous job's components read twice). Jobs submitted together that both files list
    by one id are tied, so not counted."""
    columns = ["user", "workload", "submit_time"]
    if "raw_id" not in table.columns or not set(columns) <= set(table.columns):
        return
    slurm = table[table["_slurm"] & table["submit_time"].notna()]
    raw = slurm["raw_id"].astype("string").fillna("").ne("")
    alone = slurm.groupby("_key")["_file"].transform("nunique").eq(1)
    listed = slurm.loc[raw & alone, [*columns, "_file"]].reset_index(names="row")
    unraw = slurm.loc[~raw, [*columns, "_file"]].drop_duplicates()
    pairs = listed.merge(unraw, on=columns, suffixes=("", "_other"))
    count = pairs.loc[pairs["_file"].ne(pairs["_file_other"]), "row"].nunique()
    if count:
        notes[ID_FORMS_NOT_TIED] = int(count)


def _jobid_forms(table, ids):
    """By ``_key``, the id an export keyed by JobID wrote (``123_4``), where one did: the
    kept copy shows it, whichever copy's values are kept (a JobIDRaw copy says ``127``)."""
    jobid = table["_slurm"] & table["job_id"].astype("string").ne(ids.loc[table.index])
    return table.loc[jobid.fillna(False).astype(bool)].drop_duplicates("_key").set_index(
        "_key")["job_id"]


#: The note on a heterogeneous job's components dropped for the whole job in another file.
COMPONENTS_OF_WHOLE = ("heterogeneous job's component listed as a job of its own (an export "
                       "keyed by JobIDRaw), the whole job listed in another file: the whole "
                       "job kept")


def _components_listed_whole(table, ids, notes: Counter):
    """``table`` without the rows that are one component of a heterogeneous job another file
    lists whole (its ``raw_id`` names them, same submit time): a JobIDRaw export lists each
    component as a job of one part's nodes (s43 tester H7)."""
    import pandas as pd

    if "raw_id" not in table.columns:
        return table
    raw = table["raw_id"].astype("string")
    whole = (table["_slurm"] & raw.str.contains(",", regex=False)).fillna(False).astype(bool)
    if not whole.any():
        return table
    parts = pd.DataFrame({"_id": raw[whole].str.split(","), "_at": table.loc[whole, "submit_time"],
                          "_whole_file": table.loc[whole, "_file"]}).explode("_id")
    single = table["_slurm"] & ~whole
    rows = pd.DataFrame({"_id": ids[single], "_at": table.loc[single, "submit_time"],
                         "_file": table.loc[single, "_file"]}).reset_index(names="index")
    pairs = rows.merge(parts, on=["_id", "_at"])
    drop = pairs.loc[pairs["_file"].ne(pairs["_whole_file"]), "index"].unique()
    if len(drop):
        notes[COMPONENTS_OF_WHOLE] = len(drop)
    return table.drop(index=drop)


def _same_job_numbers(table, notes: Counter):
    """One number per job across files (-1 for rows not Slurm's): Slurm rows of one id are one
    job while each, by submit time, is within 26 h of the first copy of its attempt (the same
    attempt, maybe read in another zone) or was submitted after that copy started and by a day
    after its end (a requeue: the next attempt, whose copies are then compared with it; a row
    both near and a requeue is the next attempt when its run time differs); further apart they
    are different jobs under one id, said. Not compared with the row before: copies 20 h apart
    chained t, t+20 h and t+40 h into one job (s31 reviewer)."""
    import numpy as np
    import pandas as pd

    from .file_zones import ZONE_SPAN_S

    numbers = pd.Series(-1, index=table.index)
    slurm = table[table["_slurm"]]
    if slurm.empty:
        return numbers
    rows = slurm.sort_values(["_key", "submit_time"], kind="stable", na_position="first")
    span = np.timedelta64(ZONE_SPAN_S, "s")
    submit, start = (rows[c].to_numpy(dtype="datetime64[ns]")
                     for c in ("submit_time", "start_time"))
    ended = rows["end_time"].fillna(rows["start_time"] + pd.to_timedelta(
        rows["runtime_s"], unit="s")).fillna(rows["start_time"]).to_numpy(dtype="datetime64[ns]")
    runtime = rows["runtime_s"].to_numpy(dtype=float, na_value=np.nan)
    # Plain bools: job ids may be pyarrow strings, whose bools cannot be counted.
    job_id = rows["_key"].astype(str).to_numpy()
    same_id = np.zeros(len(rows), dtype=bool)
    same_id[1:] = job_id[1:] == job_id[:-1]
    same = same_id.copy()
    first = 0  # the first copy of the current attempt
    for i in np.flatnonzero(same_id):  # only ids of several rows walk in Python
        first = first if same_id[i - 1] else i - 1
        if np.isnat(submit[first]):
            # An unknown submit time cannot tell jobs apart: one job, as before times were
            # compared; the first known one dates the attempt. (NaT sorts first.)
            first = i
            continue
        near = submit[i] - submit[first] <= span
        requeue = start[first] <= submit[i] <= ended[first] + span  # False where NaT
        # Copies of one attempt ran as long; an unknown run time (NaN: False) is no difference.
        copy = near and not abs(runtime[i] - runtime[first]) > 1
        if requeue and not copy:
            first = i
        elif not near:
            same[i], first = False, i
    numbers[rows.index] = (~same).cumsum()
    in_several = rows.groupby("_key")["_file"].transform("nunique").gt(1).to_numpy(dtype=bool)
    apart = rows.index[same_id & ~same & in_several]
    if len(apart):
        ids = sorted(set(rows.loc[apart, "job_id"].astype(str)))
        notes["one Slurm id for different jobs in several files (submitted over 26 h from each "
              "other, no requeue: another cluster's jobs, or ids reused after a reset), each "
              f"kept: jobs {', '.join(ids[:5])}{' ...' if len(ids) > 5 else ''}"] = len(apart)
    return numbers


#: The note on a job's ended attempts whose newest attempt, in another file, has not ended.
REQUEUED_AGAIN_ELSEWHERE = ("attempt of a requeued job whose newest attempt, in another file, "
                            "runs or pends again (an earlier attempt's end is not the job's): "
                            "not read")


def _last_attempts(table, notes: Counter):
    """Slurm jobs seen in several files at other submit times: attempts of a requeued job
    (their user and name agree), the last one kept, as ``sacct -D`` within a file (s31
    tester R2: all 65 jobs of two files had been kept twice). Where the last one has not
    ended (``_unended``: a requeued job running again), neither has the job: none is kept."""
    slurm = table[table["_slurm"]]
    several = slurm.groupby("_job")["_file"].transform("nunique").gt(1)
    if not several.any():
        return table
    # By each attempt's own Submit (a requeue resets it), then Start; of two copies of one
    # attempt, the one whose submit_time is the job's first submission first.
    rows = slurm[several].sort_values(["_attempt", "start_time", "_submit"], kind="stable",
                                      na_position="first")
    again = set(rows.drop_duplicates(subset="_job", keep="last").query("_unended")["_job"])
    if again:  # FY1 (s44): the ended attempt of an older export had been kept as the job
        gone = rows.index[rows["_job"].isin(again) & ~rows["_unended"]]
        if len(gone):
            notes[REQUEUED_AGAIN_ELSEWHERE] = len(gone)
        table, rows = table.drop(index=gone), rows[~rows["_job"].isin(again)]
    earlier = rows.index[rows.duplicated(subset="_job", keep="last")]
    if len(earlier):  # their first submission is kept: _keep_first_submissions
        notes["earlier attempt of a requeued job in another file (the last attempt "
              "kept)"] = len(earlier)
    return table.drop(index=earlier)


def _first_submissions(table):
    """By ``_job``, of the Slurm jobs seen in several files: the job's first submission
    (``_first``, as the zone-matched ``_submit``) and the wait before its first start
    (``wait_s``), from the copy or attempt, ended or not, that knows the earliest (of equals,
    one whose wait is known)."""
    slurm = table[table["_slurm"] & table["_first"].notna()]
    slurm = slurm[slurm.groupby("_job")["_file"].transform("nunique").gt(1)]
    no_wait = slurm["wait_s"].isna() if "wait_s" in slurm else True
    rows = slurm.assign(_no_wait=no_wait).sort_values(["_first", "_no_wait"], kind="stable")
    return rows.drop_duplicates(subset="_job").set_index("_job").reindex(
        columns=["_first", "wait_s"])


def _keep_first_submissions(table, firsts, notes: Counter):
    """``table`` whose kept copy of each job in ``firsts`` (:func:`_first_submissions`)
    carries the job's first submission and the wait before its first start where its own
    submit time is later, as within one sacct -D file (s33 tester A11), noted
    (:data:`FIRST_SUBMIT`). Any copy may know them: an ended earlier attempt, a -D copy of
    the kept attempt, or a -D export's line of the attempt not yet ended, whose ended copy
    in a newer export without -D had kept the re-run's Submit and wait (s45 FY4 J1)."""
    kept = table[table["_slurm"] & table["_job"].isin(firsts.index)]
    first = firsts.loc[kept["_job"]].set_axis(kept.index)
    moved = kept.index[(first["_first"] < kept["_submit"]).fillna(False).astype(bool)]
    if not len(moved):
        return table
    table = table.copy()
    # In the kept copy's own times: a file whose zone could not be told keeps them as read.
    unshifted = table.loc[moved, "submit_time"] - table.loc[moved, "_submit"]
    table.loc[moved, "submit_time"] = first.loc[moved, "_first"] + unshifted
    table.loc[moved, "wait_s"] = first.loc[moved, "wait_s"].astype(float)
    notes[FIRST_SUBMIT] = len(moved)
    return table


#: What one job shows in every copy and attempt (Submit is not: a requeue resets it); the
#: job table keeps no UID. ``cluster`` is compared where a table has it.
IDENTITY_COLUMNS = ("user", "workload", "cluster")


def _split_two_jobs_under_one_id(table, notes: Counter, forgeable=frozenset()):
    """Rows of one ``_job`` (one id, close in time) that name another user or job name are
    different jobs under one id: each identity becomes a job of its own, kept with its own
    ``source_file`` (s32 verifier V2: two clusters' exports of one id range, 5 s apart, had
    been dropped whole as forged, 0 jobs written). An empty value (a -P export without
    User) is no other job: it takes the best copy's value. Not grouped by submit time alone:
    a requeue resets Submit (its attempts agree on user and name, as within a file). Where a
    copy comes from a file in ``forgeable`` (a -P export with a free-text column last, whose
    values can forge a whole record: s28 tester Z1) which one is real cannot be told, and
    every copy of that job is dropped, its id named."""
    import pandas as pd

    slurm = table[table["_slurm"]]
    columns = [c for c in IDENTITY_COLUMNS if c in slurm.columns]
    if slurm.empty or not columns:
        return table
    who = slurm[columns].astype("string").replace("", pd.NA)
    job = slurm["_job"]
    who = who.fillna(who.groupby(job).transform("first"))  # first: the best copy's
    clash = who.groupby(job).transform("nunique").gt(1).any(axis=1).to_numpy(dtype=bool)
    if not clash.any():
        return table
    forged = clash & slurm["_file"].isin(forgeable).groupby(job).transform("any").to_numpy(
        dtype=bool)
    if forged.any():
        ids = list(dict.fromkeys(slurm.loc[forged, "job_id"].astype(str)))
        notes[f"two different jobs under one id in several files, one from an export whose "
              f"last column is free text (a forged record cannot be ruled out), every copy "
              f"dropped: jobs {', '.join(ids[:5])}{' ...' if len(ids) > 5 else ''}; check "
              "them with sacct -j, or export with sacct --json"] = int(forged.sum())
        table = table.drop(index=slurm.index[forged])
    rows = slurm.index[clash & ~forged]
    if not len(rows):
        return table
    split = who.loc[rows].assign(_job=job.loc[rows])
    table.loc[rows, "_job"] = table["_job"].max() + 1 + split.groupby(
        ["_job", *columns], dropna=False, sort=False).ngroup()
    # Said where the jobs came from several files; within one file its reader decided.
    files = slurm.loc[rows, "_file"].groupby(job.loc[rows]).transform("nunique").gt(1)
    ids = list(dict.fromkeys(slurm.loc[files[files].index, "job_id"].astype(str)))
    if ids:
        named = "cluster" in table.columns and table.loc[rows, "cluster"].notna().all()
        notes["id with different jobs in different files (another user or job name: two "
              "clusters' exports, or a reused id), each job kept with its own source_file: "
              f"jobs {', '.join(ids[:5])}{' ...' if len(ids) > 5 else ''}"
              + ("" if named else "; these files name no cluster: export each with sacct "
                 "-M CLUSTER (--json, or Cluster in --format) to know which is which")] = len(ids)
    return table


def _unknown_fields(table):
    """How many of each row's job columns have no value (NA, or empty text)."""
    columns = [c for c in table.columns if not c.startswith("_") and c not in
               ("source_file", "source_kind")]
    unknown = table[columns].isna()
    for c in columns:
        if str(table[c].dtype) in ("string", "object"):
            unknown[c] |= table[c].astype("string").fillna("").eq("").astype(bool)
    return unknown.sum(axis=1)
