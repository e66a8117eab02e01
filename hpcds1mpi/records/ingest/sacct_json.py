"""``sacct --json``: the 22.05 layout (``openapi/dbv0.0.38``) and the newer ones
(``data_parser/v0.0.39+``, where numbers are ``{"set", "infinite", "number"}``)."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

from hpcds1mpi.errors import IngestError

from .cluster_ids import shown_ids
from .het_jobs import join_components
from .requeue_attempts import with_first_submission
from .schema import FileReport, build_rows, bytes_to_mib, job_row
from .text_encoding import read_log_text
from .slurm_fields import (DEADLINE_UNSTARTED, EARLIER_ATTEMPT, count_not_finished,
                           deadline_unstarted, keep_first_submit, limit_or_none, never_ran,
                           oom_from_memory_kill, oom_from_steps, slurm_status)


def _num(value):
    """Unwrap ``{"set": bool, "infinite": bool, "number": x}`` (data_parser v0.0.39+).

    Raises:
        ValueError: NaN or Infinity (Python's JSON reads them; the job is counted malformed).
    """
    if isinstance(value, dict):
        if not value.get("set", True) or value.get("infinite", False):
            return None
        value = value.get("number")
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"non-finite number {value}")
    return value


def _first(value):
    """State and status fields are strings in 22.05 and lists of flags later."""
    if isinstance(value, list):
        return value[0] if value else ""
    return value or ""


def _signal(exit_code: dict | None):
    """The signal number of a job's or step's ``exit_code`` (None: none)."""
    sig = (exit_code or {}).get("signal") or {}
    return _num(sig.get("signal_id", sig.get("id")))


def _job_id(job: dict) -> str:
    """The job's id as sacct -P's JobID writes it: ``9_2`` for an array task, ``9_[1-5%2]``
    for the one entry of an array's tasks that never ran (pending, or cancelled before any
    ran: s48 tester P4, the same array was ``9`` here and ``9_[1-5]`` in -P, two jobs), ``15+1``
    for a heterogeneous job's component (JSON gives each component its own raw id, 16)."""
    array = job.get("array") or {}
    task = _num(array.get("task_id"))
    array_id = _num(array.get("job_id"))
    if array_id and task is not None:
        return f"{array_id}_{task}"
    tasks = _task_range(array)
    if tasks:
        return f"{array_id}_[{tasks}]"
    het = job.get("het") or {}
    het_id, offset = _num(het.get("job_id")), _num(het.get("job_offset"))
    if het_id and offset is not None:
        return f"{het_id}+{offset}"
    return str(job["job_id"])


def _task_range(array: dict) -> str | None:
    """The tasks of an array entry that stands for tasks not run, as sacct -P writes them
    (``1,3-4%2``; ``%N`` its limit of tasks run at once), else None. ``array.task`` is
    Slurm's stored bitmap in hex (``0x1A``: tasks 1, 3 and 4); a range is taken as it is."""
    text = array.get("task")
    if (not isinstance(text, str) or not text.strip() or not _num(array.get("job_id"))
            or _num(array.get("task_id")) is not None):
        return None
    text = text.strip()
    if text.lower().startswith("0x"):
        try:
            bits = int(text, 16)
        except ValueError:
            return None
        runs: list[list[int]] = []  # [first, last] of each run of set bits
        for i in (i for i in range(bits.bit_length()) if bits >> i & 1):
            if runs and runs[-1][1] == i - 1:
                runs[-1][1] = i
            else:
                runs.append([i, i])
        text = ",".join(f"{a}-{b}" if b > a else f"{a}" for a, b in runs)
    if not text:
        return None
    running = ((array.get("limits") or {}).get("max") or {}).get("running") or {}
    limit = _num(running.get("tasks"))
    return f"{text}%{limit}" if limit and "%" not in text else text


def _json_version(doc: dict) -> tuple[int, int, str]:
    meta = doc.get("meta", {})
    slurm = meta.get("Slurm") or meta.get("slurm") or {}
    ver = slurm.get("version", {})
    try:
        major, minor = int(ver.get("major")), int(ver.get("minor"))
    except (TypeError, ValueError):
        major = minor = 0
    plugin = meta.get("plugin", {})
    parser = plugin.get("data_parser") or plugin.get("type") or ""
    return major, minor, parser


