"""Ids that each SWF log numbers for itself, kept apart when several logs make one table.

The Parallel Workloads Archive anonymises every log on its own: users, groups, executables,
queues and partitions are numbered from 1 in each. User 2 of Gaia and user 2 of Curie are two
people on two machines, and a table of both must not make one history of them (s38 tester
C8: 457 jobs of Curie's user 2 were taken as Gaia's user 2's, the predicted run time 750 s ->
458 s, without a word). In a table of several logs an SWF log's ids are written ``LOG:N``,
``LOG`` the log's file name without ``.swf`` and compression suffixes (``UniLu-Gaia-2014-1:2``),
as the sacct readers write ``CLUSTER:ID`` for an id two clusters share. An id already
qualified (a table of several logs read again) is kept as it is. Slurm's user names and the
other kinds' ids are left as read: a site's user names are the same people across exports.
"""

from __future__ import annotations

from collections import Counter
from pathlib import PurePath

#: The SWF ids each log numbers itself (job-table columns).
LOG_IDS = ("user", "account", "workload", "queue", "partition")
#: Suffixes left out of a log's name.
_SUFFIXES = (".gz", ".bz2", ".xz", ".swf")
#: The note on ids qualified so (ingest prints it with the count of jobs).
QUALIFIED = ("SWF ids are each log's own numbers (users, groups, executables, queues, "
             "partitions): written LOG:N in this table of several logs, so that user 2 of one "
             "log is not user 2 of another (recommend --history TABLE --user LOG:N)")


def log_name(source_file: str) -> str:
    """A log's name from its path: the file name without SWF and compression suffixes."""
    name = PurePath(source_file).name
    for suffix in _SUFFIXES:
        name = name[:-len(suffix)] if name.lower().endswith(suffix) else name
    return name or PurePath(source_file).name


def qualify_log_ids(table, notes: Counter):
    """``table`` (several files' jobs) with each SWF log's :data:`LOG_IDS` written ``LOG:N``
    where the table holds jobs of more than one log; counted in ``notes``.

    Two different files of one name get their position among the files after the name
    (``log.2``): their numbers are no more the same people's than any two logs'.
    """
    import pandas as pd

    files = table["source_file"].astype("string").fillna("")
    swf = (table["source_kind"] == "swf").fillna(False).to_numpy(dtype=bool)
    if not swf.any() or files.nunique() < 2:
        return table
    names: dict[str, str] = {}
    taken: Counter = Counter()
    for f in dict.fromkeys(files[swf]):
        base = log_name(f)
        taken[base] += 1
        names[f] = base if taken[base] == 1 else f"{base}.{taken[base]}"
    prefix = files[swf].map(names)
    changed = pd.Series(False, index=table.index[swf])
    for column in (c for c in LOG_IDS if c in table.columns):
        values = table.loc[swf, column].astype("string")
        bare = values.notna() & (values != "") & ~values.str.contains(":", regex=False)
        bare = bare.fillna(False).astype(bool)
        if bare.any():
            table[column] = table[column].astype("string")
            table.loc[bare[bare].index, column] = prefix[bare] + ":" + values[bare]
            changed |= bare
    if changed.any():
        notes[QUALIFIED] += int(changed.sum())
    return table


def user_of_several_logs(history, user: str) -> str:
    """Where a table of several SWF logs holds ``user`` only as ``LOG:user``, a reason that
    names those users ("" where it holds none, or ``user`` is qualified already)."""
    if ":" in user or "user" not in history:
        return ""
    names = history["user"].dropna().astype(str)
    like = sorted(set(names[names.str.endswith(f":{user}")]))
    if not like:
        return ""
    return (f"no user {user} in this history of several logs, whose users are written LOG:N: "
            f"give --user as one of {', '.join(like[:4])}{' ...' if len(like) > 4 else ''}")
