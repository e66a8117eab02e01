"""Files read in different time zones, told from the Slurm jobs they share.

``sacct -P`` writes the local time of where sacct ran; a file exported in another zone than
the one ingest reads it in has every time shifted by the same whole quarter-hour. Two files
whose shared jobs are all apart by one such shift (submit and start alike, the run time equal)
were read in different zones. Where one of the files is ``sacct --json`` (UTC epochs, always
right) the other file's Slurm times are shifted onto it, said; where none is, which file is
right cannot be told, and the times are kept as read, said (s31 verifier V2).
"""

from __future__ import annotations

from collections import Counter

#: Time zones differ by whole quarter-hours (Nepal's +5:45 included).
ZONE_STEP_S = 900
#: No two zones are further apart than UTC-12 and UTC+14.
ZONE_SPAN_S = 26 * 3600
TIME_COLUMNS = ("submit_time", "start_time", "end_time")


def zone_offsets(table, paths: list, notes: Counter) -> tuple[dict[int, float], set[int],
                                                              dict[int, str]]:
    """Seconds each file's Slurm times are ahead of its group's reference, the files whose
    times are to be shifted onto it, and of those the ones whose times are to be read again in
    a time zone (:func:`export_zone`: a file spanning winter and summer is off by two offsets).

    Args:
        table: the concatenated job tables with ``_file``, ``_slurm`` and ``_job`` (one number
            per job across files: copies of one job share it).
        paths: the files, by index (named in the notes).
        notes: cross-file notes, counted (added to); one per pair of files in other zones.

    Returns:
        (offset by file index, files to shift, zone by file index): the reference of a group of files is a
        ``--json`` file in it when there is one (its times are UTC), else its first file;
        only files of a group with a ``--json`` file are shifted.
    """
    rows = table[table["_slurm"] & table["submit_time"].notna()]
    rows = rows[["_job", "_file", "submit_time", "start_time", "runtime_s", "source_kind"]]
    pairs = rows.merge(rows, on="_job")
    pairs = pairs[pairs["_file_x"] < pairs["_file_y"]]
    if pairs.empty:
        return {}, set(), {}
    apart = (pairs["submit_time_y"] - pairs["submit_time_x"]).dt.total_seconds()
    # A zone shifts every time of a job alike and keeps its run time; a requeue does not.
    started = (pairs["start_time_y"] - pairs["start_time_x"]).dt.total_seconds()
    alike = ((started == apart) | (pairs["start_time_x"].isna() & pairs["start_time_y"].isna())
             ) & ((pairs["runtime_s_x"] == pairs["runtime_s_y"]).fillna(False) |
                  (pairs["runtime_s_x"].isna() & pairs["runtime_s_y"].isna()))
    apart = apart.where(alike)
    links: dict[tuple[int, int], tuple[float, int]] = {}
    for (a, b), seconds in apart.groupby([pairs["_file_x"], pairs["_file_y"]], sort=True):
        if seconds.isna().all():
            continue
        common = seconds.mode().iloc[0]
        n = int((seconds == common).sum())
        if common % ZONE_STEP_S or abs(common) > ZONE_SPAN_S or 2 * n < len(seconds):
            continue
        links[(int(a), int(b))] = (float(common), n)
    offsets, root = _offsets_in_groups(links)
    json_files = set(rows.loc[rows["source_kind"] == "sacct-json", "_file"].astype(int))
    shifted: dict[int, int] = {}  # file -> its group's --json file
    for first in set(root.values()):
        files = sorted(f for f in root if root[f] == first)
        reference = min((f for f in files if f in json_files), default=None)
        if reference is None:
            continue
        zero = offsets[reference]
        for f in files:
            offsets[f] -= zero
        shifted |= {f: reference for f in files if offsets[f]}
    for (a, b), (common, n) in links.items():
        if common and a not in shifted and b not in shifted:
            notes[_zone_note(paths, a, b, common, "one of them was read in the wrong zone, "
                             "which cannot be told (neither is sacct --json): times kept as "
                             "read, the copy kept has its file's")] = n
    zones: dict[int, str] = {}
    for f, utc in shifted.items():  # one note per file shifted, however it was reached
        n = links.get((min(f, utc), max(f, utc)), (0, max(
            k for (a, b), (_, k) in links.items() if f in (a, b))))[1]
        found = export_zone(rows, f, utc, offsets[f])
        if found is not None:
            names, matched = found
            zones[f] = names[0]
            alike = ", ".join(names[:3]) + (f" or {len(names) - 3} other zones" if
                                             len(names) > 3 else "")
            done = (f"its times read again as local times of {alike} (alike for these "
                    f"jobs), whose times match {paths[utc]}'s in {matched} shared jobs (no one "
                    "shift does: a clock change), onto UTC")
        else:
            done = f"its times shifted {-offsets[f] / 3600:+g} h onto UTC"
        notes[_zone_note(paths, utc, f, offsets[f], f"{paths[utc]} (sacct --json) is UTC, so "
                         f"{paths[f]} was read in the wrong zone: {done}")] = n
    return {f: s for f, s in offsets.items() if s}, set(shifted), zones


