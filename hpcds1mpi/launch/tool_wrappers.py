"""Profilers, debuggers, binders and runners (``shifter --image=IMG ./app``) that run a
program given after their own options
(``nsys profile -o out ./app``, ``valgrind --tool=memcheck ./app``, ``likwid-pin -c 0-3 ./app``,
``gdb --args ./app``).

Their options are many and change between versions, so they are not read here: a reader that
asks which program such a line runs gets the later words that are no option, in order, and
takes the first it knows (advise's workload match: s42 review R1 — `srun nsys profile
./stencil 128` had matched no workload once only the program word named it).
"""

from __future__ import annotations

import os

#: By the command's file name.
TOOLS = frozenset({
    "nsys", "ncu", "nv-nsight-cu-cli", "valgrind", "perf", "likwid-pin", "likwid-perfctr",
    "gdb", "cuda-gdb", "strace", "ltrace", "vtune", "amplxe-cl", "advixe-cl", "advisor",
    "map", "ddt", "perf-report", "hpcrun", "tau_exec", "rocprof", "rocprofv2", "rocprofv3",
    "omniperf", "heaptrack", "scalasca", "scan", "shifter",
})


def is_tool(word: str) -> bool:
    """Whether ``word`` (a command's program word, with or without a folder) is such a tool."""
    return os.path.basename(word) in TOOLS


def candidate_programs(words: list[str]) -> list[str]:
    """The words after the tool ``words[0]`` that are no option (``-x``, ``--x=y``): the
    program it runs is one of them, the first the caller knows. Paths (``./app``) come
    first, in order, then the bare words: an option's value (``nsys profile -o stencil
    ./app``) is rarely written as a path, a program run from its folder usually is."""
    words = [w for w in words[1:] if w and not w.startswith("-") and "=" not in w]
    return [w for w in words if "/" in w] + [w for w in words if "/" not in w]


__all__ = ["TOOLS", "candidate_programs", "is_tool"]
