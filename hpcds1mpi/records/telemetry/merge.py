"""Merging telemetry shards (job-array tasks, several machines) into one file, idempotently."""

from __future__ import annotations

import copy
import math
import os
import time
from pathlib import Path
from typing import Callable

from .adopted_ids import renamed_ids
from .journal import load
from .kept_rows import refuse_broken_rows
from .layout import DETAIL_TABLES
from .merged_settings import (LAUNCHER_KEYS, carry, launcher_of, launcher_words,
                              same_launch_value, shared_attrs)
from .snapshot_write import storable
from .writer import TelemetryWriter


def merge(sources: list[str | os.PathLike], out: str | os.PathLike,
          check: Callable[[list[dict], list[dict]], str | None] | None = None) -> dict:
    """Merge telemetry shards into ``out`` (created, or extended), idempotently.

    Rows are keyed by ``(machine_id, run_id)``; a key present twice keeps the finished record
    over a crashed one, then the later ``finished_at``. Each row keeps ``source_file`` (the shard
    it came from, unless it already had one; bytes of its name that are not UTF-8 as ``\\xff``);
    machines and detail tables travel along. A program run keeps how its sweep measured it (the
    shard's ``launch`` and ``--command``, :mod:`.merged_settings`: s30 tester O2); the merged
    file's ``launch`` and plans are what its runs share. A merge that fails changes nothing.

    A record that no rule prefers (same status weight, same ``finished_at``) but whose values
    differ is a conflict: the record met first stays (``out``'s own, then the sources in the
    order given), and it is counted apart from the identical ones "already there".

    A merge whose result equals what ``out`` holds (every run already there, nothing else to
    settle) leaves ``out`` byte for byte, its mtime too (``unchanged`` is True): a rerun had
    rewritten it each time (s42), which a backup, ``make`` or a watcher takes as news.

    ``check`` is given the merged runs and ``out``'s own runs as found (row dicts) before
    anything is written: a line it returns refuses the merge (the command's: one label's two
    programs the merge would add, which train refuses, s42), and nothing changes.

    Returns:
        ``{"added": n, "replaced": n, "kept": n, "conflicts": n, "conflict": example,
        "rows": total, "repeated": n, "other_launcher": n, "launchers": example,
        "unchanged": bool}``;
        ``conflict`` is ``(run_id, column, source)`` of the first conflict (None without one);
        ``other_launcher`` counts the runs met twice under two launchers (one kept by the rules
        above), ``launchers`` the first as ``(run_id, the kept one's launcher, the other's)``,
        as a line names them (None without one); a source given more than once is read once
        (``repeated`` counts the repeats), so that its runs are not counted again as "already
        there".
    """
    from hpcds1mpi.writers import catch_sigterm, uncatch_sigterm

    # SIGTERM (scancel, a walltime) had killed it silently, exit 143, its temporary, journal
    # and lock left behind: now the writer unwinds, changes nothing, one line, exit 1 (s33 C7)
    catch_sigterm(out, "merged telemetry", "nothing was changed, rerun the merge")
    try:
        return _merge(sources, out, check)
    finally:
        uncatch_sigterm()


