"""Submitting a campaign: the scheduler does the work (``sbatch --array``, ``--dependency``).

:func:`resubmit` submits, for each node count, one array of the parts that are missing,
failed or interrupted (``sbatch --array=1,3 n2.sbatch``; under PBS ``qsub -J``, or ``-v
HPCDS1MPI_CAMPAIGN_INDEX=i -o logs/nN-i.out`` for a lone index), then the merge job after all
of them and after the parts still queued or running (``--dependency=afterany:...``). A part
that is done, queued or running is never submitted again. The first submission of a
campaign is the same call (every part is missing then), and so is ``submit.sh``. Each
submission is recorded in the manifest, so ``status`` can ask the scheduler about its tasks.

"Read the status, submit, record" is one step under the manifest's lock (:func:`manifest_lock`):
of two at once, the second waits and then sees the first one's jobs as queued, so nothing is
submitted twice and no record is written over (s39 tester H2: two concurrent resubmits had both
submitted, and the second's manifest had dropped the first's job ids).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import time
from pathlib import Path

from hpcds1mpi.errors import SchedulerError
from hpcds1mpi.measure import campaign as cm
from hpcds1mpi.measure.campaign_edits import check_unedited, source_plan_line
from hpcds1mpi.measure.campaign_place import check_in_place
from hpcds1mpi.measure.campaign_damaged import check_undamaged
from hpcds1mpi.measure.campaign_status import ACTIVE, TO_SUBMIT, campaign_status

#: The campaign's folders its jobs write into (logs, shards, exit codes), as the submitter.
JOB_FOLDERS = ("logs", "telemetry", "parts")
#: How long a submission waits for another one of the same campaign to finish, s: each
#: sbatch/qsub is given 60 s, and a campaign has a few jobs.
LOCK_WAIT_S = 300


@contextlib.contextmanager
def manifest_lock(folder: Path):
    """Hold campaign ``folder``'s manifest lock for a read-modify-write of ``campaign.json``
    (a submission and its records), waiting up to :data:`LOCK_WAIT_S` for another holder.

    Raises:
        LockError: another process still holds it after that; said in one line.
    """
    from hpcds1mpi.errors import LockError
    from hpcds1mpi.lock_files import holder
    from hpcds1mpi.writers import hold_lock, holds_lock, lock_path, release_lock

    manifest = folder / cm.MANIFEST
    if holds_lock(manifest) or not os.access(folder, os.W_OK | os.X_OK):
        yield  # ours already; or no lock to make, and check_writable says why
        return
    try:
        taken = hold_lock(manifest, "campaign", wait_s=LOCK_WAIT_S)
    except LockError:
        raise LockError(f"{folder}: another process ({holder(lock_path(manifest))}) has been "
                        f"submitting this campaign for over {LOCK_WAIT_S} s; see `hpcds1mpi "
                        f"campaign status {folder}` once it is done; nothing was submitted"
                        ) from None
    try:
        yield
    finally:
        if taken:
            release_lock(manifest)


def _require(command: str, folder: Path, env: dict | None) -> None:
    if shutil.which(command, path=(env or {}).get("PATH")) is None:
        raise SchedulerError(f"{command} not found on PATH: submit from a login node of the "
                             f"cluster, or run {folder}/submit.sh there")


def _run(argv: list[str], folder: Path, env: dict | None) -> str:
    """Run a submission command in ``folder``; its job id (``sbatch --parsable`` / qsub)."""
    _require(argv[0], folder, env)
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd=folder,
                              env=env)
    except subprocess.TimeoutExpired:
        raise SchedulerError(f"{' '.join(argv)} did not answer in 60 s; the scheduler may be "
                             "down, try again") from None
    if proc.returncode != 0 or not proc.stdout.strip():
        reason = " ".join((proc.stderr or proc.stdout).split())[:300] or f"exit {proc.returncode}"
        raise SchedulerError(f"{' '.join(argv)} was refused: {reason}")
    return proc.stdout.strip().split(";")[0]


def ranges(indices: list[int]) -> list[tuple[int, int]]:
    """Contiguous runs of sorted ``indices``: ``[0, 1, 3] -> [(0, 1), (3, 3)]``."""
    out: list[tuple[int, int]] = []
    for i in sorted(indices):
        if out and i == out[-1][1] + 1:
            out[-1] = (out[-1][0], i)
        else:
            out.append((i, i))
    return out


def _submit_part(scheduler: str, script: str, indices: list[int], folder: Path,
                 env: dict | None) -> list[str]:
    if scheduler == "slurm":
        array = ",".join(str(i) for i in sorted(indices))
        return [_run(["sbatch", "--parsable", f"--array={array}", script], folder, env)]
    ids = []
    for lo, hi in ranges(indices):
        if hi > lo:
            ids.append(_run(["qsub", "-J", f"{lo}-{hi}", script], folder, env))
        else:  # no array: its "#PBS -o .../n2-^array_index^.out" would be taken as written
            log = Path(folder).absolute() / "logs" / f"{Path(script).stem}-{lo}.out"
            ids.append(_run(["qsub", "-v", f"HPCDS1MPI_CAMPAIGN_INDEX={lo}", "-o", str(log),
                             script], folder, env))  # F2's follow-up of s33 tester P2
    return ids


def part_submission(scheduler: str, nodes: int, indices: list[int], ids: list[str]) -> dict:
    """The manifest's record of a node count's job(s) running its parts ``indices``."""
    return {"nodes": nodes, "indices": sorted(indices),
            "job_id": ids[0] if scheduler == "slurm" else "", "job_ids": ids,
            "submitted_at": time.time()}


def merge_submission(job_id: str, after: list[str]) -> dict:
    """The manifest's record of a merge job, submitted after jobs ``after``."""
    return {"merge": True, "job_id": job_id, "after": after, "submitted_at": time.time()}


