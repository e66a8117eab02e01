"""The runs a rewrite of a telemetry file carries over, checked by the rules ``merge`` and
``train`` apply (:func:`hpcds1mpi.records.training.impossible_rows`, the numbers'
rules in :mod:`hpcds1mpi.schemas.runs`).

``sweep --resume`` had counted a run whose ``status`` another tool set to an unknown word as
done and written it into the new snapshot, which ``merge`` and ``train`` then refused (s37
tester P7); a merge did the same with its ``--out``'s own rows. A row that breaks a rule was
changed outside hpcds1mpi: it is refused in one line before any run is added, except the rows
the resume measures again (an ``ok`` row without a runtime: the new row replaces it).
"""

from __future__ import annotations

from hpcds1mpi.errors import TelemetryError

#: What to do about such a row on ``sweep --resume`` (the file is left as it was).
RESUME_FIX = ("a sweep never records one: fix or drop those rows (or restore the file from a "
              "copy), or sweep into a new --out; no run in the file was changed")


def refuse_broken_rows(store, path, fix: str, remeasured=frozenset()) -> None:
    """Refuse ``store``'s runs (but the keys in ``remeasured``) that ``train`` would refuse.

    Raises:
        TelemetryError: the first rule broken, how many rows, an example value and ``fix``.
    """
    rows = [row for key, row in store.runs.items() if key not in remeasured]
    if not rows:
        return
    import pandas as pd

    from hpcds1mpi.records.training import impossible_rows

    problem = impossible_rows(pd.DataFrame(rows), str(path), fix)
    if problem:
        raise TelemetryError(problem)
