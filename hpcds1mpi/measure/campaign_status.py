"""``campaign status``: what each part of a campaign holds, from its files and the scheduler.

A part's state, in this order:

* ``done``: every configuration of the part is recorded with a status of a finished run (any
  status but ``interrupted``: a ``timeout`` or ``oom`` is a measurement, not a missing run),
  in its shard or in the merged file (a shard removed after the merge is not measured again);
* ``running`` / ``queued``: the scheduler lists the part's array task (``squeue``) as running
  or pending (with squeue's reason; one that never starts as submitted, :data:`NEVER_STARTS`,
  says so and what to do: s33 tester A4), or a sweep holds the shard's write lock;
* ``failed``: the part's last sweep ended by itself with a non-zero exit code
  (``parts/PART.exit``: the sweep failed, e.g. a launch error) before its plan was done, or
  its job ended (sacct) before the sweep wrote anything (at start: a log folder Slurm could
  not open, a prolog; resubmitting may fail the same way);
* ``interrupted``: the shard holds some runs but its sweep never said how it ended (the job
  was cancelled, killed by its walltime or lost with its node: the batch shell died with it),
  or its job was stopped so (sacct: cancelled, timed out) before the sweep wrote anything;
* ``missing``: nothing of the part was ever written.

The scheduler's part: the job ids ``campaign resubmit`` and ``submit.sh`` record in the
manifest, and the jobs squeue lists under the part scripts' job names whose script is this
folder's (a plain ``sbatch n2.sbatch``). Where squeue cannot be asked, a part that is not done
may still be queued or running: status says so instead of advising ``resubmit``.

``campaign resubmit`` submits the parts that are failed, interrupted or missing.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from hpcds1mpi.measure import campaign as cm
from hpcds1mpi.measure.campaign_damaged import damaged_line
from hpcds1mpi.measure.campaign_edits import edited_line, source_plan_line
from hpcds1mpi.measure.campaign_endings import timeout_lines
from hpcds1mpi.measure.campaign_merged import merge_jobs, merged_runs, unmerged_line
from hpcds1mpi.measure.campaign_nodes import over_nodes_line
from hpcds1mpi.measure.campaign_place import moved_line
from hpcds1mpi.measure.pending_reasons import never_starts

#: Part states that ``resubmit`` submits again.
TO_SUBMIT = ("missing", "failed", "interrupted")
#: Part states of a part the scheduler still holds.
ACTIVE = ("running", "queued")
#: squeue job states, as a part state.
_SQUEUE = {"PENDING": "queued", "CONFIGURING": "running", "RUNNING": "running",
           "COMPLETING": "running", "SUSPENDED": "running", "REQUEUED": "queued",
           "RESIZING": "running"}


@dataclass
class PartStatus:
    """One part's state and what its shard holds."""

    name: str
    nodes: int
    index: int
    state: str
    planned: int
    recorded: int = 0
    statuses: dict = field(default_factory=dict)
    exit_code: int | None = None
    job: str = ""
    only_merged: int = 0
    #: Why the scheduler could not be asked whether it holds this part ("" when it was, or
    #: the part is done): a part shown missing or interrupted may then be queued or running.
    unasked: str = ""
    #: squeue's reason of a pending part ("Priority", "MaxMemPerLimit"); "" otherwise.
    reason: str = ""
    #: Its job's log in the campaign folder ("logs/n2-100_1.out"), set where it failed.
    log: str = ""
    #: How its recorded job ended before its sweep wrote anything (sacct's state and exit
    #: code, "FAILED 0:53"); "" otherwise.
    ended: str = ""
    #: How long that job ran, s (sacct's ElapsedRaw; None where sacct did not say).
    ran_s: int | None = None
    #: Its shard file, relative to the campaign folder.
    shard: str = ""
    #: Why its shard cannot be read ("not an HDF5 file"; :mod:`.campaign_damaged`), or "".
    damaged: str = ""

    def line(self) -> str:
        held = ", ".join(f"{k} {v}" for k, v in sorted(self.statuses.items()))
        text = f"{self.name:<8} {self.state:<12} {self.recorded}/{self.planned} configurations"
        if held:
            text += f" ({held})"
        if self.only_merged:
            text += f"; {self.only_merged} only in the merged file (not in its shard)"
        if self.exit_code is not None and self.state == "failed":
            text += f"; its sweep exited {self.exit_code} (see {self.log or 'logs/'})"
        if self.damaged:
            text += f"; {self.shard} is {self.damaged} (move it aside and resubmit)"
        if self.ended:
            text += f"; job {self.job} {self.ending()}"
        elif self.job:
            text += f"; job {self.job}"
        if self.reason and self.state == "queued":
            never = " (never starts as submitted)" if never_starts(self.reason) else ""
            text += f", pending: {self.reason}{never}"
        return text


    def ending(self) -> str:
        """How its job ended before its sweep recorded anything, said as sacct tells it: a job
        cancelled while its sweep ran was said to fail "before its sweep started" (s34 tester
        O3)."""
        state = self.ended.split(" ")[0]
        ran = self.ran_s is not None and self.ran_s > 0
        see = f" (see {self.log})" if self.log else ""
        if state == "CANCELLED" and ran:
            return f"was cancelled after {self.ran_s} s, while its sweep ran; nothing " \
                f"recorded{see}"
        if state == "CANCELLED":
            return "was cancelled before it started; nothing recorded" if self.ran_s == 0 \
                else f"was cancelled before its sweep recorded anything{see}"
        if state == "TIMEOUT" and self.recorded:
            return f"reached its time limit (TIMEOUT) after {self.ran_s or 0} s{see}"
        if state == "TIMEOUT":
            return (f"reached its time limit (TIMEOUT) after {self.ran_s or 0} s, while its "
                    f"sweep ran; nothing recorded: a configuration outlasted the limit or "
                    f"hung{see}")
        if ran:
            return f"ended {self.ended} after {self.ran_s} s, while its sweep ran; nothing " \
                f"recorded{see}"
        return f"ended {self.ended} before its sweep started"

    @property
    def failed_at_start(self) -> bool:
        """Its job ended by itself before its sweep started (nothing ran: Slurm could not
        start it)."""
        return bool(self.ended) and self.state == "failed" and not self.ran_s



