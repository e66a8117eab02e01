"""The answer of ``advise``: the two layouts it compares (:class:`Side`) and the whole answer
(:class:`Advice`), with their one-line summary and their JSON form (``advise --json``, the web
service, the Python API). :mod:`hpcds1mpi.decide.advise` fills them in.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING

from hpcds1mpi.config import Configuration
from hpcds1mpi.decide.advise_gain import fails, percent_change, same_layout
from hpcds1mpi.decide.recommendation import format_time
from hpcds1mpi.launch.script_rewrite import Change

if TYPE_CHECKING:  # pragma: no cover
    from hpcds1mpi.decide.recommendation import Recommendation


@dataclass
class Side:
    """One layout (the script's or the recommended one) with System 1's predictions.

    Attributes:
        config / partition: the layout and where it runs.
        walltime_s: the time limit asked (the script's) or to ask (1.5 x the predicted upper
            runtime, as ``recommend`` writes it).
        runtime_s / runtime_lo / runtime_hi, energy_j / energy_lo / energy_hi: predicted
            (NaN when not predicted); failed_after_s: its own failed runs' median time here.
        problem: why there is no prediction or why the layout is expected to fail ("").
        unmeasured: parts of the layout at levels the model never measured (extrapolated).
        lines: script lines it was read from (asked side only); time_lines: those of its
            time limit.
        walltime_basis: how ``walltime_s`` was chosen (recommended side only).
        mem_need_mib: predicted host memory need per node, MiB (NaN: not predicted).
    """

    config: Configuration
    partition: str
    walltime_s: int | None = None
    runtime_s: float = float("nan")
    runtime_lo: float = float("nan")
    runtime_hi: float = float("nan")
    energy_j: float = float("nan")
    energy_lo: float = float("nan")
    energy_hi: float = float("nan")
    fail_prob: float = float("nan")
    problem: str = ""
    unmeasured: list[str] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)
    time_lines: list[int] = field(default_factory=list)
    walltime_basis: str = ""
    mem_need_mib: float = float("nan")
    failed_after_s: float = float("nan")

    @property
    def predicted(self) -> bool:
        return math.isfinite(self.runtime_s)

    def text(self) -> str:
        c = self.config
        return (f"{c.nodes} node{'s' if c.nodes > 1 else ''} x {c.ranks_per_node} rank"
                f"{'s' if c.ranks_per_node > 1 else ''} x {c.threads} thread"
                f"{'s' if c.threads > 1 else ''}, {c.device}, {c.precision}")

    def to_dict(self) -> dict:
        out = asdict(self)
        out["config"] = self.config.as_dict()
        return out


@dataclass
class Advice:
    """The answer of ``advise`` for one script.

    Attributes:
        script: the script's name (a path, or ``<text>``); scheduler: ``slurm`` / ``pbs``.
        workload / workload_source: the workload and how it was found (None: unknown program).
        size / size_source: the problem size and where it came from.
        asked / recommended: the two layouts (recommended is None when the guard escalated or
            nothing fits).
        verdict: the guard's verdict (``auto`` / ``confirm`` / ``escalate``) and reasons.
        confidence: System 1's confidence in its pick (None when not its overall pick).
        energy_label: where the energy predictions come from.
        changes / rewritten: what ``--rewrite`` changes and the rewritten text (None when
            there is nothing to write, or it is refused).
        rewrite_refused: why ``--rewrite`` writes nothing although a layout is recommended
            (lines too long to read: what they ask for is not known); "" when it writes.
        notes: what was assumed or could not be read, one line each.
        warnings: what would make the job fail as written (its launcher of another MPI
            family than its program's; its program's own thread option against the
            OMP_NUM_THREADS it sets, :mod:`~hpcds1mpi.launch.thread_mismatch`), one line each.
        calibration: the configurations to measure first when escalated.
        recommendation: ``recommend``'s full answer (not serialised).
    """

    script: str
    scheduler: str
    workload: str | None
    workload_source: str
    size: int | None
    size_source: str
    asked: Side | None
    recommended: Side | None
    verdict: dict
    objective: str = "time"
    confidence: float | None = None
    energy_label: str = "modelled"
    changes: list[Change] = field(default_factory=list)
    rewritten: str | None = None
    rewrite_refused: str = ""
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    calibration: list[dict] = field(default_factory=list)
    recommendation: "Recommendation | None" = None

    @property
    def energy_saving_pct(self) -> float | None:
        """Predicted energy saved by the recommended layout, % of the asked one's."""
        a, r = self.asked, self.recommended  # a failing run's energy is no saving's
        if a is None or r is None or not (a.predicted and r.predicted) or a.energy_j <= 0 \
                or fails(a):
            return None
        return 100.0 * (1.0 - r.energy_j / a.energy_j)

    @property
    def runtime_change_pct(self) -> float | None:
        """Predicted runtime change of the recommended layout, % of the asked one's."""
        a, r = self.asked, self.recommended  # its time to fail is no runtime (s39 A4)
        if a is None or r is None or not (a.predicted and r.predicted) or a.runtime_s <= 0 \
                or fails(a):
            return None
        return 100.0 * (r.runtime_s / a.runtime_s - 1.0)

    def summary(self) -> str:
        """One line: what is asked, what is recommended, and the predicted difference."""
        if self.asked is None:
            return "the script's layout could not be read"
        asked = f"asked: {self.asked.text()}"
        if fails(self.asked):
            asked += f", {self.asked.problem}"
        elif self.asked.predicted:
            asked += f", predicted {format_time(self.asked.runtime_s)}"
        if self.recommended is None:
            return f"{asked}; no recommendation (verdict {self.verdict.get('verdict')})"
        rec = f"recommended: {self.recommended.text()}"
        rec += f", predicted {format_time(self.recommended.runtime_s)}"
        saving = self.energy_saving_pct
        if same_layout(self):
            rec += ", the layout the script already asks"
        elif saving is not None:
            rec += f", {percent_change(-saving, 'less', 'more', 'energy')}"
        return f"{asked}; {rec}"

    def to_dict(self) -> dict:
        """Plain JSON-able data (``advise --json``, the web service)."""
        out = {k: getattr(self, k) for k in ("script", "scheduler", "workload",
                                             "workload_source", "size", "size_source",
                                             "verdict", "objective", "confidence",
                                             "energy_label", "notes", "warnings",
                                             "calibration", "rewrite_refused")}
        out.update(asked=self.asked.to_dict() if self.asked else None,
                   recommended=self.recommended.to_dict() if self.recommended else None,
                   energy_saving_pct=self.energy_saving_pct,
                   runtime_change_pct=self.runtime_change_pct, summary=self.summary(),
                   changes=[asdict(c) for c in self.changes], rewritten=self.rewritten,
                   predictions="predicted by System 1 (labelled so); energy " + self.energy_label)
        return _plain(out)


def _plain(value):
    """JSON-able: NaN/inf as None, numpy numbers as Python numbers."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value
