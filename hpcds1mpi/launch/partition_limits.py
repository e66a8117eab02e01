"""What a Slurm partition lets a job ask for: its MaxTime, MaxNodes, memory limits and nodes.

A script asking for more than its partition allows is accepted by ``sbatch`` and then pends
forever (PartitionTimeLimit, MaxMemPerLimit, ReqNodeNotAvail: s33 tester A3/A5). The limits
come from ``scontrol show partition -o`` and the nodes' states from ``scontrol show node -o``,
asked once per process (:func:`limits_of`); where Slurm does not answer (no scontrol, no
configuration, a partition Slurm does not know) nothing is checked.

* :func:`keep_within` takes the ``#SBATCH`` lines of a script about to be written: a guessed
  time (a calibration's budget) and ``--mem=0`` (the whole node) are cut to the limit, with a
  note in the script; an estimate above a limit is kept and said on stderr, naming the limit
  and the fix.
* :func:`script_problems` says what in a user's script (``advise``) is above the limits or
  names a drained / down node; :func:`rewrite_refusal` refuses a ``--rewrite`` that would keep it.
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass, field

from hpcds1mpi.launch.directives import format_slurm_time
from hpcds1mpi.launch.script_options import parse_slurm_time
from hpcds1mpi.slurm_allocation import NoAnswer, ask_slurm, megabytes, parse_scontrol_nodes

#: Node states a job cannot start on (``scontrol``'s State=IDLE+DRAIN, DOWN*, ...).
UNUSABLE_STATES = ("DRAIN", "DOWN", "FAIL", "MAINT", "NOT_RESPONDING", "FUTURE", "INVAL")
#: Seconds one scontrol call may take (asked while the user waits).
ASK_TIMEOUT_S = 10.0
_CACHE: dict[tuple, "PartitionLimits | None"] = {}


@dataclass(frozen=True)
class PartitionLimits:
    """One partition's limits; None where the partition sets none (UNLIMITED)."""

    name: str
    max_time_s: int | None = None
    default_time_s: int | None = None
    max_nodes: int | None = None
    max_mem_per_node_mb: float | None = None
    max_mem_per_cpu_mb: float | None = None
    def_mem_per_cpu_mb: float | None = None
    node_states: dict[str, str] = field(default_factory=dict)
    #: the most memory (MB) any of its nodes has (RealMemory): sbatch refuses a --mem above
    #: it at once, "Memory specification can not be satisfied" (s47 tester K2)
    node_memory_mb: float | None = None
    #: CPUs each of its nodes gives jobs (CPUEfctv, else CPUTot): what a script's nodes and
    #: CPUs per node are judged on where this partition takes it (s48 tester Q5)
    node_cpus: dict[str, int] = field(default_factory=dict)

    def max_mem_mb(self, cpus_per_node: int) -> float | None:
        """The most memory (MB) a job may ask per node with ``cpus_per_node`` CPUs there."""
        if self.max_mem_per_node_mb is not None:
            return self.max_mem_per_node_mb
        if self.max_mem_per_cpu_mb is not None:
            return self.max_mem_per_cpu_mb * max(1, cpus_per_node)
        return None

    def unusable(self, nodes) -> list[str]:
        """``NAME (STATE)`` for each of ``nodes`` Slurm holds drained, down or failed."""
        return [f"{n} ({self.node_states[n].lower()})" for n in nodes
                if any(s in self.node_states.get(n, "") for s in UNUSABLE_STATES)]


def _megabytes(text: str) -> float | None:
    """Slurm's memory figure in MB (:func:`~hpcds1mpi.slurm_allocation.megabytes`); None for
    UNLIMITED or no number."""
    try:
        return megabytes(text)
    except ValueError:
        return None


def mem_option_mb(value: str) -> float | None:
    """``--mem``'s value (``3000``, ``3000M``, ``3G``, ``3GB``) in MB (MiB) as sbatch reads it;
    None where sbatch refuses it (``0.02G`` had been read as 20 MiB: s41 tester B9)."""
    from hpcds1mpi.launch.memory_forms import slurm_memory_mib

    return slurm_memory_mib(value)


