"""Reading a Slurm allocation: what ``SLURM_*`` and ``scontrol`` say it holds.

The node's hardware from ``scontrol show node`` (:func:`parse_scontrol_nodes`,
:func:`gpus_from_gres`), the allocation's share of each node (:func:`allocation_cpus_per_node`
from ``SLURM_JOB_CPUS_PER_NODE`` / ``SLURM_CPUS_ON_NODE``, :func:`allocation_memory_mb` from
``SLURM_MEM_PER_NODE`` / ``SLURM_MEM_PER_CPU``) and its first node (:func:`first_node`).
Plain figures only: :func:`hpcds1mpi.cluster.detect_slurm` turns them into a partition.

Those figures are believed only inside an allocation (:func:`in_allocation`): a
``SLURM_JOB_ID`` that Slurm says is no running job (a shell left from an ended ``salloc``, a
copied environment) is a leftover, and its ``SLURM_*`` are ignored with one note
(:func:`leftover_job`; s32 tester T4: ``SLURM_NNODES=4 SLURM_CPUS_ON_NODE=64`` of job 123,
which did not exist, made this 2-core VM a "4 nodes x 64 cores" partition named 'slurm').
The same one answer gives the job's node count, CPUs and partition, and ``SLURM_*`` that
contradict them (copied from another job that does run: s35 tester X3, ``SLURM_NNODES=2
SLURM_CPUS_ON_NODE=64`` beside the id of a running 1-node, 1-CPU job) are ignored the same
way, with one note naming them (:func:`contradicted`). Slurm is asked once per process
(:func:`first_job_facts`, shared with the sweep's :mod:`hpcds1mpi.measure.allocation_state`);
where it does not answer (no squeue, no configuration, no answer in :data:`ASK_TIMEOUT_S`) the
variables are believed as before: inside a real allocation Slurm always answers. Under
``slurmstepd`` (a batch script, a step) nothing is asked: the variables are Slurm's own.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from typing import NamedTuple

#: squeue states of an allocation that still runs its steps.
ALIVE = ("RUNNING", "CONFIGURING", "RESIZING", "SUSPENDED")
#: Seconds one squeue / sacct call may take: a few, as it is asked while the user waits.
ASK_TIMEOUT_S = 5.0
#: What squeue is asked of a job, in one call: state, nodes, CPUs, partition (s35 tester X3).
JOB_FORMAT = "%T %D %C %P"
#: A count as Slurm writes it, read only within int()'s bounds (s29 tester H4).
_COUNT = re.compile(r"[0-9]{1,9}")
#: The first answer about each job, per process: (job, SLURM_CONF, PATH) -> JobFacts or NoAnswer.
_FIRST_STATES: dict[tuple, "JobFacts | NoAnswer"] = {}
#: Jobs whose leftover note was said in this process (said once, by whichever reader is first).
_SAID_LEFTOVER: set[str] = set()
#: Set in this process's environment once a job id was found a leftover, so that the processes
#: it starts (a sweep's launches) neither ask Slurm again nor say the note again (s32 V3).
LEFTOVER_VARIABLE = "HPCDS1MPI_SLURM_LEFTOVER"
#: The rank an MPI launcher gives each process: only the first says the note (s32 V3: one
#: note per rank of `mpiexec -n 2 hpcds1mpi sweep`).
RANK_VARIABLES = ("PMI_RANK", "PMIX_RANK", "OMPI_COMM_WORLD_RANK")


class NoAnswer(Exception):
    """squeue or sacct did not answer (timed out, could not start); ``str`` says which."""


def ask_slurm(command: list[str], env: dict, timeout_s: float) -> str | None:
    """The command's stdout, stripped; None when it exits non-zero.

    Raises:
        NoAnswer: it did not finish within ``timeout_s`` or could not start.
    """
    try:
        proc = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s,
                              env=env, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise NoAnswer(f"{command[0]} did not answer in {timeout_s:g} s") from None
    except OSError as exc:
        raise NoAnswer(f"{command[0]} could not start ({exc.strerror})") from None
    return proc.stdout.strip() if proc.returncode == 0 else None


class JobFacts(NamedTuple):
    """What squeue says of a job: its state ("" when it no longer lists it), and for a job of
    one component its nodes, CPUs (all nodes together) and partition (None / "" otherwise)."""

    state: str
    nodes: int | None = None
    cpus: int | None = None
    partition: str = ""


def job_facts(job: str, env: dict, timeout_s: float) -> JobFacts:
    """squeue's :class:`JobFacts` of ``job`` now, in one call (:data:`JOB_FORMAT`).

    Raises:
        NoAnswer: squeue did not answer, or refused ``job`` while still listing it (or
            listing nothing: no configuration, no controller).
    """
    text = ask_slurm(["squeue", "-h", "-j", job, "-o", JOB_FORMAT], env, timeout_s)
    if text is None:  # squeue refuses a job it no longer holds: "Invalid job id specified"
        listed = ask_slurm(["squeue", "-h", "-o", "%i"], env, timeout_s)
        if listed is None or job in listed.split():
            raise NoAnswer("squeue failed")
        return JobFacts("")
    lines = text.splitlines()
    words = lines[0].split() if lines else []
    if not words:
        return JobFacts("")
    if len(lines) > 1 or len(words) != 4:  # a heterogeneous job's components: state only
        return JobFacts(words[0])
    nodes, cpus = (int(w) if _COUNT.fullmatch(w) else None for w in words[1:3])
    return JobFacts(words[0], nodes, cpus, words[3])


def job_state(job: str, env: dict, timeout_s: float) -> str:
    """squeue's state of ``job`` now ("RUNNING"), "" when squeue no longer lists it.

    Raises:
        NoAnswer: as :func:`job_facts`.
    """
    return job_facts(job, env, timeout_s).state


def first_job_facts(job: str, env: dict, timeout_s: float | None = None) -> JobFacts:
    """:func:`job_facts` asked once per process per job (and Slurm configuration, PATH):
    every later call gets the first answer, or the first NoAnswer again.

    Raises:
        NoAnswer: as :func:`job_facts`, the first time and every time after.
    """
    key = (job, env.get("SLURM_CONF", ""), env.get("PATH", ""))
    if key not in _FIRST_STATES:
        try:
            _FIRST_STATES[key] = job_facts(job, env, timeout_s or ASK_TIMEOUT_S)
        except NoAnswer as exc:
            _FIRST_STATES[key] = exc
    answer = _FIRST_STATES[key]
    if isinstance(answer, NoAnswer):
        raise answer
    return answer


def first_job_state(job: str, env: dict, timeout_s: float | None = None) -> str:
    """The state of :func:`first_job_facts` (asked once per process per job).

    Raises:
        NoAnswer: as :func:`job_facts`.
    """
    return first_job_facts(job, env, timeout_s).state


def total_cpus(text: str) -> int | None:
    """CPUs in all of ``SLURM_JOB_CPUS_PER_NODE`` ("2", "1(x2)", "4,2(x3)": 10); None where
    it is not that form."""
    total = 0
    for part in text.split(","):
        match = re.fullmatch(r"\s*([0-9]{1,9})\s*(?:\(x([0-9]{1,9})\))?\s*", part)
        if match is None:
            return None
        total += int(match.group(1)) * int(match.group(2) or 1)
    return total


def contradicted(env: dict, facts: JobFacts) -> list[str]:
    """The ``SLURM_*`` of ``env`` that contradict what Slurm says of the job (``facts``),
    as "NAME=VALUE" (s35 tester X3: another job's variables beside a running job's id): a
    node count other than its nodes, more CPUs than it holds on all its nodes, another
    partition. A count that is not a number is left to the reader (it says so)."""
    wrong = []
    for name in ("SLURM_JOB_NUM_NODES", "SLURM_NNODES"):
        value = env.get(name, "").strip()
        if facts.nodes is not None and _COUNT.fullmatch(value) and int(value) != facts.nodes:
            wrong.append(f"{name}={value}")
    # CPUs: only more than the job holds (fewer would still fit; Slurm's two counts could
    # differ in ways not worth dropping a real allocation for)
    for name, count in (("SLURM_CPUS_ON_NODE", None), ("SLURM_JOB_CPUS_PER_NODE", total_cpus)):
        value = env.get(name, "").strip()
        cpus = (count(value) if count else int(value) if _COUNT.fullmatch(value) else None) \
            if value else None
        if facts.cpus is not None and cpus is not None and cpus > facts.cpus:
            wrong.append(f"{name}={value}")
    partition = env.get("SLURM_JOB_PARTITION", "").strip()
    if facts.partition and partition and partition != facts.partition:
        wrong.append(f"SLURM_JOB_PARTITION={partition}")
    return wrong


def leftover_job(env: dict | None = None, timeout_s: float | None = None) -> str:
    """The note for a ``SLURM_JOB_ID`` whose ``SLURM_*`` describe no allocation this process
    runs in: Slurm says it is no running job ("SLURM_JOB_ID=123 names no running allocation
    ...: unset ..."), or a running one that its variables contradict (:func:`contradicted`,
    s35 tester X3); else "": unset, not a job number, no squeue on PATH, under slurmstepd,
    the job runs as its variables say, or Slurm does not answer (:func:`first_job_facts`)."""
    env = dict(os.environ if env is None else env)
    job = env.get("SLURM_JOB_ID", "").strip()
    if not job.isdigit() or shutil.which("squeue", path=env.get("PATH")) is None:
        return ""
    if job == os.environ.get("SLURM_JOB_ID", "").strip() and under_slurmstepd():
        return ""  # a batch script's or a step's process: the job runs, nothing to ask
    if env.get(LEFTOVER_VARIABLE) == job:
        facts = JobFacts("found so by the process that started this one")
    else:
        try:
            facts = first_job_facts(job, env, timeout_s)
        except NoAnswer:
            return ""
    ignored = ("its SLURM_* variables are ignored (this machine is used, as outside Slurm); "
               "they are left from an ended allocation or a copied environment: unset them "
               "(unset ${!SLURM_@}), or run inside ")
    if facts.state not in ALIVE:
        state = facts.state or "squeue does not list it"
        return (f"SLURM_JOB_ID={job} names no running allocation ({state}): {ignored}an "
                "allocation (salloc, sbatch)")
    wrong = contradicted(env, facts)
    if not wrong:
        return ""
    held = [f"{count} {word}{'s' * (count != 1)}" for count, word in
            ((facts.nodes, "node"), (facts.cpus, "CPU")) if count is not None]
    where = f" in partition {facts.partition}" if facts.partition else ""
    return (f"SLURM_JOB_ID={job} is a running job of {' and '.join(held) or 'other figures'}"
            f"{where}, which {', '.join(wrong)} contradict{'s' * (len(wrong) == 1)}: "
            f"{ignored}that job (its batch script, its salloc shell, or srun --jobid={job})")


def under_slurmstepd(pid: int | None = None, most: int = 64) -> bool:
    """Whether a ``slurmstepd`` is among this process's ancestors (read from ``/proc``): then
    it runs in a batch script or a step of a live job, and Slurm need not be asked (every
    rank of a wide ``srun`` asking squeue would load the controller for nothing). False where
    ``/proc`` cannot be read (Slurm is asked)."""
    pid = os.getppid() if pid is None else pid
    for _ in range(most):
        if pid <= 1:
            return False
        try:
            with open(f"/proc/{pid}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            return False
        name = stat[stat.find(b"(") + 1:stat.rfind(b")")]
        if name == b"slurmstepd":
            return True
        pid = int(stat[stat.rfind(b")") + 2:].split()[1])
    return False


def say_leftover_once(job: str, line: str, say=None) -> None:
    """Say the leftover-job ``line`` (through ``say``, else on stderr as a note) once per
    process per job, whichever reader finds it first."""
    inherited = os.environ.get(LEFTOVER_VARIABLE) == job
    os.environ[LEFTOVER_VARIABLE] = job  # for the processes this one starts
    later_rank = any(os.environ.get(name, "0").strip() not in ("", "0")
                     for name in RANK_VARIABLES)
    if job in _SAID_LEFTOVER or inherited or later_rank:
        return
    _SAID_LEFTOVER.add(job)
    if say is not None:
        say(line)
    else:
        print(f"note: {line}", file=sys.stderr)


def in_allocation(env: dict | None = None, say=None) -> bool:
    """Whether ``SLURM_*`` describe an allocation this process runs in: ``SLURM_JOB_ID`` is
    set and is no leftover (:func:`leftover_job`, whose note is said once: ``say`` or stderr).
    Where Slurm does not answer, a set ``SLURM_JOB_ID`` is believed."""
    env = dict(os.environ if env is None else env)
    if "SLURM_JOB_ID" not in env:
        return False
    note = leftover_job(env)
    if note:
        say_leftover_once(env["SLURM_JOB_ID"].strip(), note, say)
        return False
    return True


def parse_scontrol_nodes(text: str) -> list[dict]:
    """Parse ``scontrol show node`` output into one dict per node (key=value pairs)."""
    nodes, current = [], None
    for line in text.splitlines():
        if line.startswith("NodeName="):
            current = {}
            nodes.append(current)
        if current is None:
            continue
        for match in re.finditer(r"(\w+(?:/\w+)?)=(\S*)", line):
            current.setdefault(match.group(1), match.group(2))
    return nodes


def gpus_from_gres(gres: str) -> int:
    """GPUs a node's ``Gres`` field counts (``gpu:4``, ``gpu:a100:2,gpu:v100:1``); 0 for none."""
    total = 0
    for part in gres.split(","):
        m = re.match(r"gpu(?::[^:(]+)?:(\d+)", part)
        if m:
            total += int(m.group(1))
    return total


