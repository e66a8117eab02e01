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
        self.most_nodes = 0  # the most nodes asked among those left out for nodes

    def add(self, reason: str, example: str, count: int = 1) -> None:
        self.reasons.setdefault(reason, [0, example])[0] += count

    def absorb(self, other: "LeftOut") -> None:
        """Add ``other``'s counts (one kernel's) to these (the plan's)."""
        for reason, (count, example) in other.reasons.items():
            self.add(reason, example, count)
        self.most_nodes = max(self.most_nodes, other.most_nodes)

    def layouts(self, partition, nodes, ranks_per_node, threads, devices, precisions,
                accept=None, weight: int = 1) -> None:
        """Count the configurations of the ranges ``partition`` cannot hold (its nodes, cores,
        GPUs) or ``accept`` refuses (what the kernel cannot run), each ``weight`` times (the
        kernel's sizes: one configuration per size)."""
        from hpcds1mpi.config import Configuration, check_fits

        combos = itertools.product(nodes, ranks_per_node, threads, devices, precisions)
        for n, r, t, d, p in itertools.islice(combos, MOST):
            try:
                config = Configuration(n, r, t, d, p)
                check_fits(config, partition)
            except ConfigError as exc:
                said = str(exc)
                reason = ("nodes" if " nodes asked" in said else "GPUs" if "GPU" in said
                          else "cores" if "cores per node" in said else "layout")
                if reason == "nodes":
                    self.most_nodes = max(self.most_nodes, n)
                self.add(reason, said.split("; lower --nodes")[0], weight)
                continue
            if accept is not None and not accept(config):
                self.add("kernel support", f"{config.label()} is not one the kernel runs",
                         weight)

    def note(self, kept: int) -> str:
        """The line that says what ``valid_only`` left out of a plan that still holds ``kept``
        configurations ("" when nothing was left out). Was: nothing at all, so a plan of nodes
        [1, 2] on a one-node machine lost every 2-node configuration in silence (s37 tester
        K5); the nodes beyond the partition name the way to measure them (--cluster)."""
        if not self.reasons:
            return ""
        left = sum(count for count, _ in self.reasons.values())
        line = (f"valid_only = true left out {left} of the plan's {kept + left} "
                f"configurations: {self.line()}")
        if self.most_nodes:
            line += (f"; to measure those on more nodes give the cluster file (--cluster) and a "
                     f"partition (--partition) with {self.most_nodes}")
        return line

    def line(self) -> str:
        """"1 for memory (e.g. ...); 3 for cores (e.g. ...)", most first; "" when none."""
        return "; ".join(f"{count} for {reason} (e.g. {example.split('; ')[0]})"
                         for reason, (count, example) in
                         sorted(self.reasons.items(), key=lambda item: -item[1][0]))
