"""Writing a campaign folder: the parts' plans, one batch job per node count (an array task per
shard), the merge job, ``submit.sh`` and the manifest (layout: :mod:`hpcds1mpi.measure.campaign`).

The scripts come from ``jobscripts/campaign.j2`` and ``jobscripts/campaign-merge.j2`` through
:func:`hpcds1mpi.launch.scripts.render_template`, so their ``#SBATCH`` / ``#PBS`` lines are
:mod:`hpcds1mpi.launch.directives`' like every other script's. Each array task runs the
supervised sweep (``sweep --launch``) on its shard's plan: a configuration that times out or
crashes is recorded and the sweep goes on with the next one instead of ending the task.
"""

from __future__ import annotations

import dataclasses
import shlex
import time
from pathlib import Path

from hpcds1mpi.config import Configuration
from hpcds1mpi.digests import sha256_file
from hpcds1mpi.errors import ConfigError, OutputError
from hpcds1mpi.launch.own_install import own_executable, path_export
from hpcds1mpi.measure import campaign as cm
from hpcds1mpi.measure.campaign_edits import plan_digest
from hpcds1mpi.measure.campaign_nodes import check_slurm_nodes

#: A part's index in its job, as the job's shell reads it: the array task's index, else the
#: one ``resubmit`` passes to a lone shard (``qsub -v``). A PBS script also reads Slurm's
#: variable, which is what Slurm's qsub wrapper (slurm-wlm-torque) sets for ``-J``.
INDEX = {"slurm": "${SLURM_ARRAY_TASK_ID:-${HPCDS1MPI_CAMPAIGN_INDEX:-0}}",
         "pbs": "${PBS_ARRAY_INDEX:-${SLURM_ARRAY_TASK_ID:-${HPCDS1MPI_CAMPAIGN_INDEX:-0}}}"}
SUFFIX = {"slurm": "sbatch", "pbs": "pbs"}
#: Allowance for a part's start-up (Python, MPI wire-up, the first launch) in its time
#: limit, s: the plan's estimate counts the measurements only.
STARTUP_S = 120
#: Time limit of the merge job, s.
MERGE_TIME_S = 600
#: Most tasks of one job array where the scheduler cannot be asked: Slurm's default
#: ``MaxArraySize`` (1001: indices 0-1000) and PBS Pro's default ``max_array_size``.
DEFAULT_MAX_ARRAY = {"slurm": 1001, "pbs": 10000}


def max_array_tasks(scheduler: str) -> tuple[int, str]:
    """(most tasks one job array may have, where the figure comes from): this cluster's
    ``MaxArraySize`` when ``scontrol show config`` answers, else the scheduler's default."""
    import re
    import subprocess

    if scheduler == "slurm":
        try:
            text = subprocess.run(["scontrol", "show", "config"], capture_output=True,
                                  text=True, timeout=10).stdout
        except (OSError, subprocess.SubprocessError):
            text = ""
        m = re.search(r"^MaxArraySize\s*=\s*(\d+)\s*$", text, re.M)
        if m:
            return int(m.group(1)), "this cluster's MaxArraySize (scontrol show config)"
        return DEFAULT_MAX_ARRAY[scheduler], "Slurm's default MaxArraySize"
    return DEFAULT_MAX_ARRAY[scheduler], "PBS Pro's default max_array_size"


def _render(kind: str, job, scheduler: str, **values) -> str:
    from hpcds1mpi.launch import scripts

    return scripts.render_template(kind, job, scheduler, **values)


