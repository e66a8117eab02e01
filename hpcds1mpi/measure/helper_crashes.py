"""A program that exited 0 although its own processes crashed: their crash traces in its output.

Debian's ``ffindex_apply_mpi`` given a command it cannot run (``-- catt``) forks a child per
entry, and each child crashes on its way out (a double free, a null pointer); Open MPI's signal
handler, inherited by the children, prints a trace for each::

    free(): double free detected in tcache 2
    [vm:02020] *** Process received signal ***
    [vm:02020] Signal: Aborted (6)
    [vm:02020] Signal code:  (-6)
    [vm:02020] [ 0] /lib/x86_64-linux-gnu/libc.so.6(+0x3c050)[0x7f65d532b050]
    ...
    [vm:02020] *** End of error message ***

and the ranks exit 0 with an empty result database: 117 traces, stored ``ok`` with 42.6 s as
its runtime (s45 tester P2). :func:`helper_crashes` fails such a launch where its output holds
:data:`MIN_TRACES` or more crash traces, each told by its shape (:data:`SHAPES`), not by a
word: a trace's opening line confirmed by the line that follows it within
:data:`SHAPE_LINES` (Open MPI's "Signal: <name> (<number>)" of the same process, gfortran's
"Backtrace for this error:", glibc's "Backtrace:" rule, Python's faulthandler's thread line,
Intel Fortran's traceback header). A line that only mentions a signal ("SIGSEGV handler
installed", "0 segfaults", "Segmentation fault test: PASSED") is no trace, and one trace alone
is not enough: a program may crash a child on purpose (a test of its handler) or retry one that
crashed; a good run failed is worse than a bad run missed. Nor is bash's report of a child a
crash signal killed ("run.sh: line 3: 4242 Illegal instruction ./probe.sh avx512"): nothing
confirms it, and under an exit 0 the shell that printed it went on past every child it reports,
as a wrapper picking the fastest build its CPU runs does after its probes die of SIGILL (s46
review RV7: two probes had failed such a good run).

A crash's details differ per run (addresses, glibc's message, the order interleaved traces
print in): :data:`CRASH_DETAIL` tells their lines, which the check that a configuration's
repeats did not collide (:mod:`.repeat_folders`) sets aside, as it sets numbers aside.
"""

from __future__ import annotations

import re
from typing import NamedTuple

#: Crash traces an exit-0 launch's output must hold to be failed: its processes crashed
#: repeatedly, not one child a program may crash on purpose or retry.
MIN_TRACES = 2
#: Lines after a trace's opening within which its confirming line comes (traces of processes
#: crashing together interleave: "[vm:02024] [vm:02026] Signal: Aborted (6)").
SHAPE_LINES = 8
#: The names a crash signal goes by in a runtime's report (SIGSEGV, SIGBUS, SIGABRT, SIGILL,
#: SIGFPE): not "Killed" or "Terminated", which something outside the program sends.
_CRASH_SIGNAL = r"(?:Segmentation fault|Bus error|Aborted|Illegal instruction|" \
                r"Floating point exception)"

#: A line of a crash's details, which differ from run to run (addresses, the order the traces
#: of processes crashing together interleave in, which of glibc's checks caught the fault):
#: a backtrace frame ("libc.so.6(+0x3c050)[0x7f65d532b050]"), Open MPI's trace lines, glibc's
#: fatal message before its abort ("free(): invalid pointer", "double free or corruption
#: (out)", "*** stack smashing detected ***"). Repeats are compared without them: such a line
#: new in a later launch is no sign of a collision (s45 tester P2).
CRASH_DETAIL = re.compile(
    r"\(\S*\+0x[0-9a-fA-F]+\)\s*\[0x[0-9a-fA-F]+\]|"
    r"\*\*\* (?:Process received signal|End of error message) \*\*\*|"
    r"\bSignal(?: code)?: .*\(-?\d+\)$|\bFailing at address: |"
    r"^(?:free|malloc|realloc|calloc|munmap_chunk|malloc_consolidate|tcache_thread_shutdown)"
    r"\(\): |^(?:double free or corruption|corrupted size vs\. prev_size|corrupted "
    r"double-linked list)\b|\*\*\* (?:stack smashing|buffer overflow) detected \*\*\*")