def active_tasks(manifest: dict, folder: str | Path,
                 env: dict | None = None) -> dict[tuple[int, int], tuple] | None:
    """The parts the scheduler still holds: ``(nodes, index) -> (state, job id, squeue's
    reason)``; None when
    it cannot be asked (a Slurm campaign where squeue is missing or does not answer).

    Slurm's ``squeue -r`` (one line per array task) is asked for the job ids the manifest
    records, and for the jobs named as the campaign's part scripts whose script is this
    folder's (``bash submit.sh`` or a plain ``sbatch n2.sbatch`` record nothing). Under PBS
    nothing is known to be active and the files alone decide.
    """
    if manifest["scheduler"] != "slurm":
        return {}
    if not _has_squeue(env):
        return None
    owner = {}
    for sub in manifest["submissions"]:
        if "nodes" in sub and sub.get("job_id"):
            for index in sub.get("indices", []):
                owner[f"{sub['job_id']}_{index}"] = (int(sub["nodes"]), int(index))
    active = {}
    if owner:
        rows = _squeue(["-j", ",".join(sorted({key.split("_")[0] for key in owner}))],
                       "%i|%T|%r", env, fields=3)
        if rows is None:
            return None
        for task, state, reason in rows:
            if task in owner:
                active[owner[task]] = (state, task, reason)
    found = _named_tasks(manifest, Path(folder), env)
    if found is None:
        return None
    for key, held in found.items():
        active.setdefault(key, held)
    return active


def _named_tasks(manifest: dict, folder: Path,
                 env: dict | None) -> dict[tuple[int, int], tuple] | None:
    """The array tasks squeue lists under a part script's job name whose batch script is
    that script of ``folder`` (another campaign's jobs may share the name); None when squeue
    does not answer."""
    import os

    scripts = {}
    for nodes, job in manifest["jobs"].items():
        path = folder / job["script"]
        name = cm.sbatch_value(path, "job-name", "J")  # None: unreadable, so no name
        if name:
            scripts[os.path.realpath(path)] = (int(nodes), name)
    if not scripts:
        return {}
    rows = _squeue(["--name=" + ",".join(sorted({name for _, name in scripts.values()}))],
                   "%i|%T|%Z|%o|%r", env, fields=5)
    if rows is None:
        return None
    indices = {(p["nodes"], p["index"]) for p in manifest["parts"]}
    found = {}
    for task, state, workdir, command, reason in rows:
        script = scripts.get(os.path.realpath(os.path.join(workdir, command)))
        job, _, index = task.partition("_")
        if script and index.isdigit() and (script[0], int(index)) in indices:
            found[(script[0], int(index))] = (state, task, reason)
    return found


