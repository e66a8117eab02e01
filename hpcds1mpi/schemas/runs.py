"""The value rules of a runs table's numbers (sweep telemetry, or a job table handed to
``train``): the README's input rules (sizes 1..2^40, counts 1..10^6, times finite and at most
a year) as one list that :func:`hpcds1mpi.records.training.impossible_rows` applies, which
``train``, ``learn`` and ``telemetry merge`` all call. A row that breaks one is refused there
(a sweep never records such a value: the file was changed or damaged); a job log's rows met
the same bounds already at ingest, where they are dropped and counted (:mod:`.jobs`).
"""

from __future__ import annotations

from typing import NamedTuple

from .limits import MAX_COUNT, MAX_JOULES, MAX_MEMORY_GB, MAX_SECONDS, MAX_SIZE


class Rule(NamedTuple):
    """One numeric column's rule: inclusive bounds, whole numbers only or not, and the
    rule in words (for the message)."""

    column: str
    low: float
    high: float
    whole: bool
    words: str


#: What a sweep's workload label may be (``sweep --label``; the kernels' names are such words):
#: letters, digits, '.', '_', '+', '-'. A runs table holding any other was changed by hand.
WORKLOAD_LABEL = r"[\w.+-]+"
#: The rule in words, for the messages that refuse one.
WORKLOAD_LABEL_WORDS = "use letters, digits, '.', '_', '+' or '-'"

#: Columns a sweep's every row must give (a job table may leave them out: logs carry no
#: problem size) and that must be whole numbers in a sweep's rows.
EVERY_SWEEP_ROW = frozenset({"size", "nodes", "ranks_per_node", "ranks", "threads"})

#: The rules, checked in this order (the first broken one is reported).
RUN_RULES: tuple[Rule, ...] = (
    Rule("size", 1, MAX_SIZE, False, "sizes must be numbers 1..2^40"),
    *(Rule(col, 1, MAX_COUNT, True, f"{col} must be whole numbers 1..10^6")
      for col in ("nodes", "ranks_per_node", "ranks", "threads")),
    Rule("runtime_s", 0.0, MAX_SECONDS, False,
         "run times are finite, >= 0 s and at most a year"),
    Rule("energy_j", 0.0, MAX_JOULES, False,
         f"energies are finite, >= 0 J and at most {MAX_JOULES:.3g} J"),
    Rule("peak_rss_mb", 0.0, MAX_MEMORY_GB * 1000, False,
         "memory peaks are finite, >= 0 MB and at most a petabyte"),
    Rule("gpu_peak_mem_mb", 0.0, MAX_MEMORY_GB * 1000, False,
         "memory peaks are finite, >= 0 MB and at most a petabyte"),
)