def record(folder: str | Path, job_id: str, *, nodes: int | None = None,
           after: list[str] | None = None) -> dict:
    """Record in the manifest a job ``submit.sh`` submitted (as ``resubmit`` records its
    own, so ``status`` asks the scheduler about it): node count ``nodes``'s whole array, or
    with ``nodes`` None the merge after jobs ``after``. Returns the record.

    Raises:
        ConfigError: ``folder`` is not a campaign, ``nodes`` not one of its node counts, or
            ``job_id`` not a job id.
    """
    from hpcds1mpi.errors import ConfigError

    folder = Path(folder).absolute()
    with manifest_lock(folder):  # read-modify-write: never over another's records (s39 H2)
        return _record(folder, job_id, nodes, after)


def _record(folder: Path, job_id: str, nodes: int | None, after: list[str] | None) -> dict:
    from hpcds1mpi.errors import ConfigError

    manifest = cm.read_manifest(folder)
    if not job_id.strip() or any(c.isspace() or c in ";:," for c in job_id):
        raise ConfigError(f"{job_id!r} is not a job id; give the id sbatch/qsub printed")
    if nodes is None:
        entry = merge_submission(job_id, list(after or []))
    else:
        if str(nodes) not in manifest["jobs"]:
            raise ConfigError(f"{folder} has no part of {nodes} node(s); its node counts are "
                              f"{', '.join(manifest['jobs'])}")
        indices = [p["index"] for p in manifest["parts"] if p["nodes"] == nodes]
        entry = part_submission(manifest["scheduler"], nodes, indices, [job_id])
    manifest["submissions"].append(entry)
    cm.write_manifest(folder, manifest)
    return entry


def plan_submission(parts) -> dict[int, list[int]]:
    """The parts to submit again, ``nodes -> [indices]``: missing, failed or interrupted."""
    todo: dict[int, list[int]] = {}
    for part in parts:
        if part.state in TO_SUBMIT:
            todo.setdefault(part.nodes, []).append(part.index)
    return todo


def resubmit(folder: str | Path, *, env: dict | None = None, dry_run: bool = False) -> dict:
    """Submit what campaign ``folder`` is missing, then its merge; record it in the manifest.

    Returns:
        ``{"parts": {nodes: [indices]}, "jobs": {nodes: [job ids]}, "merge": job id or "",
        "waiting_for": [job ids], "notes": [lines]}``; with ``dry_run`` nothing is submitted
        (ids empty). A note says the source plan changed since emit.

    Raises:
        ConfigError: ``folder`` is not a campaign, not where its scripts were written for
            (moved: :func:`~hpcds1mpi.measure.campaign_place.check_in_place`), or a part to
            submit has a plan edited since emit
            (:func:`~hpcds1mpi.measure.campaign_edits.check_unedited`).
        OutputError: its jobs could not write what they must (:func:`check_writable`);
            nothing is submitted.
        SchedulerError: sbatch/qsub missing or refusing a job (what was submitted before it
            is recorded).
    """
    folder = Path(folder).absolute()
    if dry_run:
        return _resubmit(folder, env, True)
    cm.read_manifest(folder)  # not a campaign: said as such, before any lock file is made
    with manifest_lock(folder):
        return _resubmit(folder, env, False)