def held_jobs(manifest: dict, ids: list[str], env: dict | None = None) -> list[str]:
    """Those of job ``ids`` the scheduler still holds (queued or running; Slurm only)."""
    if manifest["scheduler"] != "slurm" or not ids or not _has_squeue(env):
        return []
    rows = _squeue(["-j", ",".join(ids)], "%i|%T", env) or []
    return sorted({row[0].split("_")[0] for row in rows} & set(ids))


def _has_squeue(env: dict | None) -> bool:
    import os
    import shutil

    return shutil.which("squeue", path=(os.environ if env is None else env).get("PATH")) \
        is not None


def _squeue(select: list[str], fmt: str, env: dict | None,
            fields: int = 2) -> list[tuple[str, ...]] | None:
    """The rows squeue lists for ``select`` (``-j IDS`` / ``--name=NAMES``) in format ``fmt``
    (``fields`` fields split at "|", the first the job or array task id, the second its state,
    made a part state; a last field missing is "": squeue's reason, last as it may hold
    spaces), of jobs it holds; None when squeue cannot answer."""
    try:
        proc = subprocess.run(["squeue", "-h", "-r", *select, "-o", fmt],
                              capture_output=True, text=True, timeout=30, env=env)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if proc.returncode != 0:
        # Slurm says so for a lone job id it no longer knows (ended and purged): none held.
        return [] if "Invalid job id" in proc.stderr else None
    rows = []
    for line in proc.stdout.splitlines():
        words = line.split("|") if "|" in line else line.split()
        words += [""] * (fields - len(words) == 1)  # no reason asked or given
        if len(words) == fields and words[1] in _SQUEUE:
            rows.append((words[0], _SQUEUE[words[1]], *words[2:]))
    return rows


def part_status(folder: Path, part: dict, active: dict | None,
                merged: dict[str, str] | None = None, unasked: str = "") -> PartStatus:
    """The state of one part of the campaign in ``folder`` (see the module's rules);
    ``active``: what :func:`active_tasks` found (None: the scheduler could not be asked, why
    in ``unasked``); ``merged``: run id -> status of the finished runs in the merged file."""
    from hpcds1mpi.errors import TelemetryError
    from hpcds1mpi.measure.campaign_damaged import damage
    from hpcds1mpi.records import telemetry

    planned = set(part["runs"])
    status = PartStatus(part["name"], part["nodes"], part["index"], "missing", len(planned),
                        shard=part["telemetry"])
    path = folder / part["telemetry"]
    exit_file = folder / "parts" / f"{part['name']}.exit"
    if exit_file.is_file():
        try:
            status.exit_code = int(exit_file.read_text().strip())
        except (OSError, ValueError):
            status.exit_code = None
    written = path.exists() or telemetry.journal_path(path).exists()
    found: dict[str, str] = {}
    try:
        store = telemetry.load(path) if written else None
    except TelemetryError as exc:  # one part's damage: the others are still told (s45 C8)
        store, status.damaged = None, damage(path, exc)
    for (_, run_id), row in (store.runs.items() if store is not None else ()):
        if run_id in planned and row["status"] != "interrupted":
            found[run_id] = row["status"]
    for run_id, run_status in (merged or {}).items():
        if run_id in planned and run_id not in found:
            found[run_id] = run_status
            status.only_merged += 1
    for run_status in found.values():
        status.statuses[run_status] = status.statuses.get(run_status, 0) + 1
    status.recorded = len(found)
    key = (part["nodes"], part["index"])
    active = active or {}
    if status.recorded >= len(planned):
        status.state = "done"
    elif key in active:
        status.state, status.job, status.reason = active[key]
    elif written and telemetry.writer_alive(path):
        status.state = "running"
    elif status.damaged:
        status.state = "damaged"
    elif status.exit_code not in (None, 0):
        status.state = "failed"
    elif written:
        status.state = "interrupted"
    if status.state in TO_SUBMIT:
        status.unasked = unasked
    return status