def allocation_cpus_per_node(env) -> int | None:
    """CPUs a Slurm allocation holds on each of its nodes (the fewest, so that every node holds
    a configuration), or None when the environment does not say.

    ``SLURM_JOB_CPUS_PER_NODE`` ("2", "1(x2)", "2,1", "4,2(x3)") is set everywhere in the
    allocation, salloc's shell included; ``SLURM_CPUS_ON_NODE`` only on its nodes.

    Raises:
        ValueError: a count that is not a number.
    """
    text = env.get("SLURM_JOB_CPUS_PER_NODE", "").strip()
    if text:
        counts = []
        for part in text.split(","):
            match = re.fullmatch(r"\s*(\d+)\s*(?:\(x\d+\))?\s*", part)
            if match is None:
                raise ValueError(f"SLURM_JOB_CPUS_PER_NODE={text!r}")
            counts.append(int(match.group(1)))
        if min(counts) > 0:
            return min(counts)
    cpus = env.get("SLURM_CPUS_ON_NODE", "").strip()
    return int(cpus) if cpus.isdigit() and int(cpus) > 0 else None


def allocation_memory_mb(env, cpus: int) -> float:
    """Memory (MB) the allocation holds per node when it asked for some (``--mem``: SLURM_MEM_PER_NODE;
    ``--mem-per-cpu``: SLURM_MEM_PER_CPU x its CPUs there), else 0 (the node's then).

    Raises:
        ValueError: a figure that is not a number.
    """
    if env.get("SLURM_MEM_PER_NODE"):
        return float(megabytes(env["SLURM_MEM_PER_NODE"]))
    if env.get("SLURM_MEM_PER_CPU"):
        return float(megabytes(env["SLURM_MEM_PER_CPU"])) * cpus
    return 0.0