def parse_partitions(text: str) -> dict[str, tuple[PartitionLimits, bool, str]]:
    """``scontrol show partition -o`` -> name -> (limits, is the default, its Nodes=)."""
    found = {}
    for line in text.splitlines():
        fields = dict(re.findall(r"(\w+(?:/\w+)?)=(\S*)", line))
        if "PartitionName" not in fields:
            continue
        max_nodes = fields.get("MaxNodes", "")
        found[fields["PartitionName"]] = (PartitionLimits(
            name=fields["PartitionName"],
            max_time_s=parse_slurm_time(fields.get("MaxTime", "")),
            default_time_s=parse_slurm_time(fields.get("DefaultTime", "")),
            max_nodes=int(max_nodes) if max_nodes.isdigit() else None,
            max_mem_per_node_mb=_megabytes(fields.get("MaxMemPerNode", "UNLIMITED")),
            max_mem_per_cpu_mb=_megabytes(fields.get("MaxMemPerCPU", "UNLIMITED")),
            def_mem_per_cpu_mb=_megabytes(fields.get("DefMemPerCPU", "UNLIMITED"))),
            fields.get("Default") == "YES", fields.get("Nodes", ""))
    return found


def parse_node_states(text: str) -> dict[str, str]:
    """``scontrol show node -o`` -> node name -> State (``IDLE+DRAIN``)."""
    return {node["NodeName"]: node.get("State", "") for node in parse_scontrol_nodes(text)}


def _ask(command: list[str]) -> str | None:
    """The command's output (:func:`~hpcds1mpi.slurm_allocation.ask_slurm`); None where Slurm
    does not answer."""
    try:
        return ask_slurm(command, dict(os.environ), ASK_TIMEOUT_S)
    except NoAnswer:
        return None


def limits_of(partition: str | None) -> PartitionLimits | None:
    """The limits of Slurm partition ``partition`` (None: Slurm's default partition), with
    its nodes' states; None where Slurm does not answer or knows no such partition. Asked once
    per process per partition and SLURM_CONF."""
    key = (partition, os.environ.get("SLURM_CONF", ""))
    if key not in _CACHE:
        _CACHE[key] = _read(partition)
    return _CACHE[key]


def _read(partition: str | None) -> PartitionLimits | None:
    text = _ask(["scontrol", "show", "partition", "-o"])
    if not text:
        return None
    parts = parse_partitions(text)
    chosen = parts.get(partition) if partition else next(
        (p for p in parts.values() if p[1]), None)
    if chosen is None:
        return None
    limits, _, nodes = chosen
    text = (_ask(["scontrol", "show", "node", "-o", nodes]) or "") if nodes else ""
    return PartitionLimits(**{**limits.__dict__, "node_states": parse_node_states(text),
                              "node_memory_mb": largest_node_memory(text),
                              "node_cpus": parse_node_cpus(text)})


def parse_node_cpus(text: str) -> dict[str, int]:
    """``scontrol show node -o`` -> node name -> the CPUs it gives jobs (CPUEfctv, which
    leaves out specialised cores, else CPUTot); nodes saying neither are left out."""
    found = {}
    for node in parse_scontrol_nodes(text):
        cpus = node.get("CPUEfctv", "") or node.get("CPUTot", "")
        if cpus.isdigit():
            found[node["NodeName"]] = int(cpus)
    return found


def largest_node_memory(text: str) -> float | None:
    """``scontrol show node -o`` -> the largest RealMemory (MB) of its nodes; None for none."""
    found = [_megabytes(node.get("RealMemory", "")) for node in parse_scontrol_nodes(text)]
    return max((mb for mb in found if mb), default=None)


def keep_within(lines: list[str], limits: PartitionLimits | None, *, cpus_per_node: int,
                time_guessed: bool = False, say=None) -> tuple[list[str], list[str]]:
    """``#SBATCH`` ``lines`` kept within ``limits``: (the lines, notes for the script).

    A guessed ``--time`` (``time_guessed``: a calibration's budget) above MaxTime and a
    ``--mem=0`` (the whole node) above MaxMemPerNode are cut to the limit, with a note; an
    estimated time, a ``--mem=NM`` or ``--nodes`` above the limit is kept and said through
    ``say`` (else stderr) as one warning naming the limit and the fix (s33 tester A3)."""
    if limits is None:
        return lines, []
    out, notes, where = [], [], f"partition {limits.name}"
    say = say or (lambda text: print(f"warning: {text}", file=sys.stderr))
    for line in lines:
        name, _, value = line.removeprefix("#SBATCH ").partition("=")
        if name == "--time" and limits.max_time_s is not None:
            asked = parse_slurm_time(value)
            if asked is not None and asked > limits.max_time_s:
                limit = format_slurm_time(limits.max_time_s)
                if time_guessed:  # a budget: cut, said in the script and on stderr
                    line = f"#SBATCH --time={limit}"
                    notes.append(f"--time {value} cut to {where}'s MaxTime {limit}")
                    print(f"note: the script's --time {value} is cut to {where}'s MaxTime "
                          f"{limit}; if it needs longer, use another partition or fewer "
                          "repeats or sizes", file=sys.stderr)
                else:
                    say(f"the script asks --time={value}, above {where}'s MaxTime {limit}: "
                        "Slurm would hold it (PartitionTimeLimit); use another partition, or "
                        "fewer repeats or sizes")
        elif name == "--mem":
            most = limits.max_mem_mb(cpus_per_node)
            asked = mem_option_mb(value) if value != "0" else None
            if most is not None and value == "0":
                line = f"#SBATCH --mem={int(most)}M"
                notes.append(f"--mem=0 (the whole node) cut to {where}'s MaxMemPerNode "
                             f"{int(most)}M")
            elif most is not None and asked is not None and asked > most:
                say(f"the script asks --mem={value}, above {where}'s memory limit "
                    f"{int(most)}M: Slurm would hold it (MaxMemPerLimit); use more nodes or "
                    "another partition")
            elif asked is not None and limits.node_memory_mb is not None \
                    and asked > limits.node_memory_mb:  # s48: RealMemory was not read here
                say(f"the script asks --mem={value}, above {node_memory_words(limits)}; use "
                    "more nodes or another partition")
        elif name == "--nodes" and limits.max_nodes is not None and value.isdigit() \
                and int(value) > limits.max_nodes:
            say(f"the script asks --nodes={value}, above {where}'s MaxNodes "
                f"{limits.max_nodes}: Slurm would hold it; use another partition")
        out.append(line)
    return out, notes


