"""How a program's sweep launched it, as a bundle keeps it (s29 tester B4: a script for a
program measured with ``mpirun`` refused for srun, which its Open MPI cannot start as one job).

The telemetry's ``launch`` attribute names the launcher; its external rows carry it as
``launched_with`` (:func:`hpcds1mpi.records.telemetry_rows.launched_with`) and a program's
levels keep the one all its rows recorded
(:attr:`hpcds1mpi.surrogates.levels.MeasuredLevels.launched_with`), so a job script can launch
it the same way where no cluster file names a launcher
(:func:`hpcds1mpi.launch.script_launcher.measured_cluster`). A bundle older than the record,
or rows that ran under different launchers, keep none: the script's launcher is as before.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

#: The entries of the ``launch`` attribute that say how the program was started.
LAUNCH_KEYS = ("launcher", "command", "flavour", "args", "mpi")


def launch_dict(value) -> dict | None:
    """``value`` as a recorded launch (:data:`LAUNCH_KEYS`: strings, ``args`` a list of
    strings), or None when it is not one (absent, damaged, a launcher without its command)."""
    if not isinstance(value, dict):
        return None
    args = value.get("args") or []
    text = {k: value.get(k) or "" for k in LAUNCH_KEYS if k != "args"}
    if not all(isinstance(v, str) for v in text.values()) or not isinstance(args, list) \
            or not all(isinstance(a, str) for a in args):
        return None
    if not text["launcher"] or not text["command"]:
        return None
    return {**text, "args": list(args)}


def launch_of(rows: "pd.DataFrame") -> dict | None:
    """The one launch a program's rows recorded (``launched_with``, JSON), or None when they
    do not say, or disagree (learn merged sweeps launched differently)."""
    return one_recorded(rows, "launched_with", launch_dict)


def one_recorded(rows: "pd.DataFrame", column: str, parse) -> dict | None:
    """The one value a program's (``kind`` external) rows recorded as JSON in ``column``,
    read by ``parse`` (None: not such a value); None where the rows do not say, a row's
    value is unreadable, or they differ."""
    if column not in rows.columns:
        return None
    if "kind" in rows.columns:
        rows = rows[rows["kind"].astype(str) == "external"]
    found = set()
    for text in rows[column]:
        try:
            value = parse(json.loads(text)) if isinstance(text, str) else None
        except ValueError:
            value = None
        if value is None:
            return None
        found.add(json.dumps(value, sort_keys=True))
    return json.loads(found.pop()) if len(found) == 1 else None