def _merge(sources: list[str | os.PathLike], out: str | os.PathLike,
           check: Callable[[list[dict], list[dict]], str | None] | None) -> dict:
    import pandas as pd

    from hpcds1mpi.errors import TelemetryError
    from hpcds1mpi.records.kernel_options import share_options
    from hpcds1mpi.records.training import impossible_rows

    # realpath, not Path.resolve(): that raises RuntimeError on a loop of links (load says it)
    unique = list({os.path.realpath(s): Path(s) for s in reversed(sources)}.values())[::-1]
    stores = [(src, load(src)) for src in unique]  # read (and check) everything first
    for src, shard in stores:  # rows train would refuse must not enter (or win) a merge
        problem = impossible_rows(pd.DataFrame(list(shard.runs.values())), str(src),
                                  "fix the shard or leave it out of the merge")
        if problem:
            raise TelemetryError(problem)
    try:
        before = os.stat(out)  # through a link: the file written is the link's target
    except OSError:
        before = None
    # A failure changes nothing: a new --out is removed again, an existing one left as it was.
    writer = TelemetryWriter(out, resume=True, all_or_nothing=True)
    counts = {"added": 0, "replaced": 0, "kept": 0, "conflicts": 0, "renamed": 0,
              "other_launcher": 0}
    conflict = launchers = None
    with writer:
        store = writer.store
        # --out's own rows are rewritten too: by the same rules (s37 tester P7)
        refuse_broken_rows(store, out, "fix or drop those rows, or merge into a new --out; "
                           "nothing was changed")
        found = copy.deepcopy(_content(store)) if _settled(out, before, writer) else None
        for row in store.runs.values():  # --out's own runs keep what its attributes say
            carry(row, store.attrs)
        # a file a resume re-keyed and a copy from before: one machine's runs, under the id
        # the resume gave them (s38 tester F7: they were added again under the old id)
        renamed = renamed_ids(store.machines, *(shard.machines for _, shard in stores))
        _rename_own(store, renamed, [shard for _, shard in stores])
        own = [dict(row) for row in store.runs.values()]  # what a check tells additions by
        for src, shard in stores:
            label = storable(src.name)  # as stored: a rerun finds its provenance again
            for key, row in shard.runs.items():
                row = carry(dict(row), shard.attrs)
                if key[0] in renamed:
                    counts["renamed"] += 1
                    row["machine_id"] = renamed[key[0]]
                    detail = {t: [{**r, "machine_id": renamed[key[0]]}
                                  for r in shard.detail[t].get(key, [])] for t in DETAIL_TABLES}
                    key = (renamed[key[0]], key[1])
                else:
                    detail = {t: shard.detail[t].get(key, []) for t in DETAIL_TABLES}
                if not row.get("source_file"):
                    row["source_file"] = label
                old = store.runs.get(key)
                if old is not None:
                    share_options(row, old)  # one written before the extra column (s41 D4)
                if old is not None and (two := _two_launchers(old, row)):
                    counts["other_launcher"] += 1  # one run measured twice (s40 tester A7)
                    launchers = launchers or (key[1], *(two[::-1] if _better(row, old) else two))
                if old is None:
                    counts["added"] += 1
                elif _better(row, old):
                    counts["replaced"] += 1
                elif (column := _differs(row, old)) is not None and not _better(old, row):
                    # s37 tester P8: the same run with other values, and nothing tells which
                    # is right (same status weight, same finished_at): the first stays, said
                    counts["conflicts"] += 1
                    conflict = conflict or (key[1], column, label)
                    continue
                else:
                    counts["kept"] += 1
                    continue
                store.add_run(row, detail)
            for mid, mrow in shard.machines.items():
                if mid in store.machines:
                    store.machines[mid] = _adopting(store.machines[mid], mrow)
                elif mid not in renamed:
                    store.add_machine(dict(mrow, source_file=mrow.get("source_file") or label))
            itself = os.path.realpath(src) == os.path.realpath(out)  # no source of its own
            if not itself and not any(p["source_file"] == label and p["rows"] == len(shard.runs)
                                      for p in store.provenance):
                store.provenance.append({"source_file": label, "rows": len(shard.runs),
                                         "merged_at": time.time()})
            for key, n in shard.attempts.items():
                store.attempts[key] = max(store.attempts.get(key, 0), n)
        if check is not None and (refused := check(list(store.runs.values()), own)):
            raise TelemetryError(refused)  # the writer unwinds: nothing written
        shared_attrs(store.attrs, [shard.attrs for _, shard in stores], store.runs.values())
        unchanged = found is not None and _same(_content(store), found)
        if unchanged:
            writer.abandon()  # nothing to write: --out keeps its bytes and mtime
    if not unchanged:
        _keep_shared_mode(out, before)
    counts["rows"] = len(load(out).runs)
    counts["conflict"] = conflict
    counts["launchers"] = launchers
    counts["repeated"] = len(sources) - len(unique)
    counts["unchanged"] = unchanged
    return counts


