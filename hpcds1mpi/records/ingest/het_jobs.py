"""A heterogeneous job's components read as the one job they are.

sacct lists each component of a job submitted with ``#SBATCH hetjob`` (or ``sbatch : ``) as a
job of its own, ``15+0`` and ``15+1`` (``--json`` gives the second its own raw id, 16, with
``het.job_id`` 15). They were read as unrelated jobs of one node each (s33 tester A11): one
job's request and its run time counted twice, and neither its whole size. Here they become job
``15``: what it holds summed over its components, its times its first start and last end.
"""

from __future__ import annotations

import re

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
        time_limit_s=known("time_limit_s", max), cluster=lead.get("cluster"))


def _unknown(value) -> bool:
    return value is None or value != value  # None, NaN, NaT
