"""The bounds every boundary shares (files, job tables, command-line numbers).

Chosen so that nothing downstream overflows (exact in an int64 and a float64) and far beyond any
real machine, so a real value is never refused: a value past them is a typo or an attack.
"""

from __future__ import annotations

#: Largest problem size accepted anywhere (2**40): exact in int64 and float64.
MAX_SIZE = 2**40
#: Largest count (nodes, ranks, threads, cores, repeats, attempts, budgets).
MAX_COUNT = 1_000_000
#: Largest number of GPUs on one node.
MAX_GPUS_PER_NODE = 1024
#: Largest time in seconds accepted (a year): timeouts, runtimes, time limits.
MAX_SECONDS = 365 * 24 * 3600.0
#: Largest memory of one node or one GPU, GB (a petabyte).
MAX_MEMORY_GB = 1e6
#: Largest power of one node or one GPU, W.
MAX_WATTS = 1e6
#: Largest energy in joules (an energy budget): a year of a million such nodes.
MAX_JOULES = MAX_WATTS * MAX_COUNT * MAX_SECONDS
#: Largest seed (numpy seeds with any non-negative int; the telemetry stores an int64).
MAX_SEED = 2**63 - 1
