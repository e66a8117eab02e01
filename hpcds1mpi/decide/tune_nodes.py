"""System 2 keeps to the node counts its program was measured on, as ``recommend`` does.

A user's program has no work model: the model's prediction on more nodes than it ever ran
on is an extrapolation no run supports, which ``recommend`` picks only where no measured node
count can run the job (:mod:`~hpcds1mpi.decide.measured_nodes`). The tune's start kept that
rule, but its search did not: in a 2-node allocation crashy, measured on one node, had its
second run on 2 nodes x 1 rank x 2 threads, predicted fastest, and it segfaulted (s39 tester
B5). So the search runs configurations on such node counts only once every one on a measured
node count is run or ruled out, or where the tune started on one (the user's ``--nodes``, or a
start nothing measured could give), and says so when it first does; the stop line names those
it did not try, and how to measure one.
"""

from __future__ import annotations

import numpy as np

from hpcds1mpi.config import Configuration
from hpcds1mpi.decide.tune_space import Space


class NodeRule:
    """Which configurations of ``space`` the search may run now, by their node count.

    ``beyond``: ``(n,)`` True where a configuration is on more nodes than its program was
    measured on (:attr:`~hpcds1mpi.decide.tune_predictions.Predictions.beyond_nodes`; None:
    not known, no rule). A ``start`` beyond them lifts the rule: the user asked for it, or
    nothing on a measured node count was feasible.
    """

    def __init__(self, space: Space, beyond, start: Configuration, say):
        self.space, self.say = space, say
        self.beyond = None
        if beyond is not None and not bool(np.asarray(beyond, bool)[space.index(start)]):
            self.beyond = np.asarray(beyond, bool)
        self.widened = False

    @property
    def reach(self) -> int:
        """The most nodes of a configuration on a measured node count."""
        return max(c.nodes for c, far in zip(self.space.configs, self.beyond) if not far)

    def _widen(self, why: str) -> None:
        if not self.widened:
            self.widened = True
            self.say(f"{why}: trying configurations on more than {self.reach} node(s), where "
                     "the program never ran (recommend picks them only where no measured node "
                     "count can run the job); their predictions there are a guess")

    def candidates(self, ok: np.ndarray) -> np.ndarray:
        """``ok`` (``(n,)`` bool, the untried runnable configurations) on measured node counts
        while any of those is left; all of ``ok`` once none is (said once)."""
        if self.beyond is None or self.widened:
            return ok
        first = ok & ~self.beyond
        if first.any() or not ok.any():
            return first
        self._widen("every configuration on the node counts the program was measured on is "
                    "run or ruled out")
        return ok

    def order(self, options: list[Configuration]) -> list[Configuration]:
        """A neighbour walk's ``options``, those on measured node counts first; a first one
        beyond them is said."""
        if self.beyond is None or not options:
            return options
        options = sorted(options, key=lambda c: bool(self.beyond[self.space.index(c)]))
        if self.beyond[self.space.index(options[0])]:
            self._widen("every neighbour on the node counts the program was measured on is run")
        return options

    def held_back(self) -> np.ndarray | None:
        """``(n,)`` True where a configuration is held back by the rule now (None: none is)."""
        return None if self.beyond is None or self.widened else self.beyond

    def untried_said(self, runnable: np.ndarray, tried: set[int]) -> str:
        """The stop line's note of the runnable configurations held back and not run ("" when
        none): the node counts, and how to measure one."""
        held = self.held_back()
        if held is None:
            return ""
        left = [self.space.configs[i] for i in np.flatnonzero(held & runnable)
                if int(i) not in tried]
        if not left:
            return ""
        counts = sorted({c.nodes for c in left})
        return (f"; not run: {', '.join(str(n) for n in counts)} node(s), where the program "
                f"was never measured (at most {self.reach}), as recommend does not pick them "
                f"(to measure one, start from it: --nodes {counts[0]})")