def export_zone(rows, f: int, utc: int, offset: float) -> tuple[list[str], int] | None:
    """The time zone in which file ``f``'s local times (as this process's zone read them) give
    the UTC times of file ``utc`` (sacct --json) for more shared jobs than the one shift
    ``offset`` does (s35 tester T3: a Berlin export spanning January and July, read in UTC
    beside a --json, was shifted 2 h, its five winter jobs then an hour off and kept as
    requeues); None where no zone does better.

    Returns:
        (the names of the zones that match best, sorted; how many jobs they match).
    """
    import pandas as pd

    ours = rows[rows["_file"] == f]
    theirs = rows[rows["_file"] == utc]
    pairs = ours.merge(theirs, on="_job")
    pairs = pairs[pairs["submit_time_y"].notna()]
    if pairs.empty:
        return None
    local = {c: _local(pairs[f"{c}_x"]) for c in ("submit_time", "start_time")}

    def matches(converted: dict) -> "pd.Series":
        return (converted["submit_time"] == pairs["submit_time_y"]) & (
            (converted["start_time"] == pairs["start_time_y"]) |
            (converted["start_time"].isna() & pairs["start_time_y"].isna()))

    shift = pd.Timedelta(seconds=offset)
    by_shift = matches({c: pairs[f"{c}_x"] - shift for c in local})
    if by_shift.all() or not by_shift.any():
        return None
    # Zones whose offset at one job the shift fits is that shift: the candidates, few.
    at = local["submit_time"][by_shift].iloc[0]
    wanted = at - pairs.loc[by_shift.idxmax(), "submit_time_y"]
    best: list[str] = []
    most = int(by_shift.sum())
    for name in _zone_names():
        if _utc_offset(name, at) != wanted:
            continue
        n = int(matches({c: _in_zone(local[c], name) for c in local}).sum())
        if n > most:
            best, most = [name], n
        elif n == most and best:
            best.append(name)
    if not best:
        return None
    return best, most


def _zone_names() -> list[str]:
    """The zone database's Area/City names, sorted (the ones a person sets TZ to)."""
    from zoneinfo import available_timezones

    return sorted(n for n in available_timezones() if "/" in n and not n.startswith(
        ("Etc/", "SystemV/", "posix/", "right/")))


def _utc_offset(name: str, local):
    import pandas as pd

    try:
        return pd.Timestamp(local).tz_localize(name, ambiguous=True,
                                               nonexistent="NaT").utcoffset()
    except Exception:  # noqa: BLE001 - a zone pandas cannot use is no candidate
        return None


def _local(values):
    """Naive UTC times -> this process's local wall-clock times (as a sacct -P file read here
    had them before they were put into UTC)."""
    import time

    import pandas as pd

    def local(value):
        if pd.isna(value):
            return pd.NaT
        seconds = (value - pd.Timestamp(0)) // pd.Timedelta(seconds=1)
        return value + pd.Timedelta(seconds=time.localtime(seconds).tm_gmtoff)

    distinct = {v: local(v) for v in values.dropna().unique()}
    return pd.to_datetime(values.map(distinct), errors="coerce")


def _in_zone(local, name: str):
    """Local wall-clock times of zone ``name`` -> naive UTC (NaT where the zone skips one; of
    the hour it repeats, the first pass)."""
    return local.dt.tz_localize(name, ambiguous=True, nonexistent="NaT").dt.tz_convert(
        "UTC").dt.tz_localize(None)


def _offsets_in_groups(links: dict) -> tuple[dict[int, float], dict[int, int]]:
    """Each linked file's offset from the first file of its group, and that first file
    (offsets add along links; of two links between one group's files the first decides)."""
    offsets: dict[int, float] = {}
    root: dict[int, int] = {}
    for (a, b), (common, _) in sorted(links.items()):
        for f in (a, b):
            if f not in offsets:
                offsets[f], root[f] = 0.0, f
        if root[a] == root[b]:
            continue
        moved, by = root[b], offsets[a] + common - offsets[b]
        for f in [f for f in root if root[f] == moved]:
            offsets[f] += by
            root[f] = root[a]
    return offsets, root


def _zone_note(paths: list, a: int, b: int, seconds: float, which: str) -> str:
    return (f"same job in {paths[a]} and {paths[b]} with times {abs(seconds) / 3600:g} h "
            f"apart: {which}; sacct -P writes the local time of where sacct ran, so ingest "
            "that file with TZ set to that zone (TZ=Area/City hpcds1mpi ingest ...), or "
            "export with sacct --json")


def shift_times(table, offsets: dict[int, float], shifted: set[int],
                zones: dict[int, str] | None = None):
    """``table`` with the Slurm times of the ``shifted`` files moved by minus their offset, or,
    for those in ``zones``, read again as local times of their zone."""
    import pandas as pd

    if not shifted:
        return table
    zones = zones or {}
    seconds = table["_file"].map(offsets).fillna(0).where(
        table["_file"].isin(shifted - set(zones)) & table["_slurm"], 0)
    delta = pd.to_timedelta(seconds, unit="s")
    table = table.assign(**{c: table[c] - delta for c in TIME_COLUMNS if c in table.columns})
    for f, name in zones.items():
        at = (table["_file"] == f) & table["_slurm"]
        for c in TIME_COLUMNS:
            if c in table.columns:
                table.loc[at, c] = _in_zone(_local(table.loc[at, c]), name)
    return table
