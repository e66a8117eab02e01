"""``sacct -P`` / ``-p`` text: a header, then one ``|``-separated record per job and step.

Any column subset is read, including the 109-column ``--format=ALL`` whose ``SubmitLine``
values may hold newlines. Ranks and threads come from the widest srun step, energy from the
job line or its steps.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from hpcds1mpi.errors import IngestError

from .clashing_ids import clash_facts, clash_reason
from .clock_changes import NO_READING_FITS, choose_times
from .column_names import sacct_case, sacct_columns
from .csv_tables import check_unique_columns
from .cut_at_end import ends_inside_line
from .sacct_records import split_records
from .sacct_sizes import SizeReader
from .schema import FileReport, build_rows, bytes_to_mib, job_row
from .het_jobs import component_id, het_columns, join_components, say_components_unknown
from .cluster_ids import shown_ids
from .slurm_fields import (BARE_BYTES, BARE_MINUTES, DEADLINE_UNSTARTED, EARLIER_ATTEMPT,
                           LAST_ATTEMPT_ONLY, array_range, count_not_finished,
                           deadline_unstarted, gpus_from_tres, int_or_none,
                           keep_first_submit, limit_or_none, never_ran, oom_from_memory_kill,
                           oom_from_steps, parse_duration, parse_exit, parse_time_limit,
                           parse_tres, slurm_status)
from .requeue_attempts import Attempts, attempt_key, ended, split_attempts, unended_attempt
from .text_encoding import read_log_text
from .times import BLANK_TIMES, sacct_time_reader
from .wrong_exports import SACCT_P, as_pipes, restore_pipes, wrong_export

#: The time columns read from a job line.
TIME_COLUMNS = ("Submit", "Start", "End")
_LEADING_BLANKS = re.compile(r"\A(?:[ \t\r]*\n)+")
SAME_JOB_AGAIN = "the same job line again (same Submit: two exports joined), kept once"
#: What every attempt of one requeued job shares (Submit does not: a requeue resets it).
IDENTITY_COLUMNS = ("User", "UID", "JobName")


def read_sacct_parsable(path: str | Path) -> tuple[list[dict], FileReport]:
    """Read ``sacct -P`` (or ``-p``) output into one dict per job."""
    path = Path(path)
    report = FileReport(str(path), "sacct-p")
    # Blank lines before the header (a terminal copy) skipped, as after it (s48 tester P8).
    text = _LEADING_BLANKS.sub("", read_log_text(path, report.facts))
    text, sep = as_pipes(text, report.facts)  # sacct --delimiter=';' or tab
    lines = text.splitlines()
    if not lines or not {"JobID", "JobIDRaw"} & set(sacct_case(lines[0].split("|"))):
        raise IngestError(wrong_export(path, text[:4096], reads="|") or
                          f"{path}: not sacct -P output (first line is not a header with JobID)")
    header = sacct_columns(path, lines[0].split("|"), report.facts, ("State",))  # s46 I2
    trailing = header[-1] == ""  # sacct -p ends every line with the delimiter
    if trailing:
        header = header[:-1]
    check_unique_columns(path, header)
    if not {"ElapsedRaw", "Elapsed"} & set(header):
        # sacct -P without --format: JobID, JobName, Partition, Account, AllocCPUS, State,
        # ExitCode. A table of it has no run time, submit time, user or limit to learn from.
        raise IngestError(f"{path}: no ElapsedRaw or Elapsed column (sacct's default columns "
                          f"have no run time, submit time, user or limit); export again with "
                          f"them: {SACCT_P}")
    ncols = len(header) + (1 if trailing else 0)
    cut_ids: list[str] = []
    records = split_records(lines[1:], header, ncols, report, ends_with_delimiter=trailing,
                            cut_at_end=ends_inside_line(text), cut_ids=cut_ids,
                            delimiter=sep or "|")
    rows = rows_from_records(header, records, report, cut_ids)
    return (restore_pipes(rows) if sep else rows), report


#: Steps whose job line the reader itself dropped (its fields could not be told apart).
STEPS_OF_DROPPED = "step rows of a job whose own line was dropped (named above)"


def rows_from_records(header: list[str], records, report: FileReport,
                      cut_ids: list[str] = (), dropped_jobs=()) -> list[dict]:
    """:func:`_rows_from_records` with the cyclic GC paused: every record is kept to the end (no
    cycles), and its rescans made 4x the jobs take 8-13x the time (s32 tester S2's check)."""
    import gc
    was_on = gc.isenabled()
    gc.disable()
    try:
        return _rows_from_records(header, records, report, cut_ids, dropped_jobs)
    finally:
        if was_on:
            gc.enable()


def _rows_from_records(header: list[str], records, report: FileReport,
                       cut_ids: list[str] = (), dropped_jobs=()) -> list[dict]:
    """Job rows (:func:`job_row`) from sacct records, job lines and their step lines, as
    ``sacct -P`` and a sacct CSV export both give them (one list of fields per record, in
    the order of ``header``); sets ``report.jobs``. A job one of whose step records was cut
    short (``cut_ids``: the ids of records dropped so) keeps none of its steps' values (s31
    tester R3: ranks 2 of 4 and a third of the peak memory read from what was left). The
    steps of a job whose own line was dropped before (``dropped_jobs``, its ids) are counted
    as that, not as steps whose job the export lacks."""
    cut_jobs = {jid.split(".", 1)[0] for jid in cut_ids if "." in jid}
    idcol = "JobID" if "JobID" in header else "JobIDRaw"
    # s37 tester J2: sacct -M a,b lists each cluster's jobs under its own id counter; with a
    # Cluster column a job is (cluster, id), so two clusters' jobs of one id are two jobs,
    # not a forged line. Without it the cluster is "" and every id is one cluster's.
    cluster_of = ((lambda row: row.get("Cluster", "").strip()) if "Cluster" in header
                  else (lambda row: ""))
    # Each id's attempts and step lines as read; which attempt is the job, and which steps
    # are its, decided once the file's time format is known (:mod:`.requeue_attempts`).
    # Dicts: a clashing id looked up in one step, not by a scan (s32 tester S2, S3).
    read: dict[tuple[str, str], Attempts] = {}  # by (cluster, JobID)
    clashing: dict[tuple[str, str], str] = {}  # ids of two lines not one job's attempts: why
    last_submit: dict[tuple[str, str], str] = {}  # each id's job line read last: its key
    het_cols = het_columns(header) if idcol == "JobIDRaw" else None
    ids: list[str] = []
    for place, fields in enumerate(records):
        row = dict(zip(header, fields))
        sid = row[idcol].strip()
        if het_cols:
            sid = component_id(sid, *(row[c].strip() for c in het_cols))
        if not sid:
            report.dropped["empty JobID"] += 1
            continue
        cluster = cluster_of(row)
        jid = (cluster, sid.split(".", 1)[0])  # a step's key is its job's
        if jid in clashing:
            report.dropped[clashing[jid]] += 1
            continue
        attempts = read.setdefault(jid, Attempts())
        if "." in sid:
            attempts.steps.append((last_submit.get(jid), sid, row))
            continue
        key = attempt_key(attempts.lines, row.get("Submit", ""), row)
        known = next(iter(attempts.lines.values()), None)
        if known and _identity(row) != _identity(known[1]):
            # Not a requeue: another user's or name's job under this id, as a job name holding
            # "\n<id>|<user>|..." forges one. Which line is the real job cannot be told.
            ids = ids or [r[header.index(idcol)] for r in records]  # once, at a first clash
            why = clash_reason(row, known[1], ids)
            report.dropped[why] += 1 + len(attempts.lines) + len(attempts.steps)
            del read[jid]
            clashing[jid] = why
        elif key in attempts.lines:
            # The same attempt's line again (two exports joined into one file, s31 tester R4):
            # not a requeue, whose attempts each have their own Submit or run; its steps kept.
            report.notes[SAME_JOB_AGAIN] += 1
            if ended(row) or not ended(attempts.lines[key][1]):
                # an ended line is never older than a running one (s43 H6)
                attempts.lines[key] = (attempts.lines[key][0], row)
        else:
            attempts.lines[key] = (place, row)
        last_submit[jid] = key
    jobs: dict[tuple[str, str], dict] = {}
    steps: dict[tuple[str, str], list[dict]] = {}  # of the attempt kept
    earlier: dict[tuple[str, str], list[dict]] = {}  # a requeued job's earlier attempts' job lines
    early: dict[tuple[str, str], int] = {}  # step lines of an id without a job line
    # One time format for the whole file (SLURM_TIME_FORMAT), never guessed value by value.
    read_time = sacct_time_reader((line[1].get(c) for attempts in read.values()
                                   for line in attempts.lines.values() for c in TIME_COLUMNS),
                                  report)
    places = {}
    for jid, attempts in read.items():
        if not attempts.lines:
            early[jid] = len(attempts.steps)
            continue
        # sacct -D lists every attempt of a requeued job: the job is its last, in its place, as
        # without -D. A note, not a drop: a clean export is not malformed (s32 tester S6).
        places[jid], jobs[jid], earlier_rows, steps[jid] = split_attempts(attempts, read_time)
        if earlier_rows:
            report.notes[EARLIER_ATTEMPT] += len(earlier_rows)
            earlier[jid] = earlier_rows
    order = dict.fromkeys(sorted(jobs, key=places.__getitem__))
    dropped_jobs = set(dropped_jobs)
    for (_, base), count in early.items():
        report.dropped[STEPS_OF_DROPPED if base in dropped_jobs else
                       "step rows without their job line"] += count
    report.facts.extend(clash_facts(clashing, "Cluster" in header))
    shown = shown_ids(order, report)
    # sacct -X: no step lines, and a job line's TotalCPU is then 0 whatever the job used.
    # Any attempt's steps tell it is not -X (s43 tester J11: an earlier attempt's were not).
    cpu_unknown = (not any(read[jid].steps for jid in jobs)) and "TotalCPU" in header
    # s46 tester I9: jobs that never started have no steps, -X or not
    if cpu_unknown and any(jobs[j].get("Start", "").strip() not in BLANK_TIMES for j in jobs):
        report.facts.append("no step lines (sacct -X): TotalCPU 0 read as unknown, and ranks, "
                            "threads and peak_rss_mb unknown; export without -X for them")

    cut = [shown[key] for key in order if key[1] in cut_jobs]
    if cut:
        report.facts.append(f"{len(cut)} job(s) with step lines cut short (jobs "
                            f"{', '.join(cut[:5])}{' ...' if len(cut) > 5 else ''}): ranks, "
                            "threads, peak_rss_mb and step energy unknown, not read from the "
                            "steps left; export again")
    rows = build_rows(order, lambda key: _job_from_sacct_rows(
                          shown[key], jobs[key],
                          [] if key[1] in cut_jobs else steps[key],
                          report, read_time, cpu_unknown, earlier.get(key, ())),
                      report, (ValueError,), lambda exc: f"unparseable value ({_reason(exc)})")
    key_of = {shown[key]: key for key in order}
    for row in rows:
        if key_of[row["job_id"]] in earlier:
            _first_submit(row, earlier[key_of[row["job_id"]]], read_time, report)
    # A REQUEUED job line is an earlier attempt only -D lists (s37 tester J6): -D it is.
    listed_requeue = any(line[1].get("State", "").strip().upper().startswith("REQUEUE")
                         for attempts in read.values() for line in attempts.lines.values())
    if not earlier and not listed_requeue and rows and "Submit" in header and (
            "Restarts" not in header or any((int_or_none(job.get("Restarts")) or 0) > 0
                                            for job in jobs.values())):
        report.facts.append(LAST_ATTEMPT_ONLY)  # not where a Restarts column shows none
    if idcol == "JobIDRaw" and not het_cols:
        say_components_unknown(rows, report)
    return join_components(rows, report)


def _first_submit(row: dict, attempts: list[dict], read_time, report: FileReport) -> None:
    """A requeued job's first submission and first start, from its earlier attempts' job
    lines (sacct -D), kept in ``row`` (:func:`keep_first_submit`, s33 tester A11)."""
    try:
        submits = [read_time(a.get("Submit"), "Submit") for a in attempts]
        starts = [read_time(a.get("Start"), "Start") for a in attempts]
    except ValueError:  # an earlier attempt's time unreadable: the last attempt's kept
        return
    # The earliest, not the first listed: a reversed or sorted file lists them in any order.
    first = lambda times: min((t for t in times if t is not None), default=None)  # noqa: E731
    keep_first_submit(row, first(submits), first(starts), report)


def _identity(row: dict) -> tuple[str, ...]:
    return tuple(row.get(column, "").strip() for column in IDENTITY_COLUMNS)


def _reason(exc: Exception) -> str:
    """Group ValueErrors by their kind, not by the value, so counts add up per reason: the
    parsers end their message with the value quoted ("bad duration '1:xx'"), cut here; any
    other message is cut at its first ": " (where a library puts the value)."""
    text = re.sub(r"""\s*('.*'|".*")$""", "", str(exc))
    return text.split(": ", 1)[0]


def _job_from_sacct_rows(jid: str, job: dict, steps: list[dict], report: FileReport,
                         read_time, cpu_unknown: bool = False, earlier: list = ()) -> dict | None:
    state = job.get("State", "").strip()
    if not state:
        report.dropped["no State column/value"] += 1
        return None
    status = slurm_status(state)
    if status is None:  # kept aside: in another file it may be a job's newest attempt
        return count_not_finished(state, report, array_range(jid), bool(earlier),
                                  unended_attempt(jid, job, read_time, earlier))
    runtime = int_or_none(job.get("ElapsedRaw"))
    runtime_s = float(runtime) if runtime is not None else parse_duration(job.get("Elapsed"))
    # A local time the autumn clock change repeats: the reading its Elapsed fits (s35 T1).
    clock_notes: Counter = Counter()
    chosen = choose_times(*(read_time.readings(job.get(c), c) for c in TIME_COLUMNS),
                          runtime_s, clock_notes)
    if chosen is None:
        report.dropped[NO_READING_FITS] += 1
        return None
    submit, start, end = chosen
    if start is not None and end is not None and end < start:
        # A job cannot end before it starts: one of the two times is wrong, and which cannot
        # be told (the run time may be right, but the start, the wait, or the order are not).
        report.dropped["End before Start"] += 1
        return None

    exit_code, exit_signal = parse_exit(job.get("ExitCode"))
    unstarted_deadline = deadline_unstarted(state, start, end, runtime_s)
    if unstarted_deadline:
        status, start = "cancelled", None
    never_started = never_ran(status, start, end, runtime_s, not steps and (
        not job.get("AllocTRES", "").strip() if "AllocTRES" in job else not cpu_unknown))
    if never_started:
        start = None
    sizes = SizeReader()
    count = sizes.count

    # 0 nodes: a job cancelled before it started holds no allocation (None, not malformed).
    nodes = count(job, "NNodes") or count(job, "AllocNodes") or None
    requested = parse_tres(job.get("ReqTRES"))
    alloc = parse_tres(job.get("AllocTRES")) or requested
    if nodes is None and "node" in alloc:
        nodes = int(alloc["node"])
    cores = count(job, "NCPUS") or count(job, "AllocCPUS")
    if cores is None and "cpu" in alloc:
        cores = int(alloc["cpu"])

    # Ranks and threads come from the widest srun step; a batch-only job is one task.
    ranks = threads = None
    numbered = [s for s in steps if s[_idcol(s)].split(".", 1)[1] not in ("batch", "extern")]
    widest = max(numbered, key=lambda s: count(s, "NTasks") or 0, default=None)
    if widest is None:
        widest = next((s for s in steps if s[_idcol(s)].endswith(".batch")), None)
    if widest is not None:
        ranks = count(widest, "NTasks")
        step_cpus = count(widest, "NCPUS") or count(widest, "AllocCPUS")
        if step_cpus is None:
            step_cpus = int(parse_tres(widest.get("AllocTRES")).get("cpu", 0)) or None
        if ranks and step_cpus:
            threads = max(1, step_cpus // ranks)

    peak = None
    for s in steps:
        # A number without a unit is bytes: sacct --noconvert prints MaxRSS so (slurm_fields).
        b = sizes.memory(s.get("MaxRSS"), BARE_BYTES, "MaxRSS")
        if b is not None:
            peak = max(peak or 0.0, bytes_to_mib(b))

    energy = _sacct_energy(job, steps)
    req_nodes = count(job, "ReqNodes") or (int(requested["node"]) if "node" in requested
                                            else None)
    req_procs = count(job, "ReqCPUS") or (int(requested["cpu"]) if "cpu" in requested else None)
    # A per-node / per-CPU ReqMem times the request's counts where the allocated ones are
    # missing (no such column, or a job that never started: s48 tester P18).
    mem_req_gb, mem_req_unknown = sizes.mem_req_gb(job.get("ReqMem"), nodes or req_nodes,
                                                   cores or req_procs)
    limit_raw = job.get("TimelimitRaw", "").strip()
    bare_minutes = False
    if limit_raw.isdigit():
        time_limit_s = float(limit_raw) * 60
    else:
        time_limit_s, bare_minutes = parse_time_limit(job.get("Timelimit"))
    cpu_s = parse_duration(job.get("TotalCPU"))
    if cpu_unknown and not cpu_s:
        cpu_s = None

    # Notes last: every value above parsed, so a job dropped as malformed adds none.
    time_limit_s = limit_or_none(time_limit_s, report)
    if bare_minutes:
        report.notes[BARE_MINUTES] += 1
    report.notes.update(clock_notes)
    if unstarted_deadline:
        report.notes[DEADLINE_UNSTARTED] += 1
    if mem_req_unknown:
        report.notes[mem_req_unknown] += 1
    sizes.say(report.notes)
    status = oom_from_steps(status, [s.get("State", "") for s in steps], report)
    status = oom_from_memory_kill(
        status, [exit_signal] + [parse_exit(s.get("ExitCode"))[1] for s in steps], peak,
        mem_req_gb, nodes, report)

    return job_row(
        job_id=jid, workload=job.get("JobName", ""), user=job.get("User", ""),
        partition=job.get("Partition", ""), nodes=nodes, ranks=ranks, threads=threads,
        cores=cores, status=status,
        # No TRES column (a CSV export of a few fields): how many GPUs is not known.
        gpus=gpus_from_tres(alloc) if {"AllocTRES", "ReqTRES"} & set(job) else None, state=state,
        exit_code=exit_code, exit_signal=exit_signal, runtime_s=runtime_s,
        cpu_s=cpu_s, peak_rss_mb=peak, energy_j=energy,
        submit_time=submit, start_time=start, end_time=end,
        time_limit_s=time_limit_s, mem_req_gb=mem_req_gb,
        account=job.get("Account", "").strip() or None, queue=job.get("QOS", "").strip() or None,
        req_nodes=req_nodes, req_procs=req_procs,
        req_gpus=gpus_from_tres(requested) if requested else None,
        cluster=(job.get("Cluster") or "").strip(),
        raw_id=(job.get("JobIDRaw") or "").strip() or None)


def _idcol(row: dict) -> str:
    return "JobID" if "JobID" in row else "JobIDRaw"


def _sacct_energy(job: dict, steps: list[dict]) -> float | None:
    """Joules: the job line if it has them, else the extern step (it spans the allocation),
    else the srun steps summed, else the batch step. 0 means "no energy plugin" -> None."""

    def joules(row: dict | None) -> float | None:
        if row is None:
            return None
        v = (row.get("ConsumedEnergyRaw") or "").strip()
        if not v:
            return None
        j = float(v)
        return j if j > 0 else None

    def step(name: str) -> dict | None:
        return next((s for s in steps if s[_idcol(s)].endswith("." + name)), None)

    for value in (joules(job), joules(step("extern"))):
        if value:
            return value
    numbered = [joules(s) for s in steps
                if s[_idcol(s)].split(".", 1)[1] not in ("batch", "extern")]
    total = sum(v for v in numbered if v)
    return total or joules(step("batch"))
