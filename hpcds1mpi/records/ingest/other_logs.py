"""Files ``ingest`` does not read, told by their first bytes, each with one line on what the
file is and the way on (s37 tester J3, J4, J5): other schedulers' accounting logs (PBS Pro /
Torque, LSF, Grid Engine, Flux), Slurm outputs that are not a job history (jobcomp/filetxt,
squeue), and binary data. They had been "not a job log of a known kind ... --kind KIND reads
it" (no kind does), Flux's JSON "unparseable job entry (TypeError)" of a sacct export, and
random bytes "'|'-separated but no JobID header; run sacct -P without --noheader".

No converter of these logs ships with hpcds1mpi: the way on is the Standard Workload Format,
which ingest reads, or the scheduler's own export where it is Slurm.
"""

from __future__ import annotations

import re
from pathlib import Path

from .wrong_exports import SACCT_P

#: What ingest reads, for the messages.
READS = ("ingest reads Slurm sacct -P/--json/CSV, SWF, PM100/Adastra parquet, NREL Eagle and "
         "CINECA Eurora CSV, and job tables it wrote")
#: The way on for another scheduler's log: SWF, whose definition is public.
TO_SWF = ("convert it to the Standard Workload Format (one line of 18 fields per job, defined "
          "at https://www.cs.huji.ac.il/labs/parallel/workload/swf.html) and ingest that")

# PBS Pro / Torque accounting: "04/23/2024 10:00:01;E;1234.server;user=alice ..."
_PBS = re.compile(r"\d\d/\d\d/\d{4} \d\d:\d\d:\d\d;[A-Z];[^;]*;")
# LSF lsb.acct / lsb.events records: a quoted event type, then the quoted LSF version.
_LSF = re.compile(r'"(JOB_FINISH|JOB_NEW|JOB_START|JOB_STATUS|EVENT_ADRSV_FINISH|JOB_RESIZE|'
                  r'JOB_FINISH2)" "\d')
# Grid Engine's accounting: "# Version: 8.1.9" header comments, then records of 40-odd ':'.
_SGE_HEADER = re.compile(r"#\s*Version:\s*\d")
_SGE_FIELDS = 40


def not_read(path: str | Path, head: bytes, text: str) -> str | None:
    """The one line for a file ingest does not read, from its first bytes (``head``) and
    their text (``text``, a byte-order mark and leading blanks dropped); None when it is none
    of the files known here."""
    if _binary(head, text):
        return (f"{path}: binary data, not a text job log (nor a parquet table); give the job "
                f"log as text, e.g. {SACCT_P}")
    lines = text.splitlines()
    first = lines[0] if lines else ""
    words = first.split()
    if first.startswith("JobId=") and "JobState=" in first:
        return (f"{path}: a Slurm jobcomp/filetxt log, not read; ingest sacct output "
                f"instead: {SACCT_P}")
    if _PBS.match(first):
        return f"{path}: a PBS Pro / Torque accounting log, not read ({READS}); {TO_SWF}"
    if _LSF.match(first):
        return f"{path}: an LSF accounting log (lsb.acct), not read ({READS}); {TO_SWF}"
    if _SGE_HEADER.match(first) or any(_sge_record(line) for line in lines[:3]):
        return (f"{path}: a Grid Engine accounting file, not read ({READS}); {TO_SWF}")
    if words[:1] == ["JOBID"] and {"NTASKS", "INFO"} & set(words):
        return f"{path}: Flux's flux jobs listing, not read ({READS}); {TO_SWF}"
    if text.startswith(("{", "[")) and looks_like_flux_json(text):
        return _flux_json_line(path)
    if words[:1] == ["JOBID"] and {"PARTITION", "ST", "NODELIST(REASON)"} <= set(words):
        return (f"{path}: squeue output (the jobs queued or running now: none has finished); "
                f"export finished jobs with sacct: {SACCT_P}")
    return None


def flux_json(path: str | Path, jobs: list) -> str | None:
    """The one line for Flux's ``flux jobs --json`` (a ``jobs`` list of records with
    ``t_submit`` / ``userid`` and no ``job_id``), which a sacct --json reader would take for
    its own; None when ``jobs`` is not Flux's."""
    records = [job for job in jobs[:20] if isinstance(job, dict)]
    if records and all("job_id" not in job and {"t_submit", "userid"} & set(job)
                       for job in records):
        return _flux_json_line(path)
    return None


def _flux_json_line(path) -> str:
    return (f"{path}: Flux's job records (flux jobs --json), not sacct --json; not read "
            f"({READS}); {TO_SWF}")


def looks_like_flux_json(text: str) -> bool:
    """Whether a JSON file's first bytes are Flux's job records (``t_submit``, no ``job_id``):
    one object per line, or a ``jobs`` list, as ``flux jobs --json`` writes them."""
    return '"t_submit"' in text and '"job_id"' not in text


def _sge_record(line: str) -> bool:
    """Whether a line is a Grid Engine accounting record: qname:hostname:group:owner:
    job_name:job_number:account:priority:submission_time:... (40-odd fields, the job number
    and the submission time integers)."""
    fields = line.split(":")
    return (len(fields) >= _SGE_FIELDS and fields[5].isdigit() and fields[8].isdigit()
            and "|" not in line)


def _binary(head: bytes, text: str) -> bool:
    """NUL bytes (UTF-16 text is said before this), or mostly bytes that are not UTF-8."""
    if b"\x00" in head:
        return True
    return len(text) >= 64 and text.count("\ufffd") > len(text) // 10
