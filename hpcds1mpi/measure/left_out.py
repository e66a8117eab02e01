"""Why ``--valid-only`` left every configuration of a sweep out, counted by reason.

A plan whose ranges all fall outside the partition, or whose sizes need more memory than a job
may use, had one answer: "the ranges leave no configuration to run (check nodes/ranks/threads
against the partition)", wrong where the reason was memory (s33 tester A10). :class:`LeftOut`
counts what was left out and for what, keeping one example of each, for the one-line error.
"""

from __future__ import annotations

import itertools

from hpcds1mpi.errors import ConfigError

#: Configurations looked at for their reasons: beyond, the counts are of the first ones only.
MOST = 100_000


class LeftOut:
    """Counts of what was left out, by reason, each with its first example."""

    def __init__(self) -> None:
        self.reasons: dict[str, list] = {}  # reason -> [count, first example]

    def add(self, reason: str, example: str) -> None:
        self.reasons.setdefault(reason, [0, example])[0] += 1

    def layouts(self, partition, nodes, ranks_per_node, threads, devices, precisions,
                accept=None) -> None:
        """Count the configurations of the ranges ``partition`` cannot hold (its nodes, cores,
        GPUs) or ``accept`` refuses (what the kernel cannot run)."""
        from hpcds1mpi.config import Configuration, check_fits

        combos = itertools.product(nodes, ranks_per_node, threads, devices, precisions)
        for n, r, t, d, p in itertools.islice(combos, MOST):
            try:
                config = Configuration(n, r, t, d, p)
                check_fits(config, partition)
            except ConfigError as exc:
                said = str(exc)
                self.add("nodes" if " nodes asked" in said else "GPUs" if "GPU" in said
                         else "cores" if "cores per node" in said else "layout", said)
                continue
            if accept is not None and not accept(config):
                self.add("kernel support", f"{config.label()} is not one the kernel runs")

    def line(self) -> str:
        """"1 for memory (e.g. ...); 3 for cores (e.g. ...)", most first; "" when none."""
        return "; ".join(f"{count} for {reason} (e.g. {example.split('; ')[0]})"
                         for reason, (count, example) in
                         sorted(self.reasons.items(), key=lambda item: -item[1][0]))
