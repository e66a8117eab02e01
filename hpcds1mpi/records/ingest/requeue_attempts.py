"""A requeued job's attempts in one sacct file: which one is the job, and whose steps are whose.

``sacct -D`` lists every attempt of a requeued job, oldest first, each followed by its own
steps; a file joined newest first, reversed (``tac``) or sorted (``sort -u``, ``sort -V``)
lists them in any order. So attempts are ordered by their own times, never by their place in
the file (s43 tester J1): by Submit (a requeue resets it, but not always to another second:
:func:`attempt_key`), then Start and End, as
:mod:`.same_jobs` orders attempts found in several files. The job is the newest attempt; the
others are its earlier attempts. Where the newest has not ended (running or pending again
after a requeue), neither has the job: an earlier attempt that ended (NODE_FAIL, PREEMPTED)
had been taken for it, its end for the job's (s43 review R1); ``--json`` reads it so too. A
step belongs to the attempt whose run, Start to End, holds the step's Start (s43 tester J11);
a step whose Start tells nothing goes with the job line read last before it, as ``-D`` lists
them, else with the job.
"""

from __future__ import annotations

from .slurm_fields import NOT_FINISHED


class Attempts:
    """One job id's job lines (one per Submit: an attempt) and step lines, as read."""

    __slots__ = ("lines", "steps")

    def __init__(self) -> None:
        # By :func:`attempt_key` (the Submit text): (place in file, row).
        self.lines: dict[str, tuple[int, dict]] = {}
        # Each step line: the Submit of the job line read last before it (None: none yet),
        # the step's id, the row.
        self.steps: list[tuple[str | None, str, dict]] = []


def attempt_key(lines: dict[str, tuple[int, dict]], submit: str, row: dict) -> str:
    """The key of a job line among its id's attempts read so far (``lines``): its Submit text,
    which the same line given again shares (two exports joined; an attempt read running in
    one and ended in the other). Two ended lines of one Submit that ran at other times are
    two attempts, a requeue within the second of the submission (s48 tester P17: the one
    listed last had been kept as the same line again): the second keyed by its run too."""
    known = lines.get(submit)
    if known is None or not (ended(row) and ended(known[1])) or _run(row) == _run(known[1]):
        return submit
    return "\n".join((submit, *_run(row)))  # no Submit text holds a newline


def ended(row: dict) -> bool:
    """Whether a job line's State is one a job ends in (not pending, running, requeued)."""
    state = row.get("State", "").strip()
    return bool(state) and state.split()[0].upper().rstrip("+") not in NOT_FINISHED


def _run(row: dict) -> tuple[str, str]:
    return row.get("Start", "").strip(), row.get("End", "").strip()


def split_attempts(attempts: Attempts, read_time) -> tuple[int, dict, list[dict], list[dict]]:
    """(place, row) of the attempt that is the job (the newest), its earlier attempts' rows,
    and the job's step lines (the same step listed twice kept once, the last)."""
    lines = list(attempts.lines.values())
    if len(lines) == 1:  # the common case: no time read
        place, row = lines[0]
        return place, row, [], _once(attempts.steps)
    # Each attempt's (Submit, Start, End), read once: (known, time) pairs, so that an unknown
    # time sorts first and is never compared with a time.
    timed = sorted(((tuple(_time(row, column, read_time) for column in ("Submit", "Start", "End")),
                     place, submit, row) for submit, (place, row) in attempts.lines.items()),
                   key=lambda line: (tuple((t is not None, t or 0) for t in line[0]), line[1]))
    kept = timed[-1]
    earlier = [line[3] for line in timed if line is not kept]
    spans = [(submit, times[1], times[2]) for times, _, submit, _ in timed]
    mine = [line for line in attempts.steps
            if _owner(line[2], line[0], spans, read_time, kept[2]) == kept[2]]
    return kept[1], kept[3], earlier, _once(mine)


def _owner(step: dict, read_after, spans, read_time, kept_submit: str) -> str:
    """The Submit of the attempt a step line belongs to."""
    start = _time(step, "Start", read_time)
    if start is not None:
        holding = [submit for submit, begun, end in spans
                   if begun is not None and begun <= start and (end is None or start <= end)]
        if holding:
            return holding[-1]  # the latest begun: an attempt ends where the next may start
    return read_after if read_after is not None else kept_submit


def _once(steps) -> list[dict]:
    kept: dict[str, dict] = {}
    for _, sid, step in steps:
        kept.pop(sid, None)  # two exports joined into one file: the same step kept once, the last
        kept[sid] = step
    return list(kept.values())


def _time(row: dict, column: str, read_time):
    try:
        return read_time(row.get(column), column)
    except ValueError:  # unreadable: tells nothing, as an unknown time
        return None


def unended_attempt(jid: str, job: dict, read_time, earlier=()) -> dict:
    """A job line that has not ended as the merge of several files compares it with another
    file's attempts (:func:`.same_jobs.keep_once`): its id, identity and times, by
    ``read_time`` (an unreadable time: None), and its job's first submission from the
    ``earlier`` attempts' job lines (sacct -D) by :func:`with_first_submission`."""
    def at(row: dict, column: str):
        try:
            return read_time(row.get(column), column)
        except ValueError:
            return None
    attempt = {"job_id": jid, "raw_id": (job.get("JobIDRaw") or "").strip() or None,
               "user": job.get("User", "").strip(), "workload": job.get("JobName", "").strip(),
               "cluster": (job.get("Cluster") or "").strip() or None,
               "submit_time": at(job, "Submit"), "start_time": at(job, "Start")}

    def first(column: str):
        return min((t for t in (at(row, column) for row in earlier) if t is not None),
                   default=None)
    return with_first_submission(attempt, first("Submit"), first("Start"))


def with_first_submission(attempt: dict, first_submit=None, first_start=None) -> dict:
    """``attempt`` (a line not ended, :func:`unended_attempt`) with what the -D reader keeps for
    an ended requeued job (:func:`.slurm_fields.keep_first_submit`): ``_first_submit_s``, the
    seconds from the job's first submission to this attempt's own Submit, and ``wait_s``, the
    wait from that submission to the first start of any attempt (None: unknown), given the
    earlier attempts' first submission and start (None: none, or unknown). Across files the
    attempt's ended copy, in a newer export without -D, then keeps them (s45 FY4 J1: it had
    the re-run's Submit and wait)."""
    own_submit, own_start = attempt["submit_time"], attempt["start_time"]
    submit = min((t for t in (first_submit, own_submit) if t is not None), default=None)
    start = min((t for t in (first_start, own_start) if t is not None), default=None)
    known = submit is not None and own_submit is not None
    attempt["_first_submit_s"] = (own_submit - submit).total_seconds() if known else 0.0
    attempt["wait_s"] = ((start - submit).total_seconds()
                         if submit is not None and start is not None else None)
    return attempt