def campaign_status(folder: str | Path, env: dict | None = None) -> tuple[dict, list[PartStatus]]:
    """The manifest of campaign ``folder`` and the state of each of its parts.

    Raises:
        ConfigError: ``folder`` is not a campaign.
    """
    folder = Path(folder)
    manifest = cm.read_manifest(folder)
    active = active_tasks(manifest, folder, env)
    unasked = "" if active is not None else (
        "squeue did not answer" if _has_squeue(env) else "squeue is not on PATH here")
    merged = merged_runs(folder, manifest).statuses
    parts = [part_status(folder, part, active, merged, unasked) for part in manifest["parts"]]
    if active is not None:  # a task squeue no longer holds has ended: sacct says how
        mark_start_failures(manifest, parts, env)
    for part in parts:
        if part.state == "failed" or part.ended:
            part.log = log_file(manifest, part)
    return manifest, parts


def log_file(manifest: dict, part: PartStatus) -> str:
    """The log a part's job writes in the campaign folder, as its script's output directive
    names it: PBS's ``logs/n2-1.out``; Slurm's ``logs/n2-%A_%a.out`` with its latest job's id
    (``logs/n2-100_1.out``; ``*`` where none is recorded). Was "(see logs/)": F2's follow-up
    of s33 tester P2."""
    job = manifest["jobs"].get(str(part.nodes), {})
    stem = Path(job.get("script", f"n{part.nodes}")).stem
    if manifest["scheduler"] != "slurm":
        return f"logs/{stem}-{part.index}.out"
    array = part.job.split("_")[0] if part.job else "*"
    for sub in manifest["submissions"]:  # in submission order: the latest job wins
        if sub.get("nodes") == part.nodes and part.index in sub.get("indices", []) \
                and sub.get("job_id") and not part.job:
            array = sub["job_id"]
    return f"logs/{stem}-{array}_{part.index}.out"


def mark_start_failures(manifest: dict, parts: list[PartStatus], env: dict | None) -> None:
    """Make ``failed`` each missing part whose recorded array task has ended (sacct), or
    ``interrupted`` where its job was stopped from outside (cancelled, timed out), with
    sacct's state, exit code and seconds run (:meth:`PartStatus.ending` says them); a part
    never submitted stays missing. Slurm only; nothing changes where sacct does not answer."""
    from hpcds1mpi.measure.campaign_endings import STOPPED, ended_tasks

    if manifest["scheduler"] != "slurm":
        return
    tasks = {}
    for sub in manifest["submissions"]:  # in submission order: the latest job of a part wins
        if "nodes" in sub and sub.get("job_id"):
            for index in sub.get("indices", []):
                tasks[(sub["nodes"], index)] = f"{sub['job_id']}_{index}"
    # An interrupted part that recorded nothing of its own too: its sweep made its file before
    # the job was cancelled, and status said only "interrupted 0/6", neither how long the job
    # ran nor its log (s37 tester K6).
    # An interrupted part that recorded runs too: a TIMEOUT is said as such, with what to do
    # (s39 tester H3: "interrupted 10/20" and resubmit gave it the same minutes again).
    missing = {tasks[(p.nodes, p.index)]: p for p in parts
               if p.state in ("missing", "interrupted") and (p.nodes, p.index) in tasks}
    if not missing:
        return
    ended = ended_tasks(sorted(missing), env)  # a plain array line stands for its tasks (R5)
    for task, part in missing.items():
        state, exit_code, ran_s = ended.get(task, ("", "", None))
        if part.recorded and state != "TIMEOUT":
            continue
        if state and state not in _SQUEUE:
            if part.state == "missing":  # a shard file says its sweep started: interrupted
                part.state = "interrupted" if state in STOPPED else "failed"
            part.job, part.ended, part.ran_s = task, f"{state} {exit_code}".strip(), ran_s