def script_problems(script, limits: PartitionLimits | None) -> list[str]:
    """What in ``script`` (advise's JobScript) Slurm would hold forever on ``limits``'s
    partition, one line each: --time, --mem, --nodes above the limit, a --nodelist node that
    is drained or down (s33 tester A5)."""
    if limits is None or script.scheduler != "slurm":
        return []
    found, where = [], f"partition {limits.name}"
    if limits.max_time_s is not None and (script.time_s or 0) > limits.max_time_s:
        found.append(f"--time {format_slurm_time(script.time_s)} is above {where}'s MaxTime "
                     f"{format_slurm_time(limits.max_time_s)}: the job would pend "
                     "(PartitionTimeLimit); ask for less or use another partition")
    mem = script.directives.get("mem")
    asked = mem_option_mb(str(mem.value)) if mem is not None and mem.value else None
    cpus = (script.ntasks_per_node or 1) * (script.cpus_per_task or 1)
    most = limits.max_mem_mb(cpus)
    if most is not None and mem is not None and (asked is not None and asked > most
                                                 or mem.value == "0"):
        found.append(f"--mem={mem.value} (line {mem.line}) is above {where}'s memory limit "
                     f"{int(most)}M: the job would pend (MaxMemPerLimit); ask for at most "
                     f"{int(most)}M")
    elif limits.node_memory_mb is not None and asked is not None \
            and asked > limits.node_memory_mb:
        found.append(f"--mem={mem.value} (line {mem.line}) is above "
                     f"{node_memory_words(limits)}; ask for at most "
                     f"{int(limits.node_memory_mb)}M")
    if limits.max_nodes is not None and (script.nodes or 0) > limits.max_nodes:
        found.append(f"--nodes={script.nodes} is above {where}'s MaxNodes {limits.max_nodes}: "
                     "the job would pend; use fewer nodes or another partition")
    nodelist = script.directives.get("nodelist")
    if nodelist is not None and nodelist.value:
        bad = limits.unusable(_hostnames(str(nodelist.value)))
        if bad:
            found.append(f"--nodelist (line {nodelist.line}) names {', '.join(bad)}: the job "
                         "would pend (ReqNodeNotAvail); leave it out or name usable nodes")
    return found


def node_memory_words(limits: PartitionLimits) -> str:
    """``the memory of partition P's nodes (4000M): sbatch refuses it (...)``, one wording
    for a user's script (:func:`script_problems`) and one we write (:func:`keep_within`)."""
    return (f"the memory of partition {limits.name}'s nodes ({int(limits.node_memory_mb)}M): "
            "sbatch refuses it (Memory specification can not be satisfied)")


def _hostnames(nodelist: str) -> list[str]:
    """Slurm's host list (``m[1-2],n3``) as names (``scontrol show hostnames``'s rule)."""
    names = []
    for part in re.findall(r"[^,\[]+(?:\[[^\]]*\])?", nodelist):
        match = re.fullmatch(r"(.*)\[(.*)\]", part)
        if match is None:
            names.append(part)
            continue
        for piece in match.group(2).split(","):
            low, _, high = piece.partition("-")
            for i in range(int(low), int(high or low) + 1):
                names.append(f"{match.group(1)}{i:0{len(low)}d}")
    return names


