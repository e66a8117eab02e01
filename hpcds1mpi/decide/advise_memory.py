"""The memory a script asks per node against the predicted need, for ``advise``.

Before, advise compared layouts and time limits but never memory: a script asking
``--mem=100M`` for a job predicted to need 363 MiB per node was called the recommended
layout, and ``--rewrite`` kept the 100M where ``recommend``'s own script asks 1364M (s40
tester D12). Now the script's ask is read (``--mem``, or ``--mem-per-cpu`` x its CPUs per
node: the ranks per node of the layout advise read, ``--ntasks`` or ``--ntasks-per-node``, x
``--cpus-per-task``), a warning says when it is below the predicted need of the script's layout, and
``--rewrite`` raises a ``--mem`` below the need of the layout it writes to what ``recommend``
would ask (:func:`~hpcds1mpi.launch.directives.memory_request_mib`), and a ``--mem-per-cpu``
to that over the CPUs the rewritten script gives a node (s41 tester B8: it was kept, and the
warning's fix was a ``--mem``, which sbatch refuses beside it). A PBS script's limits —
``mem`` / ``vmem`` in its select chunks or job-wide, ``pmem`` / ``pvmem`` per rank
(:mod:`hpcds1mpi.launch.pbs_memory`) — are judged alike, the smallest first, and ``--rewrite``
raises in PBS's syntax each that leaves a host of the layout it writes below its need (before,
only Slurm's were read: a ``select=...:mem=1mb`` job was called the recommended layout). A
script that asks no memory gets the site's default, which is not known here: nothing is said
of it. A Slurm ask above what a node of the picked partition holds, which sbatch refuses, is
lowered by ``--rewrite`` to the most a node holds where the predicted need fits in it, and the
rewrite refused in one line where it does not (:func:`memory_refusal`; s41: it was kept with
a warning only).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from hpcds1mpi.cluster import Partition
    from hpcds1mpi.launch.job_script import JobScript
    from hpcds1mpi.launch.script_options import Option


def _asked_option_mib(script: "JobScript", name: str) -> tuple[float | None, "Option | None"]:
    """(MiB the Slurm directive ``name`` asks, the directive); ``(None, None)`` where the
    script does not give it, gives 0 (the whole node), or is not Slurm."""
    from hpcds1mpi.launch.partition_limits import mem_option_mb

    opt = script.directives.get(name) if script.scheduler == "slurm" else None
    if opt is None or not opt.value or str(opt.value) == "0":
        return None, None
    return mem_option_mb(str(opt.value)), opt


def asked_memory_mib(script: "JobScript", ranks_per_node: int) -> tuple[float | None, str]:
    """(MiB per node the ``script`` asks for, how it asks it, e.g. ``--mem=100M (line 6)``);
    ``(None, "")`` where it asks none or the whole node (``--mem=0``). A PBS script's is its
    smallest limit (:func:`~hpcds1mpi.launch.pbs_memory.memory_asks`).

    ``ranks_per_node`` is the layout's as advise read it (``JobScript.layout``): Slurm counts
    ``--mem-per-cpu`` over the CPUs it gives a node, its tasks x ``--cpus-per-task``, whether
    the script says ``--ntasks`` or ``--ntasks-per-node`` (s40 review: ``--nodes=1
    --ntasks=2 --mem-per-cpu=30M`` was read as 1 CPU, 30 MiB, and warned)."""
    if script.scheduler == "pbs":
        from hpcds1mpi.launch.pbs_memory import memory_asks

        read = [a for a in memory_asks(script, ranks_per_node) if a.mib is not None]
        least = min(read, key=lambda a: a.mib, default=None)
        return (least.mib, least.how) if least is not None else (None, "")
    mib, mem = _asked_option_mib(script, "mem")
    if mem is not None:
        return mib, f"--mem={mem.value} (line {mem.line})"
    mib, per_cpu = _asked_option_mib(script, "mem-per-cpu")
    if per_cpu is not None:
        cpus = _slurm_cpus_per_node(script, ranks_per_node)
        return (None if mib is None else mib * cpus,
                f"--mem-per-cpu={per_cpu.value} (line {per_cpu.line}) x {cpus} CPUs per node")
    return None, ""


def _slurm_cpus_per_node(script: "JobScript", ranks_per_node: int) -> int:
    """The CPUs Slurm gives a node of ``script`` as its directives ask them (tasks per node x
    ``--cpus-per-task``), which ``--mem-per-cpu`` counts over — not the ranks a launch line
    starts in them (the last review of s40: ``--ntasks-per-node=4 --mem-per-cpu=15M`` under
    ``mpiexec -n 2`` was read as 30 MiB where Slurm gives 60); ``ranks_per_node`` where the
    directives name no task count."""
    asked = script.base[0] if getattr(script, "base", None) else {}
    per_node, ntasks = asked.get("ntasks_per_node"), asked.get("ntasks")
    if per_node:
        tasks = int(per_node)
    elif ntasks:
        tasks = -(-int(ntasks) // max(1, int(asked.get("nodes") or 1)))
    else:
        tasks = max(1, int(ranks_per_node))
    return max(1, tasks) * int(asked.get("cpus_per_task") or script.cpus_per_task or 1)


def memory_warnings(script: "JobScript", need_mib: float, partition: "Partition",
                    layout: str, ranks_per_node: int, slurm_said: bool = False) -> list[str]:
    """The warning for a script asking less memory per node than its layout (``layout``, read
    as ``ranks_per_node`` ranks a node) is predicted to need (``need_mib``, host MiB per
    node), and one for each PBS size qsub would refuse; [] where it asks enough, or either
    is unknown. ``slurm_said``: a ``--mem`` above the node is said by the partition's Slurm
    limits (:func:`~hpcds1mpi.launch.partition_limits.script_problems`), not again here."""
    from hpcds1mpi.errors import ConfigError
    from hpcds1mpi.launch.directives import MEMORY_FLOOR_MIB, MEMORY_MARGIN, memory_request_mib
    from hpcds1mpi.launch.pbs_memory import memory_asks, unreadable_sizes

    pbs = memory_asks(script, ranks_per_node)
    out = unreadable_sizes(pbs)
    asked, how = asked_memory_mib(script, ranks_per_node)
    if not (slurm_said and how.startswith("--mem=")):
        out += _above_node(script, asked, how, partition, ranks_per_node)
    if asked is None or not math.isfinite(need_mib) or need_mib <= 0 or asked >= need_mib:
        return out
    try:
        request = memory_request_mib(need_mib, partition.memory_gb)
    except ConfigError:  # above the node: the fit check says that
        return out
    fix = " and ".join(f"{'-l ' if a.option.name.startswith('l:') else 'select ...:'}"
                       f"{a.resource}={a.raised(request)}" for a in pbs
                       if a.mib is not None and a.mib < need_mib) if pbs else \
        _slurm_fix(script, request, ranks_per_node)
    return out + [f"the script asks {how} = {asked:.0f} MiB per node, below the predicted "
                  f"need of {need_mib:.0f} MiB per node of {layout}: a site that enforces it "
                  f"kills the job; ask {fix} (the need x {MEMORY_MARGIN:g}, at least "
                  f"{MEMORY_FLOOR_MIB:.0f} MiB more, as recommend writes it)"]


def _above_node(script: "JobScript", asked: float | None, how: str, partition: "Partition",
                ranks_per_node: int) -> list[str]:
    """The warning for a Slurm script asking more memory per node than a node of
    ``partition`` has, which sbatch refuses (s41 tester B9: ``--mem=1T`` on a 4 GB partition
    was not said); [] otherwise."""
    node_mib = _node_mib(partition)
    if script.scheduler != "slurm" or asked is None or not node_mib or asked <= node_mib:
        return []
    most = (f"--mem-per-cpu={int(node_mib // _slurm_cpus_per_node(script, ranks_per_node))}M"
            if how.startswith("--mem-per-cpu") else f"--mem={int(node_mib)}M")
    return [f"the script asks {how} = {asked:.0f} MiB per node, above the {node_mib:.0f} MiB "
            f"a node of partition {partition.name!r} has: sbatch refuses the job (\"Requested "
            f"node configuration is not available\"); ask at most {most}, or use a partition "
            "with more memory"]


def _node_mib(partition: "Partition") -> float:
    """The memory of a node of ``partition`` in MiB (Slurm's GB is 1000 MiB); 0: not known."""
    return float(getattr(partition, "memory_gb", 0) or 0) * 1000.0


def memory_refusal(script: "JobScript", side, partition: "Partition") -> str:
    """``--rewrite refused: ...`` where a Slurm script asks memory and the layout it would be
    rewritten to (``side``: advise's recommended side, its ``mem_need_mib`` and ``text()``)
    is predicted to need more than a node of ``partition`` holds: no ``--mem`` a node can
    give fits the job (s41: one above the node was kept, with a warning only); "" otherwise."""
    need_mib, layout = float(side.mem_need_mib), side.text()
    node_mib = _node_mib(partition)
    asked, how = asked_memory_mib(script, 1)
    if script.scheduler != "slurm" or not how or not node_mib or not need_mib > node_mib:
        return ""
    return (f"--rewrite refused: the job does not fit: {layout} is predicted to need "
            f"{need_mib:.0f} MiB per node, more than the {node_mib:.0f} MiB a node of partition "
            f"{partition.name!r} holds, so no memory the script asks ({how}) can be met; use "
            "more nodes or a partition with more memory")


def _slurm_fix(script: "JobScript", request: int, ranks_per_node: int) -> str:
    """The Slurm option asking ``request`` MiB per node in the script's own terms: its
    ``--mem-per-cpu`` over the CPUs Slurm gives a node (a ``--mem`` beside it, as the
    warning said before, sbatch refuses: the two are mutually exclusive), else ``--mem``."""
    if _asked_option_mib(script, "mem")[1] is None and \
            _asked_option_mib(script, "mem-per-cpu")[1] is not None:
        cpus = _slurm_cpus_per_node(script, ranks_per_node)
        return f"--mem-per-cpu={-(-int(request) // cpus)}M"
    return f"--mem={request}M"


def rewritten_memory_mib(script: "JobScript", need_mib: float, partition: "Partition",
                         nodes: int = 1, ranks_per_node: int = 1, threads: int = 1) -> int | None:
    """The memory per node (MiB) ``--rewrite`` gives a layout of ``nodes`` x
    ``ranks_per_node`` x ``threads`` needing ``need_mib``: what recommend asks for that need,
    where the script's ``--mem``, its ``--mem-per-cpu`` over the CPUs the rewritten script
    gives a node (its ranks x threads: s41 tester B8, it was kept below the need advise had
    just warned of), or a PBS limit as the rewrite leaves it
    (:func:`~hpcds1mpi.launch.pbs_memory.rewritten_asks`), is below it; None: the script's
    stay."""
    from hpcds1mpi.errors import ConfigError
    from hpcds1mpi.launch.directives import memory_request_mib
    from hpcds1mpi.launch.pbs_memory import rewritten_asks

    if script.scheduler == "pbs":
        short = math.isfinite(need_mib) and any(
            a.mib < need_mib for a in rewritten_asks(script, nodes, ranks_per_node))
    else:
        asked, mem = _asked_option_mib(script, "mem")
        cpus = 1
        if mem is None:  # per CPU, as the rewritten script's CPUs per node count it
            asked, mem = _asked_option_mib(script, "mem-per-cpu")
            cpus = ranks_per_node * threads
            asked = None if asked is None else asked * cpus
        node_mib = _node_mib(partition)
        if asked is not None and node_mib and asked > node_mib and not need_mib > node_mib:
            # sbatch refuses more than a node holds (s41): the most it holds, whole per CPU
            return int(node_mib // cpus) * cpus
        short = mem is not None and asked is not None and asked < need_mib
    if not short or not math.isfinite(need_mib):
        return None
    try:
        return memory_request_mib(need_mib, partition.memory_gb)
    except ConfigError:
        return None


def host_need_per_node(need_mb: float, device: str, ranks_per_node: int) -> float:
    """A candidate's ``mem_need_mb`` (per node on CPU, per GPU on GPU) as host memory per
    node, as recommend's script asks it (a GPU rank per GPU)."""
    return float(need_mb) * (ranks_per_node if device == "gpu" else 1)


__all__ = ["asked_memory_mib", "host_need_per_node", "memory_refusal", "memory_warnings",
           "rewritten_memory_mib"]