def job_memory_mb(text: str, cpus: int) -> float:
    """Memory (MB) per node ``scontrol show job``'s ``text`` says the job holds:
    ``MinMemoryNode``, else ``MinMemoryCPU`` x ``cpus`` (the partition's or the site's
    DefMemPerCPU lands there when the job asked for none); 0 where it says neither."""
    fields = dict(re.findall(r"(MinMemory(?:Node|CPU))=(\S+)", text))
    try:
        if fields.get("MinMemoryNode"):
            return megabytes(fields["MinMemoryNode"])
        if fields.get("MinMemoryCPU"):
            return megabytes(fields["MinMemoryCPU"]) * cpus
    except ValueError:
        pass
    return 0.0


def asked_job_memory_mb(env, cpus: int) -> float:
    """:func:`allocation_memory_mb`, else what Slurm says the job holds (:func:`job_memory_mb`:
    an allocation that asked for no memory gets DefMemPerCPU, not the node's; s33 tester A1:
    ``salloc -p short -N1`` holds 1000M, read as the node's 4.0 GB); 0 where neither says."""
    asked = allocation_memory_mb(env, cpus)
    job = env.get("SLURM_JOB_ID", "").strip()
    if asked or not job.isdigit():
        return asked
    try:
        text = ask_slurm(["scontrol", "show", "job", job], env, ASK_TIMEOUT_S)
    except NoAnswer:
        return 0.0
    return job_memory_mb(text or "", cpus)


def megabytes(text: str) -> float:
    """Slurm's memory figure (MB, or with a K/M/G/T suffix) in MB; ValueError otherwise."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?)B?\s*", text, re.IGNORECASE)
    if match is None:
        raise ValueError(f"memory {text!r}")
    scale = {"K": 1 / 1024, "": 1, "M": 1, "G": 1024, "T": 1024 ** 2}[match.group(2).upper()]
    return float(match.group(1)) * scale


def first_node(env: dict) -> str:
    """The allocation's first node name (``scontrol show hostnames`` of SLURM_JOB_NODELIST)."""
    nodelist = env.get("SLURM_JOB_NODELIST") or env.get("SLURM_NODELIST") or ""
    if not nodelist:
        return ""
    try:
        out = subprocess.run(["scontrol", "show", "hostnames", nodelist], capture_output=True,
                             text=True, timeout=20, check=True).stdout.split()
    except (OSError, subprocess.SubprocessError):
        return ""
    return out[0] if out else ""
