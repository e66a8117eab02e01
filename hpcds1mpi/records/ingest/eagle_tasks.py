"""Eagle array tasks' job ids: one task, one id, in whichever input it is read from.

The Eagle CSV gives a job array's tasks their array's id (532939: 452 rows). Each task is
named from its own start and run time, ``ID_YYYYMMDDTHHMMSS+RUNs`` (:func:`task_ids`), so
that two overlapping exports name a task alike (s48 tester P16). The same name is given to
a task an older job table named ``ID_N`` in file order (:func:`renamed_old_tasks`, s48
review RY1: the table and its CSV read again had each task twice), and to an export's lone
task that keeps the bare id in its own file (:func:`lone_tasks`, s48 review RY4).
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

#: The note on array tasks' ids.
TASK_IDS = ("rows sharing a job_id (array tasks): ids made unique from each task's own start "
            "and run time, as ID_YYYYMMDDTHHMMSS+RUNs (a task in two files is one job)")
#: The note on tasks alike to the second, which no id can tell apart.
TASKS_ALIKE = ("array tasks alike to the second (start and run time) numbered #2, #3 ... in "
               "file order: tasks that ran alike, or one row twice (give overlapping exports "
               "as separate files: a task in both is kept once)")
#: The note on an older table's task ids renamed.
OLD_TASK_IDS = ("Eagle array tasks named ID_0, ID_1 ... in file order (a table written before "
                "session 48) renamed ID_YYYYMMDDTHHMMSS+RUNs from their own start and run "
                "time, as the Eagle reader names them now: a task read again from its CSV is "
                "one job")
#: The note on lone tasks named as their array's other tasks.
LONE_TASKS = ("Eagle rows under an array's bare id (an export holding one of its tasks) named "
              "ID_YYYYMMDDTHHMMSS+RUNs as its tasks in the other inputs: a task in two files "
              "is one job")
#: An id as :func:`task_ids` writes it: the array's id, then the task's start and run time.
TASK_FORM = r"^([^_]+)_(?:\d{8}T\d{6}|nostart)\+"
#: An id as the Eagle reader wrote a task before session 48: the array's id, then a number.
OLD_FORM = r"^(\d+)_\d+$"


def task_ids(tasks: "pd.DataFrame", raw: "pd.Series", notes: Counter) -> "pd.Series":
    """Array tasks' ids from their own content, not their place in the file: two exports
    that overlap number the same task alike, so the merge keeps it once (s48 tester P16:
    numbered in file order, 102 of 1000 tasks were paired with others and lost).

    Args:
        tasks: the tasks' rows (``start_time``, ``runtime_s``), in file order.
        raw: each task's array id (the CSV's ``job_id``), on ``tasks``' index.
        notes: counts tasks alike to the second, numbered ``#2``, ``#3`` ... (added to).
    """
    start = tasks["start_time"].dt.strftime("%Y%m%dT%H%M%S").fillna("nostart")
    run = tasks["runtime_s"].map(lambda s: f"{s:.0f}s" if float(s).is_integer() else f"{s}s",
                                 na_action="ignore").fillna("norun")
    ids = raw.astype("string") + "_" + start + "+" + run
    again = ids.groupby(ids).cumcount()
    if again.gt(0).any():
        notes[TASKS_ALIKE] += int(again.gt(0).sum())
    return ids.where(again.eq(0), ids + "#" + (again + 1).astype(str))


def renamed_old_tasks(table: "pd.DataFrame", notes: Counter) -> "pd.DataFrame":
    """``table`` (a job table read back) with its Eagle tasks named ``ID_N`` renamed by
    :func:`task_ids`, each source file's in the table's order (its file's, as the old reader
    numbered them), counted in ``notes``."""
    import pandas as pd

    if not {"job_id", "source_kind", "start_time", "runtime_s"} <= set(table.columns):
        return table
    eagle = table["source_kind"].astype("string").eq("eagle").fillna(False).astype(bool)
    if not eagle.any():  # the id pattern on Eagle rows alone: a table of any size is read so
        return table
    ids = table["job_id"].astype("string")
    old = eagle.copy()
    old[eagle] = ids[eagle].str.fullmatch(OLD_FORM).fillna(False).astype(bool)
    if not old.any():
        return table
    rows = table[old].assign(start_time=pd.to_datetime(table.loc[old, "start_time"]),
                             runtime_s=pd.to_numeric(table.loc[old, "runtime_s"]))
    raw = ids[old].str.extract(OLD_FORM, expand=False)
    files = rows["source_file"] if "source_file" in rows else pd.Series("", index=rows.index)
    new = pd.concat([task_ids(part, raw[part.index], notes)
                     for _, part in rows.groupby(files.fillna(""), sort=False)])
    table = table.copy()
    table.loc[new.index, "job_id"] = new
    notes[OLD_TASK_IDS] += int(old.sum())
    return table


def lone_tasks(table: "pd.DataFrame", notes: Counter) -> "pd.DataFrame":
    """``table`` (several files' jobs, each row's file in ``_file``) with each Eagle row under
    a bare id named by :func:`task_ids` where that id is an array's across the inputs: another
    file names tasks of it, or its bare rows ran at other start or run times (two tasks,
    each the one of its array in its export). The reader cannot tell a lone task from a job
    in its own file; a job in two exports, alike, keeps its id."""
    if not {"source_kind", "start_time", "runtime_s"} <= set(table.columns):
        return table
    eagle = table["source_kind"].astype("string").eq("eagle").fillna(False).astype(bool)
    if not eagle.any():
        return table
    ids = table.loc[eagle, "job_id"].astype("string")
    named = ids.str.extract(TASK_FORM, expand=False)
    bare = named.isna() & ids.notna()
    arrays = set(named.dropna())
    # Only rows that know both times are told apart by them (a copy missing one is alike).
    known = table.loc[bare[bare].index, ["start_time", "runtime_s"]].dropna().index
    runs = (table.loc[known, "start_time"].astype(str) + " "
            + table.loc[known, "runtime_s"].astype(str))
    arrays |= set(runs.groupby(ids[known]).nunique().loc[lambda n: n > 1].index)
    lone = bare & ids.isin(arrays)
    if not lone.any():
        return table
    rows = table.loc[lone[lone].index]
    new = [task_ids(part, ids[part.index], notes)
           for _, part in rows.groupby("_file", sort=False)]
    table = table.copy()
    for part in new:
        table.loc[part.index, "job_id"] = part
    notes[LONE_TASKS] += int(lone.sum())
    return table
