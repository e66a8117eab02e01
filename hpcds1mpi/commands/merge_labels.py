"""Which program labels a ``telemetry merge`` would put two programs under: refused when the
merge adds them, a warning when its ``--out`` held them already.

Two sweeps given one ``--label`` for two programs, or one command line swept from two
folders, make a file ``train`` refuses (:mod:`hpcds1mpi.surrogates.label_programs`); a merge
writing one is refused up front (s42). An ``--out`` that held such a label already (merged
before that check, or written by an older version) had every later merge into it refused,
unrelated shards too (s42 left). Now only what the merge adds is refused: a label that
becomes two programs, or runs added to a label ``--out`` holds two programs under (they would
deepen a conflict train refuses); a conflict ``--out`` holds and the merge leaves as it is is
a warning naming the label and how to split it, so the merge does not hide it.
"""

from __future__ import annotations

#: How to keep one program per label (a merge's words; train's are ``TRAIN_FIX``).
FIX = ("merge each program's files into its own --out, or sweep one again with its own "
       "--label (--label NAME)")
#: What a refused merge left.
NOTHING = "; nothing was written"


def label_conflicts(runs: list[dict]) -> dict[str, str]:
    """Per workload label of ``runs`` whose rows run two programs, the one-line reason
    (ending in :data:`FIX`); {} where every label runs one."""
    import pandas as pd

    from hpcds1mpi.surrogates.label_programs import two_folders, two_programs
    from hpcds1mpi.surrogates.levels import levels_from_frame

    frame = pd.DataFrame(runs)
    if not len(frame) or "workload" not in frame.columns:
        return {}
    levels = levels_from_frame(frame)
    found = {}
    for name, rows in frame.groupby(frame["workload"].astype(str), sort=True):
        why = (two_programs({name: levels[name]}, FIX) if name in levels else None) \
            or two_folders(rows, FIX)
        if why:
            found[name] = why
    return found


#: The columns that make a run's program: a record of a run changed in none adds nothing.
_PROGRAM_COLUMNS = ("workload", "command", "swept_in")


def _program_key(row: dict) -> tuple:
    return tuple(str(row.get(column)) for column in _PROGRAM_COLUMNS)


class MergeLabels:
    """The check :func:`hpcds1mpi.records.telemetry.merge` runs: ``check(merged, own)``
    returns the refusal (one line) or None; :attr:`warnings` then holds the conflicts
    ``--out`` held already and keeps, for the command to say after the merge."""

    def __init__(self) -> None:
        self.warnings: list[str] = []

    def __call__(self, runs: list[dict], own: list[dict]) -> str | None:
        merged = label_conflicts(runs)
        held = label_conflicts(own) if merged and own else {}
        for name, why in merged.items():
            if name not in held:
                return why + NOTHING
        ran = {(r["machine_id"], r["run_id"]): _program_key(r) for r in own}
        for name in merged:
            added = sum(1 for r in runs if str(r.get("workload")) == name
                        and ran.get((r["machine_id"], r["run_id"])) != _program_key(r))
            if added:
                return (f"--out already holds two programs under the label {name!r} and the "
                        f"merge would add {added} run(s) to it: {held[name]}{NOTHING}")
        self.warnings = [f"--out holds two programs under the label {name!r} (kept as it was; "
                         f"train refuses that label until it is split): {held[name]}"
                         for name in merged]
        return None
