"""A log's column names as people change them: sacct's field names in another case (a script's
``jobid,state,...``, a spreadsheet's ``TimeLimit``), a column renamed, and a job table
``ingest`` wrote with one of its columns renamed. Each is read where the name is certain, or
refused naming the column missed and the near miss the file has (s46 tester I2: "not a job
log of a known kind", or a limit column ignored without a word).
"""

from __future__ import annotations

import difflib
from collections import Counter
from pathlib import Path

from hpcds1mpi.errors import IngestError

from .schema import JOB_COLUMNS, TABLE_MARK
from .wrong_exports import SACCT_FORMAT

#: sacct's field names the readers read, spelt as sacct spells them.
SACCT_NAMES = tuple(SACCT_FORMAT.split(",")) + (
    "JobIDRaw", "Elapsed", "Timelimit", "UID", "Cluster", "Restarts", "AllocCPUS",
    "HetJobId", "HetJobOffset", "CPUTimeRAW", "NodeList", "Comment", "WorkDir", "SubmitLine",
    "AllocNodes", "Suspended", "Eligible", "ReqGRES", "AllocGRES", "ConsumedEnergy", "AveRSS",
    "MaxVMSize", "TRESUsageInMax", "ReqCPUS", "ReqNodes")
_BY_LOWER = {name.lower(): name for name in SACCT_NAMES}


def sacct_case(header: list[str]) -> list[str]:
    """``header`` with each name that is one of sacct's (:data:`SACCT_NAMES`) in another case
    spelt sacct's way, where that is certain: no other column of the header has the name in
    any case."""
    lowers = Counter(name.lower() for name in header)
    return [_BY_LOWER[name.lower()] if name.lower() in _BY_LOWER and lowers[name.lower()] == 1
            else name for name in header]


def sacct_columns(path: str | Path, header: list[str], facts: list[str],
                  required: tuple[str, ...] = ()) -> list[str]:
    """A sacct export's header with sacct's names in their own case (said in ``facts``).

    Raises:
        IngestError: a ``required`` column missing, naming its near miss.
    """
    fixed = sacct_case(header)
    changed = [old for old, new in zip(header, fixed) if old != new]
    if changed:
        facts.append(f"column names in another case than sacct's ({', '.join(changed[:5])}"
                     f"{' ...' if len(changed) > 5 else ''}): read as sacct's")
    missing = [name for name in required if name not in fixed]
    if missing:
        raise IngestError(f"{path}: a sacct export needs the column {', '.join(missing)}"
                          f"{near_misses(missing, fixed, SACCT_NAMES)}; export again with it "
                          "in --format, or rename the column back")
    return fixed


def near_misses(missing: list[str], have: list[str], known=()) -> str:
    """" (has 'Status' for State)", naming for each missing column the file's closest name
    (a case or a few letters apart) that is none of the ``known`` columns (``Start`` is no
    misspelt State), or "" when none is close."""
    pairs = []
    extra = [name for name in have if name and name not in missing and name not in known]
    for name in missing:
        close = difflib.get_close_matches(name.lower(), [h.lower() for h in extra], 1, 0.6)
        if close:
            pairs.append(f"{extra[[h.lower() for h in extra].index(close[0])]!r} for {name}")
    return f" (has {', '.join(pairs)})" if pairs else ""


def renamed_table(path: str | Path, header: list[str]) -> str | None:
    """The one line for a job table ``ingest`` wrote with a column of :data:`TABLE_MARK`
    renamed (most of the table's columns there, one of those not); None otherwise."""
    names = [name for name, _ in JOB_COLUMNS]
    missing = [name for name in TABLE_MARK if name not in header]
    if not missing or 2 * len(set(names) & set(header)) <= len(names):
        return None
    return (f"{path}: looks like a job table hpcds1mpi ingest wrote, but lacks the column(s) "
            f"{', '.join(missing)}{near_misses(missing, header, names)}; rename it back (or write "
            "the table again with hpcds1mpi ingest)")