def advise_warnings(script, partition, default_queue: bool = False,
                    queue: str | None = None) -> list[str]:
    """:func:`script_problems` of ``script`` on the Slurm partition it asks for, else
    :func:`read_on`'s, read from Slurm."""
    if script.scheduler != "slurm":
        return []
    return script_problems(script, limits_of(script.partition or read_on(partition,
                                                                         default_queue, queue)))


def slurm_partitions() -> list[str] | None:
    """The names of Slurm's partitions; None where Slurm does not answer."""
    text = _ask(["scontrol", "show", "partition", "-o"])
    return list(parse_partitions(text)) if text else None


def default_queue_limits(script, default_queue: bool, queue: str | None = None,
                         source: str = "SBATCH_PARTITION") -> PartitionLimits | None:
    """The limits of Slurm's default partition where a Slurm ``script`` naming no partition
    is advised on this machine (``default_queue``): the partition sbatch gives it, and the
    only one its asks are checked against (s48: this machine's 'local' was checked too);
    ``queue``: the partition ``SBATCH_PARTITION`` (``source``: or ``advise --partition``)
    gives it instead (s48 review RX4), one Slurm does not have refused; None elsewhere, or where Slurm does not answer.

    Raises:
        ConfigError: ``queue`` names a partition Slurm does not have.
    """
    from hpcds1mpi.launch.sbatch_partition import first_partition, refuse_unknown

    if not default_queue or script.scheduler != "slurm" or script.partition:
        return None
    limits = limits_of(first_partition(queue) if queue else None)
    if queue and (limits is None or "," in queue):  # a name Slurm lacks is refused
        refuse_unknown(queue, slurm_partitions(), source)
    return limits


def checked_partition(partition, limits: PartitionLimits | None):
    """``partition`` (this machine's, whose layouts are predicted) as the memory checks of a
    script sent to Slurm partition ``limits`` read it: that partition's name and its nodes'
    memory (RealMemory; a GB is 1000 MiB here, as Slurm's is read); ``partition`` itself
    where ``limits`` is None or its nodes' memory is not known."""
    from dataclasses import replace

    if limits is None or limits.node_memory_mb is None:
        return partition
    return replace(partition, name=limits.name, slurm_partition=limits.name,
                   memory_gb=limits.node_memory_mb / 1000.0)


def fit_partition(partition, limits: PartitionLimits | None, nodes: int | None = None):
    """``partition`` (this machine's) as the asked layout's fit is judged where Slurm
    partition ``limits`` takes the script: that partition's name, its node count (within
    MaxNodes) and the most CPUs per node ``nodes`` of its nodes all have (None: one node),
    this machine's GPUs (s48 tester Q5: 2 nodes were refused as 'local' has 1, while the
    default partition that ran them has 2); ``partition`` itself where ``limits`` is None or
    its nodes' CPUs are not known."""
    from dataclasses import replace

    if limits is None or not limits.node_cpus:
        return partition
    cpus = sorted(limits.node_cpus.values(), reverse=True)
    count = len(cpus) if limits.max_nodes is None else min(len(cpus), limits.max_nodes)
    return replace(checked_partition(partition, limits), name=limits.name,
                   slurm_partition=limits.name, max_nodes=count,
                   cores_per_node=cpus[min(max(nodes or 1, 1), len(cpus)) - 1])


def read_on(partition, default_queue: bool, queue: str | None = None) -> str | None:
    """The Slurm partition that takes a script naming none, advised on ``partition``: its
    name, or with ``default_queue`` (``partition`` is this machine, whose made-up name no Slurm
    knows) the one ``SBATCH_PARTITION`` names (``queue``), else None, Slurm's default
    partition, as ``recommend --emit`` says (:func:`~hpcds1mpi.places.default_queue_note`;
    s47 tester K2: nothing was checked)."""
    from hpcds1mpi.launch.sbatch_partition import first_partition

    if default_queue:
        return first_partition(queue) if queue else None
    return partition.slurm_partition or partition.name


def rewrite_refusal(script, layout, queue: str | None = None) -> str:
    """``--rewrite refused: ...`` where the rewritten script would keep what Slurm holds
    forever or sbatch refuses (:func:`script_problems`; a time the rewrite replaces is not
    kept), else "". ``queue``: the partition a script naming none was read on, as
    :func:`advise_warnings` takes it (None: Slurm's default)."""
    if script.scheduler != "slurm":
        return ""
    problems = [p for p in script_problems(script, limits_of(layout.partition or script.partition
                                                             or queue))
                if not (p.startswith("--time") and layout.time_s is not None)
                and not p.startswith("--nodes=")]
    return f"--rewrite refused: {problems[0]}" if problems else ""
