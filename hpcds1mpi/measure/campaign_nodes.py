"""A campaign's node counts against what its Slurm partition can give: the partition's node
count (``scontrol show partition``'s nodes) and its MaxNodes.

A cluster file's ``max_nodes`` may be stale or wrong; a part of more nodes than the partition
has pends for ever (PartitionConfig), and no edit of its script can help, as its shard's plan
sweeps on that many nodes (s39 tester H4). ``campaign emit`` refuses such a node count where
Slurm answers, and ``campaign status`` advises taking it out of the plan, not fixing the script.
Where Slurm does not answer nothing is checked here (the cluster file's figure stands).
"""

from __future__ import annotations

from hpcds1mpi.errors import ConfigError


def slurm_node_limit(partition: str | None) -> tuple[int, str] | None:
    """(most nodes one job may have on Slurm partition ``partition`` — None: the default one —,
    how Slurm says it), or None where Slurm does not answer or sets no limit."""
    from hpcds1mpi.launch.partition_limits import limits_of

    limits = limits_of(partition)
    if limits is None:
        return None
    said = []
    most = None
    if limits.node_states:
        most = len(limits.node_states)
        said.append(f"its {most} node(s)")
    if limits.max_nodes is not None and (most is None or limits.max_nodes < most):
        most = limits.max_nodes
        said.append(f"MaxNodes={limits.max_nodes}")
    if most is None:
        return None
    return most, f"{', '.join(said)}: scontrol show partition {limits.name}"


def check_slurm_nodes(node_counts, partition: str | None, plan_file: str,
                      cluster_says: int | None) -> None:
    """Refuse node counts over what Slurm partition ``partition`` gives, before anything is
    written.

    Raises:
        ConfigError: one line naming the node counts, Slurm's figure and what to change.
    """
    limit = slurm_node_limit(partition)
    if limit is None:
        return
    most, said = limit
    over = sorted(n for n in set(node_counts) if n > most)
    if not over:
        return
    stale = (f"; the cluster file's max_nodes = {cluster_says} is more than Slurm gives"
             if cluster_says is not None and cluster_says > most else "")
    raise ConfigError(f"{plan_file}: the plan asks for {', '.join(map(str, over))} nodes but "
                      f"Slurm's partition {partition or '(default)'!r} gives a job at most {most} "
                      f"({said}){stale}; take node counts over {most} out of the plan's nodes, "
                      "or give a partition (--partition) with more nodes")


def over_nodes_line(nodes: int, script: str, jobs: list[str], plan: str, scheduler: str) -> str:
    """The advice for parts of ``nodes`` nodes that never start because the partition has
    fewer (:func:`slurm_node_limit`); "" where it has enough or Slurm does not say."""
    from pathlib import Path

    from hpcds1mpi.measure.campaign import sbatch_value
    from hpcds1mpi.runtime.message_paths import shell_word

    partition = sbatch_value(script, "partition", "p")
    if partition is None:  # the script cannot be read: nothing to advise
        return ""
    limit = slurm_node_limit(partition or None)
    if limit is None or nodes <= limit[0]:
        return ""
    return (f"{len(jobs)} part(s) of {Path(script).name} ask for {nodes} nodes, but the "
            f"partition gives a job at most {limit[0]} ({limit[1]}); their shards' plans sweep on "
            f"{nodes} nodes, so no edit of the script helps: scancel {' '.join(jobs)}, take "
            f"{nodes} out of the plan's nodes and emit it again into a new folder (hpcds1mpi "
            f"campaign {shell_word(plan)} --emit {scheduler} --out NEW ...)")
