"""A heterogeneous job's components read as the one job they are.

sacct lists each component of a job submitted with ``#SBATCH hetjob`` (or ``sbatch : ``) as a
job of its own, ``15+0`` and ``15+1`` (``--json`` gives the second its own raw id, 16, with
``het.job_id`` 15). They were read as unrelated jobs of one node each (s33 tester A11): one
job's request and its run time counted twice, and neither its whole size. Here they become job
``15``: what it holds summed over its components, its times its first start and last end.
"""

from __future__ import annotations

import re
from collections import Counter

from .schema import FileReport, job_row

#: A component's JobID as sacct -P writes it (and sacct_json gives it): <job>+<offset>, the
#: job qualified by its cluster where two clusters of the file share its id (.cluster_ids).
_COMPONENT = re.compile(r"((?:[^:]+:)?\d+)\+(\d+)")
HET_JOINED = ("heterogeneous job's components joined into one job (nodes, CPUs, ranks, GPUs, "
              "memory, energy and CPU time summed; its run from the first start to the last "
              "end)")
#: Counts a job's components hold between them.
_SUMMED = ("nodes", "ranks", "cores", "gpus", "req_nodes", "req_procs", "req_gpus", "cpu_s",
           "energy_j", "mem_req_gb")


def join_components(rows: list[dict], report: FileReport) -> list[dict]:
    """``rows`` (job rows of one file, :func:`~.schema.job_row`) with each heterogeneous
    job's components replaced by one row of the job, in the first component's place, noted
    once per job; ``report.jobs`` updated. Other rows are returned as they are."""
    parts: dict[str, list[dict]] = {}
    for row in rows:
        m = _COMPONENT.fullmatch(str(row["job_id"]))
        if m:
            parts.setdefault(m.group(1), []).append(row)
    if not parts:
        return rows
    out = []
    for row in rows:
        m = _COMPONENT.fullmatch(str(row["job_id"]))
        if not m:
            out.append(row)
        elif m.group(1) in parts:
            out.append(_one_job(m.group(1), parts.pop(m.group(1))))
            report.notes[HET_JOINED] += 1
    report.jobs = len(out)
    return out


def _one_job(job_id: str, components: list[dict]) -> dict:
    """One row of the job from its components' rows, the leader (offset 0) first."""
    components = sorted(components, key=lambda r: int(str(r["job_id"]).rsplit("+", 1)[1]))
    lead = components[0]
    # The job failed where any component did: that one's status, state and exit say why.
    ended = next((r for r in components if r["status"] != "ok"), lead)

    def total(column: str):
        values = [r.get(column) for r in components]
        return None if any(_unknown(v) for v in values) else sum(values)

    def known(column: str, pick):
        values = [r.get(column) for r in components if not _unknown(r.get(column))]
        return pick(values) if values else None

    threads = {r.get("threads") for r in components}
    partitions = list(dict.fromkeys(str(r["partition"]) for r in components if r["partition"]))
    return job_row(
        job_id=job_id, workload=lead["workload"], user=lead["user"],
        account=lead.get("account"), queue=lead.get("queue"), partition=",".join(partitions),
        **{c: total(c) for c in _SUMMED},
        threads=threads.pop() if len(threads) == 1 else None,
        status=ended["status"], state=ended["state_raw"], exit_code=ended["exit_code"],
        exit_signal=ended["exit_signal"], runtime_s=known("runtime_s", max),
        peak_rss_mb=known("peak_rss_mb", max), submit_time=known("submit_time", min),
        start_time=known("start_time", min), end_time=known("end_time", max),
        time_limit_s=known("time_limit_s", max), cluster=lead.get("cluster"),
        raw_id=_raw_ids(components))


def _raw_ids(components: list[dict]) -> str | None:
    """The components' own numbers, leader first (None where any is unknown): another
    export keyed by JobIDRaw lists each component under its number (.same_jobs)."""
    ids = [r.get("raw_id") for r in components]
    return None if any(_unknown(i) or not i for i in ids) else ",".join(map(str, ids))


def _unknown(value) -> bool:
    return value is None or value != value  # None, NaN, NaT


def het_columns(header: list[str]) -> tuple[str, str] | None:
    """The columns that name a JobIDRaw record's heterogeneous job and its offset, if any."""
    job = next((c for c in ("HetJobId", "HetJobID") if c in header), None)
    return (job, "HetJobOffset") if job and "HetJobOffset" in header else None


def component_id(raw: str, het_job: str, offset: str) -> str:
    """A JobIDRaw record's id as JobID writes it where it is a heterogeneous job's component
    (``16`` of het job 15, offset 1 -> ``15+1``; its steps ``15+1.batch``), so that
    :func:`join_components` joins it; any other record's raw id as it is."""
    if not (het_job.isdigit() and int(het_job) and offset.isdigit()):
        return raw
    step = raw.partition(".")[2]
    return f"{het_job}+{offset}" + (f".{step}" if step else "")


#: The fact said of a JobIDRaw export without HetJobId / HetJobOffset whose jobs may be one.
COMPONENTS_UNKNOWN = ("{n} group(s) of jobs of one owner, name, submit and start: keyed by "
                      "JobIDRaw, without JobID (or HetJobId and HetJobOffset), a heterogeneous "
                      "job's components cannot be told from array tasks, so each is counted "
                      "as a job of its own; export JobID too to join a heterogeneous job")


def say_components_unknown(rows: list[dict], report: FileReport) -> None:
    """Say :data:`COMPONENTS_UNKNOWN` where jobs of a JobIDRaw-only export share their user
    (the fact says owner: "user" there would hide job_logs' "no job has a value for user"),
    name, submit and start time, as a heterogeneous job's components do."""
    together = Counter((r["user"], r["workload"], r["submit_time"], r["start_time"])
                       for r in rows if r["start_time"] is not None)
    groups = sum(n > 1 for n in together.values())
    if groups:
        report.facts.append(COMPONENTS_UNKNOWN.format(n=groups))