def _resubmit(folder: Path, env: dict | None, dry_run: bool) -> dict:
    manifest, parts = campaign_status(folder, env)
    check_undamaged(folder, parts)  # its sweep would fail on the shard again (s45 C8)
    check_in_place(folder, manifest)  # moved since emit: its jobs would run elsewhere (s34 O2)
    scheduler = manifest["scheduler"]
    todo = plan_submission(parts)
    # a part plan edited since emit would sweep something else than the campaign (s39 H1)
    check_unedited(folder, manifest, {p.name for p in parts if p.state in TO_SUBMIT})
    unasked = next((p.unasked for p in parts if p.state in TO_SUBMIT and p.unasked), "")
    if unasked and not dry_run:
        check_writable(folder, manifest, todo)
        _require("sbatch", folder, env)
        raise SchedulerError(f"{unasked}: cannot tell whether the parts of {folder} that are "
                             "not done are still queued or running; run resubmit where "
                             "squeue answers")
    waiting = sorted({p.job.split("_")[0] for p in parts if p.state in ACTIVE and p.job}
                     | set(_merges_held(manifest, env)))
    result = {"parts": todo, "jobs": {}, "merge": "", "waiting_for": waiting,
              "notes": [line for line in [source_plan_line(folder, manifest)] if line]}
    merged_done = _merged_complete(folder, manifest)
    if not todo and (waiting or merged_done):
        return result
    check_writable(folder, manifest, todo)  # before any job: s34 tester U3
    if dry_run:
        return result
    ids = list(waiting)
    try:
        for nodes, indices in sorted(todo.items()):
            script = manifest["jobs"][str(nodes)]["script"]
            new = _submit_part(scheduler, script, indices, folder, env)
            result["jobs"][nodes] = new
            ids += new
            manifest["submissions"].append(part_submission(scheduler, nodes, indices, new))
        if scheduler == "slurm":
            argv = ["sbatch", "--parsable"] + (
                [f"--dependency=afterany:{':'.join(ids)}"] if ids else []) + [manifest["merge"]]
        else:
            argv = ["qsub"] + (["-W", f"depend=afterany:{':'.join(ids)}"] if ids else []) \
                + [manifest["merge"]]
        result["merge"] = _run(argv, folder, env)
        manifest["submissions"].append(merge_submission(result["merge"], ids))
    finally:
        if manifest["submissions"]:
            cm.write_manifest(folder, manifest)
    return result


def unwritable(folder: Path, manifest: dict, todo: dict[int, list[int]]) -> list[Path]:
    """What the jobs submitting ``todo`` would write in campaign ``folder`` but this user may
    not: the folder (the manifest and the merged file, by temp-and-rename), the folders
    :data:`JOB_FOLDERS` and the files already there of the parts to run again."""
    names = [p["name"] for p in manifest["parts"] if p["index"] in todo.get(p["nodes"], ())]
    files = [f for name in names for f in (*sorted((folder / "telemetry").glob(f"{name}.h5*")),
                                           folder / "parts" / f"{name}.exit")]
    folders = [folder, *(folder / sub for sub in JOB_FOLDERS)]
    return [f for f in folders if not os.access(f, os.W_OK | os.X_OK)] + \
        [f for f in files if os.path.lexists(f) and not os.access(f, os.W_OK)]


def check_writable(folder: Path, manifest: dict, todo: dict[int, list[int]]) -> None:
    """Refuse, before any job is submitted, a campaign whose jobs could not write what they
    must: they run as this user, so a campaign another user owns and this user may only read
    ended FAILED with no log, and nothing of them was recorded (s34 tester U3).

    Raises:
        OutputError: one line naming the first such path, whose it is and what to do.
    """
    from hpcds1mpi.errors import OutputError

    blocked = unwritable(folder, manifest, todo)
    if not blocked:
        return
    first = blocked[0]
    if not os.path.lexists(first):
        raise OutputError(f"{first} is missing from campaign {folder}, and its jobs write "
                          f"there; create it (mkdir {first}) or emit the campaign again into "
                          "a new folder; nothing was submitted")
    more = f" (and {len(blocked) - 1} more)" if len(blocked) > 1 else ""
    raise OutputError(f"{first}{more}: you may not write it ({_owner(first)}), and the "
                      f"campaign's jobs run as you and write there; ask its owner for write "
                      f"access (e.g. chmod -R g+w {folder}) or emit the campaign again into a "
                      "folder of yours; nothing was submitted")


def _owner(path: Path) -> str:
    """``owner NAME, mode drwxr-s---`` of ``path``."""
    import pwd
    import stat

    st = path.lstat()
    try:
        owner = pwd.getpwuid(st.st_uid).pw_name
    except KeyError:
        owner = f"uid {st.st_uid}"
    return f"owner {owner}, mode {stat.filemode(st.st_mode)}"


def _merges_held(manifest: dict, env: dict | None) -> list[str]:
    """Earlier merge jobs the scheduler still holds (Slurm): a new merge waits for them, so
    two merges never write the merged file at once."""
    from hpcds1mpi.measure.campaign_merged import merge_jobs
    from hpcds1mpi.measure.campaign_status import held_jobs

    return held_jobs(manifest, merge_jobs(manifest), env)


def _merged_complete(folder: Path, manifest: dict) -> bool:
    from hpcds1mpi.measure.campaign_merged import merged_runs

    return len(merged_runs(folder, manifest).statuses) >= manifest["configurations"]