def allocation(parts: list[cm.Part], partition) -> Configuration:
    """The allocation of one node count's job: its node count, the most ranks per node of its
    runs, and enough CPUs per task for the widest run (ranks x threads) that the node holds."""
    runs = [r.config for p in parts for r in p.runs]
    ranks = max(c.ranks_per_node for c in runs)
    cores = max(c.ranks_per_node * c.threads for c in runs)
    threads = max(1, min(-(-cores // ranks), partition.cores_per_node // ranks))
    return Configuration(nodes=parts[0].nodes, ranks_per_node=ranks, threads=threads)


def check_devices(plan, partition, plan_file: str) -> None:
    """Refuse GPU runs the partition cannot hold before anything is written, as too many nodes
    or cores are (each would only fail in its job): none of its nodes has a GPU, or a run puts
    more GPU ranks on a node than it has GPUs.

    Raises:
        ConfigError: naming how many runs ask for GPUs and what to change.
    """
    from hpcds1mpi.config import check_fits

    most = max((spec.config.nodes for spec in plan.runs), default=1)
    if partition.max_nodes is not None and most > partition.max_nodes:
        # was check_fits' "lower --nodes": campaign emit has no such option (s27 tester S, 8)
        raise ConfigError(f"{plan_file}: the plan asks for {most} nodes but partition "
                          f"{partition.name!r} has at most {partition.max_nodes}; lower nodes "
                          "in the plan, or give the cluster file (--cluster) and a partition "
                          f"(--partition) with {most}")
    gpu = [spec.config for spec in plan.runs if spec.config.device == "gpu"]
    if gpu and partition.gpus_per_node < 1:
        raise ConfigError(f"{plan_file}: {len(gpu)} configuration(s) run on GPUs but partition "
                          f"{partition.name!r} has none; give devices = [\"cpu\"] in the "
                          "plan, or a GPU partition with --partition")
    for config in gpu:
        check_fits(config, partition)


def check_folder_name(out: str, folder: Path, scheduler: str) -> None:
    """Refuse a campaign folder that cannot stand in the jobs' output directive (their logs go
    there): ``#SBATCH --output`` and ``#PBS -o`` are taken as they stand, so a space or quote
    breaks them; sbatch also reads ``%`` as a pattern (``%x``: the job name), which sends every
    job's output to a folder that does not exist, and the job fails before it starts. PBS
    takes ``%`` as written (and a ``:`` as ``host:path``, which the rule has not).

    Raises:
        ConfigError: naming ``--out``, the characters at fault and those allowed.
    """
    from hpcds1mpi.launch.directives import PATH, Shape

    slurm = scheduler == "slurm"
    marks, first = ((PATH.marks.replace("%", ""), PATH.first_marks.replace("%", ""))
                    if slurm else (PATH.marks, PATH.first_marks))
    # Room left for "/logs/n16-%A_%a.out" (PBS: "/logs/n16-^array_index^.out").
    shape = Shape(marks, first, PATH.max_len - 64)
    problem = shape.problem(str(folder))
    if problem:
        # Said of --out as given, unless the fault lies in the folder it is in.
        where = "" if shape.problem(out) else f" is the folder {str(folder)!r}, which"
        directive = ("#SBATCH --output, which sbatch takes as it stands and where % is a "
                     "pattern" if slurm else "#PBS -o, which qsub takes as it stands")
        raise ConfigError(f"--out {out!r}{where} {problem}: a campaign's folder goes into its "
                          f"jobs' {directive}; choose a folder path of letters, digits and "
                          f"{' '.join(shape.marks)} only, at most {shape.max_len} characters")


def pbs_log_lines(folder: Path, stem: str, array: bool) -> list[str]:
    """``#PBS`` lines that send a job's output, stderr joined, to the campaign's ``logs/``
    (``logs/STEM-INDEX.out``), where ``campaign status`` sends the user; without them PBS
    writes ``JOBNAME.oID`` into the folder qsub ran in (s33 tester P2). PBS Pro puts a
    subjob's index for ``^array_index^``; a job that is no array gets a plain path."""
    name = f"{stem}-^array_index^.out" if array else f"{stem}.out"
    return ["#PBS -j oe", f"#PBS -o {folder}/logs/{name}"]


def check_out(out: Path, plan_sha: str) -> None:
    """``out`` may receive a new campaign: missing or empty. Checked again under the folder's
    lock, held until :func:`~hpcds1mpi.atomic.atomic_dir` has written it: of two ``campaign
    emit`` into one folder, the second is refused.

    Raises:
        OutputError: a file; a folder holding this or another campaign, or anything else.
        LockError: another process is writing ``out``.
    """
    from hpcds1mpi.atomic import claim_output_dir

    claim_output_dir(out, lambda: _check_out(out, plan_sha), "campaign")


def _check_out(out: Path, plan_sha: str) -> None:
    if out.exists() or out.is_symlink():
        if not out.is_dir():
            raise OutputError(f"{out} is a file, not a folder; choose another --out")
        if any(out.iterdir()):
            manifest = out / cm.MANIFEST
            if manifest.is_file():
                try:
                    same = cm.read_manifest(out).get("plan_sha256") == plan_sha
                except ConfigError:
                    same = False
                if same:
                    raise OutputError(f"{out} already holds this campaign; see `hpcds1mpi "
                                      f"campaign status {out}` or submit what is missing with "
                                      f"`hpcds1mpi campaign resubmit {out}`")
                raise OutputError(f"{out} holds another campaign; choose another --out")
            raise OutputError(f"{out} is not empty and not a campaign; choose another --out")
    from hpcds1mpi.atomic import check_output_folder

    check_output_folder(out, "campaign")


def emit(plan_file: str, scheduler: str, out: str, *, shards: int = 1,
         cluster_file: str | None = None, partition_name: str | None = None,
         time_limit_s: int | None = None, job_name: str = "hpcds1mpi-campaign") -> dict:
    """Write campaign folder ``out`` for ``plan_file``; return its manifest.

    Args:
        plan_file: the sweep plan (the TOML ``sweep --plan`` reads).
        scheduler: ``slurm`` or ``pbs``.
        out: the campaign folder (missing or empty).
        shards: at most this many shards (array tasks) per node count.
        cluster_file / partition_name: where the jobs run (the jobs' sweeps use the same).
        time_limit_s: each part's time limit; None: the plan's rough estimate
            (:func:`hpcds1mpi.measure.plan.estimate_seconds`) x 1.5, whole minutes.
        job_name: stem of the jobs' names (``-n1``, ``-n2``, ``-merge`` are added, the stem
            shortened where the whole would pass the length limit).

    Raises:
        ConfigError / OutputError: a bad plan, value or folder; nothing is written then.
    """
    from hpcds1mpi.atomic import atomic_dir
    from hpcds1mpi.writers import umask_mode
    from hpcds1mpi.cluster import resolve_cluster
    from hpcds1mpi.places import default_queue_note, is_this_machine, resolve_partition
    from hpcds1mpi.launch.directives import (check_job_name, job_name_with,
                                              time_limit_s as limit_from)
    from hpcds1mpi.launch.launchers import check_scheduler
    from hpcds1mpi.launch.program import no_control
    from hpcds1mpi.measure.plan import build_plan, estimate_seconds, load_plan_file

    check_scheduler(scheduler)
    if isinstance(shards, bool) or not isinstance(shards, int) or shards < 1:
        raise ConfigError(f"--shards must be a whole number >= 1, got {shards!r}")
    check_job_name(job_name)
    folder = Path(out).absolute()
    no_control(str(folder), "--out")
    check_folder_name(str(out), folder, scheduler)
    doc = load_plan_file(plan_file)
    partition = resolve_partition(cluster_file, partition_name)
    cluster = resolve_cluster(cluster_file, partition_name)
    plan = build_plan(doc, partition)
    check_devices(plan, partition, plan_file)
    parts = cm.split(plan, shards)
    plan_sha = sha256_file(plan_file)
    _check_out(Path(out), plan_sha)  # a folder in the way is said before anything else
    by_nodes: dict[int, list[cm.Part]] = {}
    for part in parts:
        by_nodes.setdefault(part.nodes, []).append(part)
    widest = max((len(group) for group in by_nodes.values()), default=0)
    if widest > 1:
        most, source = max_array_tasks(scheduler)
        if widest > most:
            # sbatch / qsub would refuse the array at submission, after the folder is written.
            raise ConfigError(f"--shards {shards} makes an array of {widest} tasks; {source} "
                              f"allows {most}: give --shards {most} or fewer")
    # This machine's partition name is made up: sbatch/qsub would refuse every job.
    # What valid_only left out of the plan is said first (s37 tester K5: half a plan's node
    # counts had gone in silence).
    queue = {"default_queue": is_this_machine(cluster_file),
             "notes": [plan.left_out] if plan.left_out else []}
    if queue["default_queue"]:
        queue["notes"].append(default_queue_note(partition, scheduler,
                                                 "the campaign's jobs name"))
    if scheduler == "slurm":  # a stale cluster file's max_nodes is no partition's (s39 H4)
        check_slurm_nodes(by_nodes, None if queue["default_queue"] else partition.name,
                          plan_file, partition.max_nodes)
    exe, bin_dir = own_executable()
    texts = {f"plans/{p.name}.toml": _part_plan(p, plan, partition) for p in parts}
    jobs = {}
    short = []  # node counts whose estimate --time-limit is far below (s39 tester H3)
    for nodes, group in by_nodes.items():
        estimate = max(limit_from(estimate_seconds(dataclasses.replace(plan, runs=list(p.runs)))
                                  + STARTUP_S) for p in group)
        limit = time_limit_s or estimate
        script = f"n{nodes}.{SUFFIX[scheduler]}"
        if limit < estimate / 2:
            short.append(f"{script} {estimate // 60} min")
        texts[script] = _part_script(group, partition, cluster, scheduler, folder,
                                     job_name_with(job_name, f"-n{nodes}"), int(limit), exe,
                                     bin_dir, cluster_file, partition_name, queue)
        jobs[str(nodes)] = {"script": script, "shards": len(group)}
    merge_script = f"merge.{SUFFIX[scheduler]}"
    texts[merge_script] = _merge_script(parts, partition, cluster, scheduler, folder,
                                        job_name_with(job_name, "-merge"), exe, bin_dir,
                                        queue)
    texts["submit.sh"] = submit_sh(scheduler, jobs, merge_script, exe)
    manifest = {
        "format": cm.FORMAT, "version": cm.FORMAT_VERSION, "created_at": time.time(),
        "plan": str(Path(plan_file).absolute()), "plan_sha256": plan_sha,
        "scheduler": scheduler, "shards": shards, "cluster": cluster_file and
        str(Path(cluster_file).absolute()), "partition": partition.name,
        "configurations": len(plan.runs), "merged": "merged.h5", "merge": merge_script,
        "jobs": jobs, "submissions": [], "notes": queue["notes"] + short_limit_notes(
            time_limit_s, short),
        "parts": [{"name": p.name, "nodes": p.nodes, "index": p.index,
                   "plan": f"plans/{p.name}.toml", "telemetry": f"telemetry/{p.name}.h5",
                   # what resubmit checks the plan against before its job goes (s39 H1)
                   "sha256": plan_digest(texts[f"plans/{p.name}.toml"]),
                   "runs": p.run_ids} for p in parts],
    }
    check_out(Path(out), plan_sha)  # again, locked until atomic_dir has written it
    with atomic_dir(out, "campaign") as tmp:
        for sub in ("plans", "telemetry", "parts", "logs"):
            (tmp / sub).mkdir()
        (tmp / "plan.toml").write_bytes(Path(plan_file).read_bytes())
        for name, text in texts.items():
            (tmp / name).write_text(text, encoding="utf-8")  # as plan_digest reads it
            if name.endswith((".sh", ".sbatch", ".pbs")):
                (tmp / name).chmod(umask_mode(0o777))  # 0700 under umask 077 (s34 U8)
        cm.write_manifest(tmp, manifest)
    return manifest


def short_limit_notes(time_limit_s: int | None, short: list[str]) -> list[str]:
    """A note where ``--time-limit`` is under half the plan's own estimate for some parts
    (``short``: "n1.sbatch 5 min"): they may reach it and stop; each resubmit goes on where
    it stopped, but a configuration longer than the limit never finishes."""
    if not short or not time_limit_s:
        return []
    return [f"--time-limit {time_limit_s // 60} is under half the limit the plan's own "
            f"estimate gives ({', '.join(short)}): parts may reach it and stop (status says so); "
            "each resubmit goes on where the last stopped, but a configuration longer than the "
            "limit never finishes: give a larger --time-limit, or none for the estimate x 1.5"]


def _part_plan(part: cm.Part, plan, partition) -> str:
    doc = cm.part_doc(part, plan)
    text = cm.toml_text(doc)
    import tomllib

    cm.check_part_doc(tomllib.loads(text), part, partition)  # what the job will read
    return text


def _sweep_tokens(config: Configuration, exe: str, cluster_file: str | None,
                  partition_name: str | None) -> list[str]:
    """``hpcds1mpi sweep --launch R ...``: the supervised sweep of one shard in its job.

    The supervisor finds the launcher itself (srun inside a Slurm job, mpiexec elsewhere) and
    srun's ``--mpi`` plugin from the cluster file, the same rule as the site's scripts.
    """
    tokens = [exe, "sweep", "--launch", str(config.ranks)]
    if cluster_file:
        tokens += ["--cluster", str(Path(cluster_file).absolute())]
    if partition_name:
        tokens += ["--partition", partition_name]
    return tokens + ["--resume", "--no-progress"]


def _part_script(group: list[cm.Part], partition, cluster, scheduler: str, folder: Path,
                 job_name: str, limit_s: int, exe: str, bin_dir: str,
                 cluster_file: str | None, partition_name: str | None, queue: dict) -> str:
    from hpcds1mpi.launch.directives import BatchJob
    from hpcds1mpi.launch.program import quote_tokens

    config = allocation(group, partition)
    output = f"{folder}/logs/n{group[0].nodes}-%A_%a.out" if scheduler == "slurm" else None
    job = BatchJob(config=config, partition=partition, program=["true"], cluster=cluster,
                   job_name=job_name, time_limit_s=limit_s, output=output, exclusive=True)
    nodes = group[0].nodes
    more = [f"#SBATCH --array=0-{len(group) - 1}"] if scheduler == "slurm" else \
        pbs_log_lines(folder, f"n{nodes}" if len(group) > 1 else f"n{nodes}-0", len(group) > 1)
    # Slurm 22.05's srun no longer inherits --cpus-per-task from the job: say it to every step.
    environment = [("SRUN_CPUS_PER_TASK", str(config.threads))] if scheduler == "slurm" else []
    return _render("campaign", job, scheduler, **queue, more_directives=more, nodes=nodes,
                   shards=len(group), folder=shlex.quote(str(folder)), is_pbs=scheduler == "pbs",
                   path=path_export(bin_dir, job), environment=environment,
                   index=INDEX[scheduler],
                   sweep=quote_tokens(_sweep_tokens(config, exe, cluster_file, partition_name)))


def _merge_script(parts: list[cm.Part], partition, cluster, scheduler: str, folder: Path,
                  job_name: str, exe: str, bin_dir: str, queue: dict) -> str:
    from hpcds1mpi.launch.directives import BatchJob

    output = f"{folder}/logs/merge-%j.out" if scheduler == "slurm" else None
    job = BatchJob(config=Configuration(1, 1, 1), partition=partition, program=["true"],
                   cluster=cluster, job_name=job_name, time_limit_s=MERGE_TIME_S, output=output)
    more = pbs_log_lines(folder, "merge", False) if scheduler == "pbs" else []
    return _render("campaign-merge", job, scheduler, **queue, more_directives=more,
                   folder=shlex.quote(str(folder)),
                   path=path_export(bin_dir, job), exe=shlex.quote(exe),
                   merged="merged.h5", parts=" ".join(p.name for p in parts))


def submit_sh(scheduler: str, jobs: dict, merge_script: str,
              exe: str = "hpcds1mpi") -> str:
    """The script that submits the campaign: ``campaign resubmit`` on the folder it is in, so
    it submits only what is missing, failed or interrupted (everything the first time), under
    the manifest's lock, and records each job id (s39 tester H2: its own sbatch lines had
    submitted every part again after ``--submit``, two jobs per part writing one shard).

    Its comments show the scheduler commands a first submission amounts to. ``resubmit``
    refuses a folder moved since it was written or one its jobs could not write.
    """
    lines = ["#!/bin/bash", "# Written by hpcds1mpi: submits what campaign.json's parts still "
             "lack (every part the first", "# time, then the merge after all of them, "
             "afterany), recording each job id for", "# `hpcds1mpi campaign status`; a part "
             "done, queued or running is never submitted again.", "# A first submission "
             "amounts to:"]
    ids = []
    for number, job in enumerate(jobs.values(), start=1):
        if scheduler == "slurm":
            array = f"--array=0-{job['shards'] - 1} " if job["shards"] > 1 else ""
            lines.append(f"#   j{number}=$(sbatch --parsable {array}{job['script']})")
        else:
            array = f"-J 0-{job['shards'] - 1} " if job["shards"] > 1 else ""
            lines.append(f"#   j{number}=$(qsub {array}{job['script']})")
        ids.append(f"$j{number}")
    after = ":".join(ids)
    lines.append(f"#   sbatch --parsable --dependency=afterany:{after} {merge_script}"
                 if scheduler == "slurm" else
                 f"#   qsub -W depend=afterany:{after} {merge_script}")
    lines += ["set -euo pipefail",
              # the folder it is in: a moved one is refused (its scripts cd to the old place)
              "here=$(cd \"$(dirname \"$0\")\" && pwd)",
              f"exec {shlex.quote(exe)} campaign resubmit \"$here\""]
    return "\n".join(lines) + "\n"
