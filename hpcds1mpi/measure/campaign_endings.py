"""How a campaign part's job ended, from Slurm's accounting (``sacct``): its state, exit code
and how long it ran, for the parts that wrote nothing and that squeue no longer holds
(:func:`hpcds1mpi.measure.campaign_status.mark_start_failures`): failed, or stopped from
outside (:data:`STOPPED`) while its sweep ran or before the job started (s34 tester O3: a part
hung in MPI wire-up and cancelled after 202 s was said to have "failed ... before its sweep
started").
"""

from __future__ import annotations

import re
import subprocess

#: sacct states of a job stopped from outside: its part is interrupted, not failed.
STOPPED = ("CANCELLED", "TIMEOUT", "PREEMPTED", "DEADLINE")
_ARRAY = re.compile(r"^(\d+)_\[([\d,\-]+)(?:%\d+)?\]$")


def array_tasks(job_id: str) -> list[str]:
    """The array tasks a sacct ``JobID`` stands for: ``100_3`` itself; ``100_[0-2,5%4]`` (the
    tasks of an array that never started, one line for all) ``100_0`` .. ``100_2``, ``100_5``."""
    match = _ARRAY.match(job_id)
    if not match:
        return [job_id]
    tasks = []
    for span in match.group(2).split(","):
        lo, _, hi = span.partition("-")
        if lo.isdigit() and (hi.isdigit() or not hi):
            tasks += [f"{match.group(1)}_{i}" for i in range(int(lo), int(hi or lo) + 1)]
    return tasks


def ended_tasks(tasks: list[str], env: dict | None) -> dict[str, tuple[str, str, int | None]]:
    """What sacct says of array ``tasks`` (``100_0``; a plain job id asks of that job's own
    line): task id -> (its state's first word, ``CANCELLED`` for "CANCELLED by 1000"; exit
    code; seconds it ran, None where sacct did not say); {} where sacct does not answer (no
    accounting)."""
    jobs = sorted({task.split("_")[0] for task in tasks})
    try:
        proc = subprocess.run(["sacct", "-X", "-n", "-P", "-j", ",".join(jobs), "-o",
                               "JobID,State,ExitCode,ElapsedRaw"], capture_output=True,
                              text=True, timeout=30, env=env)
    except (OSError, subprocess.TimeoutExpired):
        return {}
    said_of: dict[str, tuple[str, str, int | None]] = {}
    remainder: dict[str, tuple[str, str, int | None]] = {}
    for line in proc.stdout.splitlines() if proc.returncode == 0 else []:
        job_id, state, exit_code, elapsed = (line.split("|") + ["", "", ""])[:4]
        said = (state.split(" ")[0], exit_code,
                int(elapsed) if elapsed.strip().isdigit() else None)
        named = array_tasks(job_id)
        # "100_[0-2]" is the array's pending remainder as it was when tasks left it to run
        # ("100_0" then has its own line, which is the one to believe).
        (said_of if named == [job_id] else remainder).update(dict.fromkeys(named, said))
    # A whole array cancelled while pending is first one plain "100" line, before slurmdbd
    # writes it as "100_[0-2]": it stands for every task without a line of its own (s35
    # tester R5: its parts read "missing" for those seconds)
    asked = {task: said_of[task.split("_")[0]] for task in tasks
             if "_" in task and task.split("_")[0] in said_of}
    return {**asked, **remainder, **said_of}


def timeout_lines(folder, manifest: dict, parts) -> list[str]:
    """One line per script whose parts reached their time limit (sacct's TIMEOUT): resubmitting
    gives them the same minutes, so say how to give more (s39 tester H3)."""
    from pathlib import Path

    from hpcds1mpi.measure.campaign import sbatch_value
    from hpcds1mpi.runtime.message_paths import shell_word

    timed: dict[int, list] = {}
    for part in parts:
        if part.state != "done" and part.ended.startswith("TIMEOUT"):
            timed.setdefault(part.nodes, []).append(part)
    lines = []
    for nodes, held in sorted(timed.items()):
        script = manifest["jobs"].get(str(nodes), {}).get("script", f"n{nodes}.sbatch")
        limit = sbatch_value(Path(folder) / script, "time", "t")
        now = f" (now {limit})" if limit else ""
        plan = shell_word(manifest.get("plan") or "PLAN")
        lines.append(f"{len(held)} part(s) of {script} reached their time limit{now}: "
                     "resubmitting gives them the same time, each going on where it stopped "
                     f"(a configuration longer than the limit never finishes); to give more, "
                     f"raise #SBATCH --time in {shell_word(str(Path(folder) / script))} "
                     f"before `hpcds1mpi campaign resubmit {shell_word(folder)}`, or emit again "
                     f"with a larger --time-limit (hpcds1mpi campaign {plan} --emit "
                     f"{manifest['scheduler']} --time-limit MINUTES --out NEW ...)")
    return lines