#: Why a FAILED job's exit code SUCCESS/0 is read as missing.
OLD_EXIT_CODES = "22.05 --json exit code unreliable (set to missing; use sacct -P)"
NO_VERSION_EXIT_CODES = ("FAILED job with exit code SUCCESS/0 in a --json export without its "
                         "meta block (no Slurm version; 22.05 writes SUCCESS/0 for every "
                         "non-zero exit): set to missing; keep meta in a filtered export, or "
                         "use sacct -P")


def read_sacct_json(path: str | Path) -> tuple[list[dict], FileReport]:
    """Read ``sacct --json`` into one dict per job (22.05 and newer layouts)."""
    path = Path(path)
    report = FileReport(str(path), "sacct-json")
    try:
        text = read_log_text(path, report.facts)
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        if not text[exc.pos:].strip() or exc.msg.startswith("Unterminated string"):
            # s31 tester R7: the text ends where a value or a closing quote should be
            raise IngestError(f"{path}: the JSON ends before it is complete (the file was cut "
                              "short); export it again with sacct --json") from None
        if exc.msg == "Extra data" and text[exc.pos:].lstrip().startswith("{"):
            # s46 tester I3: a second document after the first, as `cat a.json b.json` makes
            raise IngestError(f"{path}: a second JSON document at line {exc.lineno} (two "
                              "sacct --json exports joined into one file); give each export "
                              "as its own file") from None
        raise IngestError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno})") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("jobs"), list):
        raise IngestError(f"{path}: JSON without a 'jobs' list; not sacct --json output")
    from .other_logs import flux_json

    flux = flux_json(path, doc["jobs"])  # s37 tester J3: "unparseable job entry (TypeError)"
    if flux:
        raise IngestError(flux)
    major, minor, parser = _json_version(doc)
    # 22.05 (openapi/dbv0.0.38 and older) loses non-zero exit codes. Without meta (a jq filter
    # keeps only the jobs: s48 tester P9) the version is unknown, and FAILED with SUCCESS/0
    # is read as 22.05's, in any version a contradiction: FAILED jobs had exit code 0.
    if (0, 0) < (major, minor) <= (22, 5) or re.search(r"v0\.0\.3[0-8]$", parser):
        lost_exit = OLD_EXIT_CODES
    else:
        lost_exit = NO_VERSION_EXIT_CODES if (major, minor) == (0, 0) and not parser else None
    report.records += len(doc["jobs"])
    kept, firsts = _last_attempts(doc["jobs"], report)
    shown = shown_ids([key for _, key in kept if key is not None], report)
    out = build_rows(kept, lambda pair: _job_from_json(pair[0], report, lost_exit,
                                                       shown.get(pair[1]), firsts.get(pair[1])),
                     report,
                     (ValueError, TypeError, KeyError, AttributeError),
                     lambda exc: f"unparseable job entry ({type(exc).__name__})")
    firsts = {shown[key]: times for key, times in firsts.items() if key in shown}
    for row in out:
        if row["job_id"] in firsts:
            keep_first_submit(row, *firsts[row["job_id"]], report)
    return join_components(out, report), report


#: s37 tester J1: one cluster's entries of one id whose user or name differ.
TWO_JOBS_ONE_ID_JSON = ("entry of two different jobs under one id of one cluster (user or name "
                        "differ: an id reused after a reset, or a corrupt or edited export)")


