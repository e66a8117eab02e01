"""Two job lines under one id that are not one job's attempts (user or name differ), and the
one cause of it that is no forgery: a spreadsheet re-saved the export.

A spreadsheet's General format turns a step id that looks like a number into one: ``N.0``
becomes ``N`` (and ``N.10`` ``N.1``), so step 0's line carries its job's id, with the step's
name and sacct's empty User (s46 tester I6: every job with an srun step was dropped as "a
forged or corrupt export"). Such an id is still dropped, every line of it (which values are
the job's cannot be told), but under its cause, with what to do.
"""

from __future__ import annotations

import re

from .slurm_fields import TWO_JOBS_ONE_ID

#: A spreadsheet's number: a step's id N.0 made N.
NUMBERED_STEP = ("step line under its job's id (a spreadsheet turned the step id N.0 into the "
                 "number N): export again, or import JobID as text")
#: A numbered step's id as sacct writes it: 123.0, 123.10 (what a spreadsheet cuts).
_STEP_ZERO = re.compile(r"\d+(_\d+)?\.\d*0")


def clash_reason(row: dict, known: dict, ids: list[str]) -> str:
    """Why two job lines of one id differ: :data:`NUMBERED_STEP` where one is a step line a
    spreadsheet re-numbered — it has no User where the other has one (sacct leaves a step's
    empty), and no id of the file (``ids``) keeps a step number ending in 0 — else
    :data:`TWO_JOBS_ONE_ID`."""
    users = {line.get("User", "").strip() == "" for line in (row, known)}
    if "User" in row and users == {True, False} and not any(
            _STEP_ZERO.fullmatch(i.strip()) for i in ids):
        return NUMBERED_STEP
    return TWO_JOBS_ONE_ID


def clash_facts(clashing: dict, has_cluster: bool) -> list[str]:
    """The report facts on ids dropped so: ``clashing`` maps (cluster, id) to its reason."""
    facts = []
    numbered = [sid for (_, sid), why in clashing.items() if why == NUMBERED_STEP]
    if numbered:
        facts.append(f"{len(numbered)} job(s) whose step 0 a spreadsheet gave the job's id "
                     f"(N.0 saved as the number N) dropped, every line of them: jobs "
                     f"{_shown(numbered)}; export again (sacct -P or --json), or open the "
                     "export with the JobID column imported as text")
    forged = [sid for (_, sid), why in clashing.items() if why != NUMBERED_STEP]
    if forged:
        facts.append(f"{len(forged)} id(s) with two different jobs (user or name differ) "
                     f"dropped, every line of them: jobs {_shown(forged)}; a forged or "
                     "corrupt export: check them with sacct -j, or export with sacct --json"
                     + ("" if has_cluster else "; if the export spans several clusters "
                        "(sacct -M), add Cluster to --format: each cluster counts its own ids"))
    return facts


def _shown(ids: list[str]) -> str:
    return ", ".join(ids[:5]) + (" ..." if len(ids) > 5 else "")
