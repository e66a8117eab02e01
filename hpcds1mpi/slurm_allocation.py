"""Reading a Slurm allocation: what ``SLURM_*`` and ``scontrol`` say it holds.

The node's hardware from ``scontrol show node`` (:func:`parse_scontrol_nodes`,
:func:`gpus_from_gres`), the allocation's share of each node (:func:`allocation_cpus_per_node`
from ``SLURM_JOB_CPUS_PER_NODE`` / ``SLURM_CPUS_ON_NODE``, :func:`allocation_memory_mb` from
``SLURM_MEM_PER_NODE`` / ``SLURM_MEM_PER_CPU``) and its first node (:func:`first_node`).
Plain figures only: :func:`hpcds1mpi.cluster.detect_slurm` turns them into a partition.
"""

from __future__ import annotations

import re
import subprocess


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
        return float(_megabytes(env["SLURM_MEM_PER_NODE"]))
    if env.get("SLURM_MEM_PER_CPU"):
        return float(_megabytes(env["SLURM_MEM_PER_CPU"])) * cpus
    return 0.0


def _megabytes(text: str) -> float:
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
