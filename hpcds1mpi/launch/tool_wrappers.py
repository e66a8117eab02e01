"""Profilers, debuggers, binders and runners (``shifter --image=IMG ./app``) that run a
program given after their own options
(``nsys profile -o out ./app``, ``valgrind --tool=memcheck ./app``, ``likwid-pin -c 0-3 ./app``,
``gdb --args ./app``).

Their options are many and change between versions, so they are not read here. The program is
one word: after ``--``, the word that follows; else the first word written as a path
(``./app``), for an option's value rarely is one and a program run from its folder usually is;
only where no word is a path, the first bare word that follows no option (past the tool's
subcommand: ``nsys profile``, and a known flag: ``gdb --args app``), after any option's value
that names a program on ``PATH`` (``tool -x app``: ``-x`` may be a flag). A bare word after a path, or one that follows an option, is the
program's argument or the option's value, never the program (s42 tester F7: the ``-o`` value
of ``nsys profile -o stencil ./myapp`` had named the workload when ``./myapp`` matched none).
"""

from __future__ import annotations

import os
import shutil

#: By the command's file name.
TOOLS = frozenset({
    "nsys", "ncu", "nv-nsight-cu-cli", "valgrind", "perf", "likwid-pin", "likwid-perfctr",
    "gdb", "cuda-gdb", "strace", "ltrace", "vtune", "amplxe-cl", "advixe-cl", "advisor",
    "map", "ddt", "perf-report", "hpcrun", "tau_exec", "rocprof", "rocprofv2", "rocprofv3",
    "omniperf", "heaptrack", "scalasca", "scan", "shifter",
})

#: A tool's subcommands, written as its first word (``nsys profile``, ``perf stat``): no program.
_SUBCOMMANDS = {
    "nsys": frozenset({"profile", "launch", "nvprof", "start"}),
    "perf": frozenset({"stat", "record", "trace", "top", "mem", "c2c", "sched", "lock",
                       "kmem", "kvm", "ftrace"}),
    "omniperf": frozenset({"profile"}),
}

#: Common options of a tool that take no value: the word after one may be the program
#: (``gdb --args app``, ``strace -f app``). Any other option's next word may be its value.
_FLAGS = {
    "gdb": frozenset({"--args", "-q", "-quiet", "--quiet", "-batch", "--batch", "-nx", "--nx"}),
    "cuda-gdb": frozenset({"--args", "-q", "-quiet", "--quiet", "-batch", "--batch"}),
    "strace": frozenset({"-f", "-ff", "-c", "-C", "-T", "-t", "-tt", "-ttt", "-y", "-yy",
                         "-v", "-q", "-qq", "-w", "-k"}),
    "ltrace": frozenset({"-f", "-c", "-C", "-T", "-t", "-tt", "-ttt", "-S", "-i"}),
    "valgrind": frozenset({"-q", "--quiet", "-v", "--verbose"}),
    "perf": frozenset({"-a", "-g", "-d", "-v", "-q", "-n", "--all-cpus", "--per-core",
                       "--per-socket", "--per-node", "--per-thread", "-A", "--no-aggr"}),
    "likwid-pin": frozenset({"-q", "-m", "-S"}),
    "likwid-perfctr": frozenset({"-m", "-O", "-V", "-S"}),
}


def is_tool(word: str) -> bool:
    """Whether ``word`` (a command's program word, with or without a folder) is such a tool."""
    return os.path.basename(word) in TOOLS


def program_positions(words: list[str]) -> list[int]:
    """Where in ``words`` the program the tool ``words[0]`` runs may stand, the likeliest
    first (the caller takes the first it knows); [] where no word can be it. One position
    where it is sure (after ``--``, or a path); where no word is a path, a bare word that
    follows an option and names a program on ``PATH``, then the first bare word that follows
    no option."""
    if "--" in words[1:]:
        k = words.index("--", 1) + 1
        return [k] if k < len(words) else []
    subcommands = _SUBCOMMANDS.get(os.path.basename(words[0]), frozenset())
    free = [k for k in range(1, len(words)) if _no_option(words[k])
            and not (k == 1 and words[k] in subcommands)]
    paths = [k for k in free if "/" in words[k]]
    if paths:
        return paths[:1]
    flags = _FLAGS.get(os.path.basename(words[0]), frozenset())
    first = next((k for k in free if not _after_option(words, k, flags)), None)
    valued = [k for k in free if _after_option(words, k, flags)
              and (first is None or k < first) and shutil.which(words[k])]
    return valued + ([first] if first is not None else [])


def program_starts(words: list[str]) -> list[int]:
    """Where in ``words`` the program may start that their container runners and tools run,
    past each (``apptainer exec IMG valgrind hpcds1mpi run ...``), the likeliest first: [0]
    where ``words[0]`` is neither; [] where no program is read (an image that runs its own,
    a runner's option not read here)."""
    from hpcds1mpi.launch.container_runners import container_program, is_container_runner

    if not words:
        return []
    if is_container_runner(words[0]):
        inside = container_program(words)
        if inside is None or inside[1] is None:
            return []
        return [inside[1] + k for k in program_starts(words[inside[1]:])]
    if is_tool(words[0]):
        return [at + k for at in program_positions(words) for k in program_starts(words[at:])]
    return [0]


def candidate_programs(words: list[str]) -> list[str]:
    """The words of :func:`program_positions`: the program ``words[0]`` runs is one of them."""
    return [words[k] for k in program_positions(words)]


def _no_option(word: str) -> bool:
    """Whether ``word`` is no option (``-x``, ``--x=y``) and no ``KEY=VALUE``."""
    return bool(word) and not word.startswith("-") and "=" not in word


def _after_option(words: list[str], k: int, flags: frozenset) -> bool:
    """Whether ``words[k]`` follows an option written without its value (``-o stencil``)
    that is none of the tool's known ``flags``: that option's value, unless it is a flag."""
    before = words[k - 1]
    return before.startswith("-") and "=" not in before and before not in flags


__all__ = ["TOOLS", "candidate_programs", "is_tool", "program_positions", "program_starts"]