def _settled(out, before: os.stat_result | None, writer: TelemetryWriter) -> bool:
    """Whether the existing ``out`` alone holds what the writer read: no journal, fault or
    crash note beside it and no unfinished run it settled (those a snapshot must fold in)."""
    from .side_files import crash_note_path, fault_notes, journal_path

    return (before is not None and not writer.crashed_on_open
            and not journal_path(out).exists() and not crash_note_path(out).exists()
            and not fault_notes(out))


def _content(store) -> tuple:
    """What a snapshot of ``store`` writes, bar the foreign content a merge never changes."""
    return (store.runs, store.machines, store.detail, store.provenance, store.attempts,
            store.attrs, store.started)


def _same(a, b) -> bool:
    """``a == b`` through dicts (their order too: it is the file's), lists and tuples, NaN
    equal to NaN (a run's missing energy is NaN in both)."""
    if isinstance(a, dict):
        return (isinstance(b, dict) and list(a) == list(b)
                and all(_same(a[k], b[k]) for k in a))
    if isinstance(a, (list, tuple)):
        return (isinstance(b, (list, tuple)) and len(a) == len(b)
                and all(_same(x, y) for x, y in zip(a, b)))
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    try:
        return bool(a == b)
    except (TypeError, ValueError):  # an array: compared as a whole
        import numpy as np

        return bool(np.array_equal(a, b))


def _rename_own(store, renamed: dict[str, str], shards: list) -> None:
    """Move ``out``'s own runs of an id a source's machine took over to that machine's id and
    row (an old file merged with its re-keyed copy)."""
    for old in [m for m in store.machines if m in renamed]:
        new = renamed[old]
        row = store.machines.get(new) or next(s.machines[new] for s in shards
                                               if new in s.machines)
        store.relabel_machine(old, row)


def _adopting(row: dict, other: dict) -> dict:
    """``row`` with the ids ``other``, a record of the same machine, took over too."""
    from .adopted_ids import adopted

    ids = list(dict.fromkeys(adopted(row) + adopted(other)))
    return {**row, "adopted_ids": ",".join(ids)}


def _keep_shared_mode(out: str | os.PathLike, before: os.stat_result | None) -> None:
    """Give the merged ``out`` the permission bits of the file it extended where it kept that
    file's group: a group-shared ``-rw-rw----`` file came out ``-rw-r-----`` (the writer takes
    away the group write the umask denies), so that the group, its owner before a ``--force``
    among them, could no longer write it (s35 tester R7). Set-id bits are not kept."""
    if before is None:
        return
    try:
        now = os.stat(out)
        if now.st_gid == before.st_gid and now.st_mode & 0o777 != before.st_mode & 0o777:
            os.chmod(out, before.st_mode & 0o777)
    except OSError:  # replaced meanwhile by another user's file: theirs to set
        pass


#: How much a record of a run says, least first: cut short with the sweep, died with its
#: launch, finished (any other status). A shard's record replaces another only if it says at
#: least as much, and then the newer one wins.
_WEIGHT = {"interrupted": 0, "crashed": 1}


def _two_launchers(old: dict, new: dict) -> tuple[str, str] | None:
    """The launchers of two records of one run, as a line names them, where they differ (its
    id does not hold the launcher); None where they agree or either records none."""
    a, b = launcher_of(old), launcher_of(new)
    if a is None or b is None or all(same_launch_value(k, a[k], b[k]) for k in LAUNCHER_KEYS):
        return None
    return launcher_words(a), launcher_words(b)


def _better(new: dict, old: dict) -> bool:
    new_weight, old_weight = _WEIGHT.get(new["status"], 2), _WEIGHT.get(old["status"], 2)
    if new_weight != old_weight:
        return new_weight > old_weight
    return float(new.get("finished_at") or 0) > float(old.get("finished_at") or 0)


#: Columns a merge sets itself, no measurement: a run's two records may differ in them.
_BOOKKEEPING = frozenset({"source_file"})


def _differs(new: dict, old: dict) -> str | None:
    """The first column where two records of one run hold different values (NaN equal to
    NaN), None when they are the same record."""
    for column, value in new.items():
        if column in _BOOKKEEPING:
            continue
        other = old.get(column)
        if value == other or (isinstance(value, float) and isinstance(other, float)
                              and math.isnan(value) and math.isnan(other)):
            continue
        return column
    return None