def never_start_lines(folder: str | Path, manifest: dict, parts: list[PartStatus]) -> list[str]:
    """One line per script whose queued parts never start as submitted (:func:`never_starts`):
    why, and to cancel, fix the script and resubmit."""
    from hpcds1mpi.runtime.message_paths import shell_word  # pasted as given (s35 R4)

    stuck: dict[int, list[PartStatus]] = {}
    for part in parts:
        if part.state == "queued" and part.job and never_starts(part.reason):
            stuck.setdefault(part.nodes, []).append(part)
    lines = []
    for nodes, held in sorted(stuck.items()):
        script = manifest["jobs"].get(str(nodes), manifest["jobs"].get(nodes, {})).get(
            "script", f"n{nodes}.sbatch")
        over = over_nodes_line(nodes, str(Path(folder) / script), [p.job for p in held],
                               manifest.get("plan") or "PLAN", manifest["scheduler"])
        if over:  # its shard's plan asks the nodes: no script edit helps (s39 tester H4)
            lines.append(over)
            continue
        whys = "; ".join(sorted({f"{p.reason.split(',')[0]}: {never_starts(p.reason)}"
                                 for p in held}))
        lines.append(f"{len(held)} part(s) of {script} never start as submitted ({whys}): "
                     f"scancel {' '.join(p.job for p in held)}, fix {shell_word(script)}, "
                     f"then hpcds1mpi campaign resubmit {shell_word(folder)}")
    return lines


def summary_lines(folder: str | Path, manifest: dict, parts: list[PartStatus]) -> list[str]:
    """What ``campaign status`` prints: a line per part, a total, the merged file."""
    counts: dict[str, int] = {}
    for part in parts:
        counts[part.state] = counts.get(part.state, 0) + 1
    lines = [f"campaign {folder}: {manifest['configurations']} configurations in "
             f"{len(parts)} parts ({manifest['scheduler']})"]
    lines += ["  " + part.line() for part in parts]
    lines.append("parts: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    held = merged_runs(folder, manifest)
    merged, twice, foreign = len(held.statuses), held.twice, held.foreign
    extra = [f"{twice} more than once"] if twice else []
    extra += [f"and {foreign} run(s) of no configuration of this campaign"] if foreign else []
    lines.append(f"merged: {merged}/{manifest['configurations']} configurations in "
                 f"{manifest['merged']}" + (f" ({'; '.join(extra)})" if extra else "")
                 if Path(folder, manifest["merged"]).exists() else "merged: not yet")
    todo = [p for p in parts if p.state in TO_SUBMIT]
    changed = source_plan_line(folder, manifest)
    lines += [f"note: {changed}"] if changed else []
    moved = moved_line(folder, manifest)
    if moved:  # its jobs fail, or run elsewhere, until it is back or emitted again (s34 O2)
        return lines + [moved]
    edited = edited_line(folder, manifest, {p.name for p in parts if p.state != "done"})
    if edited:  # resubmit refuses them: never advise it (s39 tester H1)
        return lines + [edited]
    at_start = [p.job for p in parts if p.failed_at_start]
    if at_start:
        lines.append(f"{len(at_start)} part(s) failed before their sweep started (a job "
                     "fails so when Slurm cannot start it, e.g. a log folder it cannot "
                     "open): find why with `sacct -j "
                     f"{','.join(at_start)} -o JobID,State,ExitCode,Reason` and the jobs' "
                     "logs before submitting them again")
    lines += never_start_lines(folder, manifest, parts)
    damaged = damaged_line(folder, parts)  # says resubmit after the move: said once
    lines += [damaged] if damaged else []
    lines += timeout_lines(folder, manifest, parts)
    unasked = next((p.unasked for p in todo if p.unasked), "")
    if unasked:
        lines.append(f"{len(todo)} part(s) not done, but {unasked}: they may still be queued "
                     f"or running; run `hpcds1mpi campaign status {folder}` where squeue "
                     "answers before submitting anything again")
    elif todo and not damaged:  # "again" of a campaign never submitted misled (s39 tester H5)
        again = " again" if manifest["submissions"] else ""
        lines.append(f"{len(todo)} part(s) to submit{again}: hpcds1mpi campaign resubmit "
                     f"{folder}")
    elif all(p.state == "done" for p in parts) and merged < manifest["configurations"]:
        lines.append(unmerged_line(folder, manifest,
                                   held_jobs(manifest, merge_jobs(manifest))))
    return lines

