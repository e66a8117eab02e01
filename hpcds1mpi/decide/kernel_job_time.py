"""What a job script's ``hpcds1mpi run`` spends, which the script's time limit counts (s47
tester N3: the limit was 1.5 x ONE run's upper runtime, while the run builds its inputs, runs a
warm-up and 3 timed repeats and checks its answer against an fp64 serial reference; ``advise
--rewrite`` cut a working 10-min script of ``stencil+sweeps.1500`` to 1 min and it timed out).

Counted: the timed repeats (the script's ``--repeats``, else ``run``'s own default,
:data:`~hpcds1mpi.schemas.sweep_defaults.RUN_REPEATS`); the rest of the launch (inputs,
warm-up, reference check) in runs of the upper runtime, as the workload's sweep launches took
it — their wall beyond their timed repeats per second of runtime, the largest of its ok runs of
at least :data:`LONG_RUN_S` — and at least :data:`LEAST_OTHER_RUNS`; and
:data:`~hpcds1mpi.decide.calibration_time.STEP_START_S` for srun and Python, as a calibration
step counts it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Sequence

import numpy as np

from hpcds1mpi.decide import bundle_cache
from hpcds1mpi.decide.calibration_time import STEP_START_S
from hpcds1mpi.schemas.sweep_defaults import RUN_REPEATS
from hpcds1mpi.surrogates.columns import text
from hpcds1mpi.surrogates.feature_values import parse_numbers

#: The least a launch spends besides its timed repeats, in runs: its warm-up and its check.
LEAST_OTHER_RUNS = 2.0
#: Shorter runs measure start-up (imports, compiling, the check's fixed cost) more than the
#: run: not counted, s (at 0.1 s, a 0.2-s gemm's 90-s launch made a 5-min job's limit 37 h,
#: s47 review RX10).
LONG_RUN_S = 1.0
_COLUMNS = ("workload", "kind", "status", "runtime_s", "elapsed_s", "measured_s")


@dataclass(frozen=True)
class KernelRuns:
    """What one ``hpcds1mpi run`` launch spends, in runs of the upper runtime.

    Attributes:
        repeats: its timed repeats.
        other_runs: the rest of the launch (inputs, warm-up, reference check), in runs.
        measured: whether ``other_runs`` is what its sweep's launches took (else the least).
    """

    repeats: int
    other_runs: float = LEAST_OTHER_RUNS
    measured: bool = False

    def seconds(self, runtime_hi_s: float) -> float:
        """The launch's time at ``runtime_hi_s`` a run, start-up included, s."""
        return (self.repeats + self.other_runs) * runtime_hi_s + STEP_START_S

    def words(self) -> str:
        """How :meth:`seconds` counts, for the script's comment and advise's walltime."""
        how = (f"{self.other_runs:.3g} runs for its inputs, warm-up and reference check, as "
               "its sweep's launches took them" if self.measured
               else f"{self.other_runs:g} runs, a warm-up and the reference check")
        return (f"(({self.repeats} repeats + {how}) x the predicted upper runtime + "
                f"{STEP_START_S} s start-up)")


def run_repeats(args: Sequence[str] = ()) -> int:
    """The timed repeats of ``hpcds1mpi run`` given ``args``: its ``--repeats`` (the last
    given), else the command's own default."""
    given = None
    for k, word in enumerate(args):
        if word == "--repeats" and k + 1 < len(args):
            given = args[k + 1]
        elif word.startswith("--repeats="):
            given = word.split("=", 1)[1]
    if given is not None and given.isdigit() and int(given) >= 1:
        return int(given)
    return RUN_REPEATS


def kernel_runs(bundle, workload: str, args: Sequence[str] = ()) -> "LaterKernelRuns":
    """:class:`KernelRuns` of ``workload``'s ``hpcds1mpi run`` given ``args``, its other runs
    from the bundle's training columns where they say (:data:`LEAST_OTHER_RUNS` otherwise), read
    only when a script's limit needs them (:class:`LaterKernelRuns`)."""
    return LaterKernelRuns(bundle, workload, run_repeats(args))


class LaterKernelRuns:
    """:class:`KernelRuns` read from the training columns on first use: a ``recommend`` that
    writes no script must not read them (a bundle whose frame file predates the launch
    columns, the shipped one too, reads them with pandas and pyarrow: a cold start, issue 19)."""

    def __init__(self, bundle, workload: str, repeats: int):
        self._bundle, self._workload, self.repeats = bundle, workload, repeats
        self._runs: KernelRuns | None = None

    def resolved(self) -> KernelRuns:
        """The :class:`KernelRuns`, read once."""
        if self._runs is None:
            other = _measured_other_runs(self._bundle, self._workload)
            self._runs = (KernelRuns(self.repeats) if other is None or other <= LEAST_OTHER_RUNS
                          else KernelRuns(self.repeats, other, True))
        return self._runs

    other_runs = property(lambda self: self.resolved().other_runs)
    measured = property(lambda self: self.resolved().measured)

    def __eq__(self, other) -> bool:
        return self.resolved() == (other.resolved() if isinstance(other, LaterKernelRuns)
                                   else other)

    __hash__ = None  # compared by value, like KernelRuns, never a key

    def seconds(self, runtime_hi_s: float) -> float:
        return self.resolved().seconds(runtime_hi_s)

    def words(self) -> str:
        return self.resolved().words()


def script_kernel_runs(runs: KernelRuns | None, launch) -> KernelRuns | None:
    """``runs`` with the ``--repeats`` of a job script's ``launch`` where it runs ``hpcds1mpi
    run`` (advise); None where it runs anything else (one run: the program's own limit rule)
    or ``runs`` is None (a program's recommendation)."""
    from hpcds1mpi.launch.script_placeholders import launch_words, own_command_at

    at = own_command_at(launch) if runs is not None and launch is not None else None
    words = launch_words(launch) if at is not None else []
    if at is None or words[at + 1:at + 2] != ["run"]:
        return None
    if isinstance(runs, LaterKernelRuns):
        runs = runs.resolved()
    return replace(runs, repeats=run_repeats(words[at + 2:]))


def _measured_other_runs(bundle, workload: str) -> float | None:
    """The wall beyond the timed repeats per second of runtime of ``workload``'s longest ok
    kernel run of at least :data:`LONG_RUN_S` (the one nearest a long job: a fixed cost
    read on a short run, per second, would grow a long job's limit past any need, RX10); None
    where no row says."""
    try:
        rows = bundle_cache.training_columns(bundle, _COLUMNS)
        if not set(_COLUMNS) - {"kind"} <= set(rows.columns):
            return None
        ok = (text(rows["workload"]) == workload) & (text(rows["status"]) == "ok")
        if "kind" in rows.columns:
            ok &= text(rows["kind"]) != "external"
        e, m, r = (parse_numbers(rows[c][ok]) for c in ("elapsed_s", "measured_s", "runtime_s"))
    except Exception:  # noqa: BLE001 - unreadable rows: the least is counted
        return None
    good = np.isfinite(e) & np.isfinite(m) & np.isfinite(r) & (r >= LONG_RUN_S) & (e >= m)
    if not good.any():
        return None
    longest = int(np.argmax(np.where(good, r, -np.inf)))
    return float((e[longest] - m[longest]) / r[longest])


__all__ = ["KernelRuns", "LEAST_OTHER_RUNS", "LONG_RUN_S", "LaterKernelRuns", "kernel_runs",
           "run_repeats", "script_kernel_runs"]
