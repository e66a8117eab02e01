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


def zone_offsets(table, paths: list, notes: Counter) -> tuple[dict[int, float], set[int]]:
    """Seconds each file's Slurm times are ahead of its group's reference, and the files whose
    times are to be shifted onto it.

    Args:
        table: the concatenated job tables with ``_file``, ``_slurm`` and ``_job`` (one number
            per job across files: copies of one job share it).
        paths: the files, by index (named in the notes).
        notes: cross-file notes, counted (added to); one per pair of files in other zones.

    Returns:
        (offset by file index, files to shift): the reference of a group of files is a
        ``--json`` file in it when there is one (its times are UTC), else its first file;
        only files of a group with a ``--json`` file are shifted.
    """
    rows = table[table["_slurm"] & table["submit_time"].notna()]
    rows = rows[["_job", "_file", "submit_time", "start_time", "runtime_s", "source_kind"]]
    pairs = rows.merge(rows, on="_job")
    pairs = pairs[pairs["_file_x"] < pairs["_file_y"]]
    if pairs.empty:
        return {}, set()
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
    for f, utc in shifted.items():  # one note per file shifted, however it was reached
        n = links.get((min(f, utc), max(f, utc)), (0, max(
            k for (a, b), (_, k) in links.items() if f in (a, b))))[1]
        notes[_zone_note(paths, utc, f, offsets[f], f"{paths[utc]} (sacct --json) is UTC, so "
                         f"{paths[f]} was read in the wrong zone: its times shifted "
                         f"{-offsets[f] / 3600:+g} h onto UTC")] = n
    return {f: s for f, s in offsets.items() if s}, set(shifted)


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


def shift_times(table, offsets: dict[int, float], shifted: set[int]):
    """``table`` with the Slurm times of the ``shifted`` files moved by minus their offset."""
    import pandas as pd

    if not shifted:
        return table
    seconds = table["_file"].map(offsets).fillna(0).where(
        table["_file"].isin(shifted) & table["_slurm"], 0)
    delta = pd.to_timedelta(seconds, unit="s")
    return table.assign(**{c: table[c] - delta for c in TIME_COLUMNS if c in table.columns})
