"""Profilers, debuggers, binders and runners (``shifter --image=IMG ./app``) that run a
program given after their own options
(``nsys profile -o out ./app``, ``valgrind --tool=memcheck ./app``, ``likwid-pin -c 0-3 ./app``,
``gdb --args ./app``).

The program is one word. Each tool's options that take a value as the next word are listed
here from its own ``--help`` (:data:`_VALUED`: nsys ``-o``, perf ``-o``, strace ``-o``, gdb
``-x``...), so such a value — ``/scratch/prof`` of ``nsys profile -o /scratch/prof ./app`` —
is never the program (s42: a path given as a value was read as it). nsys's options all take
a value, valgrind's none (``--log-file=v.log``; one written ``--log-file v.log`` makes
valgrind run ``v.log``: :func:`split_value`). After ``--`` (or gdb's ``--args``) the next
word is the program. Else the program is the first *clear* word — one that follows no option,
or a flag, or a listed option's value: every word after the program is its argument. An
option not listed here may or may not take a value, so the word after it is only *maybe* the
program: it is offered before the clear word only where the clear word does not look like a
program (a bare name not on PATH, a number: ``tau_exec -x ./app in.dat``) and it names an
executable file or is written as a path, never where the clear word looks like one (written
as a path, or executable): the rest of the line supports the clear word; a bare maybe-word
not on PATH is offered only where no word is clear (s42 tester F7: ``-o stencil`` had named
the workload). A listed option's value that names an executable is offered last where no
other word looks like a program, so a slip in a table costs a guess, not the launch.
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

_GDB_VALUED = frozenset({"-x", "-ex", "-ix", "-iex", "--command", "--eval-command",
                         "--init-command", "--init-eval-command", "-cd", "-d", "--directory",
                         "-p", "--pid", "-s", "--symbols", "-e", "--exec", "-se", "-c",
                         "--core", "-b", "-l", "-tty", "--tty", "-D", "--data-directory",
                         "--interpreter", "-i"})
_PERF_VALUED = frozenset({"-o", "--output", "-e", "--event", "-F", "--freq", "-c", "--count",
                          "-p", "--pid", "-t", "--tid", "-C", "--cpu", "-m", "--mmap-pages",
                          "-G", "--cgroup", "-D", "--delay", "-j", "--branch-filter", "-k",
                          "--clockid", "-r", "--repeat", "--realtime", "-u", "--uid", "-x",
                          "--field-separator", "-I", "--interval-print", "-M", "--metrics",
                          "--call-graph", "--affinity", "--filter", "--control", "--max-size",
                          "--pre", "--post", "--timeout", "--log-fd", "--interval-count",
                          "--for-each-cgroup", "--cputype", "--td-level", "--vmlinux",
                          "--clang-path", "--clang-opt", "--mmap-flush", "--synth"})
_STRACE_VALUED = frozenset({"-e", "-E", "-p", "-u", "-I", "-P", "-a", "-o", "-s", "-X",
                            "-O", "-S", "-U", "-b"})
_LTRACE_VALUED = frozenset({"-a", "--align", "-A", "-D", "--debug", "-e", "-F", "--config",
                            "-l", "--library", "-n", "--indent", "-o", "--output", "-p", "-s",
                            "-u", "-w", "--where", "-x"})
_NCU_VALUED = frozenset({"-o", "--export", "-k", "--kernel-name", "-c", "--launch-count",
                         "-s", "--launch-skip", "--set", "--section", "--metrics",
                         "--target-processes", "--replay-mode", "--nvtx-include",
                         "--nvtx-exclude", "--page", "--kernel-id", "--devices",
                         "--section-folder", "--import", "--log-file", "--cache-control",
                         "--clock-control", "--launch-skip-before-match", "--kernel-name-base"})
_VTUNE_VALUED = frozenset({"-collect", "-c", "-r", "-result-dir", "-knob", "-data-limit",
                           "-duration", "-d", "-target-duration-type", "-search-dir",
                           "-source-search-dir", "-project-dir", "-mark-up-list",
                           "-finalization-mode", "-target-pid", "-strategy"})
_ARM_VALUED = frozenset({"-n", "--np", "--nnodes", "--procs-per-node", "--mpi", "-o",
                         "--output", "--log", "--openmp-threads", "--mpiargs", "--start-after",
                         "--stop-after", "--export", "--processes", "--nodes"})
#: likwid 5.2's ``-h``: one letter means another thing in each tool (``-S``, ``-e``, ``-d``).
_LIKWID_PIN_VALUED = frozenset({"-V", "--verbose", "-c", "-C", "-s", "--skip", "-d"})
_LIKWID_PERFCTR_VALUED = frozenset({"-V", "--verbose", "-c", "-C", "-g", "--group", "-s",
                                    "--skip", "-M", "-E", "-T", "-S", "-t", "-o", "--output"})
#: Options of a tool that take the next word as their value (each tool's ``--help``;
#: nsys's: docs.nvidia.com/nsight-systems). ``True``: every option of the tool does (nsys:
#: even its switches are ``-f true``); ``False``: none does (valgrind: ``--opt=value``).
_VALUED: dict[str, frozenset | bool] = {
    "nsys": True, "valgrind": False, "gdb": _GDB_VALUED, "cuda-gdb": _GDB_VALUED,
    "perf": _PERF_VALUED, "strace": _STRACE_VALUED, "ltrace": _LTRACE_VALUED,
    "ncu": _NCU_VALUED, "nv-nsight-cu-cli": _NCU_VALUED, "vtune": _VTUNE_VALUED,
    "amplxe-cl": _VTUNE_VALUED, "advixe-cl": _VTUNE_VALUED, "advisor": _VTUNE_VALUED,
    "map": _ARM_VALUED, "ddt": _ARM_VALUED, "perf-report": _ARM_VALUED,
    "likwid-pin": _LIKWID_PIN_VALUED, "likwid-perfctr": _LIKWID_PERFCTR_VALUED,
    "hpcrun": frozenset({"-e", "--event", "-o", "--output", "-c", "--count", "-f", "-fp",
                         "-lm", "-tt"}),
    "tau_exec": frozenset({"-T"}),
    "rocprof": frozenset({"-i", "--input", "-o", "--output", "-d", "-t", "--basenames",
                          "--timestamp", "--ctx-wait", "--ctx-limit", "--heartbeat",
                          "--flush-rate", "-m", "--trace-start", "--trace-period"}),
    "rocprofv2": frozenset({"-i", "--input", "-o", "--output-file", "-d",
                            "--output-directory", "--plugin", "-m"}),
    "rocprofv3": frozenset({"-i", "--input", "-o", "--output-file", "-d",
                            "--output-directory", "--kernel-include-regex",
                            "--kernel-exclude-regex", "--output-format", "-T",
                            "--collection-period", "--pmc", "--log-level"}),
    "omniperf": frozenset({"-n", "--name", "-p", "--path", "-k", "--kernel", "-b",
                           "--ipblocks", "-d", "--dispatch", "--device"}),
    "heaptrack": frozenset({"-o", "--output", "-p", "--pid", "-a", "--analyze"}),
    "scalasca": frozenset({"-e", "-f", "-m"}), "scan": frozenset({"-e", "-f", "-m"}),
    "shifter": frozenset({"--image", "-V", "--volume", "--workdir", "-e", "--env", "-m",
                          "--module"}),
}

#: Common options of a tool that take no value: the word after one may be the program
#: (``strace -f app``). Any other option not in :data:`_VALUED` is unknown here.
_FLAGS = {
    "gdb": frozenset({"-q", "-quiet", "--quiet", "-batch", "--batch", "-nx", "--nx",
                      "--nh", "--readnow", "--readnever", "--write", "--tui", "-w", "--nw",
                      "--batch-silent", "--return-child-result", "--fullname"}),
    "cuda-gdb": frozenset({"-q", "-quiet", "--quiet", "-batch", "--batch"}),
    "strace": frozenset({"-f", "-ff", "-c", "-C", "-T", "-t", "-tt", "-ttt", "-y", "-yy",
                         "-v", "-q", "-qq", "-w", "-k", "-i", "-r", "-x", "-xx", "-z",
                         "-Z", "-n", "-d", "-D"}),
    "ltrace": frozenset({"-f", "-c", "-C", "--demangle", "-T", "-t", "-tt", "-ttt", "-S", "-i",
                         "-b", "--no-signals", "-r", "-L", "-h", "--help", "-V", "--version"}),
    "perf": frozenset({"-a", "-g", "-d", "-v", "-q", "-n", "--all-cpus", "--per-core",
                       "--per-socket", "--per-node", "--per-thread", "-A", "--no-aggr", "-s",
                       "-T", "-P", "-R", "-N", "-B", "-b", "-W", "--no-inherit", "-i"}),
    "likwid-pin": frozenset({"-h", "--help", "-v", "--version", "-i", "-m", "-S", "--sweep",
                             "-p", "-q", "--quiet"}),
    "likwid-perfctr": frozenset({"-h", "--help", "-v", "--version", "-H", "-a", "-e", "-i",
                                 "--info", "-f", "--force", "-m", "--marker", "-O", "--stats"}),
    "heaptrack": frozenset({"-d", "--debug", "-r", "--raw", "--use-inject", "--record-only"}),
    "tau_exec": frozenset({"-ebs", "-io", "-memory", "-memory_debug", "-cuda", "-opencl",
                           "-openacc", "-rocm", "-um", "-shmem", "-v", "-qsub", "-gomp",
                           "-armci", "-level_zero", "-l0", "-ompt"}),
}

#: Options of a tool whose valued options are written ``--opt=value`` alone (valgrind's
#: ``--help``) that take no value: any other option written without ``=`` is not its value.
_BARE_FLAGS = {"valgrind": frozenset({"-h", "--help", "--help-debug", "--help-dyn-options",
                                      "--version", "-q", "--quiet", "-v", "--verbose", "-s"})}

#: Options after which the next word is the program (gdb's ``--args``), as after ``--``.
_PROGRAM_NEXT = frozenset({"--", "--args"})


def is_tool(word: str) -> bool:
    """Whether ``word`` (a command's program word, with or without a folder) is such a tool."""
    return os.path.basename(word) in TOOLS


def program_positions(words: list[str]) -> list[int]:
    """Where in ``words`` the program the tool ``words[0]`` runs may stand, the likeliest
    first (the caller takes the first it knows); [] where no word can be it. One position
    where the line is sure (after ``--``, or a clear word that looks like a program); see the
    module's text for the order otherwise."""
    tool = os.path.basename(words[0])
    subcommands = _SUBCOMMANDS.get(tool, frozenset())
    clear, maybe, k = None, [], 1 + (len(words) > 1 and words[1] in subcommands)
    valued_programs = []  # a listed value naming an executable: offered last (a table slip)
    while k < len(words) and clear is None:
        word = words[k]
        if word in _PROGRAM_NEXT:
            return [k + 1] if k + 1 < len(words) else []
        if not _no_option(word):
            taken = _takes_value(tool, word)
            if taken and k + 1 < len(words):
                k += 1  # its value: never the program, unless nothing else looks like one
                if _no_option(words[k]) and _support(words[k]) == 2:
                    valued_programs.append(k)
            elif taken is None and k + 1 < len(words) and _no_option(words[k + 1]):
                maybe.append(k + 1)  # an option not known here: its value, or the program
                k += 1
        else:
            clear = k
        k += 1
    strong = [m for m in maybe if _support(words[m]) == 2]
    if clear is None:
        return strong + [m for m in maybe if m not in strong] + valued_programs
    if _support(words[clear]) >= 1:
        return [clear]
    return strong + [m for m in maybe if _support(words[m]) == 1] + [clear] + valued_programs


def split_value(words: list[str]) -> str:
    """The one line for a tool ``words[0]`` that takes its options' values after ``=`` alone,
    given one as the next word (``valgrind --log-file /tmp/v.log ./app``): the tool runs that
    word as the program (valgrind, measured: "/tmp/v.log: command not found", exit 127), so
    the launch fails; "" where none is (s43 tester J6: advise had only said the program
    matches no workload)."""
    tool = os.path.basename(words[0]) if words else ""
    if _VALUED.get(tool) is not False:
        return ""
    for k, word in enumerate(words[1:-1], start=1):
        if _no_option(word) or word == "--":
            return ""
        if "=" not in word and word not in _BARE_FLAGS.get(tool, ()):
            value = words[k + 1]
            return (f"{tool} takes an option's value after `=` only: as written `{word} "
                    f"{value}` runs `{value}` as the program, so the launch fails; write "
                    f"`{word}={value}`")
    return ""


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


def _takes_value(tool: str, option: str) -> bool | None:
    """Whether the tool's ``option`` takes the next word as its value: True, False (one
    written ``--opt=value``, a flag), None where not known here."""
    if "=" in option or option in _FLAGS.get(tool, ()):
        return False
    valued = _VALUED.get(tool)
    if isinstance(valued, bool):
        return valued
    return True if valued is not None and option in valued else None


def _support(word: str) -> int:
    """How much ``word`` looks like a program: 2 it names an executable file (a path, or a
    name on PATH), 1 it is written as a path, -1 it is a number, else 0."""
    if os.path.isfile(word) and os.access(word, os.X_OK) if "/" in word else shutil.which(word):
        return 2
    if "/" in word:
        return 1
    return -1 if word.replace(".", "", 1).isdigit() else 0


__all__ = ["TOOLS", "candidate_programs", "is_tool", "program_positions", "program_starts",
           "split_value"]