def _last_attempts(jobs: list, report: FileReport) -> tuple[list, dict]:
    """The jobs without the earlier attempts of a requeued job, as ``(entry, key)`` pairs
    (key: (cluster, id), :mod:`.cluster_ids`; None where the id cannot be read): --json lists
    each attempt under one id (the earlier ones REQUEUED); the newest by its own times
    (:func:`_attempts_in_time_order`) is the job, as sacct -P without -D shows it, the others
    counted in a note, not as malformed (s32 tester S6: a clean export read as half corrupt). Entries of one key are one job's attempts
    only where user and name agree, as the -P reader decides (s37 tester J1: another cluster's
    job, or another user's, had been merged in as a "requeue", taking its submit time); where
    they differ which is the job cannot be told, and every entry of that key is dropped,
    named. An entry whose id cannot be read is kept, for :func:`_job_from_json` to count.
    With them, per requeued job's key, its first attempt's submission and the first start of
    an attempt (:func:`_first_times`, s33 tester A11)."""
    keys = []
    for job in jobs:
        try:
            keys.append((str(job.get("cluster") or ""), _job_id(job)))
        except (TypeError, KeyError, AttributeError, ValueError):
            keys.append(None)
    who: dict = {}
    clashing: dict = {}
    for job, key in zip(jobs, keys):
        if key is not None and who.setdefault(key, _identity(job)) != _identity(job):
            clashing[key] = None
    if clashing:
        report.dropped[TWO_JOBS_ONE_ID_JSON] += sum(key in clashing for key in keys)
        named = [jid for _, jid in clashing]
        report.facts.append(f"{len(named)} id(s) with two different jobs (user or name differ) "
                            f"dropped, every entry of them: jobs {', '.join(named[:5])}"
                            f"{' ...' if len(named) > 5 else ''}; check them with "
                            "sacct -D -j ID")
        left = [i for i, key in enumerate(keys) if key not in clashing]
        jobs, keys = [jobs[i] for i in left], [keys[i] for i in left]
    attempts = _attempts_in_time_order(jobs, keys, report)
    newest = {each[-1] for each in attempts.values()}
    kept = [(job, key) for i, (job, key) in enumerate(zip(jobs, keys))
            if key is None or i in newest]
    earlier = sum(len(each) - 1 for each in attempts.values())
    if earlier:
        report.notes[EARLIER_ATTEMPT] += earlier
    firsts = {key: _first_times([jobs[i] for i in each]) for key, each in attempts.items()
              if len(each) > 1}
    return kept, {key: times for key, times in firsts.items() if times is not None}


#: The same attempt listed twice in one document (exports merged with jq).
SAME_ENTRY_AGAIN = ("the same job entry again (same id and submission: exports merged into "
                    "one document), kept once")


def _attempts_in_time_order(jobs: list, keys: list, report: FileReport) -> dict[tuple, list]:
    """By key, the places in ``jobs`` of its attempts, ordered by their own times (submission,
    which a requeue resets, then start and end; an unknown time first; then by place), never
    by their place alone: exports merged with jq, or sorted, list them in any order (s48
    tester P14: the REQUEUED attempt listed last was taken for the job, the COMPLETED one
    dropped). An entry of a submission already listed is that attempt again, counted under
    :data:`SAME_ENTRY_AGAIN`: the ended one kept (of two, the one listed last), as the -P
    reader keeps a line listed again."""
    by_submit: dict[tuple, dict] = {}
    for i, key in enumerate(keys):
        if key is None:
            continue
        seen = by_submit.setdefault(key, {})
        submit = _time_of(jobs[i], "submission")
        if submit in seen:
            report.notes[SAME_ENTRY_AGAIN] += 1
            if _ended(jobs[i]) or not _ended(jobs[seen[submit]]):
                seen[submit] = i
        else:
            seen[submit] = i

    def when(i: int) -> tuple:
        times = (_time_of(jobs[i], field) for field in ("submission", "start", "end"))
        return tuple((t is not None, t or 0.0) for t in times), i

    return {key: sorted(seen.values(), key=when) for key, seen in by_submit.items()}


def _time_of(job: dict, field: str) -> float | None:
    """An entry's ``time.<field>``, epoch seconds (None: unknown, 0, or unreadable)."""
    try:
        return float(_num((job.get("time") or {}).get(field)) or 0) or None
    except (TypeError, ValueError, AttributeError):
        return None


