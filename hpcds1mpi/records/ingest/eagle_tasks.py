"""Eagle array tasks' job ids: one task, one id, in whichever input it is read from.

The Eagle CSV gives a job array's tasks their array's id (532939: 452 rows). Each task is
named from its own start and run time, ``ID_YYYYMMDDTHHMMSS+RUNs`` (:func:`task_ids`), so
that two overlapping exports name a task alike (s48 tester P16). The same name is given to
a task an older job table named ``ID_N`` in file order (:func:`renamed_old_tasks`, s48
review RY1: the table and its CSV read again had each task twice).
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
    ids = table["job_id"].astype("string")
    old = (table["source_kind"].astype("string").eq("eagle")
           & ids.str.fullmatch(OLD_FORM)).fillna(False).astype(bool)
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
