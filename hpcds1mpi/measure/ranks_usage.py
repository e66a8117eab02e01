"""One launch's memory and CPU time *of the program's ranks*, never of its launcher.

Where the launch's own process tree holds the ranks (:mod:`hpcds1mpi.measure.launch_tree`),
their peak is sampled there and their CPU time is the launch's children's (``RUSAGE_CHILDREN``).
Where some ranks ran outside it (started through ``srun``, under ``slurmstepd``: the srun
launcher's, an ``mpirun``'s under its daemons), each rank's wrapper reports its own peak and CPU
time (:mod:`hpcds1mpi.measure.rank_peak`: exact however short the rank, no daemon's memory
added); where no wrapper reported, Slurm's accounting of the launch's job steps adds
theirs (:mod:`hpcds1mpi.measure.slurm_accounting`) inside an allocation, and it is asked after
every srun launch all the same (each read sets the launch's steps aside); without either (or
without an answer) both are NaN, with the reason in the source, and nothing downstream sizes
memory from them.
"""

from __future__ import annotations

import math

#: The source of a peak sampled in the launch's own process tree.
SAMPLED = "psutil-sampled (largest process of the program)"


def ranks_usage(tree, rusage_cpu_s: float, ranks: int, accounting=None,
                launch_start: float = 0.0, ranks_per_node: int = 0,
                reports=None) -> tuple[float, float, str]:
    """``(peak_rss_mb, cpu_s, peak_rss_source)`` of one launch.

    Args:
        tree: the launch's stopped :class:`~hpcds1mpi.measure.launch_tree.TreeSampler`.
        rusage_cpu_s: CPU seconds of the launch's reaped children (the launcher's included).
        ranks: the configuration's ranks (sacct's MaxRSS is per task, a task may hold several).
        accounting: the allocation's :class:`~hpcds1mpi.measure.slurm_accounting.
            StepAccounting`; None outside one. Asked only where the tree showed srun.
        launch_start: when the launch started (epoch seconds): its steps started after.
        ranks_per_node: the configuration's ranks on each node (0: unknown): a launcher
            daemon's task in Slurm's accounting holds that many (s29 tester A4).
        reports: the ranks' wrappers' :class:`~hpcds1mpi.measure.rank_peak.RankReports`
            (None: not wrapped): where ranks ran outside the tree, their largest peak stands
            over sacct's sampled one, which counts the wrapper and a launcher's daemon too;
            their CPU time over sacct's where every rank reported.
    """
    local_mb = tree.peak_mb if tree.program_seen else math.nan
    whole = reports is not None and reports.count >= ranks
    if reports is not None and reports.count and (tree.remote_starter or whole):
        # each rank's own, however short, no daemon's nor its wrapper's memory added
        steps = accounting.read(ranks, launch_start, ranks_per_node=ranks_per_node) \
            if accounting is not None and tree.remote_starter == "srun" else None
        if whole:  # ranks that ran under the launch are in its children's CPU too: once
            cpu = reports.cpu_s + (rusage_cpu_s if tree.remote_starter and
                                   not tree.program_seen else 0.0)
        else:
            cpu = steps.cpu_s + rusage_cpu_s if steps is not None else math.nan
        peak = reports.peak_mb if whole or not tree.program_seen else \
            max(reports.peak_mb, local_mb)
        return peak, cpu, reports.source(ranks)
    if not tree.remote_starter:
        if tree.program_seen:
            return local_mb, rusage_cpu_s, SAMPLED
        return (math.nan, math.nan, "not measured: no process of the program was seen under "
                "the launch (it ended within the first samples, or its ranks ran elsewhere)")
    if tree.remote_starter == "srun" and accounting is not None:
        steps = accounting.read(ranks, launch_start, ranks_per_node=ranks_per_node)
        # The launch's own children's CPU plus its steps' tasks'.
        cpu = rusage_cpu_s + steps.cpu_s if steps is not None else math.nan
        if steps is not None and not math.isnan(steps.peak_rss_mb):
            peak = max(steps.peak_rss_mb, local_mb) if tree.program_seen else steps.peak_rss_mb
            return peak, cpu, steps.source()
        if steps is not None:  # finished steps with no memory sample: their CPU time stands
            if tree.program_seen:
                return local_mb, cpu, (f"{SAMPLED}, the ranks on this node only: the others' "
                                       "job step ended before Slurm's first memory sample")
            return math.nan, cpu, steps.source()
        why = accounting.why_not or "sacct listed no finished job step of the launch"
    elif tree.remote_starter == "srun":
        why = "not inside an allocation (SLURM_JOB_ID) with sacct to read them from"
    else:
        why = "Slurm's accounting does not see them"
    where = ("under slurmstepd (started through srun)" if tree.remote_starter == "srun"
             else f"on other nodes (started through {tree.remote_starter})")
    if tree.program_seen:  # a rank here is a fair peak per rank; the CPU time is not whole
        return (local_mb, math.nan, f"{SAMPLED}, the ranks on this node only: the others ran "
                f"{where}; their CPU time not measured: {why}")
    return (math.nan, math.nan,
            f"not measured: the ranks ran {where}, not under the launch; {why}")