def _ended(job: dict) -> bool:
    """Whether an entry's state is one a job ends in (an unreadable one: no)."""
    try:
        return slurm_status(_first(job["state"]["current"])) is not None
    except (TypeError, ValueError, KeyError, AttributeError):
        return False


def _identity(job: dict) -> tuple:
    """What every attempt of one job shares (its submission does not: a requeue resets it)."""
    return tuple(str(job.get(field) or "") for field in ("user", "name"))


def _first_times(attempts: list) -> tuple | None:
    """(the first known submission, the first start of any attempt) of one job's attempts,
    oldest first (:func:`_attempts_in_time_order`); None where they cannot be read."""
    import pandas as pd

    def when(job: dict, key: str):
        value = _num((job.get("time") or {}).get(key))
        return pd.Timestamp(int(value), unit="s").to_pydatetime() if value else None

    try:
        starts = [when(job, "start") for job in attempts]
        submits = [when(job, "submission") for job in attempts]
        return next((t for t in submits if t), None), next((t for t in starts if t), None)
    except (TypeError, ValueError, AttributeError, OverflowError):
        return None


def _job_from_json(job: dict, report: FileReport, lost_exit: str | None,
                   jid: str | None = None, firsts: tuple | None = None) -> dict | None:
    """One job's row; ``lost_exit`` the note under which a FAILED job's exit code SUCCESS/0
    is read as missing (None: read as written); ``jid`` its job-table id
    (:func:`.cluster_ids.shown_ids`; None: its own id, read here); ``firsts`` a requeued job's
    first submission and first start (:func:`_first_times`), which a line not ended keeps for
    the merge of several files."""
    import pandas as pd

    state = _first(job["state"]["current"])
    status = slurm_status(state)
    def ts(v):
        v = _num(v)
        return pd.Timestamp(int(v), unit="s") if v else None

    t = job.get("time", {})
    if status is None:  # kept aside: in another file it may be a job's newest attempt
        count_not_finished(state, report, _task_range(job.get("array") or {}),
                           attempt=with_first_submission({
                               "job_id": _job_id(job) if jid is None else jid,
                               "raw_id": (str(job["job_id"]) if _num(job.get("job_id"))
                                          is not None else None),
                               "user": job.get("user", ""), "workload": job.get("name", ""),
                               "cluster": str(job.get("cluster") or "") or None,
                               "submit_time": ts(t.get("submission")),
                               "start_time": ts(t.get("start"))}, *(firsts or ())))
        return None
    start, end = ts(t.get("start")), ts(t.get("end"))
    if start is not None and end is not None and end < start:
        report.dropped["End before Start"] += 1  # as sacct_text: which one is wrong is unknown
        return None
    ex = job.get("exit_code") or {}
    exit_status = _first(ex.get("status"))
    exit_code = _num(ex.get("return_code"))
    exit_signal = _signal(ex)
    if exit_status == "SIGNALED":
        exit_code = exit_code if exit_code is not None else 0
    else:
        exit_signal = exit_signal or 0
    if lost_exit and exit_status == "SUCCESS" and state == "FAILED":
        # 22.05's openapi/dbv0.0.38 writes SUCCESS/0 for every normal non-zero exit.
        exit_code = None
        report.notes[lost_exit] += 1

    runtime_s = _num(t.get("elapsed"))
    if deadline_unstarted(state, start, end, runtime_s):  # as -P reads it (s48 tester P6)
        status, start = "cancelled", None
        report.notes[DEADLINE_UNSTARTED] += 1
    alloc = {}
    for item in (job.get("tres") or {}).get("allocated") or []:
        key = item["type"] + (f"/{item['name']}" if item.get("name") else "")
        if _num(item.get("count")) is not None:
            alloc[key] = float(_num(item["count"]))
    requested = {}
    for item in (job.get("tres") or {}).get("requested") or []:
        key = item.get("type", "") + (f"/{item['name']}" if item.get("name") else "")
        if _num(item.get("count")) is not None:
            requested[key] = float(_num(item["count"]))
    nodes = _num(job.get("allocation_nodes")) or alloc.get("node") or requested.get("node")
    nodes = int(nodes) if nodes else None
    if never_ran(status, start, end, runtime_s, not job.get("steps") and not alloc
                 and not _num(job.get("allocation_nodes"))):
        start = None  # cancelled while held or pending (s31 tester R6)
    cores = int(alloc["cpu"]) if "cpu" in alloc else _num((job.get("required") or {}).get("CPUs"))

    steps = job.get("steps") or []
    # One flag per step, not a membership test against the list of numbered steps, which
    # compared whole dicts (s32 tester S1: 3 jobs of 2,000 steps took 34 s).
    is_numbered = [str(s["step"].get("name")) not in ("batch", "extern")
                   and str(s["step"].get("id")) not in ("batch", "extern") for s in steps]
    numbered = [s for s, flag in zip(steps, is_numbered) if flag]
    ranks = threads = None
    widest = max(numbered, key=lambda s: _num((s.get("tasks") or {}).get("count")) or 0,
                 default=None)
    if widest is None:
        widest = next((s for s in steps if s["step"].get("name") == "batch"), None)
    if widest is not None:
        ranks = _num((widest.get("tasks") or {}).get("count"))
        step_cpus = next((_num(i.get("count")) for i in
                          ((widest.get("tres") or {}).get("allocated") or [])
                          if i.get("type") == "cpu"), None)
        if ranks and step_cpus:
            threads = max(1, int(step_cpus) // int(ranks))

    def step_energy(s):
        e = _num(((s.get("statistics") or {}).get("energy") or {}).get("consumed"))
        return float(e) if e and e > 0 else None

    energies = [step_energy(s) for s in steps]
    extern = [step_energy(s) for s in steps if s["step"].get("name") == "extern"]
    energy = (extern[0] if extern and extern[0] else
              sum(e for flag, e in zip(is_numbered, energies) if e and flag) or
              next((e for s, e in zip(steps, energies) if e and s["step"].get("name") == "batch"),
                   None))

    limit = _num(t.get("limit"))
    mem_mb = requested.get("mem") or alloc.get("mem")
    # A step's TRES usage maximum ("requested" in the JSON) of mem is its MaxRSS, bytes.
    peak = max((bytes_to_mib(float(_num(i.get("count")))) for s in steps
                for i in (((s.get("tres") or {}).get("requested") or {}).get("max") or [])
                if i.get("type") == "mem" and _num(i.get("count")) is not None), default=None)
    status = oom_from_steps(status, [_first(s.get("state")) for s in steps], report)
    signals = [exit_signal] + [_signal(s.get("exit_code")) for s in steps]
    status = oom_from_memory_kill(status, signals, peak, mem_mb / 1000 if mem_mb else None,
                                  nodes, report)

    gpus = int(alloc.get("gres/gpu", 0))
    name = job.get("name", "")
    jid = _job_id(job) if jid is None else jid
    return job_row(
        job_id=jid, workload=name, user=job.get("user", ""), partition=job.get("partition", ""),
        nodes=nodes, ranks=ranks, threads=threads, cores=cores, gpus=gpus, status=status,
        state=state, exit_code=exit_code, exit_signal=exit_signal,
        runtime_s=float(runtime_s) if runtime_s is not None else None,
        cpu_s=None,  # job-level CPU time is 0 in 22.05 JSON; sacct -P TotalCPU has it
        peak_rss_mb=peak, energy_j=energy, submit_time=ts(t.get("submission")),
        start_time=start, end_time=end,
        time_limit_s=limit_or_none(float(limit) * 60, report) if limit is not None else None,
        mem_req_gb=mem_mb / 1000 if mem_mb else None,
        account=job.get("account") or None, queue=_first(job.get("qos")) or None,
        req_nodes=int(requested["node"]) if "node" in requested else None,
        req_procs=int(requested["cpu"]) if "cpu" in requested else
        _num((job.get("required") or {}).get("CPUs")),
        req_gpus=int(requested.get("gres/gpu", 0)) if requested else None,
        cluster=str(job.get("cluster") or ""),
        raw_id=str(job["job_id"]) if _num(job.get("job_id")) is not None else None)

