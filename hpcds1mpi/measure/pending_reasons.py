"""squeue's reasons for a pending job that never clear by waiting: it never starts as submitted.

A job over a partition's limit (``--time`` over its MaxTime, ``--mem`` over MaxMemPerNode,
more CPUs or nodes than it has) stays pending for ever, listed with the reason: ``campaign
status`` had shown such parts ``queued`` like any other (s33 tester A4). :func:`never_starts`
tells such a reason, with what to change in the job's script; "Priority", "Resources",
"Dependency" and the like clear by themselves and are none.
"""

from __future__ import annotations

import re

#: Reasons that never clear, with what to change: the partition's limits, a node set no node
#: can give, an account or QOS the job may not use.
NEVER_STARTS = {
    "PartitionTimeLimit": "--time is over the partition's MaxTime",
    "PartitionNodeLimit": "its node count is outside the partition's MinNodes..MaxNodes",
    "PartitionConfig": "it asks for more than the partition's nodes hold (CPUs, memory, GPUs)",
    "MaxMemPerLimit": "--mem is over the partition's MaxMemPerNode / MaxMemPerCPU",
    "BadConstraints": "its constraints (--constraint, --gres, per-node CPUs) fit no node",
    "ReqNodeNotAvail": "a node it needs is down, drained or reserved (drop --nodelist or "
                       "--reservation, or wait for the node)",
    "InvalidQOS": "its --qos is not one it may use",
    "InvalidAccount": "its --account is not one it may use",
    "DependencyNeverSatisfied": "a job it depends on failed",
}
#: A QOS's or association's per-job limit ("QOSMaxWallDurationPerJobLimit",
#: "AssocMaxNodesPerJobLimit"): it applies to the job alone, so it never clears either.
PER_JOB_LIMIT = re.compile(r"^(QOS|Assoc)\w*PerJob\w*$")


def never_starts(reason: str) -> str:
    """What to change for a pending job that squeue lists with ``reason`` (its first word:
    "ReqNodeNotAvail, UnavailableNodes:m2"); "" when the reason clears by waiting."""
    word = reason.split(",")[0].strip()
    if word in NEVER_STARTS:
        return NEVER_STARTS[word]
    if PER_JOB_LIMIT.match(word):
        return f"it is over a per-job limit of its {'QOS' if word.startswith('QOS') else 'account'}"
    return ""