class Shape(NamedTuple):
    """One runtime's crash trace: its ``opening`` line (its ``tag`` group, "[host:pid] ",
    names the process), the ``confirming`` line that follows it carrying the same tag, and
    whether that line is quoted with the opening (``quoted``: where the opening does not name
    the signal)."""

    opening: re.Pattern
    confirming: re.Pattern
    quoted: bool = False


#: The crash traces read (see the module).
SHAPES = (
    # Open MPI's (opal's) handler, in every process that loaded it, forks included
    Shape(re.compile(r"^(?P<tag>(?:\[[\w.-]+:\d+\] )?)\*\*\* Process received signal \*\*\*$"),
          re.compile(r"Signal: \w[\w ]* \(\d+\)$"), quoted=True),
    # gfortran's runtime
    Shape(re.compile(r"^(?P<tag>)Program received signal SIG\w+\b"),
          re.compile(r"^Backtrace for this error:")),
    # glibc before 2.26: "*** Error in `./app': free(): invalid pointer: 0x...***"
    Shape(re.compile(r"^(?P<tag>)\*\*\* Error in `[^`']+': .+\*\*\*$"),
          re.compile(r"^=+ Backtrace: =+$")),
    # Python's faulthandler
    Shape(re.compile(rf"^(?P<tag>)Fatal Python error: {_CRASH_SIGNAL}$"),
          re.compile(r"^(?:Current thread|Thread) 0x[0-9a-f]+ \(most recent call first\):$")),
    # Intel Fortran's runtime: "forrtl: severe (174): SIGSEGV, segmentation fault occurred"
    Shape(re.compile(r"^(?P<tag>)forrtl: severe \(\d+\): SIG\w+,"),
          re.compile(r"^Image\s+PC\s+Routine\s+Line\s+Source")),
)


def crash_traces(text: str) -> list[str]:
    """The crash traces in a stream's ``text`` (see the module), each as its opening line (with
    its confirming line where that names the signal), in order."""
    lines = [ln.strip() for ln in text.splitlines()]
    found = []
    for i, ln in enumerate(lines):
        for shape in SHAPES:
            if not (opened := shape.opening.search(ln)):
                continue
            after = lines[i + 1:i + 1 + SHAPE_LINES]
            if said := _confirmed(shape.confirming, opened["tag"], after):
                found.append(f"{ln} {said}" if shape.quoted else ln)
                break
    return found


def _confirmed(confirming: re.Pattern, tag: str, after: list[str]) -> str:
    """The first of the lines ``after`` an opening that is its ``confirming`` line, right after
    the opening's ``tag`` where it has one (a process's "[host:pid] ": "[n1:8] [n1:7] Signal:
    Aborted (6)" is process 7's); ""."""
    for ln in after:
        if not tag:
            if match := confirming.search(ln):
                return match[0]
            continue
        at = ln.find(tag)
        while at >= 0:
            if match := confirming.match(ln, at + len(tag)):
                return match[0]
            at = ln.find(tag, at + 1)
    return ""


def helper_crashes(stdout: str, stderr: str) -> str:
    """Why a launch that exited 0 failed where ``stdout`` and ``stderr`` hold
    :data:`MIN_TRACES` or more crash traces of the program's own processes
    (:func:`crash_traces`): "exit 0, but the program's own processes crashed (<n> crash traces
    in its output), the first: <its line>" (escaped, cut at 200); "" where they do not."""
    from hpcds1mpi.measure.printable import clipped, printable

    traces = crash_traces(stdout) + crash_traces(stderr)
    if len(traces) < MIN_TRACES:
        return ""
    first = clipped(printable(traces[0], keep="\t"), 200)
    return (f"exit 0, but the program's own processes crashed ({len(traces)} crash traces in "
            f"its output), the first: {first}")
